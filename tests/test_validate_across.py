"""Rules across agents (`compiler/validate/across.py`): one capability has one category and one spelling in every
agent, a near miss names both places, and a document is told the same checked alone as with the whole catalog."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import documents, run_cli, snapshot, write_catalog

ACROSS = (
    "name-slug-collision",
    "name-spelling",
    "name-plural",
    "category-mismatch",
    "name-near-miss",
    "surrounding-space",
)
Docs = dict[str, dict[str, Any]]


def found(tmp_path: Path, docs: Docs, *paths: str) -> list[dict[str, Any]]:
    """The diagnostics of these rules `capidx validate -v --format json [paths]` gives for the catalog `docs`."""
    write_catalog(tmp_path, docs)
    result = run_cli(["validate", "-v", "--format", "json", *paths], tmp_path)
    assert result.exit_code in (0, 1), result.output
    return [problem for problem in json.loads(result.stdout)["diagnostics"] if problem["code"] in ACROSS]


def said(problems: list[dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    return [(problem["path"], problem["pointer"], problem["severity"], problem["code"]) for problem in problems]


def place(tmp_path: Path, agent: str, text: str) -> str:
    """`agents/<agent>/capabilities/current.json:line:col` of the first value written after `text` (`': "x"'`), as
    validate places a diagnostic at a value: at its opening quote."""
    path = f"agents/{agent}/capabilities/current.json"
    lines = (tmp_path / path).read_text("utf-8").splitlines()
    number, line = next((number, line) for number, line in enumerate(lines, 1) if text in line)
    return f"{path}:{number}:{line.index(text) + 3}"


def edited(edit: Callable[[Docs], None], *dropped: str) -> Docs:
    docs = documents()
    for agent in dropped:
        del docs[agent]
    edit(docs)
    return docs


def custom_instructions(docs: Docs, agent: str) -> dict[str, Any]:
    return next(item for item in docs[agent]["capabilities"] if item["name"] == "Custom Instructions")


# --- category-mismatch ------------------------------------------------------------------------------------------


def test_a_category_fewer_agents_give_is_an_error_naming_a_place_of_the_other(tmp_path: Path) -> None:
    docs = edited(lambda docs: custom_instructions(docs, "claude-code").update(category="context-awareness"))
    problems = found(tmp_path, docs)
    assert said(problems) == [
        ("agents/claude-code/capabilities/current.json", "$.capabilities[1].category", "error", "category-mismatch")
    ]
    other = place(tmp_path, "copilot-cli", ': "customization"')
    assert problems[0]["message"] == f"'Custom Instructions' has category 'customization' in {other}"
    assert problems[0]["hint"] == "use one category for one capability"


@pytest.mark.parametrize("odd", ["claude-code", "copilot-cli"])
def test_on_a_tie_each_category_is_an_error_naming_the_other_whatever_the_file_order(tmp_path: Path, odd: str) -> None:
    docs = edited(lambda docs: custom_instructions(docs, odd).update(category="context-awareness"), "vscode-copilot")
    problems = found(tmp_path, docs)
    assert [problem["path"] for problem in problems] == [
        "agents/claude-code/capabilities/current.json",
        "agents/copilot-cli/capabilities/current.json",
    ]
    even = "copilot-cli" if odd == "claude-code" else "claude-code"
    at_odd, at_even = problems if odd == "claude-code" else problems[::-1]
    customization, awareness = place(tmp_path, even, ': "customization"'), place(tmp_path, odd, ': "context-awareness"')
    assert at_odd["message"] == f"'Custom Instructions' has category 'customization' in {customization}"
    assert at_even["message"] == f"'Custom Instructions' has category 'context-awareness' in {awareness}"


def test_the_build_refuses_a_capability_in_two_categories_and_keeps_the_previous_build(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    assert run_cli(["build", "--out", str(tmp_path / "build"), "-q"], tmp_path).exit_code == 0
    before = snapshot(tmp_path / "build")
    write_catalog(
        tmp_path, edited(lambda docs: custom_instructions(docs, "vscode-copilot").update(category="security"))
    )

    result = run_cli(["build", "--out", str(tmp_path / "build"), "-q"], tmp_path)

    assert result.exit_code == 1, result.output
    assert "$.capabilities[1].category: 'Custom Instructions' has category 'customization' in agents/" in result.stderr
    assert "validation error" in result.stderr
    assert snapshot(tmp_path / "build") == before


# --- name-near-miss ---------------------------------------------------------------------------------------------


def _misspelled(where: str) -> Callable[[Docs], None]:
    def edit(docs: Docs) -> None:
        docs["claude-code"]["capabilities"][3]["name"] = "Inline Suggestions"  # 'Hooks': now one agent each
        target = docs[where]["capabilities"][3 if where == "claude-code" else 2]
        target["name"] = "Inline Suggestons"

    return edit


@pytest.mark.parametrize("typo", ["claude-code", "vscode-copilot"])
def test_a_near_miss_one_agent_each_is_said_at_both_without_taking_a_side(tmp_path: Path, typo: str) -> None:
    """On a tie neither spelling is 'the others'': each place is told of the other and that one of the two is likely
    a typo, never to copy it, whichever agent's file holds the typo."""
    docs = edited(_misspelled(typo))
    problems = found(tmp_path, docs)
    assert [(problem["path"], problem["code"]) for problem in problems] == [
        ("agents/claude-code/capabilities/current.json", "name-near-miss"),
        ("agents/vscode-copilot/capabilities/current.json", "name-near-miss"),
    ]
    right = "vscode-copilot" if typo == "claude-code" else "claude-code"
    at_claude, at_vscode = problems
    at_typo, at_right = (at_claude, at_vscode) if typo == "claude-code" else (at_vscode, at_claude)
    correct, misspelled = (
        place(tmp_path, right, ': "Inline Suggestions"'),
        place(tmp_path, typo, ': "Inline Suggestons"'),
    )
    assert at_typo["message"] == (
        f"'Inline Suggestons' is spelled almost like 'Inline Suggestions' in {correct}, one agent each: one of the two"
        " is likely a typo"
    )
    assert at_right["message"] == (
        f"'Inline Suggestions' is spelled almost like 'Inline Suggestons' in {misspelled}, one agent each: one of the"
        " two is likely a typo"
    )
    assert all("as the others do" not in problem["hint"] for problem in problems)


