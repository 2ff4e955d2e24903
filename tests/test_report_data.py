"""`capidx report --against`: what the change does to the data a model is answered from (compiler/report/datadiff.py).

A small catalog is built twice, the second time with its data changed (an availability flipped, a record added, an
agent added, a capability removed, a description rewritten, a source added, a tier changed), and each change must
be named in every format; identical builds report none; a baseline without compare documents says the comparison
is unavailable; hostile text in a baseline's documents is escaped as the report escapes catalog text.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import documents, write_catalog
from click.testing import CliRunner
from test_report import check_html

from capidx.cli import cli

FORMATS = ("text", "markdown", "json", "github", "html")
BUDGETS = "budgets:\n  summary: 50000\n"


def _build(root: Path, docs: dict[str, Any]) -> Path:
    write_catalog(root, docs)
    (root / "capidx.yaml").write_text(BUDGETS, encoding="utf-8")
    out = root / "build"
    result = CliRunner().invoke(cli, ["build", "--config", str(root / "capidx.yaml"), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    return out


def _capability(docs: dict[str, Any], agent: str, name: str) -> dict[str, Any]:
    return next(c for c in docs[agent]["capabilities"] if c["name"] == name)


def _changed() -> dict[str, Any]:
    docs = documents()
    subagents = _capability(docs, "copilot-cli", "Subagents")
    subagents["available"] = True  # the flip
    subagents["description"] = "Delegates a task to a subagent with its own context."
    claude = docs["claude-code"]["capabilities"]
    claude[:] = [c for c in claude if c["name"] != "Hooks"]  # only Claude had it: gone from the catalog
    _capability(docs, "vscode-copilot", "MCP Servers")["description"] += " Servers may be set per user profile."
    _capability(docs, "claude-code", "Custom Instructions")["sources"].append(
        {"url": "https://example.com/memory", "description": "Memory guide", "sourceGranularity": "section"}
    )
    _capability(docs, "vscode-copilot", "Inline Suggestions")["tier"] = "pro"
    vscode = docs["vscode-copilot"]["capabilities"]
    vscode.append({**copy.deepcopy(_capability(docs, "claude-code", "Subagents")), "tier": "free"})  # record added
    newcomer = copy.deepcopy(docs["vscode-copilot"])
    newcomer["agent"] = {**newcomer["agent"], "name": "Zed Agent", "vendor": "Zed Industries"}
    docs["zed-agent"] = newcomer
    return docs


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("report-data")
    return {"base": _build(root / "base", documents()), "head": _build(root / "head", _changed())}


def _report(*args: str) -> Any:
    return CliRunner().invoke(cli, ["report", "--no-fail", *args], env={"GITHUB_STEP_SUMMARY": ""})


def _against(build: Path, base: Path, output_format: str = "text") -> str:
    result = _report("--build", str(build), "--against", str(base), "--format", output_format)
    assert result.exit_code == 0, result.output
    return result.output


# Each change as every format's text names it.
EXPECTED = (
    "copilot-cli / subagents: not available → available",
    "vscode-copilot / subagents: not recorded → available (record added)",
    "zed-agent: 4 capabilities recorded, 4 available",
    "hooks: available for claude-code (1 of 3 agents; 1 recorded)",
    "vscode-copilot / inline-suggestions: tier free → pro",
    "claude-code / custom-instructions: 1 → 2 sources (1 added)",
    "vscode-copilot / mcp-servers: description",
    "copilot-cli / subagents: description",
)


@pytest.mark.parametrize("output_format", ["text", "markdown", "html"])
def test_every_data_change_is_named(builds: dict[str, Path], output_format: str) -> None:
    output = _against(builds["head"], builds["base"], output_format)
    if output_format == "html":
        check_html(output)
    for line in EXPECTED:
        assert line in output, line
    # Availability first: the flip between yes and no before the record added, both before any other section.
    assert output.index(EXPECTED[0]) < output.index(EXPECTED[1]) < output.index("Agents added")
    assert output.index("Agents added") < output.index("Capabilities removed") < output.index("Text changes")


def test_the_json_form_has_every_section(builds: dict[str, Path]) -> None:
    data = json.loads(_against(builds["head"], builds["base"], "json"))["data"]
    assert data["available"] is True and data["unavailable"] is None
    sections = data["sections"]
    [flip, added] = sections["availability"]["items"]
    assert (flip["agent"], flip["capability"], flip["before"], flip["after"]) == (
        "copilot-cli",
        "subagents",
        "not available",
        "available",
    )
    assert (added["agent"], added["before"], added["after"]) == ("vscode-copilot", "not recorded", "available")
    assert [item["agent"] for item in sections["agentsAdded"]["items"]] == ["zed-agent"]
    assert sections["agentsRemoved"]["count"] == 0 and sections["capabilitiesAdded"]["count"] == 0
    assert [item["capability"] for item in sections["capabilitiesRemoved"]["items"]] == ["hooks"]
    [tier] = sections["traits"]["items"]
    assert (tier["field"], tier["before"], tier["after"]) == ("tier", "free", "pro")
    [source] = sections["sources"]["items"]
    assert (source["agent"], source["added"], source["removed"]) == ("claude-code", 1, 0)
    texts = {(item["agent"], item["capability"]): item["fields"] for item in sections["text"]["items"]}
    assert texts == {("copilot-cli", "subagents"): ["description"], ("vscode-copilot", "mcp-servers"): ["description"]}
    assert data["summary"].startswith("2 availability changes, 1 agent added, 1 capability removed")


def test_github_annotates_each_availability_change(builds: dict[str, Path]) -> None:
    output = _against(builds["head"], builds["base"], "github")
    assert "::notice title=capidx data changes::Data changes against the baseline: 2 availability changes" in output
    assert f"::notice title=capidx availability change::{EXPECTED[0]}" in output
    assert f"::notice title=capidx availability change::{EXPECTED[1]}" in output
    assert output.splitlines()[-1].endswith(
        "; data: " + json.loads(_against(builds["head"], builds["base"], "json"))["data"]["summary"]
    )


@pytest.mark.parametrize("output_format", FORMATS)
def test_identical_builds_report_no_data_change(builds: dict[str, Path], output_format: str) -> None:
    output = _against(builds["base"], builds["base"], output_format)
    assert "→" not in output.split("Largest documents")[0].split("Data changes")[-1] or output_format == "json"
    for line in EXPECTED:
        assert line not in output
    if output_format == "json":
        data = json.loads(output)["data"]
        assert data["summary"] == "no record changed"
        assert all(section["count"] == 0 for section in data["sections"].values())
    elif output_format == "github":
        assert "::notice" not in output and output.rstrip().endswith("; data: no record changed")
    else:
        assert "no record changed" in output


def _rewrite_manifest(build: Path, change: Any) -> None:
    path = build / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    change(manifest)
    path.write_text(json.dumps(manifest), encoding="utf-8")


@pytest.mark.parametrize("output_format", FORMATS)
def test_a_baseline_without_compare_documents_says_the_comparison_is_unavailable(
    builds: dict[str, Path], tmp_path: Path, output_format: str
) -> None:
    """A build made before the documents the comparison reads: the report says so and goes on (exit 0)."""
    import shutil

    older = tmp_path / "older"
    shutil.copytree(builds["base"], older)

    def drop_compare(manifest: dict[str, Any]) -> None:
        manifest["artifacts"] = [row for row in manifest["artifacts"] if row["kind"] != "compare"]

    _rewrite_manifest(older, drop_compare)
    output = _against(builds["head"], older, output_format)
    said = "unavailable (the baseline: it has no compare documents (made by an older capidx?))"
    assert said in (json.loads(output)["data"]["summary"] if output_format == "json" else output)
    assert EXPECTED[0] not in output
    if output_format == "json":
        assert json.loads(output)["data"]["available"] is False


def test_a_compare_document_that_does_not_match_its_sha256_is_not_compared(
    builds: dict[str, Path], tmp_path: Path
) -> None:
    import shutil

    damaged = tmp_path / "damaged"
    shutil.copytree(builds["base"], damaged)
    pack = damaged / "tools" / "compare.pack"
    data = pack.read_bytes()
    pack.write_bytes(data[:-2] + b"X}")
    output = _against(builds["head"], damaged)
    assert "Data changes against the baseline: unavailable (the baseline: tools/compare.pack in" in output
    assert "does not match its sha256 in manifest.json" in output


HOSTILE = "pro](https://evil.example) <img src=x> | `x` *y* ::error title=forged::pwned\n::error::second line"


def _hostile_baseline(base: Path, folder: Path) -> Path:
    """`base` with one compare document replaced by one whose tier is hostile text (a baseline a fork wrote)."""

    def hostile_tier(document: dict[str, Any]) -> bytes:
        for entry in document["agents"]:
            if entry["agent"] == "vscode-copilot":
                entry["tier"] = HOSTILE
        return json.dumps(document).encode("utf-8")

    return _planted_baseline(base, folder, hostile_tier)


def _planted_baseline(base: Path, folder: Path, make: Any, capability: str = "inline-suggestions") -> Path:
    """`base` with one compare document (`capability`'s) replaced by `make(document)`, its manifest row naming the new
    file, its bytes and its sha256: the document is read as listed."""
    import shutil

    shutil.copytree(base, folder)

    def plant(manifest: dict[str, Any]) -> None:
        row = next(r for r in manifest["artifacts"] if r["uri"].endswith(f"tools/compare/{capability}"))
        start = row["offset"]
        data = make(json.loads((folder / row["path"]).read_bytes()[start : start + row["bytes"]]))
        (folder / "tools" / "evil.json").write_bytes(data)
        row.pop("offset")
        row.update(path="tools/evil.json", bytes=len(data), sha256=hashlib.sha256(data).hexdigest())

    _rewrite_manifest(folder, plant)
    return folder


@pytest.mark.parametrize("output_format", FORMATS)
def test_hostile_text_in_a_baseline_is_escaped(builds: dict[str, Path], tmp_path: Path, output_format: str) -> None:
    hostile = _hostile_baseline(builds["base"], tmp_path / "hostile")
    output = _against(builds["head"], hostile, output_format)
    lines = output.splitlines()
    # No line is a forged workflow command: the data's line break is shown (`\x0a`), never printed.
    assert not [line for line in lines if line.startswith("::error")]
    if output_format != "github":  # reported, on one line
        assert "\\x0a::error::second line" in output.replace("\\\\x0a", "\\x0a")
    if output_format == "markdown":
        [line] = [line for line in lines if "evil.example" in line]
        assert "pro\\](https" in line  # no link
        assert "<img" not in line and "&lt;img" in line and "\\|" in line and "\\`x\\`" in line
    if output_format == "html":
        check_html(output)
        assert "<img" not in output and "&lt;img" in output
    if output_format == "github":
        [notice] = [line for line in lines if "evil.example" in line] or [""]
        assert notice == ""  # a tier change is no availability change: not annotated, only counted
        assert "1 tier, status, maturity or category change" in output
    if output_format == "json":
        [item] = json.loads(output)["data"]["sections"]["traits"]["items"]
        assert item["before"] == HOSTILE.replace("\n", "\\x0a") and item["after"] == "pro"


def test_a_compare_document_nested_too_deeply_is_not_compared(builds: dict[str, Path], tmp_path: Path) -> None:
    """JSON nested past the parser's recursion limit (a baseline a fork wrote): the comparison is unavailable, the
    report goes on (no traceback, exit 0)."""
    deep = b'{"agents": [{"agent": "x", "d": ' + b"[" * 100_000 + b"]" * 100_000 + b"}]}"
    output = _against(builds["head"], _planted_baseline(builds["base"], tmp_path / "deep", lambda _: deep))
    assert "Data changes against the baseline: unavailable (the baseline: " in output
    assert "tools/compare/inline-suggestions is nested too deeply to be a compare document" in output


def test_a_compare_document_larger_than_any_capidx_writes_is_not_parsed(
    builds: dict[str, Path], tmp_path: Path
) -> None:
    """A forged 64 MiB compare document of empty objects took 1.8 GB to parse (JSON takes some 30 times its bytes):
    one larger than `MAX_DOCUMENT_BYTES` is not parsed, and the comparison is said to be unavailable."""
    from capidx.compiler.report.datadiff import MAX_DOCUMENT_BYTES

    padding = b"{}," * (MAX_DOCUMENT_BYTES // 3)
    huge = b'{"agents": [{"agent": "claude-code", "x": [' + padding + b"{}]}]}"
    output = _against(builds["head"], _planted_baseline(builds["base"], tmp_path / "huge", lambda _: huge))
    assert "Data changes against the baseline: unavailable (the baseline: " in output
    assert f"tools/compare/inline-suggestions is {len(huge):,} bytes, over the {MAX_DOCUMENT_BYTES:,}" in output


def test_a_hostile_field_name_in_a_baseline_is_escaped_in_json_too(builds: dict[str, Path], tmp_path: Path) -> None:
    """A text change names the fields that changed: a field name a forged baseline wrote is quoted as every other
    text of the documents, `visible` in every format, the JSON form's `fields` too."""

    def hostile_field(document: dict[str, Any]) -> bytes:
        for entry in document["agents"]:
            if entry["agent"] == "vscode-copilot":
                entry["note\n::error::x"] = "planted"
        return json.dumps(document).encode("utf-8")

    hostile = _planted_baseline(builds["base"], tmp_path / "field", hostile_field)
    assert "vscode-copilot / inline-suggestions: note\\x0a::error::x" in _against(builds["head"], hostile)
    items = json.loads(_against(builds["head"], hostile, "json"))["data"]["sections"]["text"]["items"]
    [item] = [item for item in items if item["capability"] == "inline-suggestions"]
    assert item["fields"] == ["note\\x0a::error::x"]


def test_a_compare_pack_linked_from_outside_the_build_is_not_read(builds: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    linked = tmp_path / "linked"
    shutil.copytree(builds["base"], linked)
    outside = tmp_path / "compare.pack"
    (linked / "tools" / "compare.pack").rename(outside)
    (linked / "tools" / "compare.pack").symlink_to(outside)
    output = _against(builds["head"], linked)
    assert "unavailable (the baseline: tools/compare.pack in" in output
    assert "leads out of the build directory" in output


def test_rows_naming_the_same_bytes_again_and_again_are_not_read_past_a_bound(
    builds: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forged baseline whose manifest lists the whole compare pack under 50 more URIs: each row checks out against
    its sha256, so without a bound on the total every copy was read and kept (50 MB of pack, 2.5 GB in memory)."""
    import shutil

    from capidx.compiler.report import artifact_reader

    repeated = tmp_path / "repeated"
    shutil.copytree(builds["base"], repeated)
    pack = (repeated / "tools" / "compare.pack").read_bytes()

    def repeat(manifest: dict[str, Any]) -> None:
        row = next(r for r in manifest["artifacts"] if r["kind"] == "compare")
        whole = {"offset": 0, "bytes": len(pack), "sha256": hashlib.sha256(pack).hexdigest()}
        manifest["artifacts"] += [{**row, **whole, "uri": f"{row['uri']}-{index}"} for index in range(50)]

    _rewrite_manifest(repeated, repeat)
    monkeypatch.setattr(artifact_reader, "MAX_ARTIFACT_BYTES", 10 * len(pack))
    output = _against(builds["head"], repeated)
    assert "against the baseline: unavailable (the baseline: its compare documents in manifest.json" in output
    assert f"add up to {51 * len(pack):,} bytes, over the {10 * len(pack):,} read at most" in output
    assert "unavailable" not in _against(builds["head"], builds["base"])  # a build as capidx wrote it is read


def _many_flips(count: int) -> tuple[Any, Any]:
    from capidx.compiler.report.datadiff import Capability, Catalog, Record

    def catalog(available: bool) -> Catalog:
        slugs = [f"cap-{index:03}" for index in range(count)]
        record = Record(available, {}, {}, ())
        return Catalog(
            ("alpha-cli",),
            {slug: Capability(slug, "testing") for slug in slugs},
            {("alpha-cli", slug): record for slug in slugs},
        )

    return catalog(False), catalog(True)


def test_a_huge_change_is_bounded_in_every_format(tmp_path: Path) -> None:
    """1,200 availability changes: ten lines and "and 1190 more" in text, Markdown and HTML, ten notices in the
    github format (the tenth saying how many more are left), 1,000 items and the count of the rest in JSON."""
    from manifest_factory import make_manifest, write_build

    from capidx.compiler.report.datadiff import compare
    from capidx.compiler.report.formats import render_github, render_markdown, render_text
    from capidx.compiler.report.html import render_page
    from capidx.compiler.report.json_form import report_to_dict
    from capidx.compiler.report.manifest_reader import load_manifest
    from capidx.compiler.report.model import build_report

    base = load_manifest(write_build(tmp_path / "base", make_manifest()))
    head = load_manifest(write_build(tmp_path / "head", make_manifest()))
    report = build_report(head, base, compare(*_many_flips(1200)))
    for output in (render_text(report), render_markdown(report), render_page(report)):
        assert output.count("alpha-cli / cap-") == 10
        assert "and 1190 more" in output
    notices = [line for line in render_github(report).splitlines() if line.startswith("::notice")]
    assert len(notices) == 10 and "notices more" in notices[-1] and "--format json" in notices[-1]
    section = report_to_dict(report)["data"]["sections"]["availability"]
    assert (section["count"], len(section["items"]), section["more"]) == (1200, 1000, 200)


def test_a_forged_catalog_of_many_agents_and_capabilities_is_compared_in_time_bounded_by_its_records(
    builds: dict[str, Path], tmp_path: Path
) -> None:
    """A forged build and baseline whose manifests list 3,000 agents and 3,000 capabilities, every compare document
    one 13-byte empty list in one pack (a 1.5 MB manifest): the comparison went through every agent for every
    capability, 9 million pairs four times over (over 10 s, a gigabyte; 20,000 of each: minutes, tens of gigabytes).
    It now goes through the records the documents hold: none here."""
    import shutil
    import time

    count = 3000
    document = b'{"agents":[]}'
    forged = tmp_path / "forged"
    shutil.copytree(builds["base"], forged)
    (forged / "tools" / "forged.pack").write_bytes(document)

    def forge(manifest: dict[str, Any]) -> None:
        row = next(r for r in manifest["artifacts"] if r["kind"] == "compare")
        same = {"path": "tools/forged.pack", "offset": 0, "bytes": len(document)}
        same["sha256"] = hashlib.sha256(document).hexdigest()
        manifest["artifacts"] = [r for r in manifest["artifacts"] if r["kind"] != "compare"] + [
            {**row, **same, "uri": f"{row['uri']}-{index}", "params": {"capability": f"c{index}"}}
            for index in range(count)
        ]
        manifest["catalog"]["agents"] = [f"a{index}" for index in range(count)]
        manifest["catalog"]["capabilities"] = [f"c{index}" for index in range(count)]

    _rewrite_manifest(forged, forge)
    started = time.monotonic()
    output = _against(forged, forged)
    assert "Data changes against the baseline: no record changed" in output
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("options", [(), ("--propose-budgets",), ("--format", "html")])
def test_a_token_count_too_large_for_a_float_is_a_damaged_manifest_not_a_traceback(
    builds: dict[str, Path], tmp_path: Path, options: tuple[str, ...]
) -> None:
    """A forged build whose manifest gives one document 10**400 tokens: the report divided it by a context window
    and --propose-budgets multiplied it by the headroom, both an OverflowError traceback. The manifest's schema
    now bounds every integer at 2**53 - 1 (JSON's exact integers, as capidx.yaml's budgets), so it is exit 2."""
    import shutil

    forged = tmp_path / "forged"
    shutil.copytree(builds["base"], forged)

    def enlarge(manifest: dict[str, Any]) -> None:
        row = manifest["artifacts"][0]
        row["tokens"] = {encoding: 10**400 for encoding in row["tokens"]}

    _rewrite_manifest(forged, enlarge)
    result = _report("--build", str(forged), *options)
    assert result.exit_code == 2, result.output
    assert "tokens.cl100k_base: 1000000" in result.output
    assert "Not a build manifest" in result.output


@pytest.mark.parametrize("output_format", FORMATS)
def test_records_of_agents_the_catalog_does_not_list_are_not_compared(
    builds: dict[str, Path], tmp_path: Path, output_format: str
) -> None:
    """A forged baseline's compare document of a capability the head drops ('hooks') adds records of agents its
    manifest's catalog does not list, named as a fork likes: they were counted ('available for ..., 5 of 3 agents')
    and their names quoted in every format, a mention ('@someone') in the Markdown a pull request's comment shows.
    Only the catalog's agents (slugs, by the manifest's schema) are read."""
    names = ["@someone", "<img src=x>", "[x](https://evil.example)", "www.evil.example"]

    def extra_agents(document: dict[str, Any]) -> bytes:
        document["agents"] += [{"agent": name, "available": True} for name in names]
        return json.dumps(document).encode("utf-8")

    forged = _planted_baseline(builds["base"], tmp_path / "extra", extra_agents, capability="hooks")
    output = _against(builds["head"], forged, output_format)
    assert "evil.example" not in output and "someone" not in output and "img src" not in output
    if output_format == "text":
        assert "hooks: available for claude-code (1 of 3 agents; 1 recorded)" in output


def test_no_github_mention_or_reference_is_live_in_markdown(builds: dict[str, Path], tmp_path: Path) -> None:
    """The Markdown report is posted as a pull request's comment: text from a forged build (here a tier) naming
    `@octocat`, `#12` or an issue's github.com address would notify that user or team or mark that issue. Every word
    shows as written, and none is a mention or reference."""
    mentions = "@octocat and @acme/team about #12, GH-7, owner/repo#3 and https://github.com/owner/repo/issues/1"

    def tier(document: dict[str, Any]) -> bytes:
        next(e for e in document["agents"] if e["agent"] == "vscode-copilot")["tier"] = mentions
        return json.dumps(document).encode("utf-8")

    output = _against(builds["head"], _planted_baseline(builds["base"], tmp_path / "forged", tier), "markdown")
    [line] = [line for line in output.splitlines() if "octocat" in line]
    for live in ("@octocat", "@acme", "#12", "GH-7", "#3", "github.com"):
        assert live not in line, (live, line)
    assert mentions.replace("#", "\\#") in line.replace("&#8203;", "")  # how GitHub shows it, '#' escaped


def test_a_backtick_in_a_forged_uri_does_not_end_its_code_span(builds: dict[str, Path], tmp_path: Path) -> None:
    """A document's URI is quoted in a code span, where GitHub reads no mention: a forged baseline's URI holding a
    backtick ended the span, and the `@octocat` and `#12` after it were live. The span is fenced by more backticks
    than the URI holds in a row."""
    import shutil

    forged = tmp_path / "forged"
    shutil.copytree(builds["base"], forged)

    def backticked(manifest: dict[str, Any]) -> None:
        row = next(row for row in manifest["artifacts"] if row["uri"].endswith("agents/claude-code"))
        row["uri"] += "` @octocat fixes #12 ``x"

    _rewrite_manifest(forged, backticked)
    output = _against(builds["head"], forged, "markdown")
    [line] = [line for line in output.splitlines() if "octocat" in line]
    assert "| ``` agents/claude-code` @octocat fixes #12 ``x ``` |" in line, line


def test_an_alias_added_or_removed_is_named(builds: dict[str, Path], tmp_path: Path) -> None:
    """An alias changes what a lookup resolves, and no compare document holds aliases: read from the match index.
    An alias-table change was missing from the data changes (the bundled catalog's `"add extension": "Plugins"`
    showed only among the changed documents)."""
    docs = documents()
    instructions = _capability(docs, "claude-code", "Custom Instructions")
    instructions["aliases"] = [*instructions.get("aliases", []), "house rules"]
    aliased = _build(tmp_path / "aliased", docs)

    text = _against(aliased, builds["base"])
    assert "Data changes against the baseline: 1 alias change" in text
    assert "custom-instructions: +1 alias ('house rules')" in text
    assert "custom-instructions: −1 alias ('house rules')" in _against(builds["base"], aliased)
    [item] = json.loads(_against(aliased, builds["base"], "json"))["data"]["sections"]["aliases"]["items"]
    assert (item["capability"], item["field"], item["added"], item["removed"]) == (
        "custom-instructions",
        "aliases",
        1,
        0,
    )


def test_a_baseline_without_a_match_index_still_compares_records(builds: dict[str, Path], tmp_path: Path) -> None:
    """Aliases are compared only when both builds' index can be read; the records' changes are said all the same."""
    import shutil

    older = tmp_path / "older"
    shutil.copytree(builds["base"], older)
    _rewrite_manifest(older, lambda m: m.update(artifacts=[a for a in m["artifacts"] if a["kind"] != "index"]))
    data = json.loads(_against(builds["head"], older, "json"))["data"]
    assert data["available"] is True and data["sections"]["aliases"]["count"] == 0
    assert data["sections"]["availability"]["count"] == 2
    # said, so that no alias change is not read as none
    assert data["aliasesNotCompared"] == "the baseline: no match index with every capability's aliases"
    assert data["summary"].endswith(
        "; aliases not compared (the baseline: no match index with every capability's aliases)"
    )
    assert "aliases not compared (the baseline: no match index with every capability's aliases)" in _against(
        builds["head"], older
    )
    assert json.loads(_against(builds["head"], builds["base"], "json"))["data"]["aliasesNotCompared"] is None


def test_a_match_index_without_each_capability_s_aliases_is_not_compared(
    builds: dict[str, Path], tmp_path: Path
) -> None:
    """An index whose rows lack `aliases` (as an older one may) would make every alias of the other build read as
    added: aliases are then not compared, and the report says so."""
    import shutil

    older = tmp_path / "older"
    shutil.copytree(builds["base"], older)
    match = older / "index" / "match.json"
    index = json.loads(match.read_text("utf-8"))
    for row in index["capabilities"]:
        row.pop("aliases", None)
    data = json.dumps(index).encode()
    match.write_bytes(data)

    def resign(manifest: dict[str, Any]) -> None:
        row = next(a for a in manifest["artifacts"] if a["kind"] == "index")
        row.update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())

    _rewrite_manifest(older, resign)
    result = json.loads(_against(builds["head"], older, "json"))["data"]
    assert result["aliasesNotCompared"] == "the baseline: no match index with every capability's aliases"
    assert result["sections"]["aliases"]["count"] == 0


def test_a_capability_renamed_with_its_records_unchanged_is_a_rename(builds: dict[str, Path], tmp_path: Path) -> None:
    """A new name is a new slug: the report said one capability removed and one added. With every record the same
    (agents, availability, traits, texts, sources) it is a rename; with a record's text changed too, it stays removed
    and added, as nothing then ties the two."""
    docs = documents()
    _capability(docs, "claude-code", "Hooks")["name"] = "Lifecycle Hooks"
    renamed = _build(tmp_path / "renamed", docs)
    text = _against(renamed, builds["base"])
    assert "Data changes against the baseline: 1 capability renamed" in text
    assert "hooks → lifecycle-hooks: Hooks → Lifecycle Hooks" in text
    sections = json.loads(_against(renamed, builds["base"], "json"))["data"]["sections"]
    assert sections["capabilitiesAdded"]["count"] == sections["capabilitiesRemoved"]["count"] == 0
    [item] = sections["capabilitiesRenamed"]["items"]
    assert (item["before"], item["after"], item["capability"], item["field"]) == (
        "hooks",
        "lifecycle-hooks",
        "lifecycle-hooks",
        "slug",
    )

    # The category is the capability's, not a record's: renamed and moved, both are said.
    moved = documents()
    _capability(moved, "claude-code", "Hooks").update(name="Lifecycle Hooks", category="agent-orchestration")
    sections = json.loads(_against(_build(tmp_path / "moved", moved), builds["base"], "json"))["data"]["sections"]
    assert sections["capabilitiesRenamed"]["count"] == 1
    [item] = [item for item in sections["traits"]["items"] if item["field"] == "category"]
    assert (item["capability"], item["before"], item["after"]) == (
        "lifecycle-hooks",
        "customization",
        "agent-orchestration",
    )

    # its aliases are compared old slug with new: a record's alias added with the rename is said
    _capability(docs, "claude-code", "Lifecycle Hooks")["aliases"] = ["event hooks"]
    realiased = _build(tmp_path / "realiased", docs)
    sections = json.loads(_against(realiased, builds["base"], "json"))["data"]["sections"]
    assert [item["capability"] for item in sections["capabilitiesRenamed"]["items"]] == ["lifecycle-hooks"]
    assert [item["text"] for item in sections["aliases"]["items"]] == ["lifecycle-hooks: +1 alias ('event hooks')"]

    _capability(docs, "claude-code", "Lifecycle Hooks")["description"] += " Also on session start."
    rewritten = _build(tmp_path / "rewritten", docs)
    sections = json.loads(_against(rewritten, builds["base"], "json"))["data"]["sections"]
    assert sections["capabilitiesRenamed"]["count"] == 0
    assert sections["capabilitiesAdded"]["count"] == sections["capabilitiesRemoved"]["count"] == 1
