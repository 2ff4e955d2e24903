"""A user schema's regexes are matched with a time limit (compiler/validate/schemacost.py, schemaregex.py).

A pull request controls `paths.schema`, and jsonschema matched every `pattern` with Python's `re`, which cannot be
interrupted: a pattern that backtracks polynomially passes the structural check (regexrisk) and held `validate` and
`build` for as long as the CI job lived. Each match is now made by the `regex` package with a timeout. The limit is
lowered here so that the slow cases stop at once; no test reads a clock.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from catalog_factory import documents, run_cli, write_catalog

from capidx.compiler.validate import schemacost
from capidx.compiler.validate.schemaregex import reaches_re, with_search
from capidx.compiler.validate.schemas import bundled_schema, load_schema_file

ROOT = Path(__file__).resolve().parents[1]
# The issue's pattern: hours in `re` on 3,000 digits, at once in `regex`, which finds that no `x` follows them.
ADJACENT_DIGITS = "^\\d*\\d*\\d*\\d*\\d*\\d*\\d*x$"
# Slow in `regex` too: ten parts that can each take any share of a long run of 'a's ending in '!'.
SLOW = "^" + ".*a" * 10 + "$"
SLOW_TEXT = "a" * 5000 + "!"
DRAFTS = {
    "2020-12": "https://json-schema.org/draft/2020-12/schema",
    "2019-09": "https://json-schema.org/draft/2019-09/schema",
    "draft-07": "http://json-schema.org/draft-07/schema#",
    "draft-04": "http://json-schema.org/draft-04/schema#",
}


@pytest.fixture
def quick_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """One match may take 0.05 s: the slow cases below need far longer, an ordinary value microseconds."""
    monkeypatch.setattr(schemacost, "MAX_MATCH_SECONDS", 0.05)


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def _issue_schema(draft: str = "2020-12", agent: dict[str, Any] | None = None) -> dict[str, Any]:
    """The schema of the issue: only `agent.version` has a pattern."""
    version = {"type": "string", "pattern": ADJACENT_DIGITS}
    agent = agent if agent is not None else {"type": "object", "properties": {"version": version}}
    return {"$schema": DRAFTS[draft], "type": "object", "properties": {"agent": agent}}


def _catalog(root: Path, version: str = "1" * 3000, key: str | None = None) -> None:
    """The test catalog, claude-code's `agent.version` set to `version` (and `key` added to its agent object)."""
    docs = documents()
    docs["claude-code"]["agent"]["version"] = version
    if key is not None:
        docs["claude-code"]["agent"][key] = "1.0"
    write_catalog(root, docs)


@pytest.mark.parametrize("command", ["validate", "build"])
def test_the_issue_s_pattern_named_in_capidx_yaml_is_matched_at_once(tmp_path: Path, command: str) -> None:
    """The issue as reported: `paths.schema` names a schema whose pattern `re` needed hours for on 3,000 digits (60
    digits: 11.5 s). The value is said not to match, as it does not, and the other documents are checked too."""
    _catalog(tmp_path)
    _write(tmp_path / "s.json", _issue_schema())
    (tmp_path / "capidx.yaml").write_text("paths:\n  schema: s.json\n", encoding="utf-8")
    result = run_cli([command, "-q"], cwd=tmp_path)
    output = result.output if command == "validate" else result.stderr
    assert result.exit_code == 1, output
    assert "claude-code/capabilities/current.json:" in output and "$.agent.version: '1111" in output, output
    assert "does not match the pattern ^\\d*" in output and "copilot-cli/capabilities/current.json:" in output
    assert "Traceback" not in output and not (tmp_path / "build").exists()


def _slow_value_schema(draft: str) -> dict[str, Any]:
    return _issue_schema(draft, {"type": "object", "properties": {"version": {"type": "string", "pattern": SLOW}}})