def test_one_name_written_apart_and_together_by_one_agent_each_is_an_error_at_both(tmp_path: Path) -> None:
    """'Sub-agents' in one agent's file and 'Subagents' in the other's was a warning on a tie (every two-agent catalog),
    which `-q` hides: the build made two capabilities, each agent answered as having no record of the other's."""

    def edit(docs: Docs) -> None:
        docs["claude-code"]["capabilities"][3]["name"] = "Inline Suggestions"  # 'Hooks': now one agent each
        docs["vscode-copilot"]["capabilities"][2]["name"] = "InlineSuggestions"

    problems = found(tmp_path, edited(edit))
    assert said(problems) == [
        (f"agents/{agent}/capabilities/current.json", f"$.capabilities[{index}].name", "error", "name-near-miss")
        for agent, index in (("claude-code", 3), ("vscode-copilot", 2))
    ]
    apart, together = (
        place(tmp_path, "claude-code", ': "Inline Suggestions"'),
        place(tmp_path, "vscode-copilot", ': "InlineSuggestions"'),
    )
    assert problems[0]["message"] == (
        f"'Inline Suggestions' is spelled almost like 'InlineSuggestions' in {together}, one agent each: one name "
        "written apart and together"
    )
    assert problems[1]["message"].startswith(
        f"'InlineSuggestions' is spelled almost like 'Inline Suggestions' in {apart}"
    )
    assert all(problem["hint"].endswith("write it one way in both") for problem in problems)


def test_a_near_miss_of_a_name_more_agents_use_is_said_in_each_file_of_the_rarer_one(tmp_path: Path) -> None:
    def edit(docs: Docs) -> None:
        docs["claude-code"]["capabilities"][3]["name"] = "Code Revew"  # 'Hooks'
        docs["vscode-copilot"]["capabilities"].append(dict(docs["copilot-cli"]["capabilities"][3]))  # 'Code Review'
        for agent, copy in (("claude-code", "claude-two"), ("copilot-cli", "copilot-two")):
            docs[copy] = json.loads(json.dumps(docs[agent]))
            docs[copy]["agent"]["name"] += " Two"

    problems = found(tmp_path, edited(edit))
    assert said(problems) == [
        (f"agents/{agent}/capabilities/current.json", "$.capabilities[3].name", "warning", "name-near-miss")
        for agent in ("claude-code", "claude-two")
    ]
    other = place(tmp_path, "copilot-cli", ': "Code Review"')
    for problem in problems:
        assert problem["message"] == (
            f"'Code Revew' is spelled almost like 'Code Review' in {other}, the spelling 3 other agents use"
        )
        assert problem["hint"].endswith("spell it as the others do")


