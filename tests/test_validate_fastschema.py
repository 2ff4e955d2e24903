"""The fast schema check is an accelerator only: it may say "valid" only where jsonschema finds no error.

Differential tests: the bundled catalog, the case folders' data and many mutations of both are
checked by both, and must agree exactly for the bundled schemas (so valid documents do take the fast
path, and no invalid one ever does).
"""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import run_cli, write_catalog

from capidx.compiler import usercache
from capidx.compiler.validate.fastschema import compile_check
from capidx.compiler.validate.load import load_file
from capidx.compiler.validate.schemas import (
    ALIASES_SCHEMA,
    CAPABILITY_SCHEMA,
    CONFIG_SCHEMA,
    bundled_schema,
    bundled_validator,
    load_schema_file,
    make_validator,
    schema_diagnostics,
)

REPO = Path(__file__).resolve().parent.parent
CASES = REPO / "tests" / "cases" / "validate"

# Values that break one rule or another: wrong types, empty and overlong strings, malformed dates and URIs.
ODD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    1.0,
    1.5,
    -1,
    2,
    "",
    " ",
    "x",
    "2026-13-45",
    "2026-01-15",
    "2026-01-15T09:00:00Z",
    "not a date",
    "https://example.com/a",
    "not a uri",
    "stable",
    "chat-assistance",
    "free",
    "x" * 301,
    "y" * 60,
    [],
    ["a"],
    [""],
    [1],
    {},
    {"pattern": "a", "confidence": 0.5},
    {"pattern": "", "confidence": 2},
    float("nan"),
    ["a", "a"],
    ["cl100k_base", "o200k_base"],
    [1, 1.0],
    0.0,
    1e9,
]
# A capidx.yaml using most options (mutated below like the catalog documents).
CONFIG = {
    "paths": {"agents": "agents", "aliases": None, "templates": "t", "out": "build"},
    "staleness": {"warn_days": 30, "old_days": 90, "error_days": None},
    "lint": {"min_description_entropy": 2.5},
    "uri_prefix": "capability-index://",
    "encodings": ["cl100k_base"],
    "budgets": {"summary": 1000, "lookup": 450},
    "relationships": {"similarity_threshold": 0.3, "max_similar": 5},
    "serve": {"expose": ["summary", "stats"], "transport": "stdio"},
}


def _documents() -> list[tuple[str, Any]]:
    found = []
    for path in sorted((REPO / "agents").glob("*/capabilities/current.json")):
        found.append((CAPABILITY_SCHEMA, json.loads(path.read_text("utf-8"))))
    found.append((ALIASES_SCHEMA, json.loads((REPO / "agents" / "aliases.json").read_text("utf-8"))))
    for path in sorted(CASES.rglob("capabilities/current.*")):
        source, _ = load_file(path)
        if source is not None:
            found.append((CAPABILITY_SCHEMA, source.data))
    return found


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    paths = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            paths += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            paths += _paths(item, (*prefix, index))
    return paths


def _mutate(document: Any, rng: random.Random) -> Any:
    mutated = copy.deepcopy(document)
    path = rng.choice(_paths(mutated))
    if not path:
        return rng.choice(ODD_VALUES)
    parent = mutated
    for part in path[:-1]:
        parent = parent[part]
    action = rng.random()
    if action < 0.2 and isinstance(parent, dict):
        del parent[path[-1]]
    elif action < 0.3 and isinstance(parent, dict):
        parent[rng.choice(["extra", "nmae", "$schema", "verifiedDate", "tier"])] = rng.choice(ODD_VALUES)
    else:
        parent[path[-1]] = copy.deepcopy(rng.choice(ODD_VALUES))
    return mutated


def _jsonschema_valid(validator: Any, data: Any) -> bool:
    return not any(True for _ in validator.iter_errors(data))


@pytest.mark.parametrize("name", [CAPABILITY_SCHEMA, ALIASES_SCHEMA, CONFIG_SCHEMA])
def test_bundled_schemas_have_a_fast_check(name: str) -> None:
    assert bundled_validator(name).fast_check is not None


