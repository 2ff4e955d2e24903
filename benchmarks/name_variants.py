"""Name variants: is every capability found in one call by its name, however it is spelled or asked?

The blind sets (benchmarks/resolution) hold a dozen exact, partial and typo queries each, written by people.
This benchmark generates them instead, from the catalog alone, for every capability: the name in other case
and spacing, its slug, hyphens and spaces swapped or dropped, the last word's number changed, every run of the
name's words that is in no other name (a partial name), one letter dropped, swapped or doubled in its longest
word, a letter dropped in two of its words, and the name asked about in a few plain wordings ("the hooks
feature", "does it support hooks?", "enable hooks"). Each is asked with an agent that has a record of the
capability, in process with the server's own resolver. One call: the capability resolved, or offered first;
wrong: another capability resolved. Any catalog can be measured (`--agents`), and nobody chose the queries.

    python benchmarks/name_variants.py                    # bundled (with and without hints) and catalog2
    python benchmarks/name_variants.py --agents DIR       # another catalog
    python benchmarks/name_variants.py --failures 20      # and the first misses of each catalog
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from resolution_ablation import build

from capidx.schema.text import STOP_WORDS
from capidx.server.matchindex import MatchIndex
from capidx.server.resolve import resolve_capability

REPO = Path(__file__).resolve().parent.parent
CATALOGS = {
    "bundled, hints": (REPO / "agents", False),
    "bundled, ablated": (REPO / "agents", True),
    "catalog2": (REPO / "benchmarks" / "resolution" / "catalog2" / "agents", False),
}
# How a name is asked about in a sentence: each wording holds the name once, in lower case.
ASKED = (
    "the {} feature",
    "does it support {}?",
    "is {} available",
    "{} limitations",
    "enable {}",
    "turn on {}",
    "{} setup",
    "{} settings",
    "{} config",
    "how to configure {}",
    "{} docs",
    "{} example",
    "{} not working",
    "how do I use {}",
    "tell me about {}",
    "list {}",
)


def variants(name: str, slug: str, names: Sequence[str]) -> Iterator[tuple[str, str]]:
    """(kind, query) for one capability; `names` are every capability's names, lower case (partials unique)."""
    words = name.split()
    yield from (("exact", name), ("exact", name.upper()), ("exact", name.lower()), ("exact", "  ".join(words)))
    yield from (("slug", slug), ("slug", slug.replace("-", " ")))
    yield "spacing", name.replace("-", " ") if "-" in name else name.replace(" ", "-")
    yield "spacing", name.replace(" ", "").replace("-", "")
    last = words[-1]
    yield "number", " ".join([*words[:-1], last[:-1] if last.endswith("s") else last + "s"])
    for start in range(len(words)):
        for end in range(start + 1, len(words) + 1):
            run = " ".join(words[start:end])
            meaningful = any(len(w) >= 4 and w.lower() not in STOP_WORDS for w in words[start:end])
            held = [n for n in names if f" {run.lower()} " in f" {n} "]
            if end - start < len(words) and meaningful and len(held) == 1:
                yield "partial", run
    longest = max(range(len(words)), key=lambda i: len(words[i]))
    word = words[longest]
    for at in range(1, len(word) - 1) if len(word) >= 5 else ():
        for typed in (word[:at] + word[at + 1 :], word[:at] + word[at + 1] + word[at] + word[at + 2 :]):
            yield "typo", " ".join([*words[:longest], typed, *words[longest + 1 :]])
        yield "typo", " ".join([*words[:longest], word[:at] + word[at] + word[at:], *words[longest + 1 :]])
    long_words = [i for i, w in enumerate(words) if len(w) >= 5][:2]
    if len(long_words) == 2:
        typed_words = [w[: len(w) // 2] + w[len(w) // 2 + 1 :] if i in long_words else w for i, w in enumerate(words)]
        yield "two typos", " ".join(typed_words)
    for wording in ASKED:
        yield "asked about", wording.format(name.lower())


def measure(index: MatchIndex) -> tuple[Counter[tuple[str, str]], list[str]]:
    """Outcome counts per (kind, outcome) over every variant of every capability, and each miss described."""
    names = [entry.name.lower() for entry in index.capabilities.values()]
    counts: Counter[tuple[str, str]] = Counter()
    misses = []
    for slug, entry in index.capabilities.items():
        recorded = list(entry.agents)
        agent = next((a for a in recorded if entry.available_to(a)), recorded[0] if recorded else None)
        for kind, query in dict.fromkeys(variants(entry.name, slug, names)):
            answer = resolve_capability(index, query, agent=agent)
            offered = [c.value for c in answer.candidates[:1]]
            if (answer.ok and answer.value == slug) or (not answer.ok and offered == [slug]):
                outcome = "one call"
            else:
                outcome = "wrong" if answer.ok else "not first"
                got = answer.value if answer.ok else ", ".join(c.value for c in answer.candidates[:3])
                misses.append(f"{kind}: {query!r} ({slug}) -> {answer.status} {got}")
            counts[kind, outcome] += 1
    return counts, misses


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=Path, help="measure this catalog instead (its agents folder)")
    parser.add_argument("--no-hints", action="store_true", help="with --agents: strip the hints (no alias table)")
    parser.add_argument("--failures", type=int, default=0, help="print up to this many misses per catalog")
    args = parser.parse_args(argv)
    catalogs = {str(args.agents): (args.agents.resolve(), args.no_hints)} if args.agents else CATALOGS
    kinds = ("exact", "slug", "spacing", "number", "partial", "typo", "two typos", "asked about")
    print("| catalog | " + " | ".join(kinds) + " | all | wrong |\n|---|" + "---:|" * (len(kinds) + 2))
    with tempfile.TemporaryDirectory(prefix="capidx-variants-") as tmp:
        for number, (label, (agents, strip)) in enumerate(catalogs.items()):
            out = Path(tmp) / f"build-{number}"
            build(agents, strip, out)
            index = MatchIndex.from_json(json.loads((out / "index" / "match.json").read_text(encoding="utf-8")))
            counts, misses = measure(index)
            cells = []
            for kind in kinds:
                total = sum(n for (k, _), n in counts.items() if k == kind)
                cells.append(f"{counts[kind, 'one call']} / {total}")
            total = sum(counts.values())
            one_call = sum(n for (_, outcome), n in counts.items() if outcome == "one call")
            wrong = sum(n for (_, outcome), n in counts.items() if outcome == "wrong")
            print(f"| {label} | " + " | ".join(cells) + f" | {one_call} / {total} | {wrong} |")
            for miss in misses[: args.failures]:
                print(f"    {miss}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
