"""site/ in the build (issue 17): the JSON API, llms.txt and the page, through `capidx build` and `capidx report`.

The JSON must say what the Markdown and the MCP tool documents say (one source of truth): these tests compare
the site's documents with the compare documents and the Markdown of the same build."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import AGENT_IDS, MCP_SPEC, documents, run_cli, write_catalog
from manifest_factory import build_text

SITE_KINDS = {
    "llms", "llms-full", "site-page", "site-script", "site-style", "site-markdown", "site-index", "site-agents",
    "site-capabilities", "site-agent", "site-capability", "site-category", "site-quality",
}  # fmt: skip


@pytest.fixture(scope="module", name="built")
def fixture_built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    write_catalog(root)
    result = run_cli(["build", "--out", str(root / "build"), "-q"], cwd=root)
    assert result.exit_code == 0, result.stderr
    return root / "build"


def _json(build: Path, path: str) -> Any:
    """A build's JSON file, or a packed tool answer by the path it had as a file of its own."""
    return json.loads(build_text(build, path))


def _site_rows(build: Path) -> dict[str, dict[str, Any]]:
    return {row["path"]: row for row in _json(build, "manifest.json")["artifacts"] if row["path"].startswith("site/")}


def test_every_site_file_is_a_listed_artifact_of_a_site_kind(built: Path) -> None:
    rows = _site_rows(built)
    on_disk = {path.relative_to(built).as_posix() for path in (built / "site").rglob("*") if path.is_file()}
    assert set(rows) == on_disk
    assert {row["kind"] for row in rows.values()} == SITE_KINDS
    media = {row["path"].rsplit(".", 1)[1]: row["mimeType"] for row in rows.values()}
    assert media == {
        "json": "application/json", "md": "text/markdown", "txt": "text/plain", "html": "text/html",
        "js": "text/javascript", "css": "text/css",
    }  # fmt: skip


def test_the_api_index_lists_every_other_site_file_with_its_figures(built: Path) -> None:
    manifest = _json(built, "manifest.json")
    index = _json(built, "site/api/index.json")
    assert index["inputDigest"] == manifest["inputDigest"]
    assert index["capidx"] == manifest["capidx"]
    assert index["mcp"]["uriPrefix"] == manifest["uriPrefix"]
    rows = _site_rows(built)
    listed = {}
    for endpoint in index["endpoints"]:
        assert endpoint["urlTemplate"] and endpoint["mediaType"] and endpoint["description"]
        for document in endpoint["documents"]:
            path = (Path("site/api") / document["url"]).as_posix()
            path = re.sub(r"[^/]+/\.\./", "", path)  # site/api/../llms.txt -> site/llms.txt
            listed[path] = document
            assert document["bytes"] == rows[path]["bytes"]
            assert document["tokens"] == rows[path]["tokens"]
            assert rows[path]["mimeType"] == endpoint["mediaType"]
            if "parameter" in endpoint:  # the URL is the template with the document's parameter filled in
                parameter = endpoint["parameter"]
                assert document["url"] == endpoint["urlTemplate"].replace("{" + parameter + "}", document[parameter])
    assert set(listed) == set(rows) - {"site/api/index.json"}


def test_the_json_says_what_the_tool_documents_and_the_markdown_say(built: Path) -> None:
    for slug in _json(built, "manifest.json")["catalog"]["capabilities"]:
        site = _json(built, f"site/api/capabilities/{slug}.json")
        compare = _json(built, f"tools/compare/{slug}.json")
        assert site["capability"]["slug"] == compare["capability"]["slug"] == slug
        compared = {entry["agent"]: entry for entry in compare["agents"]}
        assert [entry["agent"] for entry in site["agents"]] == list(AGENT_IDS)
        for entry in site["agents"]:
            tool = compared[entry["agent"]]
            assert entry.get("available", False) == tool.get("available", False)  # none said: no record
            if not tool.get(
                "available"
            ):  # compare says no more; the site (like the Markdown) keeps the record's details
                continue
            for field in ("description", "tier", "terminology", "maturityLevel", "status", "implementationNotes"):
                assert entry.get(field) == tool.get(field), (slug, entry["agent"], field)
            cited = [source["url"] for source in tool.get("sources", [])]
            by_cite = {source["cite"]: source["url"] for source in site["sources"]}
            assert [by_cite[cite] for cite in entry.get("cites", [])] == cited
        # the Markdown cites the same numbers for the same URLs
        markdown = (built / "capabilities" / f"{slug}.md").read_text("utf-8")
        for source in site["sources"]:
            assert f"- [{source['number']}] {source['url']}" in markdown


