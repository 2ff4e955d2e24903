"""The resolver's mechanisms on small catalogs built for real (no aliases, triggers or useWhen).

Identifier tokens, the two-way abbreviation table, a literal name word against an expansion, typo correction,
the decision rule, the never-a-confident-wrong-"no" rule and linear index building; each test pins a
mechanism, not an answer of the blind benchmark.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from server_support import Cap, connect, real_build, score_capabilities, write_catalog, write_document

from capidx.schema.lexicon import ABBREVIATIONS, expansions, identifiers
from capidx.schema.text import terms
from capidx.server import resolve, semantic
from capidx.server.matchindex import MatchIndex
from capidx.server.names import resolve_agent
from capidx.server.query import analyse, correct
from capidx.server.resolve import DECISION_RULE, decide, resolve_capability

CLAUDE = "claude-code"
GEMINI = "gemini-cli"
BOTH = {CLAUDE: {"available": True}, GEMINI: {"available": True}}
ONE = {CLAUDE: {"available": True}}

CATALOG = (
    Cap(
        "Persistent Memory",
        "context-awareness",
        "Remembers facts about you across sessions in a memory store.",
        agents=BOTH,
    ),
    Cap(
        "Custom Instructions",
        "context-awareness",
        "Project rules loaded at the start of every session from CLAUDE.md; edit them with /memory.",
        agents={
            CLAUDE: {"available": True, "terminology": "CLAUDE.md (memory files), Edit"},
            GEMINI: {"available": True},
        },
    ),
    Cap(
        "Context Compaction",
        "context-awareness",
        "Summarizes the conversation with /compact when the context window fills up.",
        agents=BOTH,
    ),
    Cap(
        "Auto-Approve Mode",
        "security",
        "Runs every action without asking for approval; start it with --yolo.",
        agents=BOTH,
    ),
    Cap(
        "Pull Request Review",
        "collaboration",
        "Reviews pull requests and merge requests and comments on them.",
        agents=BOTH,
    ),
    Cap("Repository Search", "context-awareness", "Searches the repository's code for symbols and text.", agents=BOTH),
    Cap("Web Search", "context-awareness", "Searches the web for current information.", agents=BOTH),
    Cap(
        "Inline Completion",
        "ide-integration",
        "Suggests the rest of the line in the editor as you type.",
        agents={CLAUDE: {"available": False}, GEMINI: {"available": True}},
    ),
    Cap(
        "Editor Integration",
        "ide-integration",
        "Shows the agent's proposed changes as diffs in the editor and suggests where to look next.",
        agents=BOTH,
    ),
)


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mechanisms")
    return real_build(write_catalog(root / "agents", CATALOG), root / "build")


@pytest.fixture(scope="module")
def index(build: Path) -> MatchIndex:
    return _match_index(build)


def _match_index(build: Path) -> MatchIndex:
    return MatchIndex.from_json(json.loads((build / "index" / "match.json").read_text("utf-8")))


# --- identifiers --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Run /compact now", ["/compact"]),
        ("CLAUDE.md and .mcp.json", ["claude.md", ".mcp.json"]),
        ("start with --yolo", ["--yolo"]),
        ("#codebase or @workspace", ["#codebase", "@workspace"]),
        ("set chat.checkpoints.enabled", ["chat.checkpoints.enabled"]),
        ("the .claude/ folder", [".claude"]),
        ("export MY_API_KEY", ["my_api_key"]),
        ("press Ctrl+I or Cmd+Shift+P", ["ctrl+i", "cmd+shift+p"]),
        ("C++ and a+b", []),
        ("version 4.2, e.g. this; and/or /usr/bin", []),
        ("see https://docs.example.com/a/b.md", []),
    ],
)
def test_identifiers_are_tokens_of_their_own(text: str, tokens: list[str]) -> None:
    assert list(identifiers(text)) == tokens


def test_a_path_under_a_dot_directory_is_a_token_with_its_prefixes() -> None:
    assert ".claude/agents" in identifiers("Put them in ~/.claude/agents/<name>.md")
    assert identifiers(".claude/agents/reviewer.md")[-2:] == (".claude/agents", ".claude/agents/reviewer.md")
    assert identifiers("and/or ci/cd /usr/local/bin") == ()


@pytest.mark.parametrize("repeat", [60, 16000])
def test_a_deep_dot_directory_path_yields_a_few_short_tokens(repeat: int) -> None:
    """A path of k segments used to yield k prefixes, O(k²) characters in all (16,000 segments: 384 MB)."""
    tokens = identifiers(".claude/" + "ab/" * repeat + " and ~/.claude/agents/<name>.md")
    assert len(tokens) <= 10
    assert all(len(token) <= 200 for token in tokens)
    assert ".claude/agents" in tokens


def test_the_build_records_where_identifiers_occur(build: Path) -> None:
    match = json.loads((build / "index" / "match.json").read_text("utf-8"))
    places = match["identifiers"]["/compact"]
    assert {p["capability"] for p in places} == {"context-compaction"}
    assert {p["field"] for p in places} == {"description"}
    row = next(r for r in match["capabilities"] if r["slug"] == "custom-instructions")
    assert row["terms"]["claude.md"] >= 1  # a term of its own, besides the words 'claude' and 'md'


@pytest.mark.parametrize(
    ("query", "slug"),
    [("/memory", "custom-instructions"), ("CLAUDE.md", "custom-instructions"), ("--yolo", "auto-approve-mode")],
)
def test_a_literal_identifier_beats_a_word_of_a_name(index: MatchIndex, query: str, slug: str) -> None:
    # '/memory' is a word of Persistent Memory's name, but only Custom Instructions mentions the command.
    resolution = resolve_capability(index, query, agent=CLAUDE)
    assert (resolution.status, resolution.value, resolution.resolved_by) == ("resolved", slug, "identifier")


def test_identifier_words_still_count_when_no_record_has_the_identifier(index: MatchIndex) -> None:
    resolution = resolve_capability(index, "/compaction", agent=CLAUDE)  # nothing quotes it: the word decides
    assert resolution.value == "context-compaction" or resolution.candidates[0].value == "context-compaction"


def test_identifier_in_a_sentence_is_weighed_with_the_words(index: MatchIndex) -> None:
    scores = score_capabilities(index, "what does /compact do")
    assert max(scores, key=scores.__getitem__) == "context-compaction"


def test_a_wording_that_lists_several_names_gives_each_of_them(build: Path, index: MatchIndex) -> None:
    match = json.loads((build / "index" / "match.json").read_text("utf-8"))
    assert {"claude md memory files edit", "memory files"} <= match["terminology"].keys()
    assert "edit" not in match["terminology"]  # one listed word alone is too loose
    resolution = resolve_capability(index, "memory files", agent=CLAUDE)
    assert (resolution.value, resolution.resolved_by) == ("custom-instructions", "terminology")


# --- abbreviations ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "expansion"),
    [
        ("repo", "repository"),
        ("pr", "pull request"),
        ("mr", "merge request"),
        ("config", "configuration"),
        ("lsp", "language server protocol"),
        ("ide", "integrated development environment"),
        ("env", "environment"),
        ("cmd", "command"),
        ("mcp", "model context protocol"),
        ("cli", "command line"),
        ("auth", "authentication"),
    ],
)
def test_the_lexicon_knows_the_field(word: str, expansion: str) -> None:
    assert expansion in expansions(word)
    assert word in ABBREVIATIONS


def test_every_abbreviation_expands_as_the_resolver_holds_it() -> None:
    """The resolver looks words up after `terms()` has stemmed them ('prefs' -> 'pref'): each entry must expand
    in that form too ('prefs', 'creds', 'opts' and 'stats' once did not)."""
    for word in ABBREVIATIONS:
        held = terms(word)
        assert len(held) == 1 and expansions(held[0]), word
    assert expansions(terms("prefs")[0]) == ("preferences",)


@pytest.mark.parametrize(
    ("query", "slug"),
    [("PR review", "pull-request-review"), ("MR review", "pull-request-review"), ("repo search", "repository-search")],
)
def test_abbreviations_match_their_expansions(index: MatchIndex, query: str, slug: str) -> None:
    resolution = resolve_capability(index, query, agent=CLAUDE)
    shown = resolution.value if resolution.ok else resolution.candidates[0].value
    assert shown == slug
    scores = score_capabilities(index, query)
    assert scores[slug] > scores.get("web-search", 0.0)


def test_an_abbreviation_is_not_corrected_as_a_typo(index: MatchIndex) -> None:
    assert correct("repo", index.vocabulary) == ("repo", 1.0)
    assert not analyse("repo search", index.vocabulary).corrected


def test_a_programming_language_by_name_reads_as_a_programming_language(tmp_path: Path) -> None:
    """A catalog says "multiple programming languages", a question names them ('Kotlin, Rust and Haskell'): each
    name also reads as 'programming language' (an alternative, as an abbreviation's reading), and it is never
    corrected as a typo of an index word ('julia' is not 'jira'), nor taken for a name mistyped ('py support' is
    not MCP Support); its abbreviation reads so too ('py', 'ts', 'js'). A word that is also an everyday word ('go')
    is not read so."""
    caps = (
        Cap("Multi-language Support", "language-support", "Works in multiple programming languages.", agents=BOTH),
        Cap("MCP Support", "api-integration", "Connects to Model Context Protocol servers.", agents=BOTH),
        Cap("Issue Tracking", "collaboration", "Links Jira issues to the session and its commits.", agents=BOTH),
        Cap("Code Generation", "code-generation", "Writes code from a description of what it should do.",
            agents=BOTH),
    )  # fmt: skip
    index = _match_index(real_build(write_catalog(tmp_path / "agents", caps), tmp_path / "build"))
    asked = resolve_capability(index, "Will it handle Kotlin, Rust and Haskell?", agent=CLAUDE)
    assert (asked.value if asked.ok else asked.candidates[0].value) == "multi-language-support"
    assert resolve_capability(index, "julia", agent=CLAUDE).value == "multi-language-support"
    assert correct("julia", index.vocabulary) == ("julia", 1.0)
    assert not analyse("go", index.vocabulary).units[0].alternatives
    for query in ("py support", "does it handle ts and js?"):
        asked = resolve_capability(index, query, agent=CLAUDE)
        assert (asked.value if asked.ok else asked.candidates[0].value) == "multi-language-support", query


def test_a_word_in_another_form_is_read_as_the_index_has_it_and_not_called_a_typo(index: MatchIndex) -> None:
    """'propose' is read as 'propos', the light stem of the record's 'proposed' (light stemming drops the 'e' with
    '-ed' and '-ing'; Snowball roots the two apart): the correction counts for the ranking, but an answer that said
    "allowing for typos" of a question without any misled the model. A real typo is still called one, also a letter
    missing or added at a word's end."""
    word, trust = correct("propose", index.vocabulary)
    assert word == "propos" and trust < 1.0
    assert not analyse("propose changes in the editor", index.vocabulary).corrected
    for typo in ("serch the web", "searc the web", "searchh the web"):
        assert analyse(typo, index.vocabulary).corrected, typo  # a letter missing or added at the end is one too


