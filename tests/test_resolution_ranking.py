"""The ranking model's query analysis on a small catalog built for real: a literal word of a capability's name
against an abbreviation's expansion, the abbreviation table read both ways, typo correction against the index's
own vocabulary. Each test pins a mechanism (issue 28's examples), not an answer of the blind benchmark."""

from __future__ import annotations

import json

import pytest
from server_support import Cap, real_build, score_capabilities, write_catalog

from capidx.server.matchindex import MatchIndex, Resolution
from capidx.server.query import analyse, root
from capidx.server.resolve import resolve_capability

CLAUDE = "claude-code"
HAS = {CLAUDE: {"available": True}}

CATALOG = (
    Cap("Terminal CLI", "ide-integration", "Runs the agent as an interactive program in your shell.", agents=HAS),
    Cap(
        "Documentation Generation",
        "collaboration",
        "Writes documentation and README files for a project, from the command line or the editor.",
        agents=HAS,
    ),
    Cap("Code Generation", "collaboration", "Generates new functions and classes from a description.", agents=HAS),
    Cap("Test Generation", "collaboration", "Writes unit tests that cover the code you select.", agents=HAS),
    Cap("Web Search", "context-awareness", "Searches the web for current information.", agents=HAS),
    Cap("Image Input", "context-awareness", "Reads screenshots and diagrams attached to a prompt.", agents=HAS),
    Cap("Non-interactive Mode", "ide-integration", "Answers one prompt from a script and exits.", agents=HAS),
)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> MatchIndex:
    root_dir = tmp_path_factory.mktemp("ranking")
    build = real_build(write_catalog(root_dir / "agents", CATALOG), root_dir / "build")
    return MatchIndex.from_json(json.loads((build / "index" / "match.json").read_text("utf-8")))


def first(resolution: Resolution) -> str | None:
    """What one call answers with: the resolved capability, else the first candidate."""
    if resolution.ok:
        return resolution.value
    return resolution.candidates[0].value if resolution.candidates else None


def test_a_literal_name_word_beats_an_expansion(index: MatchIndex) -> None:
    # 'cli' expands to 'command line', which Documentation Generation's description says; Terminal CLI's name
    # has the word itself, so the expansion is not tried at all.
    (unit,) = analyse("cli", index.vocabulary).units
    assert unit.words == ("cli",) and unit.alternatives == ()
    resolution = resolve_capability(index, "cli", agent=CLAUDE)
    assert first(resolution) == "terminal-cli"
    assert "documentation-generation" not in score_capabilities(index, "cli")


def test_an_expansion_counts_when_no_name_has_the_word(index: MatchIndex) -> None:
    (unit,) = analyse("docs", index.vocabulary).units
    assert (root("documentation"),) in unit.alternatives
    assert first(resolve_capability(index, "docs", agent=CLAUDE)) == "documentation-generation"
    assert first(resolve_capability(index, "generate docs", agent=CLAUDE)) == "documentation-generation"


def test_a_spelled_out_run_finds_its_abbreviation(index: MatchIndex) -> None:
    # 'command line interface' is one unit whose alternative is 'cli': the name word wins over the description
    (unit,) = analyse("command line interface", index.vocabulary).units
    assert unit.words == tuple(root(w) for w in ("command", "line", "interface")) and ("cli",) in unit.alternatives
    assert first(resolve_capability(index, "command line interface", agent=CLAUDE)) == "terminal-cli"


def test_the_other_readings_of_a_words_abbreviation_are_alternatives(index: MatchIndex) -> None:
    # 'pic' stands for 'picture' or 'image': 'picture' may mean what the catalog calls an image
    (unit,) = analyse("picture", index.vocabulary).units
    assert (root("image"),) in unit.alternatives and ("pic",) in unit.alternatives
    assert first(resolve_capability(index, "send a picture", agent=CLAUDE)) == "image-input"
    # a word no abbreviation of the table stands for has no such alternatives; only one-word readings are
    # siblings ('link' is a reading of 'url', but 'web address' is not taken for another name of a link)
    assert analyse("screenshot", index.vocabulary).units[0].alternatives == ()
    assert analyse("link", index.vocabulary).units[0].alternatives == (("url",),)
    # 'ws' stands for 'workspace' or a web socket, two meanings, not two names of one: neither reads as the other
    assert (root("workspace"),) not in analyse("websocket", index.vocabulary).units[0].alternatives
    assert not any("websocket" in a for a in analyse("workspace", index.vocabulary).units[0].alternatives)