def test_a_name_one_space_from_the_others_fails_validation_and_the_build_keeps_the_previous_one(
    tmp_path: Path,
) -> None:
    """'CustomInstructions' beside the 'Custom Instructions' every other agent writes (as 'Sub-agents' beside
    'Subagents') was a warning, which `validate -q` hides: the build made a capability of its own for one agent, and a
    lookup of that agent answered that its data has no record of the capability the others share. Outvoted, it is an
    error: validation fails and the build is not written."""
    write_catalog(tmp_path)
    assert run_cli(["build", "--out", str(tmp_path / "build"), "-q"], tmp_path).exit_code == 0
    before = snapshot(tmp_path / "build")
    write_catalog(
        tmp_path, edited(lambda docs: custom_instructions(docs, "claude-code").update(name="CustomInstructions"))
    )
    validated = run_cli(["validate", "-q"], tmp_path)
    built = run_cli(["build", "--out", str(tmp_path / "build"), "-q"], tmp_path)
    assert validated.exit_code == 1 and built.exit_code == 1, (validated.output, built.output)
    assert "$.capabilities[1].name: 'CustomInstructions' is spelled almost like 'Custom Instructions' in " in (
        validated.output
    )
    assert snapshot(tmp_path / "build") == before


def test_a_name_one_letter_from_the_others_may_be_another_capability_and_is_a_warning(tmp_path: Path) -> None:
    """'Mode Selection' beside the 'Model Selection' every agent writes may be a capability of its own: one letter
    apart is a warning (with the place of the other spelling), not a refusal with no way to keep the name."""
    write_catalog(
        tmp_path, edited(lambda docs: custom_instructions(docs, "claude-code").update(name="Custom Instructiona"))
    )
    validated = run_cli(["validate", "-v", "--format", "json"], tmp_path)
    assert validated.exit_code == 0, validated.output
    (problem,) = [p for p in json.loads(validated.stdout)["diagnostics"] if p["code"] == "name-near-miss"]
    assert (problem["severity"], problem["pointer"]) == ("warning", "$.capabilities[1].name")


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("Memory File", "'Memory File' is the alias table's phrase for 'Custom Instructions'"),
        ("Tool Servers", "'Tool Servers' is in agents/claude-code/capabilities/current.json:"),
    ],
)
def test_a_name_that_is_another_capabilitys_alias_is_said_at_the_name(tmp_path: Path, name: str, said: str) -> None:
    """'Shell Commands' for a new agent's Shell Command Execution validated with a warning at the alias table only
    ("remove the alias"), in a file the new agent's author never opened, while the build made a capability of the
    name and the phrase no longer led where it did. Said at the name too: the table's phrase, or a record's alias
    with its place."""

    def edit(docs: Docs) -> None:
        docs["copilot-cli"]["capabilities"][3]["name"] = name  # 'Code Review': a capability of its own

    write_catalog(tmp_path, edited(edit))
    result = run_cli(["validate", "-v", "--format", "json"], tmp_path)
    problems = [p for p in json.loads(result.stdout)["diagnostics"] if p["code"] == "name-is-alias"]
    assert [(p["path"], p["pointer"], p["severity"]) for p in problems] == [
        ("agents/copilot-cli/capabilities/current.json", "$.capabilities[3].name", "warning")
    ]
    assert problems[0]["message"].startswith(said)
    assert problems[0]["message"].endswith("the build makes a capability of it")
    assert result.exit_code == 0  # a warning: a capability may be named with another's alias on purpose


