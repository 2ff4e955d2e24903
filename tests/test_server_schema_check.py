"""The server's small JSON Schema validator agrees with `jsonschema` on capidx's own schemas."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from server_support import fixture_hand_build, rewrite_manifest, write_build  # noqa: F401 (fixtures)

from capidx.server.schema_check import UnsupportedSchema, Validator
from capidx.server.settings import serve_schema
from capidx.server.tools import INPUT_SCHEMAS, index_input_schema


def bundled(name: str) -> dict:
    return json.loads(resources.files("capidx.schema").joinpath(name).read_text("utf-8"))


def agree(schema: dict, instance: object) -> None:
    ours = sorted("/".join(map(str, e.path)) for e in Validator(schema).iter_errors(instance))
    theirs = sorted(
        "/".join(map(str, e.absolute_path)) for e in jsonschema.Draft202012Validator(schema).iter_errors(instance)
    )
    assert bool(ours) == bool(theirs), (instance, ours, theirs)
    assert set(ours) <= set(theirs) | {""}, (ours, theirs)


def manifest_variants(build: Path) -> list[dict]:
    base = json.loads((build / "manifest.json").read_text("utf-8"))
    edits = [
        lambda m: None,
        lambda m: m.update(format=2),
        lambda m: m.update(uriPrefix="NOT A PREFIX"),
        lambda m: m.pop("catalog"),
        lambda m: m.update(extra=1),
        lambda m: m["artifacts"][0].update(bytes=-1),
        lambda m: m["artifacts"][0].update(bytes=1.5),
        lambda m: m["artifacts"][0].update(bytes=True),
        lambda m: m["artifacts"][0].update(path="../x"),
        lambda m: m["artifacts"][0].update(kind="nope"),
        lambda m: m["artifacts"][0]["params"].update(agent="Not A Slug"),
        lambda m: m["artifacts"][0]["tokens"].update(cl100k_base="many"),
        lambda m: m["encodings"].clear(),
        lambda m: m["resourceTemplates"][0].update(kind="summary"),
        lambda m: m["budgets"].append({"kind": "x", "budget": 0, "tokens": 1, "uri": "u", "ok": True}),
        lambda m: m.update(inputDigest="sha256:XYZ"),
    ]
    variants = []
    for edit in edits:
        manifest = json.loads(json.dumps(base))
        edit(manifest)
        variants.append(manifest)
    return variants


def test_manifest_schema(hand_build: Path) -> None:
    schema = bundled("build-manifest.schema.json")
    for manifest in manifest_variants(hand_build):
        agree(schema, manifest)


@pytest.mark.parametrize(
    "serve",
    [
        {},
        {"expose": ["summary", "full"]},
        {"expose": ["summary", "summary"]},
        {"expose": ["fulll"]},
        {"expose": "summary"},
        {"port": 70000},
        {"port": -1},
        {"port": "80"},
        {"port": 80.0},
        {"resources": "yes"},
        {"transport": "ws"},
        {"allowed_hosts": ["a", 1]},
        {"unknown": 1},
        [],
        None,
    ],
)
def test_serve_section(serve: object) -> None:
    agree(serve_schema(), serve)


@pytest.mark.parametrize(
    "arguments",
    [
        {"agent": "a", "capability": "b"},
        {"agent": "a"},
        {"agent": 1, "capability": "b"},
        {"agent": "", "capability": "b"},
        {"agent": "a" * 201, "capability": "b"},
        {"agent": "a", "capability": "b", "more": True},
        {"capability": "b", "agents": ["x"] * 21},
        {"capability": "b", "agents": [1]},
        {"variant": "full"},
        {"variant": "other"},
    ],
)
def test_tool_arguments(arguments: dict) -> None:
    for schema in [*INPUT_SCHEMAS.values(), index_input_schema(("summary", "full"))]:
        agree(schema, arguments)


def test_unsupported_keywords_fail_loudly() -> None:
    with pytest.raises(UnsupportedSchema, match="oneOf"):
        Validator({"oneOf": [{"type": "string"}]})
    with pytest.raises(UnsupportedSchema, match="local"):
        Validator({"$ref": "https://example.org/schema"})
