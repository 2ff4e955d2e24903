"""A YAML value written once (`&name`) and used elsewhere (`*name`, or merged with `<<: *name`): a problem the schema
finds where it is used is shown there, at the alias, under the JSON path of that place, and the message says where
the value is written.

The schema may refuse a value under one key that uses it and take it under another (an `x-` key takes anything):
showing the anchor's line, as capidx did, pointed at text that is fine where it stands, and two uses refused gave
two errors at one line.
"""

from __future__ import annotations

import re
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from capidx.cli import cli
from capidx.schema.yamldata import parse_yaml
from capidx.server.settings import SettingsError, resolve_settings

HEAD = """\
agent:
  name: Beta Agent
  vendor: Example Corp
  version: "2.1"
  lastUpdated: 2026-01-10T00:00:00Z
"""

SOURCE = """\
url: https://example.com/beta/review
description: Beta review guide
sourceGranularity: section
verifiedDate: 2026-01-14
"""

DESCRIPTION = "Reviews a diff, explains each finding and offers a patch that fixes the problem it found."


@pytest.fixture
def project(valid_project: Path) -> Path:
    return valid_project


def validate(project: Path, text: str) -> list[str]:
    """The problems `capidx validate` reports for the YAML document `text`, each as `line:col: $.path: message`."""
    (project / "agents" / "beta-2" / "capabilities" / "current.yaml").write_text(text, encoding="utf-8")
    result: Result = CliRunner().invoke(cli, ["validate", "--today", "2026-01-15"])
    assert result.exit_code == 1, result.output
    prefix = "agents/beta-2/capabilities/current.yaml:"
    lines = [line.removeprefix(prefix) for line in result.output.splitlines() if line.startswith(prefix)]
    return [line for line in lines if ": warning: " not in line]


def at(text: str, fragment: str, nth: int = 0) -> str:
    """`line:col` of the `nth` occurrence of `fragment` in `text`."""
    offset = [match.start() for match in re.finditer(re.escape(fragment), text)][nth]
    return f"{text.count(chr(10), 0, offset) + 1}:{offset - text.rfind(chr(10), 0, offset)}"


def written(text: str, fragment: str) -> str:
    line, column = at(text, fragment).split(":")
    return f"written at line {line}, column {column}"


def test_a_scalar_refused_under_one_key_that_uses_it_is_shown_at_each_alias(project: Path) -> None:
    text = (
        HEAD
        + "x-words:\n  level: &level page\n"  # any value is fine under an `x-` key
        + "capabilities:\n"
        + f"  - name: Code Review\n    category: *level\n    description: {DESCRIPTION}\n    available: true\n"
        + "    sources:\n      - url: https://example.com/beta/review\n        description: Beta review guide\n"
        + "        sourceGranularity: *level\n        verifiedDate: 2026-01-14\n"
    )

    problems = validate(project, text)

    assert [problem.split(": ")[:2] for problem in problems] == [
        [at(text, "*level"), "$.capabilities[0].category"],
        [at(text, "*level", 1), "$.capabilities[0].sources[0].sourceGranularity"],
    ]
    for problem in problems:
        assert f"; {written(text, '&level page')}, used here through the alias *level" in problem


def test_a_problem_inside_an_aliased_mapping_names_the_line_it_is_written_on(project: Path) -> None:
    """The key the schema refuses is written inside the anchored source; each capability citing it is shown at its
    own alias (the anchor's line and column, where the mapping starts, was shown for both)."""
    source = SOURCE.replace("verifiedDate", "checkedBy: someone\nverifiedDate")
    text = (
        HEAD
        + "x-sources:\n  review: &review\n"
        + "".join(f"    {line}\n" for line in source.splitlines())
        + "capabilities:\n"
        + f"  - name: Code Review\n    category: code-refactoring\n    description: {DESCRIPTION}\n"
        + "    available: true\n    sources:\n      - *review\n"
        + f"  - name: Code Search\n    category: code-refactoring\n    description: {DESCRIPTION}\n"
        + "    available: true\n    sources: [*review]\n"
    )

    problems = validate(project, text)

    assert [problem.split(": ")[:2] for problem in problems] == [
        [at(text, "*review"), "$.capabilities[0].sources[0].checkedBy"],
        [at(text, "*review", 1), "$.capabilities[1].sources[0].checkedBy"],
    ]
    for problem in problems:
        assert f"; {written(text, 'checkedBy')}, used here through the alias *review" in problem


