"""Name resolution as pure functions over index/match.json."""

from __future__ import annotations

from pathlib import Path

import pytest
from server_support import score_capabilities

from capidx.schema.text import terms
from capidx.server import rank
from capidx.server.matchindex import MatchIndex, Resolution
from capidx.server.names import resolve_agent, resolve_category
from capidx.server.query import correct
from capidx.server.resolve import resolve_capability
from capidx.server.snapshot import load_snapshot


@pytest.fixture
def index(any_build: Path) -> MatchIndex:
    return load_snapshot(any_build).index


@pytest.mark.parametrize(
    ("query", "agent_id", "how"),
    [
        ("claude-code", "claude-code", "exact"),
        ("Claude Code", "claude-code", "exact"),
        ("CLAUDE_CODE", "claude-code", "exact"),
        ("claude", "claude-code", "name"),
        ("gemini", "gemini-cli", "name"),
        ("GitHub Copilot CLI", "copilot-cli", "name"),
        ("gemni", "gemini-cli", "fuzzy"),
        ("claud code", "claude-code", "fuzzy"),
        ("claude-cod", "claude-code", "fuzzy"),  # a word cut short
        ("claudecod", "claude-code", "fuzzy"),  # words run together, mistyped
        ("copliot cli", "copilot-cli", "fuzzy"),  # two letters swapped
    ],
)
def test_agents(index: MatchIndex, query: str, agent_id: str, how: str) -> None:
    resolution = resolve_agent(index, query)
    assert (resolution.status, resolution.value, resolution.resolved_by) == ("resolved", agent_id, how)


@pytest.mark.parametrize("query", ["copilot", "Copilot", " COPILOT "])
def test_copilot_is_ambiguous(index: MatchIndex, query: str) -> None:
    resolution = resolve_agent(index, query)
    assert resolution.status == "ambiguous"
    assert [c.value for c in resolution.candidates] == ["copilot-cli", "vscode-copilot"]


@pytest.mark.parametrize("query", ["GitHub Copilot Chat", "copilot chat", "gemini code"])
def test_a_different_word_is_no_typo_of_an_agents_name(index: MatchIndex, query: str) -> None:
    """'GitHub Copilot Chat' is as similar to 'GitHub Copilot CLI' as a typo would be, but 'chat' is a word of its
    own, not a mistyped 'cli': taking it for Copilot CLI answered for the wrong agent (a wrong "no" on inline
    chat). It is not resolved; the closest names are offered."""
    resolution = resolve_agent(index, query)
    assert resolution.status != "resolved"


def test_unknown_agents_get_suggestions(index: MatchIndex) -> None:
    resolution = resolve_agent(index, "emacs")
    assert resolution.status == "unknown"
    assert len(resolution.candidates) == 3


@pytest.mark.parametrize("query", ["", "   ", "!!!"])
def test_a_name_like_no_agent_gets_no_suggestions(index: MatchIndex, query: str) -> None:
    # the first ids in alphabetical order, each 0 % alike, would be no suggestion
    assert resolve_agent(index, query) == Resolution(query, "unknown")


@pytest.mark.parametrize(
    ("query", "agent", "slug", "how"),
    [
        ("MCP Servers", None, "mcp-servers", "exact"),
        ("mcp-servers", None, "mcp-servers", "exact"),
        ("  mcp   SERVERS ", None, "mcp-servers", "exact"),
        ("mcp", None, "mcp-servers", "alias"),
        ("Model Context Protocol", None, "mcp-servers", "alias"),
        ("Extensions", "gemini-cli", "plugins", "terminology"),
        ("Extensions", "claude-code", "plugins", "terminology"),
        ("Plan agent", None, "plan-mode", "terminology"),
        ("mcp srvers", None, "mcp-servers", "fuzzy"),
        ("hoks", None, "hooks", "fuzzy"),
        ("ghost-text suggestions while typing", None, "inline-code-completion", "lexical"),
        ("run a shell command before a tool call", None, "hooks", "lexical"),
    ],
)
def test_capabilities(index: MatchIndex, query: str, agent: str | None, slug: str, how: str) -> None:
    resolution = resolve_capability(index, query, agent=agent)
    assert (resolution.status, resolution.value, resolution.resolved_by) == ("resolved", slug, how)
    assert 0 < resolution.confidence <= 1


