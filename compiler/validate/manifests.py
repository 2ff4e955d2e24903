"""Is this a capidx build manifest? The check the compiler makes before it trusts a manifest it did not just write:
before replacing a build with `--out`, and when `capidx report` reads one."""

from __future__ import annotations

from functools import cache
from typing import Any

from capidx.schema import builddir


def manifest_problems(data: Any) -> list[str]:
    """Why `data` is not a capidx build manifest ([] when it is).

    The yes/no answer comes from the schema compiled by fastjsonschema (jsonschema takes about a second
    per 4,000 artifacts, fastjsonschema a twentieth of that: this runs before every build that replaces
    one and in every report); jsonschema, through the contract's `manifest_problems`, says what is wrong when
    it is not."""
    try:
        if _fast_valid(data):
            return builddir.contract_problems(data)
        return builddir.manifest_problems(data) or ["not a build manifest"]
    except RecursionError:
        return ["nested too deeply"]


def _fast_valid(data: Any) -> bool:
    check = _fast_check()
    # fastjsonschema's `const: 1` accepts True; jsonschema does not
    return check is not None and check(data) and type(data["format"]) is int


@cache
def _fast_check() -> Any:
    from capidx.compiler.validate.fastschema import compile_check

    return compile_check(builddir.manifest_schema())