def test_name_is_alias_finds_the_place_of_no_alias_a_checked_name_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record alias's place is found only where a checked name is that alias: the rule found the place of every alias
    of the catalog, each a read of its document up to it (7 s for 200,000 aliases, none of them a name)."""
    from capidx.compiler.validate.positions import JsonPositions

    def edit(docs: Docs) -> None:
        docs["claude-code"]["capabilities"][0]["aliases"] = [f"phrase number {n}" for n in range(2_000)]
        docs["copilot-cli"]["capabilities"][3]["name"] = "Phrase Number 1999"

    placed: list[tuple[Any, ...]] = []
    locate = JsonPositions.place

    def counted(self: JsonPositions, parts: tuple[Any, ...], **kwargs: Any) -> Any:
        if len(parts) > 2 and parts[2] == "aliases":
            placed.append(parts)
        return locate(self, parts, **kwargs)

    monkeypatch.setattr(JsonPositions, "place", counted)
    write_catalog(tmp_path, edited(edit))
    result = run_cli(["validate", "-v", "--format", "json"], tmp_path)
    problems = [p for p in json.loads(result.stdout)["diagnostics"] if p["code"] == "name-is-alias"]
    assert [p["message"].split(" an alias of ")[1] for p in problems] == [
        f"'{documents()['claude-code']['capabilities'][0]['name']}': the build makes a capability of it"
    ]
    assert set(placed) == {("capabilities", 0, "aliases", 1_999)}  # alias-is-name's warning at it, and this one


# --- name-plural --------------------------------------------------------------------------------------------------


def test_a_name_in_the_plural_where_more_agents_write_the_singular_is_an_error_naming_their_place(
    tmp_path: Path,
) -> None:
    """'Code Reviews' beside the 'Code Review' three agents write was one typing error apart, a warning: CI stayed green
    while the build made two capabilities, each agent answered on one. Names that differ only in singular and plural
    are refused where the spelling fewer agents write is, naming a place of the other; no near-miss besides."""

    def edit(docs: Docs) -> None:
        docs["claude-code"]["capabilities"][3]["name"] = "Code Reviews"  # 'Hooks'
        docs["vscode-copilot"]["capabilities"].append(dict(docs["copilot-cli"]["capabilities"][3]))  # 'Code Review'
        docs["gemini-two"] = json.loads(json.dumps(docs["copilot-cli"]))
        docs["gemini-two"]["agent"]["name"] += " Two"

    problems = found(tmp_path, edited(edit))
    assert said(problems) == [
        ("agents/claude-code/capabilities/current.json", "$.capabilities[3].name", "error", "name-plural")
    ]
    other = place(tmp_path, "copilot-cli", ': "Code Review"')
    assert problems[0]["message"] == f"'Code Reviews' differs only in singular and plural from 'Code Review' in {other}"


@pytest.mark.parametrize(
    ("one", "other"),
    [("Policies", "Policy"), ("Agent Skills", "agent-skill"), ("Boxes", "Box"), ("Prompt Caches", "Prompt Cache")],
)
def test_two_agents_each_writing_one_form_are_both_told(tmp_path: Path, one: str, other: str) -> None:
    """On a tie neither form is the others': each is said, naming the other's place."""

    def edit(docs: Docs) -> None:
        docs["claude-code"]["capabilities"][3]["name"] = one
        docs["copilot-cli"]["capabilities"][3]["name"] = other

    problems = found(tmp_path, edited(edit))
    assert {(problem["path"], problem["code"]) for problem in problems} == {
        ("agents/claude-code/capabilities/current.json", "name-plural"),
        ("agents/copilot-cli/capabilities/current.json", "name-plural"),
    }


def test_one_agent_writing_both_forms_has_a_duplicate_name(tmp_path: Path) -> None:
    """'MCP Server' beside 'MCP Servers' in one file validated: the build made two capabilities of one agent, and
    'mcp' and 'mcp server' answered differently. The second is a duplicate name, naming the first."""

    def edit(docs: Docs) -> None:
        first = docs["claude-code"]["capabilities"][0]
        docs["claude-code"]["capabilities"].append({**first, "name": first["name"].removesuffix("s")})

    write_catalog(tmp_path, edited(edit))
    result = run_cli(["validate", "--format", "json"], tmp_path)
    problems = json.loads(result.stdout)["diagnostics"]
    duplicates = [problem for problem in problems if problem["code"] == "duplicate-capability"]
    assert len(duplicates) == 1, problems
    assert duplicates[0]["message"].endswith("it differs only in singular and plural from 'MCP Servers'")
    assert "first at $.capabilities[0]" in duplicates[0]["hint"]


def test_one_agent_writing_a_name_spelled_apart_and_together_has_a_duplicate_name(tmp_path: Path) -> None:
    """'Sub-agents' beside 'Subagents' in one file validated (a blind test): two capabilities of one agent, two
    rows of the summary. The second is a duplicate name, naming the first."""

    def edit(docs: Docs) -> None:
        first = docs["claude-code"]["capabilities"][2]  # Subagents
        docs["claude-code"]["capabilities"].append({**first, "name": "Sub-agents"})

    write_catalog(tmp_path, edited(edit))
    result = run_cli(["validate", "--format", "json"], tmp_path)
    problems = [p for p in json.loads(result.stdout)["diagnostics"] if p["code"] == "duplicate-capability"]
    assert [p["message"] for p in problems] == [
        "duplicate capability name 'Sub-agents': it differs only in spaces and hyphens from 'Subagents'"
    ]
    assert "first at $.capabilities[2]" in problems[0]["hint"] and result.exit_code == 1


def test_two_names_of_one_file_that_make_one_slug_are_a_slug_collision_not_a_duplicate(tmp_path: Path) -> None:
    """'C++ Support' then 'C# Support' in one file was "duplicate capability name 'C# Support'", first at the other
    name: no name was written twice. It is the error two agents' such names get, naming both."""

    def edit(docs: Docs) -> None:
        first = docs["claude-code"]["capabilities"][0]
        docs["claude-code"]["capabilities"] += [{**first, "name": "C++ Support"}, {**first, "name": "C# Support"}]

    write_catalog(tmp_path, edited(edit))
    result = run_cli(["validate", "--format", "json"], tmp_path)
    problems = [p for p in json.loads(result.stdout)["diagnostics"] if p["severity"] == "error"]
    assert [(p["code"], p["pointer"]) for p in problems] == [("name-slug-collision", "$.capabilities[5].name")]
    assert problems[0]["message"] == "'C# Support' makes the same slug (c-support) as 'C++ Support'"
    assert (
        problems[0]["hint"].startswith("first at $.capabilities[4]") and "letters a-z and digits" in problems[0]["hint"]
    )
    assert result.exit_code == 1


