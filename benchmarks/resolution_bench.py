"""Resolution benchmark on blind queries: does `lookup_capability` find what people type, without our hints?

The queries in benchmarks/resolution/ were written by someone who had not read the resolver (see the
README there). Each simulates one call `lookup_capability(agent, capability=query)` against the REAL
server: `capidx build` into a temporary directory, then `capidx serve` over stdio driven by the MCP SDK
client. Each answer is judged as one of

- right        resolved to the expected capability for the expected agent with the expected
               availability (for a capability no agent has: nothing was resolved);
- shown-first  not resolved, but the expected capability is the first candidate offered;
- shown-later  not resolved, the expected capability is offered but not first;
- wrong        another capability resolved, a wrong availability, an error, or the expected
               capability not offered at all (the worst outcome).

Runs (a "hint" is what a maintainer adds for the resolver: the alias table, `aliases`, `triggers`,
`useWhen`):

- bundled, hints       the bundled catalog as shipped;
- bundled, ablated     the same catalog with every hint removed (a generated copy, no alias table);
- catalog2             a fictional catalog in another voice (it has no hints).

    python benchmarks/resolution_bench.py            # all runs, tables and the misses
    python benchmarks/resolution_bench.py --json     # machine-readable results
    python benchmarks/resolution_bench.py --runs bundled-ablated catalog2
    python benchmarks/resolution_bench.py --summary  # one line per run: one-call and wrong shares
    python benchmarks/resolution_bench.py --catalog AGENTS QUERIES  # a query file on another catalog
    python benchmarks/resolution_bench.py --calibrate  # the calibration table of the scored decision rule
    python benchmarks/resolution_bench.py --fit --runs ...  # fit the decision rule on these runs

Calibration (`--calibrate`) and fitting (`--fit`) look at every query that reached the ranking model (not an
exact, identifier, alias, terminology, stemmed or mistyped-name lookup) in the same builds, in process with the
server's own resolver: the winner's confidence, the runner-up's, whether the asked agent lacks the winner and
whether it is right. The calibration table says, of the answers a rule would resolve, how many are right;
`--fit` ranks the rules of a grid by right - PENALTY x wrong. The server's rule (`DECISION_RULE` in
server/resolve.py) is the best one fitted on the fitting runs.

Results are recorded in benchmarks/resolution/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import re
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "resolution"))

from check_queries import UNREAD as UNREAD_SET
from prompt_bench import Answer, SetupError, build_catalog, connect, judged_available

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "resolution"
OUTCOMES = ("right", "shown-first", "shown-later", "wrong")
KINDS = ("exact", "partial", "typo", "agent-term", "identifier", "abbreviation", "descriptive", "other-agent", "none")
HINT_FIELDS = ("aliases", "triggers", "useWhen")


def _runs_of(prefix: str, stem: str) -> dict[str, tuple[Path, Path, bool]]:
    """The three runs of one query set: (catalog folder, queries file, strip hints) for the bundled catalog with
    and without its hints and for catalog2 (which has none)."""
    return {
        f"{prefix}bundled-hints": (ROOT / "agents", DATA / f"{stem}bundled_queries.json", False),
        f"{prefix}bundled-ablated": (ROOT / "agents", DATA / f"{stem}bundled_queries.json", True),
        f"{prefix}catalog2": (DATA / "catalog2" / "agents", DATA / f"{stem}catalog2_queries.json", True),
    }


# name: (catalog folder, queries file, strip hints), for every query set in benchmarks/resolution (a file
# `<set>_bundled_queries.json` and its `<set>_catalog2_queries.json`). The first set is the tuning set, run by
# default; the others were written blind (benchmarks/resolution/README.md) and run only when named, so nobody
# tunes against them by accident.
RUNS = {
    name: run
    for path in sorted(DATA.glob("*bundled_queries.json"))
    for stem in [path.name.removesuffix("bundled_queries.json")]
    for name, run in _runs_of(stem.replace("_", "-"), stem).items()
}
# The check set, kept unread until the resolver change it checks: run by nothing unless named.
UNREAD = f"{UNREAD_SET}-"
DEFAULT_RUNS = ("bundled-hints", "bundled-ablated", "catalog2")


def slugify(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "-", name.lower()).strip("-")


def _agent_words(text: str) -> set[str]:
    """Words of an agent's name as the query files write it ("VS Code" and "Visual Studio Code" alike)."""
    slug = slugify(text).replace("visual-studio-code", "vscode").replace("vs-code", "vscode")
    return set(slug.split("-")) - {"github", "in", "for"}


