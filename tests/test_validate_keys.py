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
from capidx.schema.wording import one_edit, suggest, unknown_key, within_edits

KNOWN = ["category", "name", "description", "available", "terminology", "tier", "sources", "url", "status"]


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


def test_one_edit_says_what_the_alignment_says_of_two_different_strings() -> None:
    """one_edit compares slices instead of aligning cell by cell (fast for the near-miss check): the same answers."""
    import itertools

    for length_a, length_b in itertools.product(range(5), repeat=2):
        for a in map("".join, itertools.product("ab", repeat=length_a)):
            for b in map("".join, itertools.product("ab", repeat=length_b)):
                assert one_edit(a, b) is (a != b and within_edits(a, b, 1)), (a, b)


@pytest.mark.parametrize(
    ("key", "loose", "expected"),
    [
        ("terminolgy", False, "terminology"),
        ("URL", False, "url"),  # a change of case
        ("Terminology", False, "terminology"),
        ("dscriptin", True, "description"),  # two edits, only when loose and the key is long
        ("dscriptin", False, None),
        ("descripshun", True, None),  # three edits: no likely typo
        ("tags", True, None),  # nothing alike (difflib thought 'status')
        ("title", True, None),  # not 'tier'
        ("src", True, None),  # not 'sources'
        ("tiee", True, "tier"),  # short keys: one edit only
        ("tre", True, None),
        ("zzz", True, None),
        ("x" * 1000, True, None),  # long keys are not compared
    ],
)
def test_suggest(key: str, loose: bool, expected: str | None) -> None:
    assert suggest(key, KNOWN, loose=loose) == expected


@pytest.mark.parametrize(
    ("a", "b", "limit", "expected"),
    [
        ("dscriptin", "description", 2, True),
        ("descripshun", "description", 2, False),
        ("implemnetation", "implementation", 2, True),  # a swap and nothing else
        ("abcdef", "badcfe", 2, False),  # three swaps
        ("", "ab", 2, True),
        ("x" * 200, "y" * 200, 2, False),
    ],
)
def test_within_edits(a: str, b: str, limit: int, expected: bool) -> None:
    assert within_edits(a, b, limit) is expected


def _key_messages(tmp_path: Path, capability: dict[str, object]) -> list[str]:
    folder = tmp_path / "agents" / "alpha" / "capabilities"
    folder.mkdir(parents=True, exist_ok=True)
    document = {
        "agent": {"name": "Alpha", "vendor": "V", "version": "1", "lastUpdated": "2026-01-01"},
        "capabilities": [capability],
    }
    (folder / "current.json").write_text(json.dumps(document), encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["validate", "--format", "json", "--today", "2026-01-15", str(tmp_path / "agents")]
    )
    return [d["message"] + " | " + str(d.get("hint")) for d in json.loads(result.output)["diagnostics"]]


BASE = {"category": "hooks", "name": "Hooks", "description": "Runs commands at lifecycle events.", "available": True}


@pytest.mark.parametrize("key", ["tags", "title", "src"])
def test_an_unlike_key_gets_no_suggestion(tmp_path: Path, key: str) -> None:
    [message] = [m for m in _key_messages(tmp_path, {**BASE, key: "x"}) if f"'{key}'" in m]
    assert "did you mean" not in message and "known keys:" in message


def test_a_key_already_present_in_another_case_is_said_to_be(tmp_path: Path) -> None:
    [message] = [m for m in _key_messages(tmp_path, {**BASE, "Available": False}) if "'Available'" in m]
    assert "'Available' is not a known key: 'available' is already there, in another case" in message
    assert "did you mean" not in message


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

    assert result.exit_code == 2, result.output  # jsonschema cannot apply it: the schema's references loop
    assert "'terminolgy' is not a known key: did you mean 'terminology'?" in result.output


def _model_messages(tmp_path: Path, model: dict[str, object]) -> list[str]:
    folder = tmp_path / "agents" / "alpha" / "capabilities"
    folder.mkdir(parents=True, exist_ok=True)
    document = {
        "agent": {"name": "Alpha", "vendor": "V", "version": "1", "lastUpdated": "2026-01-01T00:00:00Z"},
        "capabilities": [BASE | {"category": "customization"}],
        "models": [model],
    }
    (folder / "current.json").write_text(json.dumps(document), encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["validate", "--format", "json", "--today", "2026-01-15", str(tmp_path / "agents")]
    )
    return [d["message"] for d in json.loads(result.output)["diagnostics"] if d["severity"] == "error"]


def test_a_model_note_as_the_public_catalog_writes_it_is_known_and_a_misspelled_one_is_not(tmp_path: Path) -> None:
    """The public ai-agent-capabilities files give models a `note` its schema does not list: a document copied from
    them must validate; a misspelling of it is still caught at the key."""
    public = {"name": "Model X", "provider": "Acme", "available": True, "tier": "free", "note": "Default model"}
    assert _model_messages(tmp_path, public) == []
    [message] = _model_messages(tmp_path, public | {"notes": "Fast"})
    assert "'notes' is not a known key: did you mean 'note'?" in message