def test_a_word_whose_light_stem_dropped_an_e_is_read_as_the_word_with_it(tmp_path: Path) -> None:
    """'tracing' is light-stemmed to 'trac', which the index lacks: 'trace' (of 'traces') and 'track' (of 'tracks')
    are each one letter away and as similar; the 'e' the light stem dropped decides, not the alphabet ('track' won,
    and 'tool-call tracing OpenTelemetry' offered the exporter of traces only among others)."""
    caps = (
        Cap("Telemetry Export", "observability", "Exports traces and metrics to a collector.", agents=BOTH),
        Cap("Usage Tracking", "observability", "Tracks how many requests each session makes.", agents=BOTH),
    )
    index = _match_index(real_build(write_catalog(tmp_path / "agents", caps), tmp_path / "build"))
    assert {"trace", "track"} <= index.vocabulary.terms
    assert correct("trac", index.vocabulary)[0] == "trace"
    answer = resolve_capability(index, "tracing", agent=CLAUDE)
    assert (answer.value if answer.ok else answer.candidates[0].value) == "telemetry-export"


def test_an_operating_systems_name_is_not_the_plural_of_a_word_of_the_catalog(index: MatchIndex) -> None:
    """'Windows' read as 'window' resolved a platform question to Context Compaction, whose record says "context
    window", with a confident match (0.81 on the bundled catalog): an operating system's name is a word of its own,
    in the build as in the query, and a record that names neither finds nothing in it."""
    assert terms("Windows") == ["windows"] and terms("windows") != terms("window")
    for asked in ("Windows", "windows support"):
        answer = resolve_capability(index, asked, agent=CLAUDE)
        assert "context-compaction" not in {answer.value, *(c.value for c in answer.candidates)}, asked
    assert resolve_capability(index, "context window", agent=CLAUDE).value == "context-compaction"


