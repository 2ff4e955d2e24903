"""The shortcuts that make `capidx validate` fast on large catalogs give exactly the answers of the slow ways.

- `JsonPositions` (positions found on demand, by regex steps, the C scanner and per-key searches for
  keys asked for often) equals the full scan `scan_json` for every value and key of tricky JSON:
  escapes in keys and strings, brackets and quotes inside strings, unicode, nesting deeper than the
  regexes reach, minified and CRLF texts, keys asked for often enough to get a search of their own;
- `_LineCounter` (newlines counted between answers) equals the line-start index, in any order;
- `first_too_deep` (which reads a text the parser gave up on) names the value a walk of the parsed data names;
- the entropy of the vague-description rule equals the plain formula;
- `validate_project` leaves the garbage collector as it found it.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from capidx.compiler.derive.semantics import description_stats, term_entropy
from capidx.compiler.validate import positions as sourcemap
from capidx.compiler.validate.positions import (
    JsonPositions,
    Parts,
    _LineCounter,
    _LineIndex,
    first_too_deep,
    scan_json,
)

REPO = Path(__file__).resolve().parent.parent


def _all_parts(value: Any, prefix: Parts = ()) -> list[Parts]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _all_parts(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _all_parts(item, (*prefix, index))
    return found


def _assert_same_positions(text: str, order_seed: int | None = None) -> None:
    """Every value and key (and absent children) located on demand, in document or shuffled order."""
    full, lazy = scan_json(text), JsonPositions(text)
    paths = _all_parts(json.loads(text))
    asked = paths + [(*path, "absent") for path in paths] + [(*path, 10**6) for path in paths]
    if order_seed is not None:
        random.Random(order_seed).shuffle(asked)
    for parts in asked:
        for key in (False, True):
            assert lazy.locate(parts, key=key) == full.locate(parts, key=key), parts


def _nested(depth: int) -> Any:
    value: Any = "bottom"
    for level in range(depth):
        value = [value, level] if level % 2 else {"k": value, "[": "]"}
    return value


TRICKY = [
    '{"a": {"b\\"c": [1, {"d": null}], "é": "x"}, "e": []}',
    '{"sour\\u0063es": [1, 2], "source": 3, "x\\\\": {"\\"": "\\\\\\""}}',  # a key with an escape
    '{"s": "brackets [ { } ] and \\"quotes\\" and \\\\", "t": ["]", "}", "{", "["], "u": {"v": "\\\\"}}',
    '{"日本": {"語": ["🙂", "\\ud83d\\ude42", "a\\u0000b"]}, "\\u65e5": 1, "n": -1.5e+3, "b": [true, false, null]}',
    '[[[[]]], [[], [[[1, [2, [3]]]]]], {"a": [{"b": [{"c": []}]}]}, {}]',
    '{"a":[1,2,{"b":"c\\"d"}],"e":{"f":{"g":[]}},"h":"\\\\"}',  # minified
    '{\r\n  "a": [\r\n    1,\r\n    {"b": "x"}\r\n  ],\r\n  "c": "y"\r\n}\r\n',
    "  \n\n  {\n\n\n  }  \n",
    "[]",
    '  "scalar"  ',
    json.dumps({"deep": _nested(60), "after": {"k": 1}}),  # deeper than the regexes reach
    json.dumps({"deep": _nested(60), "after": {"k": 1}}, indent=2),
]


@pytest.mark.parametrize("text", TRICKY)
def test_positions_on_demand_equal_the_full_scan(text: str) -> None:
    _assert_same_positions(text)
    _assert_same_positions(text, order_seed=7)


def test_bundled_documents_in_any_order() -> None:
    for path in sorted((REPO / "agents").glob("*/capabilities/current.json")):
        _assert_same_positions(path.read_text("utf-8"), order_seed=3)


def _records(count: int, seed: int) -> list[dict[str, Any]]:
    """Records whose often-asked keys sit at varying places, behind values of every kind."""
    rng = random.Random(seed)
    fillers = ["plain", 'with "quotes" and [brackets] {braces}', "back\\slash\\", "é 字 🙂", "", "\n\t"]
    records = []
    for index in range(count):
        record: dict[str, Any] = {}
        for filler in range(rng.randint(0, 5)):
            record[f"f{filler}"] = rng.choice(
                [rng.choice(fillers), rng.randint(-5, 5), [rng.choice(fillers)], {"x": [[{}], rng.choice(fillers)]}]
            )
        if rng.random() < 0.5:
            record["deep"] = _nested(rng.choice([3, 30]))
        if rng.random() < 0.9:
            record["sources"] = [{"url": rng.choice(fillers), "verifiedDate": "2026-01-01"}]
        record['weird "key" [x]'] = index
        records.append(dict(sorted(record.items(), key=lambda _: rng.random())))
    return records


@pytest.mark.parametrize("indent", [None, 2])
def test_keys_asked_often_are_found_by_their_own_search(indent: int | None) -> None:
    """Past `_SEARCH_AFTER` requests a key is found by one regex; answers stay those of the full scan,
    also where the regex cannot answer (an escaped spelling of the key, a value nested too deeply)."""
    records = _records(120, seed=indent or 0)
    text = json.dumps({"capabilities": records}, indent=indent, ensure_ascii=False)
    # The same key spelled with an escape in one record: the search misses it, the walk finds it.
    text = text.replace('"sources"', '"sour\\u0063es"', 1)
    full, lazy = scan_json(text), JsonPositions(text)
    for index in range(len(records)):
        for key in ("sources", 'weird "key" [x]', "f0", "absent"):
            for parts in [("capabilities", index, key), ("capabilities", index, key, 0, "verifiedDate")]:
                assert lazy.locate(parts, key=True) == full.locate(parts, key=True), parts
                assert lazy.locate(parts) == full.locate(parts), parts
        assert lazy.locate(("capabilities", index)) == full.locate(("capabilities", index))
    assert "sources" in sourcemap._searches  # the search was used, not only the walk


def _first_deeper(value: Any, limit: int, parts: Parts = ()) -> Parts | None:
    """The first value, in the order written, with more than `limit` parts: the plain recursive answer."""
    if len(parts) > limit:
        return parts
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for part, child in children:
        if (found := _first_deeper(child, limit, (*parts, part))) is not None:
            return found
    return None


def _random_value(rng: random.Random, depth: int) -> Any:
    """Strings with brackets, quotes, commas and escapes; lists and objects of up to `depth` levels."""
    strings = ["[", "]}", '"{', "a,b", "c:d", "\\", "é 🙂", ""]
    kind = rng.random()
    if depth == 0 or kind < 0.3:
        return rng.choice([rng.choice(strings), rng.randint(-9, 9), 1.5e-3, None, True, [], {}])
    if kind < 0.65:
        return [_random_value(rng, depth - 1) for _ in range(rng.randint(1, 4))]
    return {rng.choice(strings) + str(index): _random_value(rng, depth - 1) for index in range(rng.randint(1, 4))}


@pytest.mark.parametrize("seed", range(40))
def test_the_first_value_too_deep_is_the_one_a_walk_of_the_data_finds(seed: int) -> None:
    """`first_too_deep` (for texts the json module refuses as nested too deeply) passes strings, shallow containers
    and whole siblings by regex: it names the same value, at the same place, as a recursive walk of the parsed
    data and the full scan, or None where nothing passes the limit; whatever the layout of the text."""
    rng = random.Random(seed)
    value = _random_value(rng, rng.randint(1, 9))
    text = json.dumps(value, indent=rng.choice([None, 0, 2]), ensure_ascii=rng.random() < 0.5)
    for limit in range(1, 9):
        expected = _first_deeper(value, limit)
        found = first_too_deep(text, limit)
        if expected is None:
            assert found is None, (limit, text)
        else:
            assert found == (expected, scan_json(text).locate(expected)), (limit, text)


def test_the_first_value_too_deep_behind_a_long_run_of_siblings() -> None:
    """Runs of items of every kind before the deep one: counted right, at a cost that does not grow with depth."""
    items = ["1", '"a,]"', "[1, [2]]", "{}", "[[[[[[1]]]]]]", '{"k": [1, {"j": "["}]}']
    text = '{"x": [' + ", ".join(items * 200) + ", " + "[" * 100 + "]" * 100 + "]}"
    parts, position = first_too_deep(text, 64) or ((), (0, 0))
    assert parts == ("x", len(items) * 200, *[0] * 63)
    assert position == (1, text.index("[" * 100) + 64)


@pytest.mark.parametrize("seed", range(4))
def test_line_counter_equals_the_line_index(seed: int) -> None:
    rng = random.Random(seed)
    text = "".join(rng.choice(["a", "é", "\n", "\r\n", "🙂", " "]) for _ in range(400))
    for text_ in (text, "", "\n", "no newline", "\n\n\n"):
        index, counter = _LineIndex(text_), _LineCounter(text_)
        offsets = list(range(len(text_) + 1)) * 2
        rng.shuffle(offsets)
        for offset in offsets:
            assert counter.position(offset) == index.position(offset), (text_, offset)


def _plain_entropy(items: list[str]) -> float:
    counts = Counter(items)
    total = sum(counts.values())
    if not total:
        return 0.0
    return max(0.0, math.log2(total) - sum(count * math.log2(count) for count in counts.values()) / total)


def test_entropy_equals_the_plain_formula() -> None:
    rng = random.Random(5)
    for _ in range(2000):
        alphabet = "abcdefghij"[: rng.randint(1, 10)]
        items = [rng.choice(alphabet) for _ in range(rng.choice([0, 1, 5, 40, 200]))]
        assert term_entropy(items) == _plain_entropy(items)
        assert term_entropy(iter(items)) == _plain_entropy(items)
    assert term_entropy(["a"] * 100 + ["b"]) == _plain_entropy(["a"] * 100 + ["b"])  # past the lookup table
    stats = description_stats("Runs tests, runs linters, runs formatters and reports every failure.")
    assert stats.unique_terms < stats.total_terms


# Characters PyYAML counts as line breaks and an editor (and JSON's positions) does not.
_NOT_BREAKS = ["\u2028", "\u2029", "\x85"]


@pytest.mark.parametrize("character", _NOT_BREAKS, ids=["U+2028", "U+2029", "U+0085"])
def test_a_position_after_a_character_yaml_reads_as_a_line_break_is_the_editor_s(
    tmp_path: Path, character: str
) -> None:
    """PyYAML counts U+2028, U+2029 and U+0085 as line breaks: an error after one was placed a line further down, and
    at a column counted from it, than an editor (and validate's own JSON positions) shows. The same document as
    YAML (lines ended by LF, CRLF or CR, as editors read all three) and as JSON is placed alike; so is a YAML syntax
    error, and a capidx.yaml's."""
    from catalog_factory import run_cli

    agent = {"name": "X", "vendor": "V", "version": "1", "lastUpdated": "2026-01-01T00:00:00Z"}
    yaml_text = (
        f'agent:\n  name: "X{character}Y"\n  vendor: V\n  version: "1"\n  lastUpdated: "{agent["lastUpdated"]}"\n'
        f'capabilities:\n  - name: "Cap {character} Two"\n    category: nope-category\n'
    )
    json_text = (
        '{\n  "agent": ' + json.dumps({**agent, "name": f"X{character}Y"}, ensure_ascii=False) + ",\n"
        f'  "capabilities": [\n    {{"name": "Cap {character} Two",\n     "category": "nope-category"}}]\n}}\n'
    )
    expected = {"yaml": (8, 15), "crlf": (8, 15), "cr": (8, 15), "json": (5, 18)}
    texts = {"yaml": yaml_text, "crlf": yaml_text.replace("\n", "\r\n"), "cr": yaml_text.replace("\n", "\r")}
    for name, text in (*texts.items(), ("json", json_text)):
        suffix = "json" if name == "json" else "yaml"
        folder = tmp_path / name / "agents" / "x" / "capabilities"
        folder.mkdir(parents=True)
        (folder / f"current.{suffix}").write_text(text, encoding="utf-8", newline="")
        result = run_cli(["validate"], cwd=tmp_path / name)
        line, col = expected[name]
        assert f"current.{suffix}:{line}:{col}: $.capabilities[0].category:" in result.output, result.output
    broken = tmp_path / "broken"
    (broken / "agents" / "x" / "capabilities").mkdir(parents=True)
    (broken / "agents" / "x" / "capabilities" / "current.yaml").write_text(
        f'agent: "{character}"\nx: [1,\ny: {{\n', encoding="utf-8"
    )
    result = run_cli(["validate"], cwd=broken)
    assert "current.yaml:4:1: invalid YAML" in result.output and "opened at line 3, column 4" in result.output, (
        result.output
    )
    (broken / "capidx.yaml").write_text(f'title: "A{character}B"\nsite: 3\n', encoding="utf-8")
    result = run_cli(["validate"], cwd=broken)
    assert "capidx.yaml:2:7: $.site:" in result.output, result.output
