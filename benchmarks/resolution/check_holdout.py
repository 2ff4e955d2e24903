"""Check the held-out query sets against their catalogs (stdlib only).

    python benchmarks/resolution/check_holdout.py

For holdout_bundled_queries.json (catalog agents/) and holdout_catalog2_queries.json (catalog
benchmarks/resolution/catalog2/agents/) it checks: ids unique and well formed, kinds valid, every
agent string names exactly one agent of its catalog, every expected name exists in the catalog,
expect.available equals the asked agent's record (and no query relies on a missing record),
other-agent queries expect false, none queries expect null/null, and every identifier and agent-term
query occurs literally (case-insensitively) in the expected record of the asked agent. The literal
check reads only the public fields (never aliases, triggers or useWhen). Prints counts per kind.
"""
import glob
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
KINDS = ["exact", "partial", "typo", "agent-term", "identifier", "abbreviation", "descriptive",
         "other-agent", "none"]
PUBLIC = ["name", "description", "terminology", "limitations", "implementationNotes", "sources"]
# Extra words a user writes for an agent, beyond its directory id and display name.
EXTRA_WORDS = {"vscode-copilot": {"vs", "vscode"}}
SETS = [
    ("holdout_bundled_queries.json", os.path.join(REPO, "agents"), "h"),
    ("holdout_catalog2_queries.json", os.path.join(HERE, "catalog2", "agents"), "k"),
]


def words(text):
    return set(w for w in re.split(r"[^a-z0-9]+", text.lower()) if w)


def load_catalog(agents_dir):
    catalog = {}
    for path in sorted(glob.glob(os.path.join(agents_dir, "*", "capabilities", "current.json"))):
        aid = os.path.basename(os.path.dirname(os.path.dirname(path)))
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        catalog[aid] = {"name": doc["agent"]["name"],
                        "records": {c["name"]: c for c in doc["capabilities"]}}
    return catalog


def agents_named(agent, catalog):
    """Agents whose id/name words include every word of the agent string."""
    asked = words(agent)
    return [aid for aid, a in catalog.items()
            if asked and asked <= words(aid) | words(a["name"]) | EXTRA_WORDS.get(aid, set())]


def public_text(record):
    return json.dumps({k: record[k] for k in PUBLIC if k in record}, ensure_ascii=False).lower()


def check(filename, agents_dir, prefix):
    errors = []
    catalog = load_catalog(agents_dir)
    names = set(n for a in catalog.values() for n in a["records"])
    items = json.loads(Path(HERE, filename).read_text(encoding="utf-8"))
    ids = [it["id"] for it in items]
    if len(set(ids)) != len(ids):
        errors.append("duplicate ids")
    for n, it in enumerate(items, 1):
        where = f"{filename} {it.get('id')}"
        if it["id"] != f"{prefix}{n:03d}":
            errors.append(f"{where}: id out of sequence")
        if set(it) != {"id", "kind", "agent", "query", "expect"} or set(it["expect"]) != {"capability", "available"}:
            errors.append(f"{where}: unexpected fields")
        if it["kind"] not in KINDS:
            errors.append("{}: bad kind {!r}".format(where, it["kind"]))
        hits = agents_named(it["agent"], catalog)
        if len(hits) != 1:
            errors.append("{}: agent {!r} names {}".format(where, it["agent"], hits))
            continue
        aid = hits[0]
        cap, avail = it["expect"]["capability"], it["expect"]["available"]
        if it["kind"] == "none":
            if cap is not None or avail is not None:
                errors.append(f"{where}: none must expect null/null")
            continue
        if cap not in names:
            errors.append(f"{where}: {cap!r} is not a capability name")
            continue
        record = catalog[aid]["records"].get(cap)
        if record is None:
            errors.append(f"{where}: {aid} has no record of {cap!r}")
            continue
        if avail is not record["available"]:
            errors.append("{}: available {!r}, record says {!r}".format(where, avail, record["available"]))
        if it["kind"] == "other-agent" and avail is not False:
            errors.append(f"{where}: other-agent must expect false")
        if it["kind"] in ("identifier", "agent-term") and it["query"].lower() not in public_text(record):
            errors.append("{}: {!r} not found in {}'s {!r} record".format(where, it["query"], aid, cap))
    kinds = Counter(it["kind"] for it in items)
    avails = Counter(str(it["expect"]["available"]).lower() for it in items)
    kind_counts = ", ".join(f"{k} {kinds[k]}" for k in KINDS)
    avail_counts = ", ".join(f"{k} {v}" for k, v in sorted(avails.items()))
    print(f"{filename}: {len(items)} queries; {kind_counts}; available {avail_counts}")
    return errors


def main():
    errors = []
    for args in SETS:
        errors += check(*args)
    for e in errors:
        print("ERROR", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