def test_a_query_of_an_operating_systems_name_only_resolves_no_capability_it_does_not_name(tmp_path: Path) -> None:
    """'Windows' or 'Windows support' asks about a platform: another agent's limitation that names it ("Not on
    Windows.") resolved Sandboxing, answered as the asked agent's full record, available (a blind model test, on both
    catalogs). It is offered, not answered, also with words that ask whether an agent is on it ('which agents run on
    Windows' resolved Sandboxing compared, every agent ✓: a blind model test); a capability whose name has it still
    resolves, and with another word the query is ranked as any other ('sandbox on windows')."""
    gemini = {"available": True, "terminology": "Windows sandbox", "limitations": ["Not available on Windows."]}
    sandbox = {CLAUDE: {"available": True}, GEMINI: gemini}  # another agent's words name Windows, clearly
    caps = (
        Cap("Sandboxing", "security", "Runs shell commands in an isolated sandbox.", agents=sandbox),
        Cap("Web Search", "context-awareness", "Searches the web for current information.", agents=BOTH),
    )
    index = _match_index(real_build(write_catalog(tmp_path / "agents", caps), tmp_path / "build"))
    for asked in ("Windows", "windows support", "Windows?", "which agents run on Windows", "does it work on windows"):
        answer = resolve_capability(index, asked, agent=CLAUDE)
        assert not answer.ok and answer.candidates[0].value == "sandboxing", asked
    assert resolve_capability(index, "sandbox on windows", agent=CLAUDE).value == "sandboxing"
    worded = _match_index(
        real_build(write_catalog(tmp_path / "w" / "agents", (*caps, Cap("Windows Support", "ide-integration",
                   "Runs natively on Windows.", agents=BOTH))), tmp_path / "w" / "build")
    )  # fmt: skip
    assert resolve_capability(worded, "windows support", agent=CLAUDE).value == "windows-support"
    ran = resolve_capability(worded, "does it run on windows", agent=CLAUDE)
    assert (ran.value or ran.candidates[0].value) == "windows-support"


def test_an_operating_systems_name_after_a_word_qualifying_it_is_also_a_plural(index: MatchIndex) -> None:
    """After a word that may qualify a thing, written in that word's case ('context windows', 'Context Windows'),
    'windows' is read as 'window' too; alone, after a function word or after a word in lower case ('native Windows')
    it is the operating system's name only."""

    def readings(asked: str) -> set[tuple[str, ...]]:
        (unit,) = [u for u in analyse(asked, index.vocabulary).units if u.words == ("windows",)]
        return set(unit.alternatives)

    for asked in ("context windows", "Context Windows", "context-windows", "large context windows"):
        assert ("window",) in readings(asked), asked
    for asked in (
        "Windows support",
        "windows",
        "does it run on windows",
        "native Windows support",
        "macOS and Windows",
    ):
        assert ("window",) not in readings(asked), asked


# --- the decision rule and never a confident wrong "no" ------------------------------------------------


def test_the_decision_rule_resolves_a_clear_confident_winner_only() -> None:
    confidence, lead, no = DECISION_RULE
    assert confidence < no  # saying the agent lacks something needs more than saying it has it
    assert decide(confidence, confidence - lead)
    assert not decide(confidence - 0.01, 0.0)  # not confident enough, however alone
    assert not decide(0.9, 0.9 - lead + 0.01)  # confident, but the runner-up is too close
    assert not decide(confidence, 0.0, lacks=True) and decide(no, 0.0, lacks=True)


def test_a_weak_winner_is_offered_not_resolved_whichever_agent_asks(index: MatchIndex) -> None:
    # Inline Completion is the best candidate but a weak one: the agent that lacks it is not told "no", and the
    # agent that has it is not told "yes" either; both get it as the first candidate.
    query = "guess what I type before I do"
    for agent in (CLAUDE, GEMINI):
        resolution = resolve_capability(index, query, agent=agent)
        assert resolution.status != "resolved"
        assert [c.value for c in resolution.candidates[:1]] == ["inline-completion"]