@pytest.mark.parametrize(("one", "other"), [("Testing", "Tests"), ("Status", "Statu"), ("Gas", "Ga")])
def test_names_that_differ_in_more_than_a_plural_ending_are_no_plural(tmp_path: Path, one: str, other: str) -> None:
    def edit(docs: Docs) -> None:
        docs["claude-code"]["capabilities"][3]["name"] = one
        docs["copilot-cli"]["capabilities"][3]["name"] = other

    problems = found(tmp_path, edited(edit))
    assert all(problem["code"] != "name-plural" for problem in problems), problems


@pytest.mark.parametrize("where", ["copilot-cli", "aaa-agent"])
def test_names_all_alike_are_compared_a_bounded_number_of_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """300 names of 40 letters, each one letter away from 'aaa…a', share that string: every name was compared with
    every other (90,000 comparisons; 800 names of 190 letters took 444 s for a 0.5 MB document). Now at most
    NEAR_MISS_COMPARISONS per name on average, and a real near miss of the catalog beside them is still said, also
    when they are in a file read before it (`aaa-agent`): the names with the fewest to compare are compared first."""
    from capidx.compiler.validate import across

    compared = 0
    real = across.one_edit

    def counted(a: str, b: str) -> bool:
        nonlocal compared
        compared += 1
        return real(a, b)

    monkeypatch.setattr(across, "one_edit", counted)
    docs = edited(_misspelled("claude-code"))
    template = docs["copilot-cli"]["capabilities"][0]
    alike = [
        {**template, "name": "a" * at + letter + "a" * (39 - at), "aliases": [], "triggers": [], "terminology": {}}
        for letter in "bcdefghij"
        for at in range(40)
    ][:300]
    for capability in alike:
        capability.pop("terminology")
    if where == "aaa-agent":
        docs[where] = {**docs["copilot-cli"], "agent": {**docs["copilot-cli"]["agent"], "name": "AAA"}}
        docs[where]["capabilities"] = alike
    else:
        docs[where]["capabilities"] += alike
    problems = found(tmp_path, docs)
    assert compared <= 64 * 400, compared  # NEAR_MISS_COMPARISONS per name, 300 names and the catalog's
    assert ("agents/claude-code/capabilities/current.json", "name-near-miss") in [
        (problem["path"], problem["code"]) for problem in problems
    ]


def test_names_one_edit_apart_share_an_end() -> None:
    """The near-miss check compares a name only with those sharing one of its ends (`_ends`): every pair one edit
    apart does, whatever the edit and wherever it is (all strings of 'abc' of 5 to 7 letters)."""
    import itertools

    from capidx.compiler.validate.across import _ends
    from capidx.schema.wording import one_edit

    keys = ["".join(letters) for size in (5, 6, 7) for letters in itertools.product("abc", repeat=size)]
    ends = {key: _ends(key) for key in keys}
    for a, b in itertools.combinations(keys, 2):
        if one_edit(a, b):
            assert ends[a] & ends[b], (a, b)


