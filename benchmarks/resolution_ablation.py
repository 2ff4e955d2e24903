"""Ablation of the resolver: each mechanism removed in turn, on the blind query sets, in process.

A mechanism stays only if it earns its keep on queries it was not fitted on. This script switches each one
off (by replacing the function or constant that implements it for the length of one pass), answers every
query of the named runs with the server's own resolver (`resolve_agent`, `resolve_capability`) and judges
them as benchmarks/resolution_bench.py does. It prints, per mechanism, how the counts move against the
resolver as it is: one call (right, or the right capability offered first), right (resolved right) and
wrong. The builds are made once per catalog (bundled with hints, bundled without, catalog2); the
dot-directory path tokens are a build-time mechanism, so that row rebuilds the catalogs without them.

    python benchmarks/resolution_ablation.py                 # every blind set but the unread check set
    python benchmarks/resolution_ablation.py --runs catalog2 blind-2026-11-28-catalog2
    python benchmarks/resolution_ablation.py --catalog AGENTS QUERIES   # a query file on another catalog
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from resolution_bench import (
    RUNS,
    UNREAD,
    ablated_copy,
    add_run_arguments,
    agent_ids,
    catalog_run,
    classify,
    expected_agent,
)

from capidx.schema import lexicon, text
from capidx.server import matchindex, names, query, resolve
from capidx.server.matchindex import MatchIndex
from capidx.server.names import resolve_agent

DEFAULT_RUNS = tuple(name for name in RUNS if not name.startswith(UNREAD))


@contextmanager
def replaced(owner: Any, name: str, value: Any) -> Iterator[None]:
    old = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, old)


def _index_edit(edit: Callable[[MatchIndex], MatchIndex]) -> Any:
    parse = MatchIndex.from_json.__func__  # type: ignore[attr-defined]
    return replaced(MatchIndex, "from_json", classmethod(lambda cls, data: edit(parse(cls, data))))


def _expansions_always(run: tuple[str, ...], alternatives: list[Any], trust: float, vocabulary: Any) -> Any:
    """A query unit as if no name had its words: its expansions stay beside them."""
    return _UNIT(run, alternatives, trust, dataclasses.replace(vocabulary, names={}))


def _single_word_abbreviations_only(run: tuple[str, ...]) -> tuple[str, ...]:
    return lexicon.abbreviations(run) if len(run) == 1 else ()


def _never_no(index: Any, resolution: Any, agent: Any, offered: Any, runner_up: Any) -> Any:
    return resolution


def _words_order(q: Any, candidates: Any, named: Any, close: Any) -> Any:
    """What is offered in the words' order: no cosine (a sentence nothing matches is still filled by meaning)."""
    return _BY_MEANING(q, candidates, named, {})


_SIMILARITY = resolve._similarity
_NAMES_IT = resolve._names_it
_BY_MEANING = resolve._by_meaning
_UNIT = query._unit
_CATEGORY_NAMED = resolve.category_named


def _any_numbers(numbers: list[str], spelling: str) -> bool:
    return True


def _about_as_long(typed: str, spelling: str) -> bool:
    return abs(len(spelling) - len(typed)) < 5  # the rule before: any spelling of about the same length