def ablated_copy(agents: Path, dest: Path) -> Path:
    """The catalog without any hint: no alias table, no `aliases` / `triggers` / `useWhen` on a capability."""
    for path in sorted(agents.glob("*/capabilities/current.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for capability in data.get("capabilities", ()):
            for key in HINT_FIELDS:
                capability.pop(key, None)
        target = dest / path.relative_to(agents)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return dest


def agent_ids(agents: Path) -> dict[str, str]:
    """How the query files name agents -> agent id: the id, the agent's name and aliases, and the writer's short forms.

    The query files carry what a user would type ("claude", "VS Code Copilot", "Google Gemini CLI"); the expected
    agent id is the one folder whose id, name, or vendor and name all the words of that string point to.
    """
    table: dict[str, str] = {}
    for path in sorted(agents.glob("*/capabilities/current.json")):
        agent_id = path.parts[-3]
        agent = json.loads(path.read_text(encoding="utf-8"))["agent"]
        for form in (agent_id, agent["name"], f"{agent.get('vendor', '')} {agent['name']}", *agent.get("aliases", ())):
            table["-".join(sorted(_agent_words(form)))] = agent_id
    return table


def expected_agent(written: str, table: Mapping[str, str]) -> str:
    """The agent a query file's agent string means, by the judge's own reading of the folders' ids, names and
    vendors: never the server's `resolve_agent`, which the benchmark grades (a shared rule would grade itself)."""
    words = _agent_words(written)
    if "-".join(sorted(words)) in table:
        return table["-".join(sorted(words))]
    matches = {agent for form, agent in table.items() if words <= set(form.split("-"))}
    if not matches:  # a word no form has ('Claude Code CLI'): the agent whose forms hold the most of them, if one
        held = {
            agent: max(len(words & set(f.split("-"))) for f, a in table.items() if a == agent)
            for agent in set(table.values())
        }
        most = max(held.values(), default=0)
        matches = {agent for agent, count in held.items() if count == most} if most else set()
    if len(matches) != 1:
        raise SetupError(f"the benchmark cannot tell which agent {written!r} means: {sorted(matches)}")
    return matches.pop()


@dataclass
class Row:
    id: str
    kind: str
    agent: str
    query: str
    expected: str | None
    outcome: str
    answered: str


def offered(answer: Answer) -> list[str]:
    """Capability slugs offered instead of a document, best first (resolution candidates, then the data's)."""
    slugs: list[str] = []
    res = answer.resolution.get("capability")
    if isinstance(res, dict) and res.get("status") != "resolved":
        slugs += [c.get("value") for c in res.get("candidates", ())]
    data = answer.data or {}
    slugs += [c.get("slug") for c in data.get("candidates", ())]
    slugs += [s.get("capability") for s in data.get("suggestions", ())]
    return [s for s in dict.fromkeys(slugs) if s]


def resolved(answer: Answer) -> dict[str, Any] | None:
    """The document's facts when the server answered with a capability (None for candidates or an error)."""
    data = answer.data or {}
    if answer.is_error or "candidates" in data:
        return None
    if "suggestions" in data:
        res = answer.resolution.get("capability")
        first = (data.get("suggestions") or [{}])[0]
        if isinstance(res, dict) and res.get("status") == "resolved" and first.get("capability") == res.get("value"):
            return {"agent": data.get("agent"), "capability": first["capability"], "available": judged_available(first)}
        return None
    cap = data.get("capability")
    if isinstance(cap, dict) and "slug" in cap:
        return {"agent": data.get("agent"), "capability": cap["slug"], "available": judged_available(cap)}
    return None


def judge(query: Mapping[str, Any], agent: str, answer: Answer) -> str:
    return classify(query, agent, resolved(answer), offered(answer))


def classify(query: Mapping[str, Any], agent: str, facts: Mapping[str, Any] | None, shown: Sequence[str]) -> str:
    """The outcome (OUTCOMES) of an answer that resolved to `facts` (agent, capability, available) or, with `facts`
    None, offered the capability slugs `shown`, best first."""
    expect = query["expect"]
    wanted = slugify(expect["capability"]) if expect.get("capability") else None
    if wanted is None:
        return "wrong" if facts else "right"
    if facts:
        ok = facts["agent"] == agent and facts["capability"] == wanted and facts["available"] == expect["available"]
        return "right" if ok else "wrong"
    if shown[:1] == [wanted]:
        return "shown-first"
    return "shown-later" if wanted in shown else "wrong"


async def ask_all(
    build_dir: Path, queries: Sequence[Mapping[str, Any]], agents: Mapping[str, str], transport: str = "stdio"
) -> list[tuple[Mapping[str, Any], str, Answer]]:
    """(query, the agent it expects, the server's answer) for each query: one `lookup_capability` call each, over
    `transport` (prompt_bench.connect: "stdio" runs `capidx serve`, "memory" the same server in process)."""
    asked = []
    with tempfile.TemporaryFile(mode="w+") as errlog:
        async with AsyncExitStack() as stack:
            client = await connect(stack, build_dir, transport, errlog)
            for query in queries:
                arguments = {"agent": query["agent"], "capability": query["query"]}
                answer = Answer.of(await client.call_tool("lookup_capability", arguments))
                asked.append((query, expected_agent(query["agent"], agents), answer))
    return asked


async def run_queries(build_dir: Path, queries: Sequence[Mapping[str, Any]], agents: Mapping[str, str]) -> list[Row]:
    return [
        Row(
            query["id"],
            query["kind"],
            query["agent"],
            query["query"],
            query["expect"].get("capability"),
            judge(query, agent, answer),
            answer.summary(),
        )
        for query, agent, answer in await ask_all(build_dir, queries, agents)
    ]


def prepare(name: str, workdir: Path) -> tuple[Path, Path, list[dict[str, Any]]]:
    """The run's catalog folder, its build and its queries."""
    agents, queries_file, strip = RUNS[name]
    catalog = ablated_copy(agents, workdir / f"{name}-agents") if strip else agents
    build_dir = build_catalog(workdir / f"{name}-build", aliases=not strip, agents_dir=catalog)
    return catalog, build_dir, json.loads(queries_file.read_text(encoding="utf-8"))


def run(name: str, workdir: Path) -> list[Row]:
    catalog, build_dir, queries = prepare(name, workdir)
    return asyncio.run(run_queries(build_dir, queries, agent_ids(catalog)))


@dataclass(frozen=True)
class Scored:
    """A query the ranking model answered: its winner's confidence, the runner-up's, whether the asked agent
    lacks the winner, and whether the winner is the expected answer (capability and availability)."""

    run: str
    id: str
    best: float
    runner_up: float
    lacks: bool
    right: bool


def scored_points(name: str, workdir: Path) -> list[Scored]:
    """Every query of the run that reached the ranking model, with the ranking's winner and runner-up (so that
    any rule can be applied afterwards)."""
    from capidx.server.matchindex import MatchIndex
    from capidx.server.names import best_first, resolve_agent
    from capidx.server.query import analyse
    from capidx.server.resolve import resolve_capability

    catalog, build_dir, queries = prepare(name, workdir)
    index = MatchIndex.from_json(json.loads((build_dir / "index" / "match.json").read_text(encoding="utf-8")))
    table = agent_ids(catalog)
    points = []
    for query in queries:
        agent = resolve_agent(index, query["agent"]).value or expected_agent(query["agent"], table)
        res = resolve_capability(index, query["query"], agent=agent)
        if not res.scored or res.resolved_by == "identifier":
            continue
        ranked = best_first(index.ranker.rank(analyse(query["query"], index.vocabulary).units))
        if not ranked:
            continue
        (slug, best), runner_up = ranked[0], (ranked[1][1] if len(ranked) > 1 else 0.0)
        available = index.capabilities[slug].available_to(agent)
        expect = query["expect"]
        right = slug == (slugify(expect["capability"]) if expect.get("capability") else None)
        points.append(
            Scored(name, query["id"], best, runner_up, not available, right and available == expect["available"])
        )
    return points


def resolves(point: Scored, rule: tuple[float, float, float]) -> bool:
    from capidx.server.resolve import decide

    return decide(point.best, point.runner_up, point.lacks, rule)


CONFIDENCES = (0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.7)
LEADS = (0.0, 0.1, 0.16, 0.22, 0.3)
# Fitting the rule: a wrong resolution costs this many right ones.
PENALTY = 10.0


def print_calibration(points: Sequence[Scored]) -> None:
    """Of the ranked answers the rule would resolve at confidence >= c and lead >= l (a winner the asked agent lacks
    needs as much more confidence as the server's rule asks), how many are right."""
    from capidx.server.resolve import DECISION_RULE

    print(f"\n## calibration: {len(points)} ranked answers; right / resolved at confidence >= c and lead >= l")
    print(f"{'c':>5}" + "".join(f"{'lead >= ' + str(lead):>20}" for lead in LEADS))
    for c in CONFIDENCES:
        cells = []
        for lead in LEADS:
            chosen = [p for p in points if resolves(p, (c, lead, c + DECISION_RULE[2] - DECISION_RULE[0]))]
            right = sum(p.right for p in chosen)
            share = f"{100 * right / len(chosen):.1f}%" if chosen else "-"
            cells.append(f"{right:>4}/{len(chosen):<4} {share:>7}")
        print(f"{c:>5}" + "".join(f"{cell:>20}" for cell in cells))


def fit_rule(points: Sequence[Scored]) -> list[tuple[float, int, int, tuple[float, float, float]]]:
    """Every rule of the grid, best first by right - PENALTY x wrong resolved: (objective, right, wrong, rule)."""
    grid = []
    for c, lead in itertools.product([x / 100 for x in range(20, 72, 2)], [x / 100 for x in range(0, 60, 2)]):
        for no in (round(c + 0.1, 2), round(c + 0.2, 2)):  # a "no" needs more confidence than a "yes", by design
            chosen = [p for p in points if resolves(p, (c, lead, no))]
            right = sum(p.right for p in chosen)
            grid.append((right - PENALTY * (len(chosen) - right), right, len(chosen) - right, (c, lead, no)))
    return sorted(grid, key=lambda g: (-g[0], g[3]))


def table(rows: Sequence[Row]) -> list[dict[str, Any]]:
    by_kind: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        by_kind[row.kind].append(row)
    kinds = [k for k in KINDS if k in by_kind] + sorted(set(by_kind) - set(KINDS))
    lines = []
    for kind, group in [*((k, by_kind[k]) for k in kinds), ("total", list(rows))]:
        counts = Counter(r.outcome for r in group)
        n = len(group)
        lines.append({"kind": kind, "n": n, **{o: round(100 * counts[o] / n, 1) for o in OUTCOMES}})
    return lines


def print_table(name: str, rows: Sequence[Row]) -> None:
    print(f"\n## {name}: {len(rows)} queries\n")
    print(f"{'kind':<13}{'n':>4}" + "".join(f"{o:>13}" for o in OUTCOMES) + f"{'right|first':>13}")
    for line in table(rows):
        first = line["right"] + line["shown-first"]
        cells = "".join(f"{line[o]:>12.1f}%" for o in OUTCOMES)
        print(f"{line['kind']:<13}{line['n']:>4}{cells}{first:>12.1f}%")
    misses = [r for r in rows if r.outcome != "right"]
    if misses:
        print(f"\nnot right ({len(misses)}):")
        for r in misses:
            asked = f"{r.agent!r} / {r.query!r}"
            print(f"  {r.id} [{r.kind}] {asked} -> expected {r.expected!r}: {r.outcome}; {r.answered}")


def print_summary(results: Mapping[str, Sequence[Row]]) -> None:
    """Per run: one call answers it (right, or the expected capability offered first) and wrong, in % and counts."""
    print(f"{'run':<26}{'n':>5}{'right':>8}{'one-call':>10}{'wrong':>8}")
    for name, rows in results.items():
        counts = Counter(r.outcome for r in rows)
        n = len(rows) or 1
        one_call = counts["right"] + counts["shown-first"]
        cells = f"{100 * counts['right'] / n:>7.1f}%{100 * one_call / n:>9.1f}%{100 * counts['wrong'] / n:>7.1f}%"
        print(f"{name:<26}{len(rows):>5}{cells}  ({one_call} / {counts['wrong']})")


def add_run_arguments(group: Any, default: Sequence[str]) -> None:
    """`--runs RUN ...` or `--catalog AGENTS QUERIES` (one query file against another catalog's agents folder). The
    runs are named in `--help`, not in the usage line: there are some hundred and fifty."""
    group.add_argument(
        "--runs",
        nargs="+",
        choices=sorted(RUNS),
        default=list(default),
        metavar="RUN",
        help=f"the runs to judge (default: {len(default)} runs); one of: {', '.join(sorted(RUNS))}",
    )
    group.add_argument(
        "--catalog",
        nargs=2,
        metavar=("AGENTS", "QUERIES"),
        help="run only this query file against another catalog's agents folder (e.g. a copy of the public "
        "ai-agent-capabilities catalog: benchmarks/resolution/README.md); not with --runs",
    )


def catalog_run(parser: argparse.ArgumentParser, agents: str, queries: str) -> str:
    """The run `--catalog` names (its hints kept: such a catalog's own), added to `RUNS`; a folder or file that is
    not there is a usage error (exit 2, as argparse's own), not a traceback midway."""
    if not Path(agents).is_dir():
        parser.error(f"--catalog: no agents folder at {agents}")
    if not Path(queries).is_file():
        parser.error(f"--catalog: no query file at {queries}")
    RUNS["catalog"] = (Path(agents).resolve(), Path(queries).resolve(), False)
    return "catalog"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    chosen = parser.add_mutually_exclusive_group()
    add_run_arguments(chosen, DEFAULT_RUNS)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--summary", action="store_true", help="one line per run: one-call and wrong shares")
    parser.add_argument("--calibrate", action="store_true", help="print the calibration table of the decision rule")
    parser.add_argument("--fit", action="store_true", help="fit the decision rule on the runs, best rules first")
    args = parser.parse_args(argv)
    if args.catalog:
        args.runs = [catalog_run(parser, *args.catalog)]
    if args.fit or args.calibrate:
        with tempfile.TemporaryDirectory(prefix="capidx-resolution-") as tmp:
            points = [p for name in args.runs for p in scored_points(name, Path(tmp))]
        if args.calibrate:
            print_calibration(points)
            return 0
        print(f"{len(points)} ranked answers; right - {PENALTY:g} x wrong, right, wrong, (confidence, lead, no)")
        for line in fit_rule(points)[:10]:
            print(line)
        return 0
    results: dict[str, list[Row]] = {}
    with tempfile.TemporaryDirectory(prefix="capidx-resolution-") as tmp:
        for name in args.runs:
            results[name] = run(name, Path(tmp))
    if args.summary:
        print_summary(results)
    elif args.json:
        print(json.dumps({n: {"table": table(r), "rows": [vars(x) for x in r]} for n, r in results.items()}, indent=1))
    else:
        for name, rows in results.items():
            print_table(name, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