def test_the_near_miss_check_keeps_a_few_strings_per_name(tmp_path: Path) -> None:
    """Every string one letter shorter than each name was kept to find the names to compare: 25,000 names of 195
    letters (a 7.8 MB document, valid) took 23 s and 2.4 GB of memory in capidx validate, and build does it again.
    Now four halves of each name."""
    import random
    import string
    import tracemalloc

    from capidx.compiler.validate.across import check_name_near_misses
    from capidx.compiler.validate.load import SourceFile

    letters = random.Random(1)
    names = ["".join(letters.choice(string.ascii_lowercase) for _ in range(195)) for _ in range(2_000)]
    source = SourceFile(tmp_path / "current.json", b"", "", {"capabilities": [{"name": name} for name in names]})
    tracemalloc.start()
    try:
        assert check_name_near_misses([source]) == []
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000, peak  # 2,000 names: about 100 MB before


# --- name-spelling, white space ---------------------------------------------------------------------------------


def test_a_second_spelling_names_the_place_of_the_first_and_the_space_it_hides(tmp_path: Path) -> None:
    problems = found(tmp_path, edited(lambda docs: docs["claude-code"]["capabilities"][0].update(name="MCP servers ")))
    assert said(problems) == [
        ("agents/claude-code/capabilities/current.json", "$.capabilities[0].name", "warning", "name-spelling"),
        ("agents/claude-code/capabilities/current.json", "$.capabilities[0].name", "warning", "surrounding-space"),
    ]
    other = place(tmp_path, "copilot-cli", ': "MCP Servers"')
    assert problems[0]["message"] == f"'MCP servers ' (a space at the end) is spelled 'MCP Servers' in {other}"
    assert problems[1]["message"] == "'MCP servers ' has a space at the end"
    assert problems[1]["hint"].startswith("remove it")


def test_spellings_that_differ_only_in_spaces_in_a_row_say_so(tmp_path: Path) -> None:
    problems = found(tmp_path, edited(lambda docs: docs["claude-code"]["capabilities"][0].update(name="MCP  Servers")))
    assert said(problems) == [
        ("agents/claude-code/capabilities/current.json", "$.capabilities[0].name", "warning", "name-spelling")
    ]
    assert problems[0]["message"].startswith("'MCP  Servers' (spaces in a row) is spelled 'MCP Servers' in agents/")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (" MCP servers", "' MCP servers' has a space at the start"),
        ("MCP servers   ", "'MCP servers   ' has 3 spaces at the end"),
        ("\u3000MCP servers ", "'\\u3000MCP servers ' has white space at the start and a space at the end"),
    ],
)
def test_white_space_at_an_end_of_a_single_line_field_is_a_warning(tmp_path: Path, value: str, message: str) -> None:
    problems = found(tmp_path, edited(lambda docs: docs["claude-code"]["capabilities"][0].update(terminology=value)))
    assert said(problems) == [
        (
            "agents/claude-code/capabilities/current.json",
            "$.capabilities[0].terminology",
            "warning",
            "surrounding-space",
        )
    ]
    assert problems[0]["message"] == message


def test_white_space_that_is_an_error_already_is_not_also_a_warning(tmp_path: Path) -> None:
    """A tab is a control character in a single-line field and only white space is blank: both errors of their own."""

    def edit(docs: Docs) -> None:
        docs["claude-code"]["capabilities"][0]["terminology"] = "MCP servers\t"
        docs["claude-code"]["capabilities"][0]["aliases"] = ["   "]
        docs["claude-code"]["capabilities"][0]["description"] += "  "  # multi-line text: spaces at its end are fine

    write_catalog(tmp_path, edited(edit))
    result = run_cli(["validate", "-v"], tmp_path)
    assert result.exit_code == 1
    assert "control character U+0009 (TAB)" in result.output and "empty or only white space" in result.output
    assert "surrounding-space" not in result.output and " at the end" not in result.output


# --- one file alone, as a pre-commit hook checks it -------------------------------------------------------------


