"""The `format`s of capidx's own schemas (`date`, `date-time`, `uri`), decided as jsonschema decides them.

The fast schema check (`fastschema`) needs a format checker, and taking jsonschema's meant importing
jsonschema (~0.1-0.15 s, with `referencing` and its format module) on every `capidx validate`, valid
catalog or not. These are the same rules, from the same libraries, that jsonschema's `FORMAT_CHECKER`
applies for draft 2020-12 with the `rfc3339-validator` and `rfc3986-validator` packages capidx depends on
(tests/test_validate_fastschema.py holds both to the same verdicts); jsonschema is imported only to describe
a document that is not certainly valid. A format not named here gets no fast check (`KNOWN`).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

# jsonschema's own pattern for `date` (jsonschema/_format.py), before `date.fromisoformat` judges the values.
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$", re.ASCII)
KNOWN = frozenset({"date", "date-time", "uri"})


def conforms(value: Any, name: str) -> bool:
    """Whether `value` is a valid `name` (one of `KNOWN`); a value that is not a string conforms, as in JSON Schema."""
    if not isinstance(value, str):
        return True
    if name == "date":
        return _is_date(value)
    if name == "date-time":
        from rfc3339_validator import validate_rfc3339

        return bool(validate_rfc3339(value.upper()))
    if name == "uri":
        from rfc3986_validator import validate_rfc3986  # compiles a large regex on import (~0.02-0.05 s)

        return bool(validate_rfc3986(value, rule="URI"))
    raise ValueError(f"no fast check for the format {name!r}")


def _is_date(value: str) -> bool:
    try:
        return bool(_DATE.fullmatch(value) and date.fromisoformat(value))
    except ValueError:
        return False
