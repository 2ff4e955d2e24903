"""The categories a schema defines and no capability is in reach the build's match.json (`emptyCategories`), so that
the server can say the catalog records nothing there; only an enumeration the schema writes for a capability's
category counts (through its own `#/...` references), and a schema that leaves the category free defines none."""

from __future__ import annotations

import json
from collections.abc import Callable
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


@pytest.mark.parametrize(
    ("category", "empty"),
    [
        # beside a `$ref`, an enumeration applies too (draft 2020-12): only what both allow is a category
        (lambda used: {"$ref": "#/$defs/category", "enum": used}, []),
        (lambda used: {"$ref": "#/$defs/slug", "enum": [*used, "debugging"]}, ["debugging"]),
        (lambda used: {"allOf": [{"$ref": "#/$defs/category"}, {"enum": [*used, "debugging", "x-y"]}]}, ["debugging"]),
        # a pointer as a URI fragment: its reserved characters escaped
        (lambda used: {"$ref": "#/$defs/a~1b%20c"}, ["x-y"]),
    ],
)
def test_every_subschema_that_applies_to_the_category_counts(
    tmp_path: Path, category: Callable[[list[str]], dict[str, Any]], empty: list[str]
) -> None:
    """A schema's categories are those every enumeration that applies to a capability's category allows, as
    validation applies them: never one a document could not be filed under."""
    schema = _bundled_schema()
    used = sorted(_used())
    schema["$defs"] |= {"slug": {"type": "string", "pattern": "^[a-z-]+$"}, "a/b c": {"enum": [*used, "x-y"]}}
    schema["$defs"]["capability"]["properties"]["category"] = category(used)
    assert _empty_categories(tmp_path, schema) == empty


def test_a_reference_read_only_as_a_pointer_within_the_schema() -> None:
    """An anchor ('#category') is not a pointer to a key of that name; a `const` is an enumeration of one."""
    from capidx.compiler.validate.schemacategories import defined_categories

    def schema(category: dict[str, Any]) -> dict[str, Any]:
        capabilities = {"items": {"properties": {"category": category}}}
        return {"properties": {"capabilities": capabilities}, "category": {"enum": ["testing"]}}

    assert defined_categories(schema({"$ref": "#category"})) == ()
    assert defined_categories(schema({"const": "testing"})) == ("testing",)