def test_members_merged_from_an_anchor_are_shown_at_the_merge(project: Path) -> None:
    """`<<: *defaults`: the member is written in the anchored mapping and merged where the alias stands; merged
    from a mapping written after `<<:` itself, it is shown where it is written. A member two merged mappings
    both hold stays at the mapping (which one the loader keeps has changed between PyYAML versions)."""
    text = (
        HEAD
        + "x-defaults: &defaults\n  category: nowhere\n  available: true\n  sources:\n"
        + "".join(f"    {'-' if index == 0 else ' '} {line}\n" for index, line in enumerate(SOURCE.splitlines()))
        + "x-more: &more\n  category: elsewhere\n"
        + "capabilities:\n"
        + f"  - name: Code Review\n    <<: *defaults\n    description: {DESCRIPTION}\n"
        + f"  - name: Code Search\n    <<: {{category: inline, available: true}}\n    description: {DESCRIPTION}\n"
        + f"    sources: []\n  - name: Code Tour\n    <<: [*defaults, *more]\n    description: {DESCRIPTION}\n"
    )

    problems = validate(project, text)

    categories = [problem for problem in problems if problem.split(": ")[1].endswith(".category")]
    assert [problem.split(": ")[:2] for problem in categories] == [
        [at(text, "*defaults"), "$.capabilities[0].category"],
        [at(text, "inline"), "$.capabilities[1].category"],
        [at(text, "name: Code Tour"), "$.capabilities[2].category"],  # where the mapping starts
    ]
    assert f"; {written(text, 'nowhere')}, merged here by << through the alias *defaults" in categories[0]
    assert "; written at" not in categories[1] and "; written at" not in categories[2]


def test_serve_places_a_problem_in_an_aliased_value_as_validate_does(project: Path) -> None:
    """capidx.yaml is read by validate and by serve: the same line, column and path, the same note, the same words."""
    (project / "capidx.yaml").write_text("x-ports:\n  main: &port high\nserve:\n  port: *port\n", encoding="utf-8")

    result = CliRunner().invoke(cli, ["validate", "--today", "2026-01-15"])
    with pytest.raises(SettingsError) as served:
        resolve_settings({}, {}, project, None)

    note = "; written at line 2, column 9, used here through the alias *port"
    assert re.search(rf"capidx\.yaml:4:9: \$\.serve\.port: [^\n]*{re.escape(note)}", result.output), result.output
    (port,) = [problem for problem in served.value.problems if problem.startswith("capidx.yaml:4:9: $.serve.port: ")]
    assert note in port and port in result.output.splitlines(), (port, result.output)


def test_a_large_mapping_merged_many_times_deep_down_is_read_once() -> None:
    """Each mapping that merges `*big` gets its 2,000 members: what is kept for it is the one reading of `*big`, not
    a position and a path for each member (at 58 levels, 150 merges kept 600,000 paths of 60 parts: over half a
    gigabyte from 20 KB of text, under the expansion limit). A member is still placed at its merge's alias."""
    big = "{" + ", ".join(f"k{index}: v" for index in range(2000)) + "}"
    opened = "{a: " * 58
    text = f"big: &big {big}\nuses: {opened}[\n" + "  {<<: *big},\n" * 150 + "]" + "}" * 58 + "\n"

    tracemalloc.start()
    try:
        document = parse_yaml(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert peak < 64 * 1024 * 1024, f"{peak / 1024 / 1024:.0f} MB"
    last = ("uses", *["a"] * 58, 149, "k1999")
    at, note = document.source_map.place(last)
    assert at == (152, 8)
    column = len("big: &big ") + big.index("k1999: v") + len("k1999: ") + 1
    assert note == f"; written at line 1, column {column}, merged here by << through the alias *big"


def test_members_merged_from_an_aliased_list_are_shown_at_each_merge(project: Path) -> None:
    """`<<: *list`, the list holding `*defaults`: each mapping that merges it is shown at its own `*list`, not at the
    `*defaults` inside the list, one line for every capability and not the line the JSON path names."""
    text = (
        HEAD
        + "x-defaults: &defaults {category: nowhere, available: true, sources: []}\n"
        + "x-list: &list [*defaults]\n"
        + "capabilities:\n"
        + f"  - name: Code Review\n    <<: *list\n    description: {DESCRIPTION}\n"
        + f"  - name: Code Search\n    <<: *list\n    description: {DESCRIPTION}\n"
    )

    problems = validate(project, text)

    assert [problem.split(": ")[:2] for problem in problems] == [
        [at(text, "*list"), "$.capabilities[0].category"],
        [at(text, "*list", 1), "$.capabilities[1].category"],
    ]
    for problem in problems:
        assert f"; {written(text, 'nowhere')}, merged here by << through the alias *list" in problem
