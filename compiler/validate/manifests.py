"""Is this a capidx build manifest? The check the compiler makes before it trusts a manifest it did not just write:
before replacing a build with `--out`, when `capidx report` reads one, and when validate meets a build directory
in a catalog (its data files are not said to be unread)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from capidx.schema import builddir
from capidx.schema.builddir import MANIFEST


def is_build(folder: Path) -> bool:
    """Whether `folder` is marked as a capidx build, whatever else it holds: its manifest.json is a regular file (not
    a link) and a build manifest, of this capidx or a newer one."""
    try:
        data = builddir.parse_manifest(folder / MANIFEST, builddir.read_manifest(folder / MANIFEST))
    except builddir.ManifestUnreadable:
        return False
    return _is_manifest(data) or builddir.newer_format(data) is not None


def _is_manifest(data: Any) -> bool:
    """Whether `data` is a build manifest of this capidx, stopping at the first thing wrong. `manifest_problems` lists
    every schema error of a file that is no manifest, which took jsonschema minutes over a few MB of other JSON: that
    was the cost of a manifest.json anyone may put in a catalog folder (validate asks `is_build` of each it meets)."""
    try:
        valid = _fast_valid(data) if _fast_check() is not None else _valid(data)
        return valid and not builddir.contract_problems(data)
    except RecursionError:
        return False


def _valid(data: Any) -> bool:
    """jsonschema's yes/no (the first error ends it), where fastjsonschema cannot compile the manifest schema."""
    import jsonschema

    return jsonschema.Draft202012Validator(builddir.manifest_schema()).is_valid(data) and type(data["format"]) is int


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