def test_words_of_a_name_rank_it_first(index: MatchIndex) -> None:
    scores = score_capabilities(index, "generate code")
    assert max(scores, key=scores.__getitem__) == "code-generation"
    assert first(resolve_capability(index, "generate code", agent=CLAUDE)) == "code-generation"


def test_a_typo_is_corrected_against_the_index_vocabulary(index: MatchIndex) -> None:
    query = analyse("documentaton generaton", index.vocabulary)
    assert query.corrected and [unit.words for unit in query.units] == [("document",), ("generat",)]
    assert all(0.8 < unit.trust < 1.0 for unit in query.units)
    resolution = resolve_capability(index, "documentaton generaton", agent=CLAUDE)
    assert (resolution.value, resolution.resolved_by) == ("documentation-generation", "fuzzy")
    # a typo inside a sentence is ranked through its correction, trusted as much as it is similar
    assert first(resolve_capability(index, "serch the web for news", agent=CLAUDE)) == "web-search"


def test_the_query_is_analysed_once_into_one_value(index: MatchIndex) -> None:
    query = analyse("Run /compact on the Web  Search", index.vocabulary)
    assert query.normalized == "run compact on the web search"
    assert query.identifiers == ("/compact",)
    assert query.key == "run compact web search" and not query.corrected
    assert [unit.words for unit in query.units][-2:] == [("web",), ("search",)]


def test_a_word_written_as_one_of_two_known_words_is_split(index: MatchIndex) -> None:
    # 'websearch' and 'codegeneration' are not typos of one index term: each is two of them written together
    assert [unit.words for unit in analyse("websearch", index.vocabulary).units] == [("web",), ("search",)]
    assert first(resolve_capability(index, "websearch", agent=CLAUDE)) == "web-search"
    assert first(resolve_capability(index, "codegeneration", agent=CLAUDE)) == "code-generation"
    assert [unit.words for unit in analyse("xylophones", index.vocabulary).units] == [("xylophon",)]  # no split


def test_a_word_negated_by_non_is_not_the_word(index: MatchIndex) -> None:
    # 'Non-interactive Mode' names the opposite of 'interactive': the prefix stays bound to its word (in the index
    # and in the query, however it is written), so the negated name is never an answer for the plain word.
    assert "non-interactive-mode" not in score_capabilities(index, "interactive")
    assert first(resolve_capability(index, "interactive", agent=CLAUDE)) == "terminal-cli"
    for spelled in ("non-interactive", "Non Interactive", "noninteractive", "the non-interactive mode"):
        assert resolve_capability(index, spelled, agent=CLAUDE).value == "non-interactive-mode", spelled


@pytest.mark.parametrize("query", ["No-interactive Mode", "no interactive mode", "runs when not interactive"])
def test_no_or_not_before_a_word_the_index_negates_with_non_reads_it_so(index: MatchIndex, query: str) -> None:
    # 'No-interactive Mode' mistypes the name into real words: 'no' or 'not' before a word the index has only negated
    # by 'non' ('noninteractive') is read as the negated word; before any other word it stays ('no web search').
    assert (root("noninteractive"),) in [unit.words for unit in analyse(query, index.vocabulary).units]
    assert first(resolve_capability(index, query, agent=CLAUDE)) == "non-interactive-mode"
    assert [unit.words for unit in analyse("no web search", index.vocabulary).units] == [("no",), ("web",), ("search",)]


def test_a_mistyped_name_has_no_word_more_than_the_name(index: MatchIndex) -> None:
    # 'gpu image input' is close to 'image input' as a string (ratio 85), but a typo adds no word: the extra
    # word is something the catalog does not have, left to the ranking model and the decision rule.
    assert resolve_capability(index, "imgae inptu", agent=CLAUDE).value == "image-input"
    assert resolve_capability(index, "ima ge input", agent=CLAUDE).value == "image-input"  # a split word adds none
    assert resolve_capability(index, "gpu image input", agent=CLAUDE).resolved_by != "fuzzy"
