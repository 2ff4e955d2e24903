"""Check the blind query sets (every set but the first) against their catalogs.

Stdlib only. Run from anywhere: python benchmarks/resolution/check_queries.py
Reads only the catalogs' public fields (name, description, available, terminology, limitations,
implementationNotes, sources) and agent names; exits 1 on any error. Warnings (an identifier or
agent-term string that also occurs in another record of the same agent) do not fail the check.
"""

import glob
import json
import os
import re
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
KINDS = {"exact", "partial", "typo", "agent-term", "identifier", "abbreviation", "descriptive", "other-agent", "none"}
PUBLIC = ("name", "description", "terminology", "limitations", "implementationNotes")
CATALOG2 = os.path.join(HERE, "catalog2")
# Each blind set after the first: its name, and the id prefixes of its bundled and catalog2 files.
BLIND_SETS = [
    ("holdout", "h", "k"),
    ("fresh", "p", "q"),
    ("blind-2026-11-25-a", "r", "s"),
    ("blind-2026-11-25-b", "t", "u"),
    ("blind-2026-11-27", "v", "w"),
    ("blind-2026-11-27-b", "x", "y"),
    ("blind-2026-11-28", "z", "n"),
    ("check-2026-11-28", "g", "j"),
    ("check-2026-11-28-b", "e", "f"),
    ("check-2026-11-28-c", "l", "m"),
    ("check-2026-11-28-d", "a", "d"),
    ("check-2026-11-28-e", "i", "o"),
    ("check-2026-11-28-f", "fa", "fb"),
    ("check-2026-11-28-g", "ga", "gb"),
    ("check-2026-11-28-h", "ha", "hb"),
    ("check-2026-11-28-i", "ia", "ib"),
    ("check-2026-11-28-j", "ja", "jb"),
    ("check-2026-11-28-k", "ka", "kb"),
    ("check-2026-11-28-l", "la", "lb"),
    ("check-2026-11-28-m", "ma", "mb"),
    ("check-2026-11-28-n", "na", "nb"),
    ("check-2026-11-28-o", "oa", "ob"),
    ("check-2026-11-28-p", "pa", "pb"),
    ("check-2026-11-28-q", "qa", "qb"),
    ("check-2026-11-28-r", "ra", "rb"),
    ("check-2026-11-28-s", "sa", "sb"),
    ("check-2026-11-28-t", "ta", "tb"),
    ("check-2026-11-28-u", "ua", "ub"),
    ("check-2026-11-28-v", "va", "vb"),
    ("check-2026-11-28-w", "wa", "wb"),
    ("check-2026-11-28-x", "xa", "xb"),
    ("check-2026-11-28-y", "ya", "yb"),
    ("check-2026-11-28-z", "za", "zb"),
    ("check-2026-11-29-a", "aa", "ab"),
    ("check-2026-11-29-b", "ba", "bb"),
    ("check-2026-11-29-c", "ca", "cb"),
    ("check-2026-11-29-d", "da", "db"),
    ("check-2026-11-29-e", "ea", "eb"),
    ("check-2026-11-29-f", "fc", "fd"),
    ("check-2026-11-29-g", "fe", "ff"),
    ("check-2026-11-29-h", "fg", "fh"),
    ("check-2026-11-29-i", "fi", "fj"),
    ("check-2026-11-30-a", "fk", "fl"),
    ("check-2026-11-30-b", "fm", "fn"),
    ("check-2026-11-30-c", "fo", "fp"),
    ("check-2026-11-30-d", "fq", "fr"),
    ("check-2026-11-30-e", "fs", "ft"),
    ("check-2026-12-01-a", "fu", "fv"),
    ("check-2026-12-01-b", "fw", "fx"),
    ("check-2026-12-01-c", "fy", "fz"),
    ("check-2026-12-01-d", "gc", "gd"),
    ("check-2026-12-01-e", "ge", "gf"),
    ("check-2026-12-01-f", "gg", "gh"),
    ("check-2026-12-01-g", "gi", "gj"),
    ("check-2026-12-01-h", "gk", "gl"),
    ("check-2026-12-02-a", "gm", "gn"),
    ("check-2026-12-02-b", "go", "gp"),
    ("check-2026-12-02-c", "gq", "gr"),
    ("check-2026-12-02-d", "gs", "gt"),
    ("check-2026-12-02-e", "gu", "gv"),
    ("check-2026-12-02-f", "gw", "gx"),
    ("check-2026-12-02-g", "gy", "gz"),
]
# The check set kept unread until the resolver change it checks (README.md). Every set's problems are reported by
# query id only, so that running this check shows no query to a blind writer (who runs it on their own set) nor the
# unread set to anyone: `--show-unread` shows the unread set's, `--show-all` every set's. The name of a set not yet
# written leaves every set read until it is added.
UNREAD = "check-2026-12-02-g"
SETS = [
    (f"{name}_{catalog}_queries.json", root, letter)
    for name, bundled, catalog2 in BLIND_SETS
    for catalog, root, letter in (("bundled", REPO, bundled), ("catalog2", CATALOG2, catalog2))
]