def test_the_asked_agents_terminology_wins() -> None:
    data = {
        "agents": [{"id": "a", "name": "A"}, {"id": "b", "name": "B"}],
        "agentNames": {},
        "aliases": {},
        "capabilities": [
            {"slug": s, "name": s.title(), "category": "c", "key": s, "agents": {}, "terms": {s: 1}, "length": 1}
            for s in ("rules", "memory")
        ],
        "terminology": {"memory": [{"agent": "a", "capability": "rules"}, {"agent": "b", "capability": "memory"}]},
        "idf": {"rules": 1.0, "memory": 1.0},
        "avgLength": 1,
        "categories": ["c"],
    }
    data["terminology"]["notes"] = data["terminology"].pop("memory")  # a word that is no capability's own name
    index = MatchIndex.from_json(data)
    assert resolve_capability(index, "notes", agent="a").value == "rules"
    assert resolve_capability(index, "notes", agent="b").value == "memory"
    unsure = resolve_capability(index, "notes")
    assert unsure.status == "ambiguous"
    assert [c.value for c in unsure.candidates] == ["memory", "rules"]


def test_low_margin_gives_the_top_three_with_confidence(index: MatchIndex) -> None:
    resolution = resolve_capability(index, "tool")
    assert resolution.status == "ambiguous"
    assert 2 <= len(resolution.candidates) <= 3
    confidences = [c.confidence for c in resolution.candidates]
    assert confidences == sorted(confidences, reverse=True)
    assert confidences[0] - confidences[1] < 0.15


def test_nothing_matches(index: MatchIndex) -> None:
    resolution = resolve_capability(index, "xyzzy plugh")
    assert resolution.status == "unknown" and resolution.value is None
    assert len(resolution.candidates) == 3


def test_resolution_is_described_for_meta(index: MatchIndex) -> None:
    assert resolve_capability(index, "mcp").describe() == {
        "input": "mcp",
        "status": "resolved",
        "value": "mcp-servers",
        "resolvedBy": "alias",
        "matchConfidence": 1.0,
    }


@pytest.mark.parametrize(
    ("query", "category"),
    [("customization", "customization"), ("API integration", "api-integration"), ("api", "api-integration")],
)
def test_categories(index: MatchIndex, query: str, category: str) -> None:
    assert resolve_category(index, query).value == category


def test_unknown_category(index: MatchIndex) -> None:
    resolution = resolve_category(index, "cooking")
    assert resolution.status == "unknown" and len(resolution.candidates) == 3


# --- the mechanisms, one by one, on small hand-made indexes -------------------------------------------


def make_index(caps: list[dict], **extra: object) -> MatchIndex:
    """A match.json as docs/build-directory.md describes it, from {slug, name, description, aliases?,
    triggers?, terminology?} rows (terms counted like the build does)."""
    from collections import Counter

    from capidx.schema.text import normalize, terms

    rows, aliases, terminology = [], {}, {}
    for cap in caps:
        wording = cap.get("terminology", {})
        texts = [cap["name"], *wording.values(), cap["description"], *cap.get("aliases", ()), *cap.get("triggers", ())]
        counts = Counter(t for text in texts for t in terms(text))
        for alias in cap.get("aliases", ()):
            aliases[normalize(alias)] = cap["slug"]
        for agent, word in wording.items():
            terminology.setdefault(normalize(word), []).append({"agent": agent, "capability": cap["slug"]})
        row = {
            "slug": cap["slug"],
            "name": cap["name"],
            "category": "c",
            "agents": {agent: {"available": True, "terminology": word} for agent, word in wording.items()},
            "terms": dict(counts),
        }
        row |= {key: cap[key] for key in ("aliases", "similarTo") if key in cap}
        rows.append(row)
    data = {
        "agents": [{"id": "a", "name": "Agent A"}],
        "agentNames": {},
        "aliases": aliases,
        "capabilities": rows,
        "terminology": terminology,
        "categories": ["c"],
    }
    return MatchIndex.from_json(data | extra)


LOGS = [
    {"slug": "log-rotation", "name": "Log Rotation", "description": "Keeps disk use bounded by archiving old files."},
    {
        "slug": "disk-cleanup",
        "name": "Disk Cleanup",
        "description": "Removes temporary files. Unlike log rotation it never touches log files: logs and log "
        "rotation settings stay as they are.",
    },
    {"slug": "release-notes", "name": "Release Notes", "description": "Drafts a changelog.", "aliases": ["changelog"]},
]


