"""Meaning in the order of what is offered (server/semantic.py), on a small catalog built for real: with a
stand-in model whose closeness each test chooses (the mechanism, not the embeddings' numbers), and with the real
model, read from its package and never downloaded."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import numpy as np
import pytest
from mcp.shared.exceptions import MCPError
from server_support import Cap, connect, make_hub, real_build, write_catalog

from capidx.server import app, resolve, semantic
from capidx.server.matchindex import MatchIndex, Resolution
from capidx.server.resolve import resolve_capability

CLAUDE = "claude-code"
HAS = {CLAUDE: {"available": True}}
CATALOG = (
    Cap("Code Review", "collaboration", "Points out bugs in your pending changes.", agents=HAS),
    Cap("Git Integration", "collaboration", "Commits your changes and pushes branches.", agents=HAS),
    Cap("Web Search", "context-awareness", "Searches the web for current information.", agents=HAS),
    Cap("Tool Permissions", "security", "Lets you allow or deny each tool the agent may call.", agents=HAS),
    Cap("Auto-Approve Mode", "security", "Grants every permission: no permission prompts for any tool.", agents=HAS),
    Cap("Editor Bridge", "ide-integration", "Connects the agent to your editor's open files.", agents=HAS),
    Cap("In-editor Prompt", "ide-integration", "A prompt box inside the editor, at the cursor.", agents=HAS),
    Cap("Terminal CLI", "ide-integration", "Runs the agent as an interactive program in your shell.", agents=HAS),
    Cap("Non-interactive Mode", "ide-integration", "Answers one prompt from a script and exits.", agents=HAS),
)
# Shares 'changes' with both and 'push' with Git Integration only; means what Code Review does.
QUESTION = "mistakes in my changes before I push"


class StandIn:
    """Says a text means the same as the query (cosine 1) when it holds one of `alike` and none of `unlike`, else
    nothing like it (0)."""

    def __init__(self, *alike: str, unlike: Sequence[str] = ()) -> None:
        self.alike, self.unlike = alike, unlike

    def embed(self, texts: Sequence[str], norm: bool = True) -> np.ndarray:
        lower = [text.lower() for text in texts]
        same = [any(w in text for w in self.alike) and not any(w in text for w in self.unlike) for text in lower]
        return np.array([[1.0, 0.0] if hit else [0.0, 1.0] for hit in same])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("meaning")
    return real_build(write_catalog(root / "agents", CATALOG), root / "build")


@pytest.fixture
def index(built: Path) -> MatchIndex:
    """A fresh index per test: capability vectors are made once per index, by whichever model is in place."""
    return MatchIndex.from_json(json.loads((built / "index" / "match.json").read_text("utf-8")))


def offered(resolution: Resolution) -> list[str]:
    return [c.value for c in resolution.candidates]


def with_model(monkeypatch: pytest.MonkeyPatch, model: object) -> None:
    monkeypatch.setattr(semantic, "model", lambda: model)


def test_the_match_index_keeps_each_capabilitys_descriptions_as_written(built: Path) -> None:
    rows = json.loads((built / "index" / "match.json").read_text("utf-8"))["capabilities"]
    assert {row["slug"]: row["descriptions"] for row in rows}["code-review"] == [CATALOG[0].description]


def test_meaning_orders_what_is_offered(index: MatchIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    with_model(monkeypatch, None)
    words_only = resolve_capability(index, QUESTION, agent=CLAUDE)
    assert not words_only.ok and offered(words_only)[:2] == ["git-integration", "code-review"]

    with_model(monkeypatch, StandIn("mistake", "bug"))
    both = resolve_capability(index, QUESTION, agent=CLAUDE)
    assert not both.ok and offered(both)[:2] == ["code-review", "git-integration"]
    shown = [c.confidence for c in both.candidates]
    assert shown == sorted(shown, reverse=True) and all(0 <= c <= 1 for c in shown)
    assert set(offered(both)) == set(offered(words_only))  # the same candidates, in another order


@pytest.mark.anyio
async def test_the_snippets_follow_the_candidates_order_meaning_included(
    built: Path, index: MatchIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A candidate meaning lifts to half the rule's confidence gets its snippet in its place: one was named only
    among the other candidates, after the snippets of candidates with a lower blend (a blind model test), so the
    first snippet a model read was not the first candidate."""
    with_model(monkeypatch, StandIn("mistake", "bug"))
    both = resolve_capability(index, QUESTION, agent=CLAUDE)
    floor = resolve.DECISION_RULE[0] / 2
    lifted = [c.value for c in both.candidates if c.confidence >= floor]
    assert lifted[:1] == ["code-review"] and [c.value for c in both.ranked][: len(lifted)] == lifted
    async with connect(make_hub(built)) as client:
        answer = await client.call_tool("lookup_capability", {"agent": CLAUDE, "capability": QUESTION})
    rows = answer.structured_content["suggestions"]
    meta = [c["value"] for c in answer.meta["capidx/resolution"]["capability"]["candidates"]]
    assert [row["capability"] for row in rows] == meta[: len(rows)] and rows[0]["capability"] == "code-review"