def test_a_middling_winner_says_yes_but_never_no(index: MatchIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    # A winner between the rule's two confidences: the agent that has it gets the answer, the agent that lacks
    # it gets it as the first candidate, not a "no".
    query = "finish the line as I type"
    best = score_capabilities(index, query)["inline-completion"]
    monkeypatch.setattr(resolve, "DECISION_RULE", (best - 0.01, 0.0, best + 0.01))
    has = resolve_capability(index, query, agent=GEMINI)
    assert (has.status, has.value) == ("resolved", "inline-completion")
    lacks = resolve_capability(index, query, agent=CLAUDE)
    assert lacks.status == "ambiguous"
    assert [c.value for c in lacks.candidates[:1]] == ["inline-completion"]
    monkeypatch.setattr(resolve, "DECISION_RULE", (best - 0.01, 0.0, best - 0.01))  # confident enough: "no" stands
    assert resolve_capability(index, query, agent=CLAUDE).value == "inline-completion"


def test_a_confident_no_stands(index: MatchIndex) -> None:
    resolution = resolve_capability(index, "rest of the line as you type", agent=CLAUDE)
    assert (resolution.status, resolution.value) == ("resolved", "inline-completion")
    assert resolution.confidence >= DECISION_RULE[2]
    assert not index.capabilities["inline-completion"].agents[CLAUDE]["available"]


def test_an_exact_name_may_say_no(index: MatchIndex) -> None:
    resolution = resolve_capability(index, "inline completion", agent=CLAUDE)
    assert (resolution.status, resolution.value, resolution.resolved_by) == ("resolved", "inline-completion", "exact")


@pytest.fixture(scope="module")
def worded(tmp_path_factory: pytest.TempPathFactory) -> MatchIndex:
    """A catalog whose records use the words that ask about a record, two of them in names."""
    caps = (
        Cap("Hooks", "customization", "Runs your shell commands at lifecycle events.", agents=BOTH),
        Cap("Plugins", "customization", "Installable bundles of commands, agents and hooks.", agents=BOTH),
        Cap(
            "Context Compaction",
            "context-awareness",
            "Summarizes the conversation near the context limit, where available; support requires a long session.",
            agents=BOTH,
        ),
        Cap("Model Selection", "model-selection", "Switches the model a session uses.", agents=BOTH),
        Cap(
            "Sandboxing",
            "security",
            "A feature to enable in the settings: one option, set at setup, and the functionality is on.",
            agents=BOTH,
        ),
        Cap(
            "Model Availability",
            "model-selection",
            "Which models an account may use.",
            agents={CLAUDE: {"available": False}, GEMINI: {"available": True}},
        ),
        Cap(
            "Windows Support",
            "ide-integration",
            "Runs natively on Windows.",
            agents={CLAUDE: {"available": False}, GEMINI: {"available": True}},
        ),
    )
    root = tmp_path_factory.mktemp("worded")
    return _match_index(real_build(write_catalog(root / "agents", caps), root / "build"))


@pytest.mark.parametrize(
    "query",
    [
        "does it support hooks?",
        "hooks limitations",
        "is hooks available",
        "hooks requirements",
        "the hooks feature",
        "enable hooks",
        "hooks enabled",
        "hooks setup",
        "hooks settings",
        "hooks option",
        "hooks capability",
        "hooks functionality",
        "hooks downsides",
        "drawbacks of hooks",
        "hooks caveats",
        "hooks gotchas",
        "hooks restrictions",
        "hooks constraints",
    ],
)
def test_words_asking_about_a_record_do_not_stand_between_a_name_and_its_capability(
    worded: MatchIndex, query: str
) -> None:
    """Support, availability, limitations (drawbacks, caveats, restrictions) and requirements are what a capability's
    document says, and feature, setup, settings, enable or option how one asks about a capability, not what it is
    called: 'limitations' would otherwise read as the root 'limit', another capability's word, 'setup' or 'enable'
    rank the record that says them (Sandboxing) above the name, and 'hooks downsides' offered IDE Integration first
    on the bundled catalog; a name with such a word (Windows Support) does not make the word count in every query."""
    resolution = resolve_capability(worded, query, agent=CLAUDE)
    assert (resolution.status, resolution.value) == ("resolved", "hooks")


def test_a_name_keeps_its_words_that_ask_about_a_record(worded: MatchIndex) -> None:
    """'Model Availability' is a name: its word names it ('models availability'), and leaving it out of the name
    must not make 'model' alone name it, least of all with a confident "no"."""
    for query, slug in (("models availability", "model-availability"), ("does it support windows", "windows-support")):
        named = resolve_capability(worded, query, agent=GEMINI)
        assert (named.status, named.value) == ("resolved", slug), query
    for query in ("does it support other models?", "models", "which model"):
        answer = resolve_capability(worded, query, agent=CLAUDE)
        assert not (answer.ok and answer.value == "model-availability"), query


# --- a whole name and one word more ---------------------------------------------------------------------------

NAMED = (
    Cap("Subagents", "customization", "Hands a task to a helper with a context of its own.", agents=BOTH),
    Cap("Custom Agents", "customization",
        "Define subagents of your own in a config file, with a list of the tools each may use.", agents=BOTH),
    Cap("Plugins", "customization", "Installable bundles of commands and agents, listed in a config file.",
        agents=BOTH),
    Cap("Hooks", "customization", "Runs your commands at events set in a config file.", agents=BOTH),
    Cap("Editor Integration", "ide-integration", "Shows diffs in the editor: an editor plugin for your IDE.",
        agents=BOTH),
)  # fmt: skip


def test_a_whole_name_with_one_word_more_is_offered_first(tmp_path: Path) -> None:
    """'subagents config' asks about Subagents although another record says both words: when nothing resolves, the
    one capability whose whole name a query holds with one word more, a word no name has, is offered first. A word
    that is another name's ('editor hooks') keeps the order of words and meaning. Such a query never resolves to
    another capability, however clearly its words rank that one: the named one is offered first, that one next."""
    index = _match_index(real_build(write_catalog(tmp_path / "agents", NAMED), tmp_path / "build"))
    config = resolve_capability(index, "subagents config", agent=CLAUDE)
    assert not config.ok and [c.value for c in config.candidates][:2] == ["subagents", "custom-agents"]
    assert config.candidates[0].confidence < config.candidates[1].confidence  # first by the name, not by its blend
    editor = resolve_capability(index, "editor hooks", agent=CLAUDE)
    assert not editor.ok and [c.value for c in editor.candidates][:2] == ["editor-integration", "hooks"]
    scores = index.ranker.rank(analyse("list subagents", index.vocabulary).units)  # Custom Agents' record says both
    (first, best), (_, runner_up) = sorted(scores.items(), key=lambda item: -item[1])[:2]
    assert first == "custom-agents" and decide(best, runner_up)  # the words alone would resolve it
    listed = resolve_capability(index, "list subagents", agent=CLAUDE)
    assert not listed.ok and [c.value for c in listed.candidates][:2] == ["subagents", "custom-agents"]


@pytest.mark.parametrize(
    ("query", "order"),
    [
        ("subagents not listed", ["subagents", "custom-agents"]),
        ("list subagents not working", ["custom-agents", "subagents"]),
    ],
)
def test_a_negation_is_no_word_more(tmp_path: Path, query: str, order: list[str]) -> None:
    """'not' says how the capability fares, as the stop words of "doesn't work" do: 'subagents not listed' holds
    Subagents' name with one word more, although Custom Agents' record has more of its words; two words more besides
    'not' are too many."""
    index = _match_index(real_build(write_catalog(tmp_path / "agents", NAMED), tmp_path / "build"))
    answer = resolve_capability(index, query, agent=CLAUDE)
    assert not answer.ok and [c.value for c in answer.candidates][:2] == order


# --- linear index building ----------------------------------------------------------------------------


class CountingSlug(str):
    """A slug that counts comparisons: scanning a table once per capability compares every entry's slug."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        CountingSlug.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def _synthetic_match(size: int) -> dict:
    rows, aliases, terminology = [], {}, {}
    for i in range(size):
        slug = f"cap-{i}"
        rows.append(
            {
                "slug": slug,
                "name": f"Cap {i}",
                "category": "c",
                "agents": {"a": {"available": True}},
                "terms": {"cap": 1, str(i): 1},
            }
        )
        aliases[f"alias {i}"] = CountingSlug(slug)
        terminology[f"wording {i}"] = [{"agent": "a", "capability": CountingSlug(slug)}]
    return {
        "agents": [{"id": "a", "name": "Agent A"}],
        "agentNames": {},
        "aliases": aliases,
        "capabilities": rows,
        "terminology": terminology,
        "categories": ["c"],
    }


def _comparisons(size: int) -> int:
    data = _synthetic_match(size)
    CountingSlug.compared = 0
    index = MatchIndex.from_json(data)
    assert index.capabilities[f"cap-{size - 1}"].names  # aliases and wordings reached their capability
    return CountingSlug.compared


def test_building_the_match_index_is_linear_in_the_catalog() -> None:
    small, large = _comparisons(200), _comparisons(800)
    assert large <= 4 * small + 50  # a scan per capability would make it sixteen times as many


# --- suggestions for a name nothing matches -------------------------------------------------------------


@pytest.mark.parametrize("query", ["xyzzy plugh", "img to HTML blorp"])
def test_suggestions_for_an_unknown_name_never_claim_more_than_what_scored(index: MatchIndex, query: str) -> None:
    """Closest names fill the list after what ranked a little; their name similarity (another scale) is put
    below the floor, so the list is in order and no suggestion looks like a confident match."""
    resolution = resolve_capability(index, query, agent=CLAUDE)
    assert resolution.status == "unknown" and resolution.candidates
    confidences = [c.confidence for c in resolution.candidates]
    assert confidences == sorted(confidences, reverse=True)
    assert max(confidences) < DECISION_RULE[0] / 2


# --- candidates offered when nothing is resolved --------------------------------------------------------


@pytest.mark.parametrize("query", ["search the editor for a memory", "editor search memory approval"])
def test_an_unresolved_answer_offers_the_rankers_top_candidates_down_to_a_low_floor(
    index: MatchIndex, query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When nothing is resolved, up to `SHOWN_CANDIDATES` of the ranking come back, down to `SHOWN_FLOOR` (below
    the floor of the snippets' list): the right capability is often ranked 4th or 5th. (In the words' order here:
    meaning reorders them, tests/test_resolution_meaning.py.)"""
    monkeypatch.setattr(semantic, "model", lambda: None)
    resolution = resolve_capability(index, query, agent=CLAUDE)
    assert resolution.status != "resolved"
    ranked = sorted(score_capabilities(index, query).items(), key=lambda item: (-item[1], item[0]))
    expected = [slug for slug, c in ranked[: resolve.SHOWN_CANDIDATES] if c >= resolve.SHOWN_FLOOR]
    assert len(expected) > 3  # the query is one that offers more than the snippets' three
    assert [c.value for c in resolution.candidates][: len(expected)] == expected
    assert len(resolution.candidates) <= resolve.SHOWN_CANDIDATES


# --- an agent's own alias; a category's name ------------------------------------------------------------------


def test_an_agents_own_alias_is_read_first(tmp_path: Path) -> None:
    """Two capabilities' records claim one phrase: the asked agent's own record's reading wins; for an agent with
    neither (or none asked) the index's one reading stands."""
    caps = (
        Cap("Doc Writer", "documentation", "Writes documentation pages from the code.",
            agents={CLAUDE: {"available": True, "aliases": ["Scribe"]}, GEMINI: {"available": True}}),
        Cap("Session Replay", "context-awareness", "Replays a past session step by step.",
            agents={GEMINI: {"available": True, "aliases": ["scribe"]}, CLAUDE: {"available": True}}),
    )  # fmt: skip
    index = _match_index(real_build(write_catalog(tmp_path / "agents", caps), tmp_path / "build"))
    mine = resolve_capability(index, "scribe", agent=CLAUDE)
    theirs = resolve_capability(index, "SCRIBE", agent=GEMINI)
    assert (mine.value, mine.resolved_by, theirs.value, theirs.resolved_by) == (
        "doc-writer", "alias", "session-replay", "alias"
    )  # fmt: skip
    either = {resolve_capability(index, "scribe", agent=who).value for who in (None, "copilot-cli")}
    assert len(either) == 1 and either <= {"doc-writer", "session-replay"}


@pytest.mark.anyio
async def test_a_query_of_words_asking_about_records_resolves_only_a_capability_they_name(tmp_path: Path) -> None:
    """'what are its limitations' resolved to the capability whose record says 'limits' most (Usage Tracking, at 0.63,
    on the public catalog): such words ask what each record says. They resolve only a capability they name ('model
    availability'), and the answer says where the records are."""
    caps = (
        Cap("Usage Metrics", "observability", "Shows usage against the plan's limits, with a limitation per plan.",
            agents=BOTH),
        Cap("Model Availability", "model-selection", "Which language models each subscription plan may use.",
            agents=BOTH),
        Cap("Web Search", "context-awareness", "Searches the web for current information.", agents=BOTH),
    )  # fmt: skip
    build = real_build(write_catalog(tmp_path / "agents", caps), tmp_path / "build")
    index = _match_index(build)
    for asked in ("limitations", "what are its limitations", "Limitations?"):
        answer = resolve_capability(index, asked, agent=CLAUDE)
        assert not answer.ok and answer.candidates[0].value == "usage-metrics", (asked, answer)
    assert resolve_capability(index, "availability", agent=CLAUDE).value == "model-availability"
    assert resolve_capability(index, "usage limits", agent=CLAUDE).value == "usage-metrics"  # a word of its own
    async with connect(build) as client:
        lookup = await client.call_tool("lookup_capability", {"agent": CLAUDE, "capability": "limitations"})
    text = "\n".join(block.text for block in lookup.content)
    assert "'limitations' asks what records say, not about one capability" in text, text


@pytest.mark.anyio
async def test_a_word_the_answered_record_lacks_is_said_where_the_agent_s_other_records_use_it(tmp_path: Path) -> None:
    """'OpenTelemetry' asked of claude-code read as Usage Tracking, and the note said its record lacks the word while
    gemini-cli's has it; a model concluded Claude Code has no OpenTelemetry export, which its Debug Logging record
    describes (a blind model test). The agent's own records that use the word are named."""
    caps = (
        Cap("Usage Tracking", "observability", "Shows token counts and costs per session.",
            agents={CLAUDE: {"available": True},
                    GEMINI: {"available": True, "limitations": ["OpenTelemetry export is opt-in."]}}),
        Cap("Debug Logging", "observability", "Writes verbose logs of each turn.",
            agents={CLAUDE: {"available": True, "limitations": ["OpenTelemetry metrics need an exporter variable."]}}),
        Cap("Web Search", "context-awareness", "Searches the web for current information.", agents=BOTH),
    )  # fmt: skip
    build = real_build(write_catalog(tmp_path / "agents", caps), tmp_path / "build")
    assert resolve_capability(_match_index(build), "opentelemetry usage", agent=CLAUDE).value == "usage-tracking"
    async with connect(build) as client:
        answer = await client.call_tool("lookup_capability", {"agent": CLAUDE, "capability": "opentelemetry usage"})
    said = " ".join(block.text for block in answer.content)
    expected = (
        "claude-code's record of Usage Tracking does not use the word 'opentelemetry' in any form (gemini-cli's does); "
        "its record of Debug Logging does."
    )
    assert expected in said, said


def test_generally_available_asks_about_a_record(tmp_path: Path) -> None:
    """'is it generally available' resolved Sub-agents (its record names a 'General-purpose' agent: 'generally' read as
    a typo of 'general') and answered "✓ stable" to a question about the agent's release (a blind model test):
    'generally' with 'available' asks what a record says."""
    caps = (
        Cap("Sub-agents", "agent-orchestration", "Delegates to built-in agents: Explore, Task and General-purpose.",
            agents=BOTH),
        Cap("Web Search", "context-awareness", "Searches the web for current information.", agents=BOTH),
    )  # fmt: skip
    index = _match_index(real_build(write_catalog(tmp_path / "agents", caps), tmp_path / "build"))
    for asked in ("is it generally available", "generally available?"):
        assert not resolve_capability(index, asked, agent=CLAUDE).ok, asked
    assert resolve_capability(index, "general-purpose agent", agent=CLAUDE).value == "sub-agents"


def test_a_query_of_words_asking_about_records_names_a_capability_by_its_words_as_written(tmp_path: Path) -> None:
    """'limitations' resolved Usage Limits (0.80) and 'what functionality' Function Calling (0.70): their roots are
    those of 'limits' and 'function'. Such a query names a capability whose name has its words in a written form
    ('settings' and 'setting': Settings Sync), not one whose name has another word of the same root."""
    caps = (
        Cap("Usage Limits", "observability", "Shows how much of the plan's rate limits a session has used.",
            agents=BOTH),
        Cap("Function Calling", "api-integration", "Lets the model call tools the user defines as JSON schemas.",
            agents=BOTH),
        Cap("Settings Sync", "customization", "Copies the user's preferences between machines.", agents=BOTH),
        Cap("Web Search", "context-awareness", "Searches the web for current information.", agents=BOTH),
    )  # fmt: skip
    index = _match_index(real_build(write_catalog(tmp_path / "agents", caps), tmp_path / "build"))
    for asked in ("limitations", "what are its limitations", "functionality", "what functionality"):
        answer = resolve_capability(index, asked, agent=CLAUDE)
        assert not answer.ok and answer.analysed is not None and answer.analysed.asks_only, (asked, answer)
    for asked, slug in (("settings", "settings-sync"), ("setting", "settings-sync"), ("limits", "usage-limits")):
        assert resolve_capability(index, asked, agent=CLAUDE).value == slug, asked


CATEGORIES = (
    Cap("Code Review", "collaboration",
        "Reviews a diff for security bugs: a security review with each security finding explained.", agents=BOTH),
    Cap("Sandboxing", "security", "Runs commands in an isolated container.", agents=BOTH),
    Cap("Tool Permissions", "security", "Decides which tools run without a prompt.", agents=BOTH),
    Cap("Usage Metrics", "observability", "Shows token counts and the cost of a session.", agents=BOTH),
)  # fmt: skip


def test_a_category_name_answers_with_that_category(tmp_path: Path) -> None:
    """'security' is a category: a capability of another category that says 'security' most is not the answer,
    and nothing matching is not "no data"; its capabilities are offered, those its words rank first first. A
    capability of the category found by the words stands."""
    index = _match_index(real_build(write_catalog(tmp_path / "agents", CATEGORIES), tmp_path / "build"))
    assert resolve_capability(index, "security review", agent=CLAUDE).value == "code-review"  # not the category's name
    security = resolve_capability(index, "Security", agent=CLAUDE)
    assert (security.status, security.resolved_by) == ("ambiguous", "category")
    assert [c.value for c in security.candidates] == ["sandboxing", "tool-permissions"]
    assert {c.confidence for c in security.candidates} == {0.5}
    kept = resolve_capability(index, "observability", agent=CLAUDE)  # its category's field found it
    assert (kept.status, kept.value, kept.resolved_by) == ("resolved", "usage-metrics", "lexical")
    # stop words and words asking about a record are no part of a category's name: 'security features' resolved Code
    # Review at 0.88 (a blind model test), while 'security' answered with the category
    for asked in ("security features", "does it have security features?", "what security options are there"):
        said = resolve_capability(index, asked, agent=CLAUDE)
        assert (said.status, said.resolved_by) == ("ambiguous", "category"), asked
        assert [c.value for c in said.candidates] == ["sandboxing", "tool-permissions"], asked


def test_a_category_name_mistyped_is_read_as_that_category_after_the_names_mistyped(tmp_path: Path) -> None:
    """'securty' and 'debuging' are category names mistyped (debugging being a category the schema defines and
    nothing here is in): read as those categories, as they are spelled right, not as the capability their corrected
    words rank first. 'Debug Lgging' is a capability's name mistyped, and also near 'debugging': the name is read
    first, as the tiers go. A word that is a category's only when mistyped twice ('scrty'), or with a letter changed
    ('tasting' for testing: a word of its own), is no category."""
    caps = (*CATEGORIES, Cap("Debug Logging", "observability", "Writes a debug log of each request.", agents=BOTH))
    index = _match_index(real_build(write_catalog(tmp_path / "agents", caps), tmp_path / "build"))
    security = resolve_capability(index, "securty", agent=CLAUDE)
    assert (security.status, security.resolved_by) == ("ambiguous", "category")
    assert [c.value for c in security.candidates] == ["sandboxing", "tool-permissions"]
    debugging = resolve_capability(index, "debuging", agent=CLAUDE)
    assert (debugging.status, debugging.value, debugging.resolved_by) == ("unknown", None, "category")
    assert resolve_capability(index, "debugging", agent=CLAUDE).resolved_by == "category"
    logging = resolve_capability(index, "Debug Lgging", agent=CLAUDE)
    assert (logging.status, logging.value, logging.resolved_by) == ("resolved", "debug-logging", "fuzzy")
    assert resolve_capability(index, "scrty", agent=CLAUDE).resolved_by != "category"
    # everyday words a changed letter or words run together make of a category's name are not it mistyped
    for word in ("tasting", "nesting", "texting", "deluging", "securely", "disintegration"):
        assert resolve_capability(index, word, agent=CLAUDE).resolved_by != "category", word


def test_a_word_the_catalog_says_is_no_category_word_mistyped(tmp_path: Path) -> None:
    """'mode' is 'model' with a letter missing, but a word the catalog says ('a read-only mode'): 'mode selection'
    asks for choosing a mode, not the model-selection category mistyped; 'modle selection' is that, mistyped."""
    caps = (*CATEGORIES, Cap("Plan Mode", "agent-orchestration", "Plans in a read-only mode first.", agents=BOTH))
    index = _match_index(real_build(write_catalog(tmp_path / "agents", caps), tmp_path / "build"))
    assert resolve_capability(index, "mode selection", agent=CLAUDE).resolved_by != "category"
    assert resolve_capability(index, "modle selection", agent=CLAUDE).resolved_by == "category"


def test_a_category_name_found_by_its_words_in_a_capability_the_agent_has_no_record_of(tmp_path: Path) -> None:
    """'performance' finds Token Caching by its words, but the asked agent has no record of it and has one of
    another capability of the category: "no data" on one capability is not what was asked, so the category's
    capabilities come back. For an agent with a record of it, or with a record of none of the category (a category
    of one capability), the words' answer stands: a list would only ask for a second call."""
    caps = (
        Cap("Token Caching", "performance", "Caches prompt tokens for performance and speed.",
            agents={GEMINI: {"available": True}}),
        Cap("Extended Thinking", "performance", "Thinks longer before it answers.", agents=BOTH),
        Cap("Security Analysis", "security", "Scans the code for security issues.",
            agents={GEMINI: {"available": True}}),
    )  # fmt: skip
    index = _match_index(real_build(write_catalog(tmp_path / "agents", caps), tmp_path / "build"))
    words = resolve_capability(index, "performance", agent=GEMINI)
    assert (words.status, words.value) == ("resolved", "token-caching")
    category = resolve_capability(index, "performance", agent=CLAUDE)
    assert (category.status, category.resolved_by) == ("ambiguous", "category")
    assert {c.value for c in category.candidates} == {"token-caching", "extended-thinking"}
    alone = resolve_capability(index, "security", agent=CLAUDE)  # Claude has a record of no security capability
    assert (alone.status, alone.value) == ("resolved", "security-analysis")


def test_a_category_the_schema_defines_and_no_capability_is_in_answers_with_none(tmp_path: Path) -> None:
    """'debugging' is a category of the bundled schema that no capability here is in: asked as a capability, it
    resolves to none (the catalog records nothing there), not to the capability of another category whose record says
    the word most, which is offered instead. A build made before match.json recorded such categories keeps the words'
    answer."""
    caps = (*CATEGORIES, Cap("Usage Reports", "observability", "Reports debugging sessions and debugging costs.",
                             agents=BOTH))  # fmt: skip
    build = real_build(write_catalog(tmp_path / "agents", caps), tmp_path / "build")
    data = json.loads((build / "index" / "match.json").read_text("utf-8"))
    assert "debugging" in data["emptyCategories"] and "security" not in data["emptyCategories"]
    found = resolve_capability(MatchIndex.from_json(data), "Debugging", agent=CLAUDE)
    assert (found.status, found.value, found.resolved_by) == ("unknown", None, "category")
    assert [c.value for c in found.candidates] == ["usage-reports"]
    none = resolve_capability(MatchIndex.from_json(data), "Performance", agent=CLAUDE)  # no word of it is anywhere
    assert (none.status, none.resolved_by, none.candidates) == ("unknown", "category", ())
    del data["emptyCategories"]
    older = resolve_capability(MatchIndex.from_json(data), "debugging", agent=CLAUDE)
    assert (older.status, older.value) == ("resolved", "usage-reports")


def test_a_category_nothing_is_in_offers_the_name_it_may_be_a_mistyping_of(tmp_path: Path) -> None:
    """'performance' is no word of this catalog, and the one name it may be a mistyping of is 'Performence', which the
    words resolve to with no candidates: the empty category's answer offers it, as it offers what scoring found."""
    caps = (*CATEGORIES, Cap("Performence", "observability", "Profiles slow runs.", agents=BOTH))
    data = json.loads((real_build(write_catalog(tmp_path / "agents", caps), tmp_path / "build") / "index" /
                       "match.json").read_text("utf-8"))  # fmt: skip
    found = resolve_capability(MatchIndex.from_json(data), "performance", agent=CLAUDE)
    assert (found.status, found.value, found.resolved_by) == ("unknown", None, "category")
    assert [c.value for c in found.candidates] == ["performence"]
    del data["emptyCategories"]
    older = resolve_capability(MatchIndex.from_json(data), "performance", agent=CLAUDE)
    assert (older.status, older.value, older.resolved_by) == ("resolved", "performence", "fuzzy")


# --- agent names several agents share -------------------------------------------------------------------------


def _named_agents(root: Path, agents: dict[str, tuple[str, str]]) -> Path:
    """A catalog of agents (id -> (name, vendor)), each with one capability, built for real."""
    for agent_id, (name, vendor) in agents.items():
        document = {
            "agent": {"name": name, "vendor": vendor, "version": "1", "lastUpdated": "2026-11-01T00:00:00Z"},
            "capabilities": [
                {
                    "name": "MCP Servers",
                    "category": "api-integration",
                    "description": "Connects to Model Context Protocol servers over stdio to add external tools.",
                    "available": True,
                }
            ],
        }
        write_document(root, agent_id, document)
    return real_build(root / "agents", root / "build")


@pytest.mark.parametrize(
    ("agents", "word"),
    [
        # The vendor-stripped name of the one agent whose name starts with its vendor, a generic word ...
        ({"cursor-agent": ("Cursor Agent", "Cursor"), "junie-agent": ("Junie Agent", "JetBrains")}, "agent"),
        # ... or a distinctive one, whichever agents' names start with their vendors.
        ({"acme-bot": ("Acme Bot", "Acme"), "yaml-bot": ("Yaml Bot", "Yamlco")}, "bot"),
        (
            {"acme-bot": ("Acme Bot", "Acme"), "yaml-bot": ("Yaml Bot", "Yamlco"), "zeta-bot": ("Zeta Bot", "Zeta")},
            "bot",
        ),
        # A reordered "<product> in <host>" name is shared the same way.
        ({"pilot-vs": ("Pilot in VS Code", "Acme"), "pilot-plus": ("Pilot Plus in VS Code", "Zeta")}, "vs code pilot"),
    ],
)
def test_a_word_several_agents_names_share_is_ambiguous_and_lists_them_all(
    tmp_path: Path, agents: dict[str, tuple[str, str]], word: str
) -> None:
    """A name shortened by its vendor's words ("Cursor Agent" by Cursor: "agent") would otherwise be a name of that
    agent alone, and answer "agent" or "bot" with one of several agents at confidence 1.0."""
    index = _match_index(_named_agents(tmp_path, agents))
    for query in (word, word.upper()):
        found = resolve_agent(index, query)
        assert (found.status, found.value) == ("ambiguous", None)
        assert [c.value for c in found.candidates] == sorted(agents)


@pytest.mark.parametrize(
    ("agents", "query", "agent"),
    [
        ({"cursor-agent": ("Cursor Agent", "Cursor"), "junie": ("Junie", "JetBrains")}, "agent", "cursor-agent"),
        ({"acme-bot": ("Acme Bot", "Acme"), "yaml-bot": ("Yaml Bot", "Yamlco")}, "yaml", "yaml-bot"),
        ({"pilot-vs": ("Pilot in VS Code", "Acme"), "pilot-cli": ("Pilot CLI", "Zeta")}, "vs code pilot", "pilot-vs"),
    ],
)
def test_a_shortened_name_only_one_agent_has_still_names_it(
    tmp_path: Path, agents: dict[str, tuple[str, str]], query: str, agent: str
) -> None:
    found = resolve_agent(_match_index(_named_agents(tmp_path, agents)), query)
    assert (found.status, found.value, found.confidence) == ("resolved", agent, 1.0)


@pytest.mark.anyio
async def test_lookup_with_a_shared_word_for_the_agent_answers_for_each(tmp_path: Path) -> None:
    """A word both agents' names share is neither one of them: the lookup answers for both, side by side."""
    build = _named_agents(tmp_path, {"cursor-agent": ("Cursor Agent", "Cursor"), "junie": ("Junie Agent", "JetBrains")})
    async with connect(build) as client:
        result = await client.call_tool("lookup_capability", {"agent": "agent", "capability": "MCP Servers"})
    assert not result.is_error
    assert [e["agent"] for e in result.structured_content["agents"]] == ["cursor-agent", "junie"]
    (agent,) = result.meta["capidx/resolution"]["agents"]
    assert agent["status"] == "ambiguous"
    assert [c["value"] for c in agent["candidates"]] == ["cursor-agent", "junie"]


@pytest.mark.anyio
async def test_an_agent_with_no_record_is_pointed_at_its_records_closest_by_name(tmp_path: Path) -> None:
    """Told only that an agent has no record of Web Search, a model said it could not reach the web; its record of Web
    Fetch says it can. Its own records whose names share at least half of the capability's name (rarer words weigh
    more) are named beside "no data, not a no", with where it stands; by names alone, so that another agent's text
    (a description of Context Compaction that speaks of lifecycle hooks) names nothing, nor a name not that close."""
    caps = (
        Cap("Web Search", "context-awareness", "Looks up current pages with a search engine.", agents=ONE),
        Cap("Web Fetch", "context-awareness", "Reads a page from its address.", agents=BOTH),
        Cap("Codebase Search", "context-awareness", "Searches the code for a symbol.", agents=BOTH),
        Cap("Log Search", "observability", "Searches the session logs.", agents=BOTH),
        Cap("Voice Input", "ide-integration", "Dictates a chat prompt aloud.", agents=ONE),
        Cap("Lifecycle Hooks", "customization", "Runs a script at each lifecycle event.", agents=ONE),
        Cap("Context Compaction", "context-awareness", "Summarizes the conversation; lifecycle hooks run first.",
            agents=BOTH),
        Cap("Inline Chat", "chat-assistance", "Chats in the editor.", agents=ONE),
        Cap("Inline Completion", "code-generation", "Completes code as you type.",
            agents={CLAUDE: {"available": True}, GEMINI: {"available": False}}),
        Cap("Plan Mode", "context-awareness", "Proposes a plan in the chat before any edit.", agents=BOTH),
    )  # fmt: skip
    build = real_build(write_catalog(tmp_path / "agents", caps), tmp_path / "build")
    async with connect(build) as client:
        asked = {
            query: await client.call_tool("lookup_capability", {"agent": GEMINI, "capability": query})
            for query in ("web search", "voice input", "lifecycle hooks", "inline chat")
        }
        compared = await client.call_tool("compare_capability", {"capability": "Web Search", "agents": [GEMINI]})
        every = await client.call_tool("compare_capability", {"capability": "Web Search"})
    said = {query: answer.content[-1].text for query, answer in asked.items()}
    closest = f"Closest by name among {GEMINI}'s records"
    assert said["web search"].endswith(f"no data, not a no. {closest}: Web Fetch (available)."), said
    assert compared.content[-1].text == said["web search"]
    assert every.content[-1].text.endswith(" Closest by name among their records: gemini-cli's Web Fetch (available).")
    assert said["inline chat"].endswith(f"{closest}: Inline Completion (not available)."), said
    for nothing_close in ("voice input", "lifecycle hooks"):
        assert said[nothing_close].endswith("no data, not a no."), said[nothing_close]