# mechanism -> what switches it off. Each is described in docs/server.md, "Name resolution".
MECHANISMS: dict[str, Callable[[], Any]] = {
    "identifier tier": lambda: replaced(resolve, "_identifier_evidence", lambda index, q, agent: {}),
    "identifiers: the asked agent's records first": lambda: replaced(resolve, "OTHER_AGENT_IDENTIFIER", 1.0),
    "identifiers: field strength (name > description > source)": lambda: replaced(
        matchindex, "IDENTIFIER_EVIDENCE", dict.fromkeys(matchindex.IDENTIFIER_EVIDENCE, 1.0)
    ),
    "terminology tier": lambda: _index_edit(lambda i: dataclasses.replace(i, terminology={})),
    "stemmed tier (a name or alias in other forms)": lambda: _index_edit(lambda i: dataclasses.replace(i, stemmed={})),
    "whole-name typo tier": lambda: replaced(resolve, "typo_winner", lambda text, similarity: None),
    "typo correction of words": lambda: replaced(query, "correct", lambda term, vocabulary: (term, 1.0)),
    "typo plausibility (first letter, short words)": lambda: replaced(query, "_plausible_typo", lambda a, b: True),
    "compound split ('autocomplete')": lambda: replaced(query, "_parts", lambda word, vocabulary: [word]),
    "words asking about a capability left out of a query ('does it support hooks?', 'hooks setup')": lambda: replaced(
        query, "QUESTION_WORDS", frozenset()
    ),
    "abbreviation expansions ('docs')": lambda: replaced(query, "expansions", lambda word: ()),
    "a programming language by name read also as 'programming language' ('kotlin')": lambda: replaced(
        query, "kinds", lambda word: ()
    ),
    "spelled-out run -> abbreviation ('command line interface')": lambda: replaced(
        query, "abbreviations", _single_word_abbreviations_only
    ),
    "a name's literal word beats an expansion": lambda: replaced(query, "_unit", _expansions_always),
    "never a wrong 'no'": lambda: replaced(resolve, "_no_rule", _never_no),
    "meaning in the order of what is offered": lambda: replaced(resolve, "_by_meaning", _words_order),
    "a partial name offered first": lambda: replaced(resolve, "_holds", lambda name, asked: 2),
    "a whole name with one word more offered first, no other resolved ('turn on subagents')": lambda: replaced(
        resolve, "_named", lambda index, q, offered: None
    ),
    "a negation is no word more beside a whole name ('custom agents not working')": lambda: replaced(
        resolve, "NEGATIONS", frozenset()
    ),
    "'no' or 'not' read with the word the index negates with 'non' ('No-interactive Mode')": lambda: replaced(
        query, "_negated", lambda words, vocabulary: words
    ),
    "an agent's typo does not change a number ('agent-99')": lambda: replaced(names, "keeps", _any_numbers),
    "an agent's name mistyped word by word ('Copilot Chat')": lambda: replaced(names, "mistyped_as", _about_as_long),
    "a mistyped name has no word more than the name": lambda: replaced(
        resolve, "_similarity", lambda index, n, scorer, cutoff, typo=False: _SIMILARITY(index, n, scorer, cutoff)
    ),
    "an agent's own alias first ('scribe')": lambda: _index_edit(lambda i: dataclasses.replace(i, own_aliases={})),
    "a category's name answered with that category ('security'; 'debugging', which nothing is in, with none)": lambda: (
        replaced(resolve, "_in_category", lambda index, q, category, resolution, agent: resolution)
    ),
    "a category's name mistyped read as that category ('securty')": lambda: replaced(
        resolve, "category_named", lambda index, query, mistyped=True: _CATEGORY_NAMED(index, query, mistyped=False)
    ),
    "a sentence nothing matches answered with what is closest in meaning, not in spelling": lambda: replaced(
        resolve, "SENTENCE", sys.maxsize
    ),
    "a query of words asking about records resolves only a capability they name ('limitations')": lambda: replaced(
        resolve, "_names_it", lambda index, q, slug: q.asks_only or _NAMES_IT(index, q, slug)
    ),
    "a query of an operating system's name only resolves only a capability it names ('Windows support')": lambda: (
        replaced(resolve, "PROPER_NAMES", frozenset())
    ),
    "one word the catalog lacks as typed is offered, never resolved ('autocomplete', 'compaction')": lambda: replaced(
        resolve, "_guessed", lambda q: False
    ),
}


@contextmanager
def _plurals_of_every_name() -> Iterator[None]:
    """`text.PROPER_NAMES` read as plurals too, in the build and the query, its memoized forms forgotten each way."""
    forms = (text.stem, text._terms, text.worded_terms, query.root)
    try:
        with replaced(text, "PROPER_NAMES", frozenset()), replaced(query, "PROPER_NAMES", frozenset()):
            for memo in forms:
                memo.cache_clear()
            yield
    finally:
        for memo in forms:
            memo.cache_clear()


