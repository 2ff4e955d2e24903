"""Write a synthetic, schema-valid catalog for benchmarks: `gen_catalog.py N_AGENTS M_CAPS OUTDIR`.

Each of N agents records M capabilities drawn from a shared pool of canonical names (1.25 × M), so
names are shared across agents as in the real catalog (and lookup documents stay N × pool, not
N × N × M). Text is realistic in length and vocabulary; the vocabulary of a canonical capability
(aliases, triggers, useWhen) is repeated by every agent, as in the bundled catalog. Addresses are on `.internal`
(reserved for private use, so no one's real site), not on an example domain: `capidx validate` warns about those
(`placeholder-url`), and a benchmark of it would time 1,500 warnings a real catalog does not have. Deterministic:
the same arguments always write the same bytes.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

CATEGORIES = (
    "code-completion code-generation chat-assistance code-explanation code-refactoring testing debugging "
    "documentation command-line multi-file-editing context-awareness language-support ide-integration "
    "api-integration customization security performance collaboration model-selection agent-orchestration "
    "observability"
).split()
WORDS = (
    "agent session context file project repository server tool command prompt model review change branch test "
    "suite module function class symbol workspace terminal editor extension plugin hook rule policy permission "
    "sandbox network request response cache index search query token budget memory history checkpoint plan "
    "task step result summary diff patch commit issue pull label status config setting option flag profile "
    "account team organization enterprise usage metric trace log event stream output input image screenshot"
).split()
VERBS = "runs reads writes edits checks reviews explains searches indexes connects loads saves resumes".split()
TIERS = ("free", "pro", "business", "enterprise", None)
MATURITY = ("stable", "stable", "beta", "experimental", None)


def _sentence(rng: random.Random, words: int) -> str:
    picked = [rng.choice(WORDS) for _ in range(words)]
    picked.insert(1, rng.choice(VERBS))
    text = " ".join(picked)
    return text[0].upper() + text[1:] + "."


def _canonical(rng: random.Random, index: int) -> dict[str, Any]:
    name = f"{rng.choice(WORDS).title()} {rng.choice(WORDS).title()} {index}"
    key = name.lower()
    return {
        "name": name,
        "category": CATEGORIES[index % len(CATEGORIES)],
        "aliases": [f"{key} alias", f"{rng.choice(WORDS)} {index}"],
        "triggers": [f"{rng.choice(VERBS)} the {rng.choice(WORDS)} {index}" for _ in range(3)],
        "useWhen": [{"pattern": rf"\b({rng.choice(WORDS)}|{rng.choice(WORDS)}) {index}\b", "confidence": 0.7}],
    }


def _record(rng: random.Random, agent: int, base: dict[str, Any], pages: int) -> dict[str, Any]:
    record: dict[str, Any] = {
        "name": base["name"],
        "category": base["category"],
        "description": " ".join(_sentence(rng, rng.randint(10, 18)) for _ in range(2)),
        "available": rng.random() > 0.15,
        "aliases": base["aliases"],
        "triggers": base["triggers"],
        "useWhen": base["useWhen"],
        "limitations": [_sentence(rng, 8) for _ in range(rng.randint(0, 2))],
        "requirements": [_sentence(rng, 6) for _ in range(rng.randint(0, 1))],
        "sources": [
            {
                "url": f"https://docs.agent{agent}.internal/{rng.choice(WORDS)}/{rng.randrange(pages)}",
                "description": _sentence(rng, 5),
                "sourceGranularity": rng.choice(("dedicated", "section")),
                **({"verifiedDate": f"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"} if rng.random() > 0.2 else {}),
            }
            for _ in range(rng.randint(1, 2))
        ],
    }
    for key, value in (("tier", rng.choice(TIERS)), ("maturityLevel", rng.choice(MATURITY))):
        if value and record["available"]:  # labels describe what an agent has (docs/data-format.md); drawn either way
            record[key] = value
    if rng.random() > 0.5:
        record["terminology"] = f"{rng.choice(WORDS)} {rng.choice(WORDS)}"
    if rng.random() > 0.4:
        record["implementationNotes"] = {
            "setup": f"agent{agent} {rng.choice(WORDS)} --{rng.choice(WORDS)}",
            "configFile": f".agent{agent}/{rng.choice(WORDS)}.json",
            "gotchas": [_sentence(rng, 9)],
        }
    return record


def generate(agents: int, capabilities: int, out: Path, seed: int = 20260101) -> None:
    rng = random.Random(seed)
    pool = [_canonical(rng, index) for index in range(max(1, capabilities * 5 // 4))]
    pages = max(10, capabilities // 4)
    for agent in range(agents):
        chosen = sorted(rng.sample(range(len(pool)), capabilities))
        document = {
            "agent": {
                "name": f"Agent {agent} CLI",
                "vendor": f"Vendor {agent}",
                "version": f"1.{agent}.0",
                "lastUpdated": "2026-10-01T00:00:00Z",
            },
            "capabilities": [_record(rng, agent, pool[index], pages) for index in chosen],
            "documentation": {"officialDocs": f"https://docs.agent{agent}.internal/"},
        }
        path = out / f"agent-{agent:02d}" / "capabilities" / "current.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    aliases = {f"synonym {index}": pool[index]["name"] for index in range(0, len(pool), 7)}
    (out / "aliases.json").write_text(json.dumps({"aliases": aliases}, indent=2) + "\n", encoding="utf-8")


def main(argv: list[str]) -> None:
    if len(argv) != 3:
        raise SystemExit("usage: gen_catalog.py N_AGENTS M_CAPS OUTDIR")
    generate(int(argv[0]), int(argv[1]), Path(argv[2]))


if __name__ == "__main__":
    main(sys.argv[1:])