def test_a_document_checked_alone_is_told_what_the_whole_catalog_tells_it(tmp_path: Path) -> None:
    """Each rule decides from every record, context included: a file named alone gets exactly the findings it gets
    in the whole catalog (a category error, a spelling, a slug collision, a near miss), wherever they point."""

    def edit(docs: Docs) -> None:
        custom_instructions(docs, "claude-code")["category"] = "context-awareness"  # outvoted: said at claude-code
        docs["copilot-cli"]["capabilities"][0]["name"] = "MCP servers"  # outvoted: said at copilot-cli
        docs["copilot-cli"]["capabilities"][3]["name"] = "C# Support"  # 'Code Review'
        docs["vscode-copilot"]["capabilities"].append({**docs["copilot-cli"]["capabilities"][3], "name": "C++ Support"})
        docs["claude-code"]["capabilities"][3]["name"] = "Inline Suggestons"  # 'Hooks'
        docs["claude-code"]["capabilities"][2]["name"] = "Subagent"  # copilot-cli's 'Subagents': a tie, said at both

    docs = edited(edit)
    whole = found(tmp_path, docs)
    assert {problem["code"] for problem in whole} == set(ACROSS) - {"surrounding-space"}
    for agent in docs:
        path = f"agents/{agent}/capabilities/current.json"
        alone = found(tmp_path, docs, path)
        assert alone == [problem for problem in whole if problem["path"] == path], agent


@pytest.mark.parametrize("named", [(), ("agents/copilot-cli/capabilities/current.json",)])
def test_a_category_the_schema_refuses_takes_no_part_in_the_vote(tmp_path: Path, named: tuple[str, ...]) -> None:
    """A misspelled category is the schema's error, with its did-you-mean: the agent that writes a valid one is not
    told it disagrees with the typo, in the whole catalog or checked alone (the typo then read only to compare)."""
    docs = edited(
        lambda docs: custom_instructions(docs, "claude-code").update(category="customisation"), "vscode-copilot"
    )
    write_catalog(tmp_path, docs)
    result = run_cli(["validate", "-v", "--format", "json", *named], tmp_path)
    problems = json.loads(result.stdout)["diagnostics"]
    assert [problem for problem in problems if problem["code"] == "category-mismatch"] == []
    typo = [problem for problem in problems if problem["pointer"] == "$.capabilities[1].category"]
    assert [(problem["path"], problem["code"]) for problem in typo] == (
        [] if named else [("agents/claude-code/capabilities/current.json", "schema")]
    )


def test_a_refused_category_leaves_the_others_to_disagree(tmp_path: Path) -> None:
    """Three agents, three categories, one refused: the two valid ones are a tie, each naming the other."""

    def edit(docs: Docs) -> None:
        custom_instructions(docs, "claude-code")["category"] = "customisation"
        custom_instructions(docs, "vscode-copilot")["category"] = "context-awareness"

    problems = found(tmp_path, edited(edit))
    assert said(problems) == [
        (f"agents/{agent}/capabilities/current.json", "$.capabilities[1].category", "error", "category-mismatch")
        for agent in ("copilot-cli", "vscode-copilot")
    ]
    assert "'context-awareness' in agents/vscode-copilot/" in problems[0]["message"]
    assert "'customization' in agents/copilot-cli/" in problems[1]["message"]


def test_a_document_read_to_compare_with_is_compared_despite_a_yaml_value_json_cannot_hold(tmp_path: Path) -> None:
    """The whole catalog checks such a document with null in the value's place; read only to compare with, it was
    dropped, and a file named alone was told nothing of the category it disagrees with."""
    import yaml

    docs = edited(lambda docs: custom_instructions(docs, "claude-code").update(category="context-awareness"))
    write_catalog(tmp_path, docs)
    for agent in ("copilot-cli", "vscode-copilot"):
        path = tmp_path / f"agents/{agent}/capabilities/current.json"
        text = yaml.safe_dump(json.loads(path.read_text("utf-8")), sort_keys=False)
        path.with_suffix(".yaml").write_text(text.replace("available: true", "available: .nan", 1), "utf-8")
        path.unlink()
    named = "agents/claude-code/capabilities/current.json"

    def across(*paths: str) -> list[dict[str, Any]]:
        result = run_cli(["validate", "-v", "--format", "json", *paths], tmp_path)
        return [problem for problem in json.loads(result.stdout)["diagnostics"] if problem["code"] in ACROSS]

    whole = [problem for problem in across() if problem["path"] == named]
    alone = across(named)

    assert [problem["code"] for problem in whole] == ["category-mismatch"]
    assert alone == whole


# --- catalog-size -----------------------------------------------------------------------------------------------


