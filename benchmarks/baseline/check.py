"""Check every agents/*/capabilities/current.json by hand: required fields, types, enums.

Usage: python check.py CATALOG_DIR OUT_DIR. Prints one line per problem, writes them to OUT_DIR/problems.txt,
exits 1 if there are any. The rules are copied by hand from schema/capability-schema.json.
"""

import json
import sys
from datetime import date, datetime
from pathlib import Path

CATEGORIES = set(
    "code-completion code-generation chat-assistance code-explanation code-refactoring testing debugging "
    "documentation command-line multi-file-editing context-awareness language-support ide-integration "
    "api-integration customization security performance collaboration model-selection agent-orchestration "
    "observability".split()
)
TIERS = {"free", "pro", "business", "enterprise"}
MATURITY = {"experimental", "beta", "stable", "deprecated"}
STATUSES = {"active", "deprecated", "modified", "unknown"}
GRANULARITY = {"dedicated", "section", "excerpt"}
TEXT_LISTS = ("limitations", "requirements", "aliases", "triggers")


def is_text(value: object) -> bool:
    return isinstance(value, str) and value != ""


def is_date(value: object) -> bool:
    try:
        date.fromisoformat(str(value))
        return True
    except (TypeError, ValueError):
        return False


def check_capability(cap: dict, where: str, problems: list[str]) -> None:
    for key in ("category", "name", "description", "available"):
        if key not in cap:
            problems.append(f"{where}: missing {key}")
    if "category" in cap and cap["category"] not in CATEGORIES:
        problems.append(f"{where}.category: unknown category {cap['category']!r}")
    for key in ("name", "description"):
        if key in cap and not is_text(cap[key]):
            problems.append(f"{where}.{key}: must be a non-empty string")
    if "available" in cap and not isinstance(cap["available"], bool):
        problems.append(f"{where}.available: must be true or false")
    for key, allowed in (("tier", TIERS), ("maturityLevel", MATURITY), ("status", STATUSES)):
        if key in cap and cap[key] not in allowed:
            problems.append(f"{where}.{key}: {cap[key]!r} is not one of {sorted(allowed)}")
    for key in TEXT_LISTS:
        if key in cap and not (isinstance(cap[key], list) and all(isinstance(item, str) for item in cap[key])):
            problems.append(f"{where}.{key}: must be a list of strings")
    for index, source in enumerate(cap.get("sources", [])):
        here = f"{where}.sources[{index}]"
        if not isinstance(source, dict):
            problems.append(f"{here}: must be an object")
            continue
        for key in ("url", "description", "sourceGranularity"):
            if key not in source:
                problems.append(f"{here}: missing {key}")
        if "url" in source and not (is_text(source["url"]) and ":" in source["url"]):
            problems.append(f"{here}.url: must be a URL")
        if "sourceGranularity" in source and source["sourceGranularity"] not in GRANULARITY:
            problems.append(f"{here}.sourceGranularity: {source['sourceGranularity']!r} is not allowed")
        if "verifiedDate" in source and not is_date(source["verifiedDate"]):
            problems.append(f"{here}.verifiedDate: must be a date (YYYY-MM-DD)")
    for index, rule in enumerate(cap.get("useWhen", [])):
        confidence = rule.get("confidence") if isinstance(rule, dict) else None
        if not isinstance(rule, dict) or not is_text(rule.get("pattern")):
            problems.append(f"{where}.useWhen[{index}]: needs a pattern")
        if not isinstance(confidence, int | float) or isinstance(confidence, bool) or not 0 <= confidence <= 1:
            problems.append(f"{where}.useWhen[{index}].confidence: must be a number from 0 to 1")


def check_file(path: Path, problems: list[str]) -> None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        problems.append(f"{path}: cannot read JSON: {error}")
        return
    if not isinstance(doc, dict):
        problems.append(f"{path}: must be a JSON object")
        return
    agent = doc.get("agent")
    if not isinstance(agent, dict):
        problems.append(f"{path}: agent: missing or not an object")
    else:
        for key in ("name", "vendor", "version", "lastUpdated"):
            if not is_text(agent.get(key)):
                problems.append(f"{path}: agent.{key}: missing or empty")
        try:
            datetime.fromisoformat(str(agent.get("lastUpdated")).replace("Z", "+00:00"))
        except ValueError:
            problems.append(f"{path}: agent.lastUpdated: must be a date-time")
    capabilities = doc.get("capabilities")
    if not isinstance(capabilities, list):
        problems.append(f"{path}: capabilities: missing or not a list")
        return
    for index, cap in enumerate(capabilities):
        if isinstance(cap, dict):
            check_capability(cap, f"{path}: capabilities[{index}]", problems)
        else:
            problems.append(f"{path}: capabilities[{index}]: must be an object")


def main() -> None:
    catalog, out = Path(sys.argv[1]), Path(sys.argv[2])
    problems = []
    for path in sorted(catalog.glob("*/capabilities/current.json")):
        check_file(path, problems)
    out.mkdir(parents=True, exist_ok=True)
    (out / "problems.txt").write_text("".join(line + "\n" for line in problems), encoding="utf-8")
    for line in problems:
        print(line)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
