"""Write a static JSON API: index.json, agents/<agent>.json and capabilities/<slug>.json.

Usage: python static_api.py CATALOG_DIR OUT_DIR. An agent's file is its document as recorded; a
capability's file holds each agent's record of it, keyed by agent id. index.json lists both with
the paths of their files.
"""

import json
import re
import sys
from pathlib import Path


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def write_json(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main() -> None:
    catalog, out = Path(sys.argv[1]), Path(sys.argv[2])
    index = {"agents": [], "capabilities": []}
    capabilities = {}  # name -> {"name", "category", "agents": {agent id: record}}
    for path in sorted(catalog.glob("*/capabilities/current.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        agent_id = path.parent.parent.name
        write_json(out / "agents" / f"{agent_id}.json", doc)
        index["agents"].append(
            {
                "id": agent_id,
                "name": doc["agent"]["name"],
                "vendor": doc["agent"]["vendor"],
                "capabilities": len(doc["capabilities"]),
                "path": f"agents/{agent_id}.json",
            }
        )
        for cap in doc["capabilities"]:
            if cap["name"] not in capabilities:
                capabilities[cap["name"]] = {"name": cap["name"], "category": cap["category"], "agents": {}}
            capabilities[cap["name"]]["agents"][agent_id] = cap
    for name in sorted(capabilities, key=str.lower):
        entry = capabilities[name]
        write_json(out / "capabilities" / f"{slug(name)}.json", entry)
        index["capabilities"].append(
            {
                "name": name,
                "category": entry["category"],
                "agents": sorted(entry["agents"]),
                "path": f"capabilities/{slug(name)}.json",
            }
        )
    write_json(out / "index.json", index)


if __name__ == "__main__":
    main()
