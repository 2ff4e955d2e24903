"""Write a Markdown comparison matrix: one row per canonical capability name, one column per agent.

Usage: python matrix.py CATALOG_DIR OUT_DIR. Writes OUT_DIR/matrix.md. A cell says "yes" or "no"
(the recorded availability) with the tier in brackets when there is one, or "-" when the agent does
not record the capability at all.
"""

import json
import sys
from pathlib import Path


def main() -> None:
    catalog, out = Path(sys.argv[1]), Path(sys.argv[2])
    agents = {}  # agent id -> {capability name -> record}
    categories = {}  # capability name -> category
    for path in sorted(catalog.glob("*/capabilities/current.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        agent_id = path.parent.parent.name
        agents[agent_id] = {}
        for cap in doc["capabilities"]:
            agents[agent_id][cap["name"]] = cap
            categories.setdefault(cap["name"], cap["category"])
    lines = [
        "| capability | category | " + " | ".join(agents) + " |",
        "|---|---|" + "---|" * len(agents),
    ]
    for name in sorted(categories, key=str.lower):
        cells = []
        for records in agents.values():
            cap = records.get(name)
            if cap is None:
                cells.append("-")
            else:
                cell = "yes" if cap["available"] else "no"
                if cap.get("tier"):
                    cell += f" ({cap['tier']})"
                cells.append(cell)
        lines.append(f"| {name} | {categories[name]} | " + " | ".join(cells) + " |")
    out.mkdir(parents=True, exist_ok=True)
    (out / "matrix.md").write_text("# Capability matrix\n\n" + "\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