def test_meaning_neither_resolves_nor_offers_nor_changes_a_resolved_answer(
    index: MatchIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_model(monkeypatch, None)
    words = resolve_capability(index, "commit my changes", agent=CLAUDE)
    assert words.value == "git-integration" and words.resolved_by == "lexical"
    # The stand-in says each question means Code Review. Words resolved the first: that answer stands, with its
    # confidence; the second shares no word with Code Review, which is then not offered.
    with_model(monkeypatch, StandIn("commit my changes", "where are the mistakes", "bug"))
    both = resolve_capability(index, "commit my changes", agent=CLAUDE)
    assert (both.value, both.resolved_by, both.confidence) == (words.value, words.resolved_by, words.confidence)
    unresolved = resolve_capability(index, "where are the mistakes in the web results", agent=CLAUDE)
    assert not unresolved.ok and offered(unresolved) == ["web-search"]


def test_an_unknown_answer_is_ordered_by_meaning_too_and_stays_in_order(
    index: MatchIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing matched well (every confidence below half the rule's): meaning still orders what ranked a little,
    # the closest names follow, the list never rises, and nothing reaches a label above the lowest (0.5).
    with_model(monkeypatch, StandIn("xyzzy", "bug"))
    ranked = resolve_capability(index, "xyzzy plugh blorp quux frob web changes", agent=CLAUDE)
    assert ranked.status == "unknown" and offered(ranked)[0] == "code-review"
    few = resolve_capability(index, "xyzzy plugh blorp quux frob zork web", agent=CLAUDE)
    assert few.status == "unknown" and offered(few)[0] == "web-search" and len(few.candidates) > 1
    for answer in (ranked, few):
        shown = [c.confidence for c in answer.candidates]
        assert shown == sorted(shown, reverse=True) and max(shown) < 0.5


def test_a_sentence_nothing_matches_is_answered_by_meaning_a_few_words_by_spelling(
    index: MatchIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No capability has a word of these queries; the stand-in says each means what Code Review does.
    with_model(monkeypatch, StandIn("xyzzy", "bug"))
    sentence = resolve_capability(index, "xyzzy plugh blorp quux", agent=CLAUDE)
    assert sentence.status == "unknown" and offered(sentence) == ["code-review"]
    assert sentence.candidates[0].confidence < resolve.DECISION_RULE[0] / 2
    # Two words may be a name mistyped beyond the typo tier: the names closest in spelling, whatever the model says.
    name = resolve_capability(index, "xyzzy termnl", agent=CLAUDE)
    assert name.status == "unknown" and offered(name)[0] == "terminal-cli" and "code-review" not in offered(name)
    # Without a model, or with one that embeds the sentence as nothing (NaN), a sentence has the names closest in
    # spelling too.
    with_model(monkeypatch, None)
    unmodelled = resolve_capability(index, "xyzzy plugh blorp quux", agent=CLAUDE)
    assert unmodelled.status == "unknown" and len(unmodelled.candidates) == 3
    with_model(monkeypatch, Blank())
    blank = resolve_capability(index, "xyzzy plugh blorp quux", agent=CLAUDE)
    assert blank.candidates == unmodelled.candidates


def test_a_sentence_nothing_is_close_to_in_meaning_has_the_names_closest_in_spelling(
    index: MatchIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A model that finds every capability unlike the sentence (cosines 0, or below) says nothing about which is
    # closest: the sentence is not left without a suggestion, it has the names closest in spelling, as without one.
    with_model(monkeypatch, None)
    unmodelled = resolve_capability(index, "xyzzy plugh blorp quux", agent=CLAUDE)
    assert unmodelled.status == "unknown" and len(unmodelled.candidates) == 3
    for model in (Unlike(0.0), Unlike(-1.0)):
        with_model(monkeypatch, model)
        answer = resolve_capability(index, "xyzzy plugh blorp quux", agent=CLAUDE)
        assert answer.status == "unknown" and answer.candidates == unmodelled.candidates


def test_no_suggestion_by_meaning_is_shown_as_no_match_at_all(
    index: MatchIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Cosines this small ('the whiteboard weather' against the bundled catalog) are noise, and scaled below the
    # ranked candidates they would be shown as a match confidence of 0: the names closest in spelling are offered.
    with_model(monkeypatch, None)
    unmodelled = resolve_capability(index, "xyzzy plugh blorp quux", agent=CLAUDE)
    with_model(monkeypatch, Unlike(0.005))
    answer = resolve_capability(index, "xyzzy plugh blorp quux", agent=CLAUDE)
    assert answer.status == "unknown" and all(c.confidence > 0 for c in answer.candidates)
    assert answer.candidates == unmodelled.candidates
    # A cosine just large enough to be shown is a suggestion by meaning, shown above 0.
    with_model(monkeypatch, Unlike(0.007))
    answer = resolve_capability(index, "xyzzy plugh blorp quux", agent=CLAUDE)
    assert len(answer.candidates) == 3 and answer.candidates != unmodelled.candidates
    assert all(c.confidence > 0 for c in answer.candidates)


class Unlike(StandIn):
    """Embeds every capability's text alike, and the query at `cosine` with each of them."""

    def __init__(self, cosine: float) -> None:
        super().__init__()
        self.cosine = cosine

    def embed(self, texts: Sequence[str], norm: bool = True) -> np.ndarray:
        if len(texts) == 1:
            return np.array([[self.cosine, (1 - self.cosine**2) ** 0.5]])
        return np.array([[1.0, 0.0] for _ in texts])


def test_a_name_nothing_ranks_for_does_not_load_the_model(index: MatchIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    # Nothing to order and no sentence to fill: the model (0.3 s to load in a fresh process) is not asked.
    asked: list[str] = []
    monkeypatch.setattr(semantic, "model", lambda: asked.append("model") or StandIn("xyzzy"))
    name = resolve_capability(index, "xyzzy termnl", agent=CLAUDE)
    assert name.status == "unknown" and offered(name)[0] == "terminal-cli" and not asked
    sentence = resolve_capability(index, "xyzzy plugh blorp quux", agent=CLAUDE)
    assert sentence.status == "unknown" and asked


class Blank(StandIn):
    """Embeds every capability's text, and the query as not a number (as an embedding of no known token may be)."""

    def embed(self, texts: Sequence[str], norm: bool = True) -> np.ndarray:
        return np.full((len(texts), 2), np.nan) if len(texts) == 1 else super().embed(texts, norm)


SAYS_OTHERWISE = StandIn("permission", "in-editor", "open files", unlike=("tool permissions", "in-editor prompt"))


@pytest.mark.parametrize("model", [None, SAYS_OTHERWISE])
def test_a_capability_whose_name_holds_the_query_is_offered_first(
    index: MatchIndex, monkeypatch: pytest.MonkeyPatch, model: StandIn | None
) -> None:
    # With or without a model that says the query means another capability: a partial name, as written or in
    # other forms, comes first; as written beats other forms ('in-editor' is In-editor Prompt's, not Editor
    # Bridge's, although both names hold 'editor').
    with_model(monkeypatch, model)
    for query in ("permissions", "permission"):
        answer = resolve_capability(index, query, agent=CLAUDE)
        assert not answer.ok and offered(answer)[0] == "tool-permissions", query
    answer = resolve_capability(index, "in-editor", agent=CLAUDE)
    assert not answer.ok and offered(answer)[:2] == ["in-editor-prompt", "editor-bridge"]


def test_a_negated_name_does_not_hold_the_plain_word(index: MatchIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    # 'interactive mode' is not a partial name of Non-interactive Mode ('non' stays bound to its word), so
    # that name is not put first; here meaning says the question is about Terminal CLI, which then leads.
    with_model(monkeypatch, StandIn("interactive program", "interactive mode", unlike=("non-interactive",)))
    answer = resolve_capability(index, "interactive mode", agent=CLAUDE)
    assert not answer.ok and offered(answer)[0] == "terminal-cli"
    assert "non-interactive-mode" in offered(answer)  # it was a candidate ('mode'), just not put first


def test_a_build_made_before_descriptions_keeps_the_words_order(built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = json.loads((built / "index" / "match.json").read_text("utf-8"))
    for row in data["capabilities"]:
        del row["descriptions"]
    with_model(monkeypatch, StandIn("mistake", "bug"))
    older = MatchIndex.from_json(data)
    assert offered(resolve_capability(older, QUESTION, agent=CLAUDE))[:2] == ["git-integration", "code-review"]


def test_the_model_is_read_from_its_package_and_never_downloaded(tmp_path: Path) -> None:
    # A fresh process with an empty home and cache folder and no network at all: the model must come from the
    # files its package ships, and mean something.
    probe = """
import socket
def refuse(*args, **kwargs):
    raise OSError("no network")
socket.socket.connect = refuse
socket.create_connection = refuse
from capidx.server import semantic
meanings = semantic.Meanings({"review": "Finds bugs and mistakes in code", "weather": "Rain expected tomorrow"})
close = meanings.closeness("catch errors in my code")
assert close is not None and close["review"] > close["weather"], close
print("ok")
"""
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "HF_HOME": str(home / "hf")}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
    assert not list(home.rglob("*"))  # nothing was fetched or cached


class Broken:
    """A model that loads but cannot embed."""

    def embed(self, texts: Sequence[str], norm: bool = True) -> np.ndarray:
        raise RuntimeError("the model broke")


def test_a_model_that_fails_to_embed_leaves_the_words_order_and_is_given_up(
    index: MatchIndex, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(semantic, "_LOADED", [Broken()])  # loaded, then fails: one warning, then words alone
    with caplog.at_level(logging.WARNING, logger=semantic.__name__):
        for _ in range(3):
            answer = resolve_capability(index, QUESTION, agent=CLAUDE)
            assert not answer.ok and offered(answer)[:2] == ["git-integration", "code-review"]
    assert [r.levelno for r in caplog.records if r.name == semantic.__name__] == [logging.WARNING]


def test_without_the_model_words_alone_order_and_a_warning_says_why(
    index: MatchIndex, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "wordllama", None)  # as if the package were not installed
    monkeypatch.setattr(semantic, "_LOADED", [])
    with caplog.at_level(logging.WARNING, logger=semantic.__name__):
        answer = resolve_capability(index, QUESTION, agent=CLAUDE)
    assert offered(answer)[:2] == ["git-integration", "code-review"]
    assert [r.levelno for r in caplog.records if r.name == semantic.__name__] == [logging.WARNING]


class Waiting(StandIn):
    """Once `armed` (from the start unless told otherwise), embeds a catalog only when the test lets it, and says
    whether it was let or gave up waiting."""

    def __init__(self, armed: bool = True) -> None:
        super().__init__("mistake", "bug")
        self.armed = armed
        self.started, self.go = threading.Event(), threading.Event()
        self.let: list[bool] = []

    def embed(self, texts: Sequence[str], norm: bool = True) -> np.ndarray:
        if self.armed and len(texts) > 1:  # a catalog: the first lookup that resolves nothing, or a new build's
            self.started.set()
            self.let.append(self.go.wait(10))
        return super().embed(texts, norm)


def first_offered(answer: Any) -> str:
    """The capability an unresolved answer offers first: its first suggestion's, or its first candidate's."""
    value = answer.structured_content
    rows = value.get("suggestions") or value["candidates"]
    return rows[0].get("capability") or rows[0]["slug"]


@pytest.mark.anyio
async def test_the_lookup_that_embeds_the_catalog_does_not_hold_up_other_requests(
    built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Embedding a large catalog takes seconds, loading the model 0.4 s: the server must answer other requests (of
    # this or other sessions) meanwhile. Were the call run on the event loop, nothing else would be answered before
    # the stand-in gave up waiting.
    model = Waiting()
    with_model(monkeypatch, model)
    monkeypatch.setattr(semantic, "_LOADED", [])  # the model not loaded yet in this process
    answers = []
    hub = make_hub(built)
    assert hub.snapshot.index.meanings.pending
    async with connect(hub) as client:

        async def ask() -> None:
            answers.append(await client.call_tool("lookup_capability", {"agent": CLAUDE, "capability": QUESTION}))

        async with anyio.create_task_group() as group:
            group.start_soon(ask)
            assert await anyio.to_thread.run_sync(model.started.wait, 10)
            assert (await client.list_tools()).tools  # answered while the catalog is being embedded
            model.go.set()
        again = await client.call_tool("lookup_capability", {"agent": CLAUDE, "capability": QUESTION})
    assert model.let == [True]  # embedded once, and only after the other request was answered
    assert not hub.snapshot.index.meanings.pending  # later lookups run on the loop, as every other request
    for answer in (*answers, again):
        assert first_offered(answer) == "code-review"


@pytest.mark.anyio
@pytest.mark.parametrize("loads", [True, False], ids=["loaded", "failed"])
async def test_a_lookup_made_while_the_model_loads_waits_for_it_even_one_that_does_not_need_it(
    built: Path, monkeypatch: pytest.MonkeyPatch, loads: bool
) -> None:
    # Run beside the loading, which holds the interpreter for a third of a second as it imports, lookups that need no
    # meaning (a name) took several times their time, dozens in a row; waiting for the load ends that at once. Other
    # requests are answered meanwhile, and a load that fails (no model) lets the lookup go on, by words alone. Were the
    # name answered at once, the stand-in load would never be entered.
    entered, go = threading.Event(), threading.Event()

    def loading() -> StandIn | None:
        entered.set()
        return StandIn("mistake", "bug") if go.wait(10) and loads else None

    monkeypatch.setattr(semantic, "model", loading)
    monkeypatch.setattr(semantic, "_LOADED", [])  # not loaded yet in this process: `pending`
    hub = make_hub(built)
    answers = []
    async with connect(hub) as client:

        async def ask() -> None:
            answers.append(await client.call_tool("lookup_capability", {"agent": CLAUDE, "capability": "Code Review"}))

        async with anyio.create_task_group() as group:
            group.start_soon(ask)
            assert await anyio.to_thread.run_sync(entered.wait, 10)  # the name's lookup waits for the load
            assert (await client.list_tools()).tools  # other requests are answered meanwhile
            assert not answers
            go.set()
    (answer,) = answers
    assert answer.structured_content["capability"]["slug"] == "code-review"


class WaitingOnQuery(StandIn):
    """Once `armed`, embeds a query only when the test lets it, and says whether it was let or gave up waiting."""

    def __init__(self) -> None:
        super().__init__("mistake", "bug")
        self.armed = False
        self.started, self.go = threading.Event(), threading.Event()
        self.let: list[bool] = []

    def embed(self, texts: Sequence[str], norm: bool = True) -> np.ndarray:
        if self.armed and len(texts) == 1:
            self.started.set()
            self.let.append(self.go.wait(10))
        return super().embed(texts, norm)


@pytest.mark.anyio
@pytest.mark.parametrize("route", ["tool", "resource"])
async def test_resolving_in_a_large_catalog_does_not_hold_up_other_requests(
    built: Path, monkeypatch: pytest.MonkeyPatch, route: str
) -> None:
    # In a catalog of a thousand capabilities a question nothing names takes some 100 ms to resolve, by a lookup or
    # a free-text resource URI: other requests must be answered meanwhile, also once the model is loaded. Here the
    # catalog counts as large with the bound lowered; were the call run on the event loop, nothing else would be
    # answered before the stand-in gave up waiting.
    monkeypatch.setattr(app, "INLINE_CAPABILITIES", 1)
    model = WaitingOnQuery()
    with_model(monkeypatch, model)
    monkeypatch.setattr(semantic, "_LOADED", [model])
    hub = make_hub(built)
    async with connect(hub) as client:
        await client.call_tool("lookup_capability", {"agent": CLAUDE, "capability": QUESTION})  # embeds the catalog
        assert not hub.snapshot.index.meanings.pending
        model.armed = True

        async def resolve() -> None:
            if route == "tool":
                await client.call_tool("lookup_capability", {"agent": CLAUDE, "capability": QUESTION})
            else:
                with pytest.raises(MCPError):  # not one capability: the candidates, in an error
                    await client.read_resource(f"capability-index://capabilities/{quote(QUESTION)}")

        async with anyio.create_task_group() as group:
            group.start_soon(resolve)
            assert await anyio.to_thread.run_sync(model.started.wait, 10)
            assert (await client.list_tools()).tools  # answered while the question is being resolved
            model.go.set()
    assert model.let == [True]


def test_a_lone_surrogate_in_a_query_neither_fails_it_nor_gives_meaning_up(
    index: MatchIndex, caplog: pytest.LogCaptureFixture
) -> None:
    """No JSON client can send one, but a Python caller can: the query is embedded with it replaced, and meaning
    keeps ordering the next queries."""
    with caplog.at_level(logging.WARNING, logger=semantic.__name__):
        odd = resolve_capability(index, QUESTION + "\ud800", agent=CLAUDE)
        after = resolve_capability(index, QUESTION, agent=CLAUDE)
    assert offered(odd) == offered(after)
    assert not [r for r in caplog.records if r.name == semantic.__name__]
    assert semantic.model() is not None


@pytest.mark.anyio
async def test_a_new_build_being_embedded_does_not_hold_up_lookups_on_the_served_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reload embeds the new build's catalog before the swap (seconds, for a large one), in a thread: a lookup on
    the build still served, whose catalog is embedded, runs on the event loop (a small catalog) and must not wait
    for it. Were it to wait, the event loop would stand still until the stand-in gave up waiting."""
    from capidx.server.reload import Reloader

    model = Waiting(armed=False)  # armed once the served build is embedded
    monkeypatch.setattr(semantic, "_LOADED", [model])
    catalog = write_catalog(tmp_path / "agents", CATALOG)
    build = real_build(catalog, tmp_path / "build")
    hub = make_hub(build)
    async with connect(hub) as client:
        before = await client.call_tool("lookup_capability", {"agent": CLAUDE, "capability": QUESTION})
        assert not hub.snapshot.index.meanings.pending  # served, embedded: lookups run on the loop
        write_catalog(catalog, CATALOG, note=" Rebuilt.")
        real_build(catalog, build)
        model.armed = True
        swapped: list[bool] = []

        async def reload() -> None:
            swapped.append(await Reloader(hub, build).check())

        async with anyio.create_task_group() as group:
            group.start_soon(reload)
            try:
                assert await anyio.to_thread.run_sync(model.started.wait, 10)
                during = await client.call_tool("lookup_capability", {"agent": CLAUDE, "capability": QUESTION})
            finally:
                model.go.set()
    assert model.let == [True] and swapped == [True]  # embedded only after the lookup was answered
    for answer in (before, during):
        assert first_offered(answer) == "code-review"
