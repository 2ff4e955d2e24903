"""What the build needs of a capability document, whatever schema it was validated against.

`--schema` (or `paths.schema`) replaces the bundled schema, and a schema that leaves out a required field
or allows another type let a catalog validate that the build then stopped on with a traceback
(`KeyError: 'name'`). The build's needs are the bundled schema's structure: its `type`s, `required`
fields and nesting, without the constraints only the data's quality depends on (`enum`, `format`, lengths,
ranges, patterns, closed objects). `capidx validate` checks them too when the schema is not the bundled
one (with the bundled one they are implied): as warnings for `capidx validate`, which may check another
project's layout against its own schema, and as errors when the build validates, which then stops with
`file:line:col` instead of a traceback.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from typing import Any

from capidx.compiler.diagnostics import Diagnostic, Severity
from capidx.compiler.validate.load import SourceFile
from capidx.compiler.validate.schemas import CAPABILITY_SCHEMA, LazyValidator, bundled_schema, schema_diagnostics

# Constraints the build does not depend on (the bundled schema's own checks of them stay with it).
_QUALITY = frozenset(
    {"enum", "format", "minLength", "maxLength", "minimum", "maximum", "pattern", "additionalProperties", "minItems"}
)
_HINT = "capidx build needs it, whatever the schema given by --schema or paths.schema allows"


def check_document(source: SourceFile, severity: Severity) -> list[Diagnostic]:
    """The build's needs (`_structure`) not met by `source`, with the code `build-contract`."""
    found = schema_diagnostics(_validator(), source, "build-contract")
    return [
        replace(d, severity=severity, hint=f"{d.hint}; {_HINT}" if d.hint else _HINT)
        for d in found
        if d.code == "build-contract"
    ]


@cache
def _validator() -> LazyValidator:
    return LazyValidator(_structure(bundled_schema(CAPABILITY_SCHEMA)), ours=True)


def _structure(schema: Any) -> Any:
    """`schema` without the keywords in `_QUALITY`, at every level (the names under `properties` and
    `$defs` are names, not keywords)."""
    if isinstance(schema, list):
        return [_structure(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kept = {}
    for key, value in schema.items():
        if key in ("properties", "$defs") and isinstance(value, dict):
            kept[key] = {name: _structure(sub) for name, sub in value.items()}
        elif key not in _QUALITY:
            kept[key] = _structure(value)
    return kept