def test_field_weights_a_name_match_beats_description_mentions(monkeypatch: pytest.MonkeyPatch) -> None:
    # The same two words in a name and, repeated, in another capability's description ('policy' is in neither).
    index = make_index(LOGS)
    assert resolve_capability(index, "log rotation policy").ranked[0].value == "log-rotation"
    weighted = score_capabilities(index, "log rotation policy")
    # the same ranking without field weights: the description that repeats the words comes much closer
    monkeypatch.setattr(rank, "FIELD_WEIGHTS", dict.fromkeys(rank.FIELD_WEIGHTS, 1.0))
    flat = score_capabilities(make_index(LOGS), "log rotation policy")
    margin = weighted["log-rotation"] - weighted["disk-cleanup"]
    assert flat["log-rotation"] - flat["disk-cleanup"] < margin / 1.5


@pytest.mark.parametrize("query", ["release note", "the Release-Notes", "changelogs"])
def test_stemmed_keys_are_a_second_exact_tier(query: str) -> None:
    resolution = resolve_capability(make_index(LOGS), query)
    assert (resolution.status, resolution.value, resolution.resolved_by) == ("resolved", "release-notes", "stemmed")
    assert resolution.confidence == 1.0


def test_a_key_chord_alias_gives_no_stemmed_key() -> None:
    # 'Cmd+I' is 'cmd i' in the alias table, whose terms() are 'cmd' alone ('i' is a stop word): 'cmd' must not name
    # Inline Chat by that; the chord itself and its spelling still do
    chat = {"slug": "inline-chat", "name": "Inline Chat", "description": "Edits in place.", "aliases": ["Cmd+I"]}
    shell = {"slug": "shell", "name": "Shell Commands", "description": "Runs a cmd in a terminal."}
    index = make_index([chat, shell])
    assert resolve_capability(index, "cmd").resolved_by != "stemmed"
    assert resolve_capability(index, "cmd i").value == "inline-chat"
    assert resolve_capability(index, "Cmd+I").value == "inline-chat"


def test_an_agents_wording_in_another_form_is_ranked_not_looked_up() -> None:
    # stemmed keys are names and aliases only: a wording's words rank its capability (the terminology field)
    guide = {"slug": "tours", "name": "Guided Tours", "description": "Explains code."}
    guide["terminology"] = {"a": "walk throughs"}
    resolution = resolve_capability(make_index([*LOGS, guide]), "walk through")
    assert (resolution.status, resolution.value, resolution.resolved_by) == ("resolved", "tours", "lexical")


def test_a_typo_of_a_name_is_corrected_then_looked_up() -> None:
    caps = [
        {"slug": "breakpoints", "name": "Breakpoints", "description": "Pause a program at a line."},
        {
            "slug": "conditional-breakpoints",
            "name": "Conditional Breakpoints",
            "description": "Breakpoints that pause only when a condition holds.",
        },
    ]
    resolution = resolve_capability(make_index(caps), "brekpoints")
    assert (resolution.status, resolution.value, resolution.resolved_by) == ("resolved", "breakpoints", "fuzzy")
    assert 0.8 < resolution.confidence < 1.0  # as similar as the corrected word


@pytest.mark.parametrize(
    ("description", "query"),
    [
        ("Pastes a screenshot into the prompt.", "pasted screenshot"),  # 'past' (of 'pasted') read as 'paste'
        ("Included files are read at start.", "include files"),  # 'include' read as the index's 'includ'
    ],
)
def test_a_word_the_light_stem_took_an_e_from_is_no_typo(description: str, query: str) -> None:
    """'read an image or pasted screenshot' was read "by its words, allowing for typos" with nothing mistyped, and so
    left out of what is said of the words a record does not use: a word and the index's form of it one 'e' apart,
    either way, is the same word in another form (the light stem drops the 'e' of '-ed' and '-ing')."""
    caps = [
        {"slug": "shots", "name": "Image Input", "description": description},
        {"slug": "other", "name": "Web Search", "description": "Searches the web for current pages."},
    ]
    resolution = resolve_capability(make_index(caps), query)
    assert (resolution.status, resolution.value, resolution.resolved_by) == ("resolved", "shots", "lexical")


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("brekpoint", "breakpoint"),
        ("thik", "think"),
        ("mdoe", "mode"),
        ("sesion", "session"),
        ("persistant", "persistent"),
    ],
)
def test_a_typo_is_one_plausible_typing_error(typed: str, meant: str) -> None:
    # one missing, extra, wrong or swapped letter; in a short word only a missing or swapped one
    caps = [{"slug": "x", "name": "Breakpoint think mode", "description": "A persistent session."}]
    fixed, similarity = correct(typed, make_index(caps).vocabulary)
    assert fixed == meant and 0.5 < similarity < 1.0