def test_config_schema_is_checked_without_jsonschema() -> None:
    """capidx.yaml is read by every command, a no-op build included: a valid one must not import jsonschema."""
    assert compile_check(bundled_schema(CONFIG_SCHEMA)) is not None  # no format checker needed
    code = (
        "import sys; from pathlib import Path; from capidx.compiler.config import load_config; "
        f"config, problems = load_config(Path({str(REPO / 'capidx.yaml')!r}), Path('.')); "
        "assert not problems, problems; assert 'jsonschema' not in sys.modules, 'jsonschema imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_fast_check_agrees_with_jsonschema_on_mutated_documents() -> None:
    """The fast check of every bundled schema gives jsonschema's verdict (formats: jsonschema's own checker)."""
    rng = random.Random(20260115)
    documents = [*_documents(), (CAPABILITY_SCHEMA, _odd_formats()), (CONFIG_SCHEMA, CONFIG)]
    compared = invalid = 0
    for name, document in documents:
        validator = bundled_validator(name).jsonschema_validator
        exact = bundled_validator(name).fast_check
        assert exact is not None
        samples = [document] + [_mutate(part, rng) for part in _slices(document, 30)]
        for sample in samples:
            expected = _jsonschema_valid(validator, sample)
            assert exact(sample) == expected, json.dumps(sample, default=str)[:500]
            compared += 1
            invalid += not expected
    assert compared > 500 and invalid > 100  # the mutations do reach invalid documents
    for path in sorted((REPO / "agents").glob("*/capabilities/current.json")):  # real data takes the fast path
        assert bundled_validator(CAPABILITY_SCHEMA).fast_check(json.loads(path.read_text("utf-8"))), path


def _slices(document: Any, count: int) -> list[Any]:
    """`count` documents to mutate. A bundled document (36 capabilities, ~50 kB) is cut to 3 capabilities at a
    time, in turn, so every capability is still mutated somewhere: the schema checks each capability alike, and
    a whole document costs ten times as much to check (the whole ones are checked unmutated above and below)."""
    capabilities = document.get("capabilities") if isinstance(document, dict) else None
    if not isinstance(capabilities, list) or len(capabilities) <= 6:
        return [document] * count
    return [
        {**document, "capabilities": [capabilities[(3 * i + k) % len(capabilities)] for k in range(3)]}
        for i in range(count)
    ]


def _odd_formats() -> dict[str, Any]:
    """A valid document with dates, date-times and URIs our own format rules may not vouch for."""
    source = {"url": "https://example.com/a", "description": "d", "sourceGranularity": "section"}
    sources = [
        {**source, "url": url}
        for url in ("mailto:someone@example.com", "https://example.com/a%20b", "urn:isbn:0451450523", "http://[::1]/")
    ]
    sources += [{**source, "verifiedDate": "2024-02-29"}, {**source, "publishedDate": "2026-01-15"}]
    capability = {"name": "n", "category": "testing", "description": "d", "available": True, "sources": sources}
    agent = {"name": "A", "vendor": "V", "version": "1", "lastUpdated": "2026-01-15t09:00:00.5+01:00"}
    return {"agent": agent, "capabilities": [capability]}


FORMAT_SAMPLES = {
    "date": [
        "2026-01-15",
        "2024-02-29",
        "2023-02-29",
        "2026-13-01",
        "0000-01-01",
        "2026-1-15",
        "20260115",
        "2026-01-15\n",
        "２０２６-01-15",
        "2026-01-15T00:00:00Z",
        "",
    ],
    "date-time": [
        "2026-01-15T09:00:00Z",
        "2026-01-15t09:00:00z",
        "2026-01-15T09:00:00.123+05:30",
        "2026-01-15T24:00:00Z",
        "2026-01-15T09:00:60Z",
        "0000-01-01T00:00:00Z",
        "2026-02-30T00:00:00Z",
        "2026-01-15 09:00:00Z",
        "2026-01-15T09:00:00",
        "2026-01-15T09:00:00Z\n",
        "2026-01-15T09:00:00+24:00",
    ],
    "uri": [
        "https://example.com",
        "https://example.com/a/b?c=d&e#f",
        "http://a:8080/",
        "ftp://x/y;z",
        "https://example.com/a b",
        "https://exa mple.com",
        "//example.com",
        "example.com",
        "https:",
        "https://example.com/%zz",
        "https://example.com/%20",
        "https://user@example.com/",
        "a+b.c-d://x",
        "1http://x",
        "https://example.com/é",
        "https://example.com/#a#b",
        "https://[::1]/",
        "https://e.com/\n",
    ],
}


@pytest.mark.parametrize("name", sorted(FORMAT_SAMPLES))
def test_formats_are_decided_as_jsonschemas_format_checker_decides(name: str) -> None:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "format": name}
    checker = make_validator(schema)
    check = compile_check(schema)  # formats decided without jsonschema (compiler/validate/formats.py)
    assert check is not None
    rng = random.Random(name)
    samples = list(FORMAT_SAMPLES[name])
    for _ in range(3000):  # small edits of the samples: characters dropped, doubled or replaced
        text = list(rng.choice(FORMAT_SAMPLES[name]))
        if text:
            at = rng.randrange(len(text))
            text[at : at + 1] = rng.choice([[], [text[at]] * 2, [rng.choice("0123456789:-/.%?#@Tt Zz+[]é")]])
        samples.append("".join(text))
    verdicts = {sample: check(sample) for sample in samples}
    assert all(verdict == _jsonschema_valid(checker, sample) for sample, verdict in verdicts.items())
    assert any(verdicts.values()) and not all(verdicts.values())


def test_the_schema_is_not_modified_by_compiling() -> None:
    schema = bundled_schema(CAPABILITY_SCHEMA)
    before = copy.deepcopy(schema)
    assert compile_check(schema) is not None
    assert schema == before


def test_a_format_without_rules_of_ours_gets_no_fast_check() -> None:
    """Only the formats of capidx's own schemas are decided without jsonschema; any other leaves it to jsonschema."""
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "format": "email"}
    assert compile_check(schema) is None
    assert compile_check({**schema, "format": "uri"}) is not None