def test_the_site_markdown_is_the_build_markdown(built: Path) -> None:
    assert (built / "site" / "llms-full.txt").read_bytes() == (built / "full.md").read_bytes()
    for folder in ("agents", "capabilities", "categories"):
        for path in (built / folder).glob("*.md"):
            assert (built / "site" / "md" / folder / path.name).read_bytes() == path.read_bytes()


def test_llms_txt_follows_the_convention_and_its_links_resolve(built: Path) -> None:
    text = (built / "site" / "llms.txt").read_text("utf-8")
    lines = text.splitlines()
    assert lines[0].startswith("# ") and lines[1] == ""
    assert lines[2].startswith("> ") and lines[3] == ""  # one-paragraph summary in a blockquote
    sections = [line[3:] for line in lines if line.startswith("## ")]
    assert sections == ["Agents", "Capabilities", "Categories", "Optional"]
    links = re.findall(r"^- \[[^\]]+\]\(([^)]+)\)", text, flags=re.MULTILINE)
    assert len(links) == len(AGENT_IDS) + 6 + 5 + 3
    for link in links:
        assert (built / "site" / link).is_file(), link
    rows = _site_rows(built)
    tokens = rows["site/md/agents/claude-code.md"]["tokens"]["cl100k_base"]
    assert f"(md/agents/claude-code.md): Anthropic; 4 of 4 capabilities available ({tokens:,} tokens)" in text


def test_quality_reports_freshness_without_a_wall_clock(built: Path) -> None:
    quality = _json(built, "site/api/quality.json")
    assert quality["referenceDate"] == _json(built, "stats.json")["catalog"]["sources"]["referenceDate"]
    urls = [row["url"] for row in quality["sources"]]
    assert urls == sorted(set(urls)) and quality["urls"]["sources"] == len(urls)
    for row in quality["sources"]:
        assert ("verifiedDate" in row) == ("ageDays" in row)
        assert row["stale"] == (row.get("ageDays", -1) > quality["staleAfterDays"])
    assert quality["urls"]["unverified"] == sum(1 for row in quality["sources"] if "verifiedDate" not in row)