@pytest.mark.parametrize(
    "word",
    ["line", "shot", "time", "module"],  # index terms: "fine", "spot", "tide", "mode"
)
def test_a_real_word_is_not_taken_for_a_typo_of_another(word: str) -> None:
    # A different first letter ('line' / 'fine'), a wrong letter in a short word ('shot' / 'spot', 'time' / 'tide')
    # or two errors in a word shorter than LONG_TYPO ('modules' / 'mode') is another word, not a typo.
    caps = [{"slug": "x", "name": "Fine spot", "description": "The tide mode of a pipeline."}]
    index = make_index(caps)
    assert correct(word, index.vocabulary) == (word, 1.0)


def test_a_name_or_alias_inside_a_question_is_strong_evidence() -> None:
    resolution = resolve_capability(make_index(LOGS), "how do I get a changelog for my repo")
    assert (resolution.status, resolution.value, resolution.resolved_by) == ("resolved", "release-notes", "lexical")


def test_a_phrase_naming_a_capability_counts_once_in_its_terminology_field() -> None:
    # The build lists a record's aliases in the capability row and in the alias table: the same phrase twice.
    # Counted once, it weighs what one mention weighs, however many lists name it.
    caps = [
        {"slug": "release-notes", "name": "Release notes", "description": "Drafts the notes of a release.",
         "aliases": ["changelog writer"]},
        {"slug": "other", "name": "Other", "description": "Keeps a changelog of every file."},
    ]  # fmt: skip
    query = "writer of the changelog for a deploy"
    listed_twice = score_capabilities(make_index(caps), query)
    assert listed_twice == score_capabilities(make_index(caps, aliases={}), query)
    assert listed_twice["release-notes"] > listed_twice["other"]


def test_an_older_index_without_the_enhanced_fields_still_resolves() -> None:
    index = make_index(LOGS)
    assert index.injection is None
    assert resolve_capability(index, "log rotation").value == "log-rotation"
    with_budget = make_index(LOGS, injection={"maxTokens": 200, "maxSnippets": 2, "overheadTokens": 9, "labels": []})
    assert (with_budget.injection.max_tokens, with_budget.injection.max_snippets) == (200, 2)


def agent_index(agent_names: dict[str, list[str]]) -> MatchIndex:
    data = {
        "agents": [
            {"id": "copilot-cli", "name": "GitHub Copilot CLI", "vendor": "GitHub"},
            {"id": "vscode-copilot", "name": "GitHub Copilot in Visual Studio Code", "vendor": "Microsoft"},
            {"id": "gemini-cli", "name": "Gemini CLI", "vendor": "Google"},
        ],
        "agentNames": agent_names,
        "aliases": {},
        "capabilities": [],
        "terminology": {},
        "idf": {},
        "avgLength": 1,
        "categories": [],
    }
    return MatchIndex.from_json(data)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Copilot in VS Code", "vscode-copilot"),  # 'copilot' and 'vs code' are two names of one agent
        ("GitHub Copilot in VSCode", "vscode-copilot"),
        ("Google Gemini CLI", "gemini-cli"),  # the vendor and the name
        ("the gemini cli", "gemini-cli"),
    ],
)
def test_agent_words_spread_over_several_names(query: str, expected: str) -> None:
    index = agent_index(
        {
            "copilot": ["copilot-cli", "vscode-copilot"],
            "github": ["copilot-cli", "vscode-copilot"],
            "copilot cli": ["copilot-cli"],
            "vs code": ["vscode-copilot"],
            "vscode": ["vscode-copilot"],
            "gemini": ["gemini-cli"],
            "google": ["gemini-cli"],
        }
    )
    resolution = resolve_agent(index, query)
    assert (resolution.status, resolution.value) == ("resolved", expected)
    assert resolve_agent(index, "GitHub Copilot").status == "ambiguous"
    assert resolve_agent(index, "copilot code cli").status == "unknown"  # no one agent has all three