def _agents(count: int, own: bool = True) -> Docs:
    """`count` agents, each recording one available capability: its own (`count` × `count` answers), or one they all
    share (each of the `count` lookup answers naming the `count` agents that have it)."""
    return {
        f"agent-{number}": {
            "agent": {"name": f"Agent {number}", "vendor": "V", "version": "1", "lastUpdated": "2026-01-01T00:00:00Z"},
            "capabilities": [
                {
                    "name": f"Feature {number if own else 'shared'}",
                    "category": "testing",
                    "description": "Runs the tests of a project.",
                    "available": True,
                }
            ],
        }
        for number in range(count)
    }


def _sizes(tmp_path: Path, docs: Docs) -> list[dict[str, Any]]:
    write_catalog(tmp_path, docs, aliases=None)
    result = run_cli(["validate", "--format", "json"], tmp_path)
    assert result.exit_code in (0, 1), result.output
    return [problem for problem in json.loads(result.stdout)["diagnostics"] if problem["code"] == "catalog-size"]


def test_a_catalog_whose_agents_times_capabilities_pass_the_bound_is_refused_before_it_is_built(tmp_path: Path) -> None:
    """Every agent is answered on every capability, so a build grows with their product: 300 agents of one capability
    of their own each (136 KB of documents) made 90,000 lookup and sources answers each and a 171 MB build. One error
    says it, in validate and in build (nothing written), also when pre-commit names one file."""
    from capidx.compiler.validate.lint import MAX_ANSWERED_PAIRS

    count = 230
    assert count * count > MAX_ANSWERED_PAIRS >= (count - 10) ** 2
    problems = _sizes(tmp_path, _agents(count))
    assert said(problems) == [("agents/agent-0/capabilities/current.json", "", "error", "catalog-size")]
    assert "230 agents and 230 capabilities make 52,900 answers" in problems[0]["message"]
    named = run_cli(["validate", "-q", "agents/agent-7/capabilities/current.json"], tmp_path)
    assert named.exit_code == 1 and "52,900 answers" in named.output
    built = run_cli(["build", "-q"], tmp_path)
    assert built.exit_code == 1 and "52,900 answers" in built.output
    assert not (tmp_path / "build").exists()


def test_a_catalog_within_the_bound_is_not_told_its_size(tmp_path: Path) -> None:
    assert _sizes(tmp_path, _agents(220)) == []


def test_agents_all_sharing_a_capability_past_the_bound_are_refused(tmp_path: Path) -> None:
    """Each agent's lookup answer on a capability lists every agent that has it: 1,000 agents sharing one capability
    (400 KB) made a 24 MB lookup pack, four times 500 agents'. Refused past `MAX_LISTED_AGENTS` agents so named."""
    from capidx.compiler.validate.lint import MAX_LISTED_AGENTS

    count = 1_415
    assert count * count > MAX_LISTED_AGENTS >= (count - 1) ** 2
    problems = _sizes(tmp_path, _agents(count, own=False))
    assert said(problems) == [("agents/agent-0/capabilities/current.json", "", "error", "catalog-size")]
    assert "1,415 agents and 1,415 records of available capabilities make 2,002,225" in problems[0]["message"]


@pytest.mark.parametrize(
    ("written", "differs"),
    [
        ("MCP SERVERS", "case"),
        ("MCP  servers.", "case, spacing or punctuation"),
        ("MCP Sérvers", "accents"),  # was said to be 'case, spacing or punctuation'
        ("ＭＣＰ Ｓｅｒｖｅｒｓ", "character width or case"),  # full-width, likewise
        ("MCP Servers", None),
    ],
)
def test_a_duplicate_name_written_otherwise_quotes_the_first_spelling(
    tmp_path: Path, written: str, differs: str | None
) -> None:
    """'MCP SERVERS' after 'MCP Servers' was "duplicate capability name 'MCP SERVERS'" with only the first one's JSON
    path: which spelling it repeats, and that only case or punctuation tells them apart, went unsaid (a blind test)."""

    def edit(docs: Docs) -> None:
        first = docs["claude-code"]["capabilities"][0]  # MCP Servers
        docs["claude-code"]["capabilities"].append({**first, "name": written})

    write_catalog(tmp_path, edited(edit))
    result = run_cli(["validate", "--format", "json"], tmp_path)
    [problem] = [p for p in json.loads(result.stdout)["diagnostics"] if p["code"] == "duplicate-capability"]
    said = f": it differs only in {differs} from 'MCP Servers'" if differs else ""
    assert problem["message"] == f"duplicate capability name '{written}'{said}", problem
    assert problem["hint"].startswith("first at $.capabilities[0].name, line ") and result.exit_code == 1