def test_no_site_and_site_false_leave_it_out(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    flagged = run_cli(["build", "--out", str(tmp_path / "flag"), "-q", "--no-site"], cwd=tmp_path)
    (tmp_path / "capidx.yaml").write_text("site: false\n", encoding="utf-8")
    configured = run_cli(["build", "--out", str(tmp_path / "config"), "-q"], cwd=tmp_path)
    for result, out in ((flagged, "flag"), (configured, "config")):
        assert result.exit_code == 0, result.stderr
        assert not (tmp_path / out / "site").exists()
        kinds = {row["kind"] for row in _json(tmp_path / out, "manifest.json")["artifacts"]}
        assert not kinds & SITE_KINDS and "full" in kinds
    # switching the site back on is a change of inputs: the build is redone, not "up to date"
    (tmp_path / "capidx.yaml").write_text("site: true\n", encoding="utf-8")
    again = run_cli(["build", "--out", str(tmp_path / "config")], cwd=tmp_path)
    assert again.exit_code == 0 and "up to date" not in again.stdout
    assert (tmp_path / "config" / "site" / "llms.txt").is_file()


def test_a_site_setting_that_is_not_a_boolean_is_a_usage_error(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    (tmp_path / "capidx.yaml").write_text("site: sometimes\n", encoding="utf-8")
    result = run_cli(["build", "--out", str(tmp_path / "build")], cwd=tmp_path)
    assert result.exit_code == 2
    assert "capidx.yaml:1:" in result.stderr and "site" in result.stderr
    assert not (tmp_path / "build").exists()


def test_budgets_apply_to_the_site_and_report_lists_it(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    (tmp_path / "capidx.yaml").write_text("budgets:\n  llms: 10\n  site-page: 100000\n", encoding="utf-8")
    result = run_cli(["build", "--out", str(tmp_path / "build")], cwd=tmp_path)
    assert result.exit_code == 1
    assert re.search(r"^llms: [\d,]+ tokens > budget 10 ", result.stderr, flags=re.MULTILINE)
    assert "site-page" not in result.stderr  # within its budget
    assert (tmp_path / "build" / "site" / "llms.txt").is_file()  # written for inspection
    report = run_cli(["report", "--build", str(tmp_path / "build")], cwd=tmp_path)
    for kind in ("llms", "site-page", "site-index", "site-capability"):
        assert re.search(rf"^\s*{re.escape(kind)}\s", report.stdout, flags=re.MULTILINE), kind


def test_text_from_the_data_is_escaped_and_unsafe_links_are_not_links(tmp_path: Path) -> None:
    docs = documents()
    record = docs["claude-code"]["capabilities"][0]
    record["description"] = 'Runs </script><script>alert("x")</script> & <b>bold</b> claims.'
    record["limitations"] = ["<img src=x onerror=alert(1)>"]
    record["sources"][0]["description"] = "<i>docs</i>"
    docs["claude-code"]["agent"]["name"] = "Claude <b>Code</b> [beta]"  # link text in llms.txt
    write_catalog(tmp_path, docs)
    result = run_cli(["build", "--out", str(tmp_path / "build"), "-q"], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    page = (tmp_path / "build" / "site" / "index.html").read_text("utf-8")
    assert "<script>alert" not in page and "</script><script>" not in page
    assert "<img src=x" not in page and "<b>bold</b>" not in page and "<i>docs</i>" not in page
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page
    assert page.count("<script") == 1  # the page's own script.js, nothing else
    llms = (tmp_path / "build" / "site" / "llms.txt").read_text("utf-8")
    assert "<script>" not in llms
    # `<` escaped once: a doubled backslash before it ('\\<b>') showed a backslash and left the tag live
    assert "- [Claude \\<b>Code\\</b> \\[beta\\]](md/agents/claude-code.md)" in llms, llms
    assert "\\\\<" not in llms


@pytest.mark.parametrize(
    "address",
    [
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        " javascript:alert(1)",
        "java\tscript:alert(1)",
        "file:///etc/passwd",
        "data:text/html,<script>alert(1)</script>",
        "https:///etc/passwd",
        "//attacker.example/x",
        "https://attacker\u00a0example.com/",  # a no-break space: ASCII's white space is not all of it
        "https://x.example/attacker\u2028line",
        "https://attacker\u200b.example/",
    ],
)
def test_an_address_that_is_no_web_url_is_never_a_link_on_the_page(address: str) -> None:
    """Defense in depth below validate (which refuses such addresses): should one reach the renderer, the page
    shows it as text and links only absolute http(s) URLs."""
    from capidx.compiler.catalog import build_catalog
    from capidx.compiler.render.site import SiteSettings, site_artifacts

    docs = documents()
    docs["claude-code"]["capabilities"][0]["sources"][0]["url"] = address
    docs["claude-code"]["documentation"] = {"officialDocs": address, "github": "https://example.com/repo"}
    catalog = build_catalog(sorted(docs.items()), None)
    settings = SiteSettings("capidx://", "Test", "0", "0" * 64, 90, ("o200k_base",))
    page = next(artifact.text for artifact in site_artifacts(catalog, settings, ()) if artifact.kind == "site-page")
    parser = _Tags()
    parser.feed(page)
    hrefs = [attrs.get("href") or "" for tag, attrs in parser.tags if tag == "a"]
    assert "https://example.com/repo" in hrefs  # the page does link web addresses
    assert not [href for href in hrefs if "script" in href.lower() or "/etc/" in href or "attacker" in href]


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def test_the_page_is_self_contained_and_accessible_by_construction(built: Path) -> None:
    parser = _Tags()
    parser.feed((built / "site" / "index.html").read_text("utf-8"))
    tags = parser.tags
    html = next(attrs for tag, attrs in tags if tag == "html")
    assert html.get("lang") == "en"
    assert any(tag == "meta" and attrs.get("name") == "viewport" for tag, attrs in tags)  # readable on a phone
    # static and relative: no CDN, no external font or script, nothing fetched from another origin
    loaded = [attrs.get("src") or attrs.get("href") for tag, attrs in tags if tag in ("script", "link", "img")]
    assert loaded and all(url and not re.match(r"[a-z]+:|//|/", url) for url in loaded), loaded
    # every form control has a label; every expand button names the row it opens, which exists
    ids = {attrs["id"] for _tag, attrs in tags if attrs.get("id")}
    labelled = {attrs["for"] for tag, attrs in tags if tag == "label"}
    controls = [attrs["id"] for tag, attrs in tags if tag in ("input", "select")]
    assert controls and set(controls) <= labelled
    buttons = [attrs for tag, attrs in tags if tag == "button" and "expand" in (attrs.get("class") or "")]
    assert len(buttons) == 6 and all(button["aria-controls"] in ids for button in buttons)
    headers = [attrs.get("scope") for tag, attrs in tags if tag == "th"]
    assert headers and set(headers) <= {"col", "row"}
    # the page reads without its script: every link within it leads to an element there (the agents' views too)
    anchors = [attrs["href"][1:] for tag, attrs in tags if tag == "a" and (attrs.get("href") or "").startswith("#")]
    assert any(anchor.startswith("agent-") for anchor in anchors)
    assert [anchor for anchor in anchors if anchor not in ids] == []


def test_each_source_is_numbered_once_and_its_link_set_apart(built: Path) -> None:
    page = (built / "site" / "index.html").read_text("utf-8")
    assert "<ol" not in page  # a list's own numbers beside the [n] labels numbered every source twice
    items = re.findall(r'<li id="src-[^"]+">(.*?)</li>', page, re.S)
    assert items and all(re.search(r"</(a|code)> · <span class=\"traits\">", item) for item in items), items[:2]


def test_the_counts_on_the_page_are_those_of_quality_json(tmp_path: Path) -> None:
    docs = documents()
    sources = docs["claude-code"]["capabilities"][0]["sources"]
    sources[0]["status"] = "modified"  # what `capidx verify --write` records when the page no longer says it
    sources[1]["status"] = "unknown"  # ... and when the page is gone (it was verified before)
    write_catalog(tmp_path, docs)
    result = run_cli(["build", "--out", str(tmp_path / "build"), "-q"], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    quality = _json(tmp_path / "build", "site/api/quality.json")
    assert quality["urls"]["flagged"] >= 1 and quality["urls"]["gone"] >= 1
    page = (tmp_path / "build" / "site" / "index.html").read_text("utf-8")
    shown = dict(re.findall(r'data-count="([a-z-]+)">(\d+)<', page))
    assert shown["sources"] == str(quality["urls"]["sources"])
    assert shown["verified"] == str(quality["urls"]["verified"])
    assert shown["flagged"] == str(quality["urls"]["flagged"])
    assert shown["gone"] == str(quality["urls"]["gone"])
    assert shown["unknown-unverified"] == str(quality["urls"]["unknownUnverified"])
    assert quality["urls"]["gone"] + quality["urls"]["unknownUnverified"] == quality["urls"]["statusUnknown"]
    assert shown["capabilities"] == "6" and shown["agents"] == str(len(AGENT_IDS))


def _spec_citation(docs: dict[str, Any], agent: str) -> dict[str, Any]:
    """The agent's one citation of the MCP specification in `documents()`."""
    (cited,) = [
        source
        for capability in docs[agent]["capabilities"]
        for source in capability.get("sources", [])
        if source["url"] == MCP_SPEC
    ]
    return cited


@pytest.mark.parametrize(
    ("agent", "status", "flagged"),
    [("claude-code", "modified", 1), ("vscode-copilot", "modified", 1), ("vscode-copilot", "unknown", 0)],
)
def test_a_url_verified_on_one_date_with_different_statuses_shows_the_most_severe(
    tmp_path: Path, agent: str, status: str, flagged: int
) -> None:
    """Two records cite the MCP specification verified on the same newest date, one of them with a worse status
    than `active`: the URL's row shows the worse one whichever record comes first (flagged rather than hidden), and
    an older verification's status does not count (copilot-cli's, of 2025-08-01)."""
    docs = documents()
    for owner in ("claude-code", "vscode-copilot"):
        cited = _spec_citation(docs, owner)
        assert (cited["verifiedDate"], cited["status"]) == ("2026-01-02", "active")
        if owner == agent:
            cited["status"] = status
    _spec_citation(docs, "copilot-cli")["status"] = "modified"
    write_catalog(tmp_path, docs)
    result = run_cli(["build", "--out", str(tmp_path / "build"), "-q"], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    quality = _json(tmp_path / "build", "site/api/quality.json")
    (row,) = [row for row in quality["sources"] if row["url"] == MCP_SPEC]
    assert (row["verifiedDate"], row["status"], row["flagged"]) == ("2026-01-02", status, bool(flagged))
    assert quality["urls"]["flagged"] == flagged
    assert quality["urls"]["gone"] == (status == "unknown")


def test_quality_names_each_citing_record_once_in_agent_and_capability_order(tmp_path: Path) -> None:
    """A record that cites one URL twice is one of the records citing it, listed once, in (agent, capability)
    order like the sources documents' citations."""
    docs = documents()
    cited = _spec_citation(docs, "vscode-copilot")
    (record,) = [c for c in docs["vscode-copilot"]["capabilities"] if cited in c.get("sources", [])]
    record["sources"].append({**cited, "description": "MCP specification, transports"})
    write_catalog(tmp_path, docs)
    result = run_cli(["build", "--out", str(tmp_path / "build"), "-q"], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    quality = _json(tmp_path / "build", "site/api/quality.json")
    (row,) = [row for row in quality["sources"] if row["url"] == MCP_SPEC]
    assert [(cite["agent"], cite["capability"]) for cite in row["citedBy"]] == [
        ("claude-code", "mcp-servers"),
        ("copilot-cli", "mcp-servers"),
        ("vscode-copilot", "mcp-servers"),
    ]


def test_a_large_catalog_page_links_to_the_details_instead_of_embedding_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above `DETAIL_RECORDS` records the page keeps the matrix (every cell) but not each record's details:
    each row links to its capability's JSON and Markdown, which hold them (the same documents as always)."""
    from capidx.compiler.render import site_page

    write_catalog(tmp_path)
    small = run_cli(["build", "--out", str(tmp_path / "small"), "-q"], cwd=tmp_path)
    monkeypatch.setattr(site_page, "DETAIL_RECORDS", 1)
    large = run_cli(["build", "--out", str(tmp_path / "large"), "-q"], cwd=tmp_path)
    assert small.exit_code == large.exit_code == 0
    with_details = (tmp_path / "small" / "site" / "index.html").read_text("utf-8")
    linked = (tmp_path / "large" / "site" / "index.html").read_text("utf-8")
    description = documents()["claude-code"]["capabilities"][0]["description"]
    assert description.split(".")[0] in with_details
    assert description.split(".")[0] not in linked
    assert len(linked) < len(with_details)
    for slug in {row["slug"] for row in _json(tmp_path / "large", "site/api/capabilities.json")["capabilities"]}:
        assert f'href="api/capabilities/{slug}.json"' in linked and f'id="cap-{slug}"' in linked
    assert linked.count('class="cell ') == with_details.count('class="cell ')


def test_the_agent_view_and_its_data_carry_integrations_models_and_documentation(tmp_path: Path) -> None:
    """What the agent's Markdown says at its top (integrations, models, documentation) is on the page and in
    the agent's JSON too."""
    docs = documents()
    agent = sorted(docs)[0]
    docs[agent]["models"] = [
        {"name": "Model One", "provider": "Acme", "available": True, "tier": "pro", "note": "Default model"},
        {"provider": "Acme"},  # nothing stated about its name or availability: no mark, as in the Markdown
    ]
    docs[agent]["integrations"] = [{"platform": "VS Code", "supported": False}, {"features": ["chat"]}]
    docs[agent]["documentation"] = {"officialDocs": "https://example.com/docs"}
    write_catalog(tmp_path, docs)
    assert run_cli(["build", "-q"], tmp_path).exit_code == 0
    data = json.loads((tmp_path / "build" / "site" / "api" / "agents" / f"{agent}.json").read_text("utf-8"))
    assert data["models"] == docs[agent]["models"]
    assert data["integrations"] == [{"platform": "VS Code", "supported": False}, {"features": ["chat"]}]
    page = (tmp_path / "build" / "site" / "index.html").read_text("utf-8")
    view = page[page.index(f'id="agent-{agent}"') :]
    view = view[: view.index("</section>")]
    assert "<strong>Models:</strong> Model One (Acme, pro) ✓ — Default model · (unnamed) (Acme)</p>" in view
    markdown = (tmp_path / "build" / "agents" / f"{agent}.md").read_text("utf-8")
    assert "Models: Model One (Acme, pro) ✓ — Default model · (unnamed) (Acme)" in markdown
    assert "<strong>Integrations:</strong> VS Code ✗ · (unnamed) (chat)</p>" in view
    assert '<a href="https://example.com/docs" rel="noopener noreferrer">official docs</a>' in view