def open_text(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def load_catalog(root):
    agents = {}
    for path in sorted(glob.glob(os.path.join(root, "agents", "*", "capabilities", "current.json"))):
        agent_id = os.path.basename(os.path.dirname(os.path.dirname(path)))
        doc = json.loads(open_text(path))
        records = {c["name"]: c for c in doc["capabilities"]}
        agents[agent_id] = {
            "name": doc["agent"]["name"],
            "aliases": doc["agent"].get("aliases", []),
            "records": records,
        }
    return agents


def words(text):
    text = re.sub(r"\bvs\s+code\b", "vscode", text.lower())
    return set(w for w in re.split(r"[^a-z0-9]+", text) if w)


def resolve_agent(agents, text):
    """Agent ids the string names: equal (case-insensitive) to a name, alias or id, or its words a subset
    of one agent's name (or alias) and id words ("VS Code" counts as the word "vscode")."""
    low = text.strip().lower()
    hits = []
    for agent_id, a in agents.items():
        spellings = [a["name"], *a["aliases"]]
        if low in (agent_id, *(n.lower() for n in spellings)) or (
            words(text) and any(words(text) <= words(n) | words(agent_id) for n in spellings)
        ):
            hits.append(agent_id)
    return hits


def public_text(record):
    parts = []
    for key in PUBLIC:
        value = record.get(key)
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            parts.extend(v for v in value if isinstance(v, str))
        elif isinstance(value, dict):
            for v in value.values():
                parts.extend(v if isinstance(v, list) else [str(v)])
    parts.extend(s.get("description", "") for s in record.get("sources", []))
    return "\n".join(parts)


def main():
    errors, warnings, seen = [], [], set()
    for filename, root, prefix in SETS:
        if not os.path.exists(os.path.join(HERE, filename)):
            print(f"{filename}: not written yet, skipped")
            continue
        file_errors, file_warnings = check_file(filename, root, prefix, seen)
        unread = filename.startswith(UNREAD + "_")
        hidden = "--show-all" not in sys.argv and not (unread and "--show-unread" in sys.argv)
        shown = f"details hidden ({'--show-unread' if unread else '--show-all'} shows them)"
        errors += [f"{where}: {shown if hidden else text}" for where, text in file_errors]
        warnings += [f"{where}: {shown if hidden else text}" for where, text in file_warnings]
    for w in warnings:
        print("warning:", w)
    for e in errors:
        print("ERROR:", e)
    print("ok" if not errors else f"{len(errors)} error(s)")
    return 1 if errors else 0


def check_file(filename, root, prefix, seen):
    """The (where, problem) errors and warnings of one query file; prints its counts (nothing of its text)."""
    errors, warnings = [], []
    agents = load_catalog(root)
    names = {n for a in agents.values() for n in a["records"]}
    items = json.loads(open_text(os.path.join(HERE, filename)))
    kinds, avail = Counter(), Counter()
    for n, item in enumerate(items, 1):
        qid = item.get("id")
        where = f"{filename} {qid}"
        if qid in seen:
            errors.append((where, "duplicate id"))
        seen.add(qid)
        if qid != f"{prefix}{n:03d}":
            errors.append((where, f"expected id {prefix}{n:03d}"))
        kind = item.get("kind")
        kinds[kind] += 1
        if kind not in KINDS:
            errors.append((where, f"unknown kind {kind!r}"))
        if not isinstance(item.get("query"), str) or not item["query"].strip():
            errors.append((where, "empty query"))
            continue
        hits = resolve_agent(agents, item.get("agent", ""))
        if len(hits) != 1:
            errors.append((where, f"agent {item.get('agent')!r} names {hits or 'no agent'}"))
            continue
        agent = agents[hits[0]]
        exp = item.get("expect", {})
        cap, available = exp.get("capability"), exp.get("available")
        avail[available] += 1
        if kind == "none":
            if cap is not None or available is not None:
                errors.append((where, "kind none must expect null/null"))
            continue
        if cap not in names:
            errors.append((where, f"{cap!r} is not a capability of the catalog"))
            continue
        record = agent["records"].get(cap)
        actual = record["available"] if record else False
        if available is not actual:
            errors.append((where, f"available {available} but {hits[0]} says {actual}"))
        if record is None:
            warnings.append((where, f"{hits[0]} has no record of {cap!r} (expected false)"))
        if kind == "other-agent" and available is not False:
            errors.append((where, "other-agent must expect available false"))
        if kind in ("identifier", "agent-term"):
            if record is None or item["query"] not in public_text(record):
                errors.append((where, f"{item['query']!r} does not occur in {hits[0]}'s {cap!r}"))
            others = [n for n, r in agent["records"].items() if n != cap and item["query"] in public_text(r)]
            if others:
                warnings.append((where, f"{item['query']!r} also occurs in {others}"))
    print(
        f"{filename}: {len(items)} queries; kinds {dict(sorted(kinds.items()))}; "
        f"available {{true: {avail[True]}, false: {avail[False]}, null: {avail[None]}}}"
    )
    return errors, warnings


if __name__ == "__main__":
    sys.exit(main())
