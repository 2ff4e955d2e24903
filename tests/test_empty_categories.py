"""The categories a schema defines and no capability is in reach the build's match.json (`emptyCategories`), so that
the server can say the catalog records nothing there; only an enumeration the schema writes for a capability's
category counts (through its own `#/...` references), and a schema that leaves the category free defines none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import documents, run_cli, write_catalog

REPO = Path(__file__).resolve().parent.parent


def _empty_categories(tmp_path: Path, schema: dict[str, Any] | None) -> list[str]:
    agents = write_catalog(tmp_path / "repo")
    args = ["build", "--agents", str(agents), "--out", str(tmp_path / "build"), "-q"]
    if schema is not None:
        path = tmp_path / "schema.json"
        path.write_text(json.dumps(schema), encoding="utf-8")
        args += ["--schema", str(path)]
    result = run_cli(args, tmp_path)
    assert result.exit_code == 0, result.output
    return json.loads((tmp_path / "build" / "index" / "match.json").read_text("utf-8"))["emptyCategories"]


def _used() -> set[str]:
    return {cap["category"] for doc in documents().values() for cap in doc["capabilities"]}


def _bundled_schema() -> dict[str, Any]:
    return json.loads((REPO / "schema" / "capability-schema.json").read_text("utf-8"))


def test_the_bundled_schemas_categories_nothing_is_in(tmp_path: Path) -> None:
    defined = set(_bundled_schema()["$defs"]["category"]["enum"])
    empty = _empty_categories(tmp_path, None)
    assert empty == sorted(defined - _used()) and "debugging" in empty


def test_a_schemas_own_enumeration_written_in_place(tmp_path: Path) -> None:
    """A category enumerated where the capability's `category` is, without a `$ref`, and a value no file or URI
    could be named by ('../x', which validation would refuse in a document) left out."""
    schema = _bundled_schema()
    schema["$defs"]["capability"]["properties"]["category"] = {"enum": [*_used(), "release-notes", "../x", 7]}
    assert _empty_categories(tmp_path, schema) == ["release-notes"]


@pytest.mark.parametrize(
    "category",
    [
        {"type": "string"},  # free: no category is defined beyond those used
        {"anyOf": [{"enum": ["release-notes"]}, {"type": "string"}]},  # not an enumeration of the category itself
    ],
)
def test_a_schema_that_enumerates_no_category_defines_none(tmp_path: Path, category: dict[str, Any]) -> None:
    schema = _bundled_schema()
    schema["$defs"]["capability"]["properties"]["category"] = category
    assert _empty_categories(tmp_path, schema) == []


def test_references_that_loop_or_lead_nowhere_define_none() -> None:
    """Read before validation has refused such a schema (`capidx validate` reads a schema's categories too)."""
    from capidx.compiler.validate.schemacategories import defined_categories

    looping = {"$ref": "#"}
    elsewhere = {"properties": {"capabilities": {"$ref": "#/$defs/missing"}}}
    assert defined_categories(looping) == defined_categories(elsewhere) == defined_categories([]) == ()