def test_a_users_schema_gets_no_fast_check(tmp_path: Path) -> None:
    """fastjsonschema and jsonschema differ in corners (`1 == True` in `enum`, `$ref` beside other keywords in
    older drafts): only capidx's own schemas, tested above, are checked by both."""
    path = tmp_path / "schema.json"
    path.write_text(json.dumps({"$schema": "https://json-schema.org/draft/2020-12/schema", "enum": [1, "a"]}), "utf-8")
    validator, problems = load_schema_file(path)
    assert validator is not None and not problems
    assert validator.fast_check is None and not validator.certainly_valid(True)
    assert [error.message for error in validator.iter_errors(True)]  # jsonschema decides: True is not 1


def test_recursive_reference() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {
            "node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}
        },
        "$ref": "#/$defs/node",
    }
    validator = make_validator(schema)
    check = compile_check(schema)
    assert check is not None
    good = {"children": [{"children": []}, {}]}
    bad = {"children": [{"children": [1]}]}
    assert check(good) and _jsonschema_valid(validator, good)
    assert not check(bad) and not _jsonschema_valid(validator, bad)


def test_invalid_documents_are_still_described_by_jsonschema(tmp_path: Path) -> None:
    path = tmp_path / "current.json"
    path.write_text(json.dumps({"agent": {"name": "A"}, "capabilities": [{"name": "x", "category": "chat"}]}), "utf-8")
    source, _ = load_file(path)
    assert source is not None
    messages = [diagnostic.message for diagnostic in schema_diagnostics(bundled_validator(CAPABILITY_SCHEMA), source)]
    assert "missing required key 'vendor'" in messages and any("chat" in message for message in messages)


# --- the cache of compiled checks ------------------------------------------------------------------------

TINY = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "required": ["a"]}


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "capidx"


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("fastschema-*.bin"))


def _compiling_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import fastjsonschema

    def refuse(*args: Any, **kwargs: Any) -> str:
        raise AssertionError("compiled again")

    monkeypatch.setattr(fastjsonschema, "compile_to_code", refuse)


def test_a_compiled_check_is_kept_in_the_user_cache_and_reused(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert compile_check(TINY)({"a": 1}) is True
    assert len(_entries(cache)) == 1 and usercache.cache_dir() == cache
    _compiling_refused(monkeypatch)
    check = compile_check(TINY)
    assert check is not None and check({"a": 1}) and not check({})
    # another schema is another entry: it must be compiled (here refused, so it gets no fast check)
    assert compile_check({**TINY, "required": ["b"]}) is None


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # truncated
        lambda data: data[:-1] + bytes([data[-1] ^ 1]),  # one bit of the code
        lambda data: b"not an entry at all",
        lambda data: b"",
    ],
)
def test_a_damaged_entry_is_ignored_and_rewritten(cache: Path, damage: Any) -> None:
    compile_check(TINY)
    (entry,) = _entries(cache)
    good = entry.read_bytes()
    entry.write_bytes(damage(good))
    check = compile_check(TINY)
    assert check is not None and check({"a": 1}) and not check({})
    assert entry.read_bytes() == good


def test_an_entry_for_another_schema_is_never_used(cache: Path) -> None:
    compile_check({**TINY, "required": []})  # would accept {}
    (foreign,) = _entries(cache)
    compile_check(TINY)
    mine = next(path for path in _entries(cache) if path != foreign)
    mine.write_bytes(foreign.read_bytes())  # a whole, valid entry, but of another key
    check = compile_check(TINY)
    assert check is not None and not check({})


def test_an_unwritable_cache_still_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder would be", "utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    check = compile_check(TINY)
    assert check is not None and check({"a": 1}) and not check({})


def test_a_relative_xdg_cache_home_is_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert usercache.cache_dir() == tmp_path / ".cache" / "capidx"


def test_a_relative_home_gives_no_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`~/.cache/capidx` from a relative HOME is a folder of whatever folder a command runs in, a project's or a
    build's: no cache is used then, and the check is still compiled and run."""
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", "relative/home")
    monkeypatch.chdir(tmp_path)
    assert usercache.private_cache_dir() is None
    check = compile_check(TINY)
    assert check is not None and check({"a": 1}) and not check({})
    assert list(tmp_path.iterdir()) == []


def test_a_build_works_with_an_unwritable_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be", "utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    validators = [bundled_validator(name) for name in (CAPABILITY_SCHEMA, ALIASES_SCHEMA, CONFIG_SCHEMA)]
    for validator in validators:  # compiled afresh in this test, not taken from the session's cache
        validator.__dict__.pop("fast_check", None)
    project = tmp_path / "project"
    write_catalog(project)
    result = run_cli(["build", "-q", "--out", str(project / "build")], cwd=project)
    assert result.exit_code == 0, result.output
    assert (project / "build" / "manifest.json").is_file()
    assert blocker.read_text("utf-8") == "a file where the cache folder would be"