def test_an_agents_name_with_a_word_of_other_agents_names_resolves_to_it() -> None:
    """'Claude Code CLI' (a blind writer's name for Claude Code, which is a CLI): no one agent's names hold all three
    words, Claude Code's hold the most, and the word they lack, 'cli', names two other agents rather than one. A word
    that names one other agent ('claude code gemini'), a word of no agent's name ('Claude Desktop') or a tie ('copilot
    gemini', 'claude cli') names no one agent."""
    index = agent_index(
        {
            "claude code": ["claude-code"],
            "claude": ["claude-code"],
            "gemini cli": ["gemini-cli"],
            "gemini": ["gemini-cli"],
            "copilot cli": ["copilot-cli"],
            "copilot": ["copilot-cli", "vscode-copilot"],
            "vs code": ["vscode-copilot"],
        }
    )
    found = resolve_agent(index, "Claude Code CLI")
    assert (found.status, found.value, found.resolved_by) == ("resolved", "claude-code", "name")
    for query in ("claude code gemini", "Claude Desktop", "copilot gemini", "claude cli"):
        assert resolve_agent(index, query).status != "resolved", query


def test_the_word_agent_after_an_agents_name_is_that_agent() -> None:
    """'VS Code agent': a model asked it and was told it is no agent. Every agent is one, so '[the] X agent(s)' is X
    ('copilot agents' both Copilots), mistyped too; 'agent' alone names no agent, a name that is a spelling with the
    word keeps it ('Cursor Agent'), and a list or a phrase of other words is not read so ('claude and other agents',
    'claude, agents': a review found them answered for claude-code alone, with nothing said of the rest)."""
    index = agent_index(
        {
            "gemini": ["gemini-cli"],
            "copilot": ["copilot-cli", "vscode-copilot"],
            "vs code": ["vscode-copilot"],
            "claude code": ["claude-code"],
            "cursor agent": ["cursor-agent"],
            "cursor": ["cursor-agent"],
            "copilot in vs code": ["vscode-copilot"],
        }
    )
    assert resolve_agent(index, "VS Code agent").value == "vscode-copilot"
    # a name with a stop word ('in', 'for') is still a name: a review found them read as a list of three agents
    for spelled in ("the copilot in vs code agent", "copilot for vs code agent"):
        assert resolve_agent(index, spelled).value == "vscode-copilot", spelled
    assert resolve_agent(index, "the Gemini agent").value == "gemini-cli"  # not also Cursor Agent, whose name has it
    assert resolve_agent(index, "gemni agent").value == "gemini-cli"  # mistyped, as without the word
    assert resolve_agent(index, "copilot agents").status == "ambiguous"
    found = resolve_agent(index, "claude-code agent")
    assert (found.value, found.resolved_by) == ("claude-code", "name")  # not an exact spelling
    found = resolve_agent(index, "Cursor Agent")
    assert (found.value, found.resolved_by) == ("cursor-agent", "exact")  # its id, spelled
    for other in (
        "claude code and other agents",
        "claude code, agents",
        "gemini & agents",
        "claude code or gemini agent",
    ):
        assert resolve_agent(index, other).status != "resolved", other
    plain = agent_index({"gemini": ["gemini-cli"], "vs code": ["vscode-copilot"]})
    for alone in ("agent", "the agents"):
        assert resolve_agent(plain, alone).status == "unknown", alone
    # what every agent is names none, even where an agent's name has the word (a review found 'the agent' and
    # 'every agent' read as Cursor Agent); a name with a joining word is still that name
    for alone in ("agent", "the agent", "every agent", "all agents"):
        assert resolve_agent(index, alone).status == "unknown", alone
    assert resolve_agent(index, "claude code or cursor agent").status != "resolved"
    joined = agent_index({"all hands": ["openhands"], "sand and sea": ["sand-and-sea"], "gemini": ["gemini-cli"]})
    assert resolve_agent(joined, "the All Hands agent").value == "openhands"
    assert resolve_agent(joined, "Sand and Sea agent").value == "sand-and-sea"