@pytest.mark.usefixtures("quick_limit")
@pytest.mark.parametrize("draft", list(DRAFTS))
@pytest.mark.parametrize("command", ["validate", "build"])
def test_a_match_that_takes_too_long_is_an_error_at_the_value(tmp_path: Path, command: str, draft: str) -> None:
    """A pattern slow even for `regex`: the match stops, and the value it was matched against carries the error
    (a fault of the schema: exit 2), naming the pattern and the schema file; the other documents are still checked
    (the versions the pattern refuses are said)."""
    _catalog(tmp_path, SLOW_TEXT)
    schema = _write(tmp_path / "slow.json", _slow_value_schema(draft))
    result = run_cli([command, "--schema", str(schema)], cwd=tmp_path)
    output = result.output if command == "validate" else result.stderr
    assert result.exit_code == 2, output
    line = next(line for line in output.splitlines() if "took over" in line)
    assert "claude-code/capabilities/current.json:" in line and "$.agent.version: the schema's pattern" in line
    assert "simplify the pattern in slow.json" in line, line
    assert "copilot-cli/capabilities/current.json:" in output and "does not match the pattern" in output, output
    assert "Traceback" not in output and not (tmp_path / "build").exists()


def _keyword_schema(keyword: str, draft: str) -> dict[str, Any]:
    """An agent schema in which `keyword` makes jsonschema match SLOW against the agent's keys. The keyword comes
    first: jsonschema applies keywords in the order the schema has them."""
    names: dict[str, Any] = {
        "patternProperties": {"patternProperties": {SLOW: {}}},
        "additionalProperties": {"additionalProperties": {"type": "string"}, "patternProperties": {SLOW: {}}},
        "unevaluatedProperties": {"unevaluatedProperties": {"type": "string"}, "patternProperties": {SLOW: {}}},
        "propertyNames": {"propertyNames": {"pattern": SLOW + "|^[a-zA-Z]+$"}},
    }
    return _issue_schema(draft, {"type": "object", **names[keyword]})


