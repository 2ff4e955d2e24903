"""Unknown keys: the likely spelling of a misspelled key, and near misses under a user's open schema.

The messages themselves are pinned by the data-driven cases (tests/cases/validate: unknown-key,
unknown-key-optional, key-case, required-missing, open-schema-typos, extension-keys).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from capidx.cli import cli
from capidx.compiler.validate.keys import one_edit, suggest, unknown_key

KNOWN = ["category", "name", "description", "available", "terminology", "tier", "sources", "url"]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("terminolgy", "terminology", True),  # a letter missing
        ("terminology", "terminolgy", True),
        ("tierr", "tier", True),  # one too many
        ("nane", "name", True),  # one changed
        ("naem", "name", True),  # two neighbours swapped
        ("name", "name", False),  # the same key is no typo
        ("nmae", "mane", False),  # two changes
        ("tie", "tiers", False),
        ("", "a", True),
    ],
)
def test_one_edit(a: str, b: str, expected: bool) -> None:
    assert one_edit(a, b) is expected


@pytest.mark.parametrize(
    ("key", "loose", "expected"),
    [
        ("terminolgy", False, "terminology"),
        ("URL", False, "url"),  # a change of case
        ("Terminology", False, "terminology"),
        ("descripshun", True, "description"),  # similar spelling, only when loose
        ("descripshun", False, None),
        ("zzz", True, None),
        ("x" * 1000, True, None),  # long keys are not compared
    ],
)
def test_suggest(key: str, loose: bool, expected: str | None) -> None:
    assert suggest(key, KNOWN, loose=loose) == expected


def test_a_long_unknown_key_is_cut_short_in_its_message() -> None:
    message = unknown_key("k" * 10_000, None)
    assert message.startswith("'kkk") and message.endswith("…' is not a known key") and len(message) < 100


def test_a_self_referencing_user_schema_does_not_hang_the_near_miss_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "agents" / "alpha" / "capabilities"
    folder.mkdir(parents=True)
    capability = {"name": "Code Review", "terminolgy": "Review mode"}
    (folder / "current.json").write_text(json.dumps({"capabilities": [capability]}), encoding="utf-8")
    loop = {
        "allOf": [{"$ref": "#"}, {"$ref": "#/allOf/0"}],
        "properties": {"capabilities": {"items": {"$ref": "#/$defs/c"}}},
        "$defs": {"c": {"allOf": [{"$ref": "#/$defs/c"}], "properties": {"terminology": {}}}},
    }
    (tmp_path / "loop.json").write_text(json.dumps(loop), encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    result = CliRunner().invoke(cli, ["validate", "--schema", "loop.json", "--today", "2026-01-15"])

    assert result.exit_code == 1, result.output  # jsonschema cannot apply it: "nested too deeply"
    assert "'terminolgy' is not a known key: did you mean 'terminology'?" in result.output