def test_an_agents_name_with_another_agents_name_names_no_one_agent() -> None:
    """'Anthropic Claude Code and Copilot CLI' names two agents: Claude Code's names hold the most of its words, and
    each word they lack ('copilot', 'cli') is a word of two other agents' names, but 'copilot' is a name by itself
    (of both Copilots), as 'github' is, and 'copilot cli' one agent's name: such a word is no word of a name."""
    index = agent_index(
        {
            "claude code": ["claude-code"],
            "anthropic": ["claude-code"],
            "gemini cli": ["gemini-cli"],
            "copilot cli": ["copilot-cli"],
            "copilot": ["copilot-cli", "vscode-copilot"],
            "github": ["copilot-cli", "vscode-copilot"],
            "vs code": ["vscode-copilot"],
        }
    )
    two = ("Anthropic Claude Code and Copilot CLI", "anthropic claude code copilot", "Anthropic Claude Code GitHub CLI")
    for query in two:
        assert resolve_agent(index, query).status != "resolved", query
    assert resolve_agent(index, "Anthropic Claude Code CLI").value == "claude-code"


@pytest.mark.parametrize(
    ("query", "expected"), [("githubcopilotcli", "copilot-cli"), ("googlegeminicli", "gemini-cli")]
)
def test_a_name_written_as_one_word_resolves_by_name(query: str, expected: str) -> None:
    index = agent_index({"github copilot cli": ["copilot-cli"], "google gemini cli": ["gemini-cli"]})
    resolution = resolve_agent(index, query)
    assert (resolution.status, resolution.value, resolution.resolved_by) == ("resolved", expected, "name")


@pytest.mark.parametrize("query", ["in", "the", "in the"])
def test_stop_words_alone_name_no_agent(query: str) -> None:
    index = agent_index({"copilot in vs code": ["vscode-copilot"], "the gemini": ["gemini-cli"]})
    assert resolve_agent(index, query).status == "unknown"


def category_index(categories: list[str]) -> MatchIndex:
    empty: dict[str, list[str]] = {}
    return MatchIndex.from_json({"agents": [], "agentNames": empty, "aliases": empty, "capabilities": [],
                                 "terminology": empty, "categories": categories})  # fmt: skip


@pytest.mark.parametrize(
    ("query", "status", "value"),
    [
        ("api-integration", "resolved", "api-integration"),  # the slug
        ("integration of the api", "resolved", "api-integration"),  # its meaningful words, in any order
        ("codecompletion", "resolved", "code-completion"),  # written as one word
        ("code", "ambiguous", None),  # a word of two categories
        ("the", "unknown", None),  # a stop word names none
        ("code-completoin", "resolved", "code-completion"),  # a typo
    ],
)
def test_categories_resolve_like_agent_names(query: str, status: str, value: str | None) -> None:
    index = category_index(["api-integration", "code-completion", "code-generation"])
    resolution = resolve_category(index, query)
    assert (resolution.status, resolution.value) == (status, value)


@pytest.mark.parametrize("text", ["I've", "I'll", "I'm", "don't", "you're", "it'd", "wasn't"])
def test_what_contractions_leave_are_stop_words(text: str) -> None:
    assert terms(text) == []


def test_a_keyboard_shortcut_names_keys_not_words() -> None:
    # 'Cmd+I' is not the word 'cmd' (an abbreviation of 'command'): the shortcut is an identifier, not terms
    assert terms("Opens a chat (Ctrl+I / Cmd+I)") == ["open", "chat"]
    assert terms("C++ code") == ["c", "code"]


HINTED = [
    {
        "slug": "feature-flags",
        "name": "Feature Flags",
        "description": "Ship dark launches safely.",
        "aliases": ["kill switch"],
    },
    {"slug": "billing", "name": "Billing", "description": "Invoices, payment methods and spending limits."},
]


def test_an_exact_alias_still_resolves_at_once() -> None:
    resolution = resolve_capability(make_index(HINTED), "Kill Switch")
    assert (resolution.status, resolution.value, resolution.resolved_by, resolution.confidence) == (
        "resolved",
        "feature-flags",
        "alias",
        1.0,
    )