BUILD_MECHANISMS: dict[str, Callable[[], Any]] = {
    "dot-directory path tokens ('.claude/agents')": lambda: replaced(lexicon, "_config_paths", lambda word: []),
    "an operating system's name is no plural ('Windows' is not a context window)": _plurals_of_every_name,
}


def build(agents: Path, strip: bool, out: Path) -> Path:
    """`capidx build` in this process (so a build-time mechanism switched off here is off in the build)."""
    from click.testing import CliRunner

    from capidx.cli import cli

    catalog = ablated_copy(agents, out.with_name(out.name + "-agents")) if strip else agents
    args = ["build", "--agents", str(catalog), "--out", str(out), "--quiet", "--no-site"]
    result = CliRunner().invoke(cli, [*args, *(["--no-aliases"] if strip else [])])
    if result.exit_code not in (0, 1) or not (out / "manifest.json").is_file():
        raise SystemExit(f"capidx build failed (exit {result.exit_code}): {result.output[-2000:]}")
    return catalog


def judge_runs(runs: Sequence[str], workdir: Path, builds: dict[tuple[Path, bool], tuple[Path, Path]]) -> Counter[str]:
    """Outcome counts of every query of the runs, with the resolver as it is in this process now; `builds` caches
    each catalog's build (catalog folder, build folder) by (catalog, hints stripped)."""
    counts: Counter[str] = Counter()
    for name in runs:
        agents, queries_file, strip = RUNS[name]
        if (agents, strip) not in builds:
            out = workdir / f"build-{len(builds)}"
            builds[(agents, strip)] = (build(agents, strip, out), out)
        catalog, out = builds[(agents, strip)]
        index = MatchIndex.from_json(json.loads((out / "index" / "match.json").read_text(encoding="utf-8")))
        table = agent_ids(catalog)
        for item in json.loads(queries_file.read_text(encoding="utf-8")):
            expected = expected_agent(item["agent"], table)
            agent = resolve_agent(index, item["agent"]).value or expected
            answer = resolve.resolve_capability(index, item["query"], agent=agent)
            facts = None
            if answer.ok and answer.value is not None:
                available = index.capabilities[answer.value].available_to(agent)
                facts = {"agent": agent, "capability": answer.value, "available": available}
            outcome = classify(item, expected, facts, [c.value for c in answer.candidates])
            counts[outcome] += 1
            counts["one call"] += outcome in ("right", "shown-first")
            counts["queries"] += 1
    return counts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    chosen = parser.add_mutually_exclusive_group()
    add_run_arguments(chosen, DEFAULT_RUNS)
    args = parser.parse_args(argv)
    if args.catalog:
        args.runs = [catalog_run(parser, *args.catalog)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="capidx-ablation-") as tmp:
        builds: dict[tuple[Path, bool], tuple[Path, Path]] = {}
        base = judge_runs(args.runs, Path(tmp), builds)
        for label, switch in MECHANISMS.items():
            with switch():
                rows.append((label, judge_runs(args.runs, Path(tmp), builds)))
        for label, switch in BUILD_MECHANISMS.items():
            with switch():
                lexicon.identifiers.cache_clear()
                rows.append((label, judge_runs(args.runs, Path(tmp) / label.split()[0], {})))
            lexicon.identifiers.cache_clear()
    n = base["queries"]
    print(
        f"{len(args.runs)} runs, {n} queries; as it is: one call {base['one call']}, right {base['right']}, "
        f"wrong {base['wrong']}\n"
    )
    print("| removed | one call Δ | right Δ | wrong Δ |\n|---|---:|---:|---:|")
    for label, counts in rows:
        deltas = (counts[k] - base[k] for k in ("one call", "right", "wrong"))
        print(f"| {label} | " + " | ".join(f"{d:+d}" if d else "0" for d in deltas) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