@pytest.mark.usefixtures("quick_limit")
@pytest.mark.parametrize(
    ("keyword", "draft"),
    [
        ("patternProperties", "draft-04"),
        ("patternProperties", "2020-12"),
        ("additionalProperties", "draft-07"),
        ("additionalProperties", "2020-12"),
        ("unevaluatedProperties", "2019-09"),
        ("unevaluatedProperties", "2020-12"),
        ("propertyNames", "draft-07"),
    ],
)
def test_every_keyword_that_matches_keys_stops_a_slow_match(tmp_path: Path, keyword: str, draft: str) -> None:
    """jsonschema matches a key against the schema's patterns in `patternProperties`, and again where
    `additionalProperties` and `unevaluatedProperties` work out which keys the patterns name: each is bounded. The
    error is at the object holding the key (or at the key), and names it."""
    _catalog(tmp_path, "1.0", key=SLOW_TEXT)
    schema = _write(tmp_path / "keys.json", _keyword_schema(keyword, draft))
    result = run_cli(["validate", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 2, result.output
    line = next(line for line in result.output.splitlines() if "took over" in line)
    assert "claude-code/capabilities/current.json:" in line and "$.agent" in line and "'aaaa" in line, line
    assert "Traceback" not in result.output


@pytest.mark.usefixtures("quick_limit")
def test_a_slow_match_outside_jsonschema_is_bounded_and_found(tmp_path: Path) -> None:
    """The search for near misses of an open schema matches the patterns of every branch of an `anyOf` against the
    data's keys, where jsonschema stops at the first branch that fits: bounded as well, and the key is found."""
    _catalog(tmp_path, "1.0", key=SLOW_TEXT)
    branches = [{"type": "object"}, {"type": "object", "patternProperties": {SLOW: {}}}]
    schema = _write(tmp_path / "open.json", _issue_schema("2020-12", {"anyOf": branches}))
    result = run_cli(["validate", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 2, result.output
    line = next(line for line in result.output.splitlines() if "took over" in line)
    assert "claude-code/capabilities/current.json:" in line and "$.agent['aaaa" in line, line
    assert "Traceback" not in result.output


def test_a_match_that_runs_past_the_document_s_deadline_is_said_of_the_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The time a match may take is never more than what is left of the document's (`MAX_SECONDS`): here none is left
    when the first pattern is matched, and checking stops as too costly, naming that pattern, once."""
    _catalog(tmp_path, "1.0")
    monkeypatch.setattr(schemacost, "MAX_SECONDS", -1.0)
    monkeypatch.setattr(schemacost, "CLOCK_EVERY", 10**9)  # only a match reads the clock
    schema = _write(tmp_path / "late.json", _issue_schema())
    result = run_cli(["validate", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 2, result.output
    assert result.output.count("late.json: checking a document takes too much work") == 1, result.output
    assert "the last of it in the pattern '^\\d*" in result.output, result.output


def test_a_pattern_that_does_not_compile_raises_re_s_error() -> None:
    """Callers that match a schema's patterns outside jsonschema (hints) catch `re.error`, as they did with `re`."""
    budget = schemacost.Budget()
    budget.start()
    assert budget.search("^a", "abc") and not budget.search("^a", "bc")
    with pytest.raises(re.error):
        budget.search("a(", "a")


# Compiled by `regex`, each repeated part is written out once per turn of its least count, with no time limit: this
# count took it 30 ms and `a{10000000}` 15 s and 2.6 GB, where `re` compiles any count at once.
LONG = "^\\d{20000}$"


@pytest.mark.parametrize("command", ["validate", "build"])
def test_a_pattern_regex_would_write_out_at_length_is_refused_at_its_place(tmp_path: Path, command: str) -> None:
    """A schema's regex whose repeats `regex` would write out past `MAX_WRITTEN_OUT` parts is an error of the schema
    file at the pattern (exit 2), before any document is checked; so are the patterns of one `patternProperties` that
    do so together, which `additionalProperties` matches as one regex."""
    _catalog(tmp_path, "1.0")
    version = {"type": "string", "pattern": LONG}
    keys = {"^a{6000}$": {}, "^b{6000}$": {}, "^(name|vendor|version|lastUpdated)$": {}}
    schema = _issue_schema("2020-12", {"properties": {"version": version}, "patternProperties": keys})
    _write(tmp_path / "s.json", schema)
    result = run_cli([command, "-q", "--schema", "s.json"], cwd=tmp_path)
    output = result.output if command == "validate" else result.stderr
    assert result.exit_code == 2, output
    assert (
        "$.properties.agent.properties.version.pattern: regex '^\\d{20000}$': its repeats come to 20,002 parts"
        in output
    )
    assert (
        "$.properties.agent.patternProperties: its regexes, which additionalProperties matches as one, come to"
        in output
    )
    assert "current.json" not in output and "Traceback" not in output, output


def test_a_pattern_regex_would_write_out_at_length_is_never_compiled() -> None:
    """Whatever reaches the bounded search unchecked is refused as `re` refuses a pattern, not compiled by `regex`."""
    budget = schemacost.Budget()
    budget.start()
    with pytest.raises(re.error, match="20,002 parts written out"):
        budget.search(LONG, "1")
    assert budget.search("^\\d{2}$", "12")


def _search(pattern: str, text: str) -> bool:
    return re.search(pattern, text) is not None


def _validator_classes() -> list[Any]:
    return [jsonschema.validators.validator_for({"$schema": uri}) for uri in DRAFTS.values()] + [
        jsonschema.Draft3Validator,
        jsonschema.Draft6Validator,
    ]


@pytest.mark.parametrize("cls", _validator_classes(), ids=lambda cls: cls.__name__)
def test_no_keyword_of_any_draft_reaches_re_once_given_a_search(cls: Any) -> None:
    """Which of jsonschema's keyword functions match a regex is found in their code, not listed: `pattern`,
    `patternProperties`, `additionalProperties` and `unevaluatedProperties` today. After `with_search` none of
    them, nor what they call, names `re` any more; should a later jsonschema match a regex elsewhere, this fails."""
    reaching = [keyword for keyword, check in cls.VALIDATORS.items() if reaches_re(check)]
    assert "pattern" in reaching and "patternProperties" in reaching  # the walk finds what it must
    assert [keyword for keyword, check in cls.VALIDATORS.items() if reaches_re(with_search(check, _search))] == []


KEYWORD_CASES = [
    ({"pattern": "^a"}, ["abc", "bc", 5]),
    ({"patternProperties": {"^x-": {"type": "string"}}}, [{"x-a": "s"}, {"x-a": 1}, {"y": 1}]),
    (
        {"properties": {"a": {}}, "patternProperties": {"^x-": {}}, "additionalProperties": False},
        [{"a": 1, "x-b": 2}, {"a": 1, "c": 2}, {"c": 1, "d": 2}],
    ),
    ({"additionalProperties": False}, [{}, {"a": 1}]),
    (
        {"allOf": [{"patternProperties": {"^x-": True}}], "unevaluatedProperties": False},
        [{"x-a": 1}, {"x-a": 1, "b": 2}],
    ),
    ({"propertyNames": {"pattern": "^[a-z]+$"}}, [{"ab": 1}, {"A": 1}]),
]


@pytest.mark.parametrize("draft", ["2020-12", "2019-09", "draft-07", "draft-04"])
@pytest.mark.parametrize(("schema", "instances"), KEYWORD_CASES)
def test_the_bounded_keywords_decide_and_say_as_jsonschema_s_own(
    draft: str, schema: dict[str, Any], instances: list[Any]
) -> None:
    """The same errors, with the same messages and places, from jsonschema's validator and from a user schema's."""
    schema = {"$schema": DRAFTS[draft], **copy.deepcopy(schema)}
    plain = jsonschema.validators.validator_for(schema)(schema)
    bounded = schemacost.counted(type(plain), budget := schemacost.Budget())(schema)

    def said(errors: Iterator[Any]) -> list[tuple[str, list[Any]]]:
        return sorted((error.message, list(error.absolute_path)) for error in errors)

    for instance in instances:
        budget.start()
        assert said(bounded.iter_errors(instance)) == said(plain.iter_errors(instance)), instance


def _patterns(node: Any) -> Iterator[str]:
    """Every `pattern` and `patternProperties` key in a schema."""
    if isinstance(node, list):
        for item in node:
            yield from _patterns(item)
    elif isinstance(node, dict):
        if isinstance(node.get("pattern"), str):
            yield node["pattern"]
        if isinstance(node.get("patternProperties"), dict):
            yield from node["patternProperties"]
        for value in node.values():
            yield from _patterns(value)


def _strings(node: Any) -> Iterator[str]:
    """Every key and string of a document."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from _strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)
    elif isinstance(node, str):
        yield node


def _read(path: Path) -> Any:
    """A JSON file's data; None for the cases that are no JSON on purpose."""
    try:
        return json.loads(path.read_text("utf-8"))
    except (OSError, ValueError, RecursionError):  # a folder named like a file, no JSON, nested past the parser
        return None


def _compiles(pattern: str) -> bool:
    """Whether `re` compiles `pattern` (a test case holds one that does not, which the meta-schema refuses)."""
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


def _schemas() -> list[Any]:
    bundled = [bundled_schema(name) for name in sorted(path.name for path in (ROOT / "schema").glob("*.json"))]
    cases = sorted((ROOT / "tests" / "cases").rglob("*schema*.json"))
    return bundled + [json.loads(path.read_text("utf-8")) for path in cases]


def test_regex_and_re_agree_on_the_patterns_of_the_bundled_and_test_schemas() -> None:
    """A user schema may refer to a bundled one by `$id`, whose patterns are then matched by `regex`: both engines
    compile every pattern the bundled and test schemas hold and give the same verdict on every key and string of the
    bundled catalog and the test cases, and on the edges where engines differ (a final line break, non-ASCII)."""
    import regex

    patterns = sorted({pattern for schema in _schemas() for pattern in _patterns(schema) if _compiles(pattern)})
    files = [*sorted(ROOT.glob("agents/**/*.json")), *sorted((ROOT / "tests" / "cases").rglob("*.json"))]
    texts = {text for path in files for text in _strings(_read(path))}
    texts |= {"", "a\n", "claude-code\n", "ÄÖ", "é", "e\u0301", "٣", "x-ü", "2026-01-01", "AbC", " a"}
    assert len(patterns) >= 8 and len(texts) > 1000  # the bundled schemas' patterns and catalog, found
    for pattern in patterns:
        compiled = regex.compile(pattern, flags=regex.V0)
        differ = [text for text in texts if bool(re.search(pattern, text)) != bool(compiled.search(text))]
        assert differ == [], pattern


def test_a_user_schema_is_loaded_with_its_patterns_matched_by_the_bounded_search(tmp_path: Path) -> None:
    """The validator of a user schema is the one whose matches are bounded; capidx's own schemas keep `re`."""
    validator, problems = load_schema_file(_write(tmp_path / "s.json", _issue_schema()))
    assert validator is not None and problems == [] and validator.search is not None
