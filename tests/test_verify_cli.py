"""`capidx verify` end to end through the CLI, against a local HTTP server (never the internet)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from verify_support import EXCERPT, PageServer, Route, document, serving, source, write_catalog

from capidx.cli import cli
from capidx.compiler.verify.content import parse_page

FAST = ["--allow-private", "--timeout", "0.5", "--rate-limit", "0", "--max-bytes", "16384", "--today", "2026-11-24"]


@pytest.fixture(scope="module")
def server() -> Iterator[PageServer]:
    with serving() as running:
        yield running


def _verify(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    with contextlib.chdir(cwd):
        return CliRunner().invoke(cli, ["verify", *args], env=env, catch_exceptions=False)


def _load(agents: Path, agent: str = "alpha") -> Any:
    return json.loads((agents / agent / "capabilities" / "current.json").read_text())


def _sources(agents: Path, agent: str = "alpha") -> list[dict[str, Any]]:
    return _load(agents, agent)["capabilities"][0]["sources"]


def test_dry_run_reports_every_failure_and_writes_nothing(tmp_path: Path, server: PageServer) -> None:
    agents = write_catalog(
        tmp_path,
        {
            "alpha": document(
                [source(server.url("/good")), source(server.url("/changed")), source(server.url("/missing"))]
            )
        },
    )
    before = (agents / "alpha/capabilities/current.json").read_bytes()
    result = _verify(tmp_path, "agents", *FAST)
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert "3 sources on 3 pages: 1 verified, 1 unsupported, 1 broken" in out
    assert "agents/alpha/capabilities/current.json:22:18: unsupported (ok)" in out
    assert "HTTP 404 Not Found" in out and "excerpt is not on the page" in out
    assert "status" in out and "client-error" in out and "total" in out  # the summary table
    assert '+          "verifiedDate": "2026-11-24",' in out and '+          "status": "modified"' in out
    assert (agents / "alpha/capabilities/current.json").read_bytes() == before
    assert "fetching pages" not in result.stderr  # no progress bar off a terminal


def test_write_records_a_date_only_where_earned(tmp_path: Path, server: PageServer) -> None:
    sources = [
        source(server.url("/good"), status="unknown"),
        source(server.url("/changed"), verifiedDate="2025-01-01"),
        source(server.url("/missing")),
        source(server.url("/broken"), status="active"),
        source(server.url("/good#configure-hooks"), "section"),
        source(server.url("/good#gone"), "section"),
        source(server.url("/pdf"), "dedicated"),
    ]
    agents = write_catalog(tmp_path, {"alpha": document(sources)})
    result = _verify(tmp_path, "agents", "--write", *FAST)
    assert result.exit_code == 1, result.output
    assert "wrote" in result.stdout and "--- a/" not in result.stdout
    good, changed, missing, broken, section, gone, pdf = _sources(agents)
    assert (good["verifiedDate"], good["status"]) == ("2026-11-24", "active")
    assert (changed["verifiedDate"], changed["status"]) == ("2025-01-01", "modified")  # old date kept, none given
    assert "verifiedDate" not in missing and missing["status"] == "unknown"
    assert broken == sources[3]  # a 500 may pass: nothing recorded
    assert (section["verifiedDate"], section["status"]) == ("2026-11-24", "active")
    assert "verifiedDate" not in gone and gone["status"] == "modified"
    assert pdf == sources[6]


def test_fix_redirects_replaces_only_permanent_redirects(tmp_path: Path, server: PageServer) -> None:
    sources = [
        source(server.url("/moved#configure-hooks"), "section"),
        source(server.url("/chain")),
        source(server.url("/temporary")),
    ]
    agents = write_catalog(tmp_path, {"alpha": document(sources)})
    assert _verify(tmp_path, "agents", "--write", *FAST).exit_code == 0
    assert [entry["url"] for entry in _sources(agents)] == [s["url"] for s in sources]
    result = _verify(tmp_path, "agents", "--write", "--fix-redirects", *FAST)
    assert result.exit_code == 0, result.output
    assert [entry["url"] for entry in _sources(agents)] == [
        server.url("/good#configure-hooks"),
        server.url("/good"),
        server.url("/temporary"),
    ]


@pytest.mark.parametrize(
    ("paths", "fail_on", "code"),
    [
        (["/changed"], "broken", 0),
        (["/changed"], "stale", 1),
        (["/pdf"], "stale", 1),
        (["/good"], "stale", 0),
        (["/missing"], "broken", 1),
        (["/missing", "/loop-a"], "never", 0),
    ],
)
def test_fail_on(tmp_path: Path, server: PageServer, paths: list[str], fail_on: str, code: int) -> None:
    write_catalog(tmp_path, {"alpha": document([source(server.url(path)) for path in paths])})
    result = _verify(tmp_path, "agents", "--fail-on", fail_on, *FAST)
    assert result.exit_code == code, result.output


def test_slow_oversized_and_looping_pages_are_broken(tmp_path: Path, server: PageServer) -> None:
    paths = ["/slow", "/huge", "/huge-unannounced", "/loop-a"]
    write_catalog(tmp_path, {"alpha": document([source(server.url(path)) for path in paths])})
    result = _verify(tmp_path, "agents", "--format", "json", *FAST)
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert [entry["statusClass"] for entry in report["sources"]] == [
        "timeout",
        "too-large",
        "too-large",
        "redirect-loop",
    ]
    assert {entry["outcome"] for entry in report["sources"]} == {"broken"}


def _page(body: bytes) -> dict[str, Route]:
    return {"/page": Route(body=body, headers={"Content-Type": "text/html"})}


def _verified(tmp_path: Path, page: bytes, options: list[str] = FAST) -> None:
    """A catalog whose one source is `page`, served as HTML, is verified: the run reads it to its end."""
    with serving(_page(page)) as server:
        write_catalog(tmp_path, {"alpha": document([source(server.url("/page"))])})
        result = _verify(tmp_path, "agents", *options)
    assert result.exit_code == 0, result.output
    assert "1 source on 1 page: 1 verified" in result.stdout


def test_a_page_with_a_marked_section_python_does_not_know_is_still_read(tmp_path: Path) -> None:
    """`<![x` made Python 3.11's parser raise AssertionError out of `feed`: one such page (a source's URL is anyone's)
    ended the whole run with a traceback, no source reported."""
    page = f"<html><body><p>{EXCERPT}</p><![x <![<![ ]></body></html>".encode()
    _verified(tmp_path, page)


@pytest.mark.parametrize("charset", ["base64", "zlib", "idna", "undefined"])
def test_a_page_naming_a_codec_that_is_no_text_encoding_is_read_as_utf_8(tmp_path: Path, charset: str) -> None:
    """The page names its charset, and Python knows codecs that are no text encoding (`base64`: LookupError from
    `decode`) or refuse the `replace` handler (`idna`: UnicodeError): one such page ended the run with a traceback."""
    page = f"<html><head><meta charset={charset}></head><body><p>{EXCERPT}</p></body></html>".encode()
    _verified(tmp_path, page)


def test_a_page_ending_inside_an_unclosed_tag_is_read_without_it(tmp_path: Path) -> None:
    """Python 3.11's parser read a tag, comment or declaration still open at the end of a page as text, restarting
    its scan at each `<` of it: quadratic (100,000 `<a`, 200 KB, took 45 s; the 5 MB `--max-bytes` allows by default,
    hours). Such an end is dropped, as HTML drops it: none of it is the page's text."""
    for end in (b"<a" * 5, b"<!-- open comment", b'<a href="x', b"<!DOCTYPE x"):
        page = parse_page(b"<html><body><p>hello world</p>" + end, "text/html")
        assert page.text == "hello world", end
    page = f"<html><body><p>{EXCERPT}</p>".encode() + b"<a" * 20_000
    _verified(tmp_path, page, [*FAST[:-4], "--max-bytes", "1048576", *FAST[-2:]])  # FAST's 16 KiB would refuse it


def test_loopback_refused_without_allow_private(tmp_path: Path) -> None:
    with serving() as quiet:
        agents = write_catalog(tmp_path, {"alpha": document([source(quiet.url("/good"))])})
        before = (agents / "alpha/capabilities/current.json").read_bytes()
        result = _verify(tmp_path, "agents", "--write", "--rate-limit", "0", "--today", "2026-11-24")
        assert quiet.seen() == []
    assert result.exit_code == 1
    assert "blocked" in result.stdout and "loopback" in result.stdout
    assert (agents / "alpha/capabilities/current.json").read_bytes() == before


def test_each_page_fetched_once(tmp_path: Path) -> None:
    with serving() as counted:
        url = counted.url("/good")
        sources = [source(url), source(url + "#hooks", "section"), source(url + "#legacy-anchor", "dedicated")]
        write_catalog(tmp_path, {"alpha": document(sources), "beta": document([source(url)])})
        result = _verify(tmp_path, "agents", *FAST)
        assert result.exit_code == 0, result.output
        assert [method for method, _, _ in counted.seen("/good")] == ["HEAD", "GET"]
    assert "4 sources on 1 page: 4 verified" in result.stdout


def test_agent_option_limits_the_run(tmp_path: Path) -> None:
    with serving() as counted:
        write_catalog(
            tmp_path,
            {"alpha": document([source(counted.url("/good"))]), "beta": document([source(counted.url("/changed"))])},
        )
        result = _verify(tmp_path, "--agent", "beta", "--agents", "agents", *FAST)
        assert result.exit_code == 0, result.output
        assert {path for _, path, _ in counted.seen()} == {"/changed"}
    unknown = _verify(tmp_path, "--agent", "gamma", "--agents", "agents", *FAST)
    assert unknown.exit_code == 2 and "gamma" in unknown.output and "alpha, beta" in unknown.output


@pytest.mark.parametrize(
    ("given", "meant"),
    [("acme", "acme-coder"), ("acme-codr", "acme-coder"), ("Zeta-Pilot", "zeta-pilot"), ("a", None), ("omega", None)],
    ids=["beginning", "one-edit", "case", "begins-two", "nothing-near"],
)
def test_an_unknown_agent_names_the_one_meant(tmp_path: Path, given: str, meant: str | None) -> None:
    """`--agent acme` listed the agents and left the reader to see that acme-coder begins so; the one agent id it
    begins, or one edit (or a case) away, is offered. Nothing is fetched."""
    agents = ["acme-coder", "zeta-pilot", "alpha"]
    write_catalog(tmp_path, {agent: document([source("http://127.0.0.1:9/never")]) for agent in agents})

    result = _verify(tmp_path, "--agent", given, "--agents", "agents", *FAST)

    assert result.exit_code == 2, result.output
    listed = "agents: acme-coder, alpha, zeta-pilot)"
    said = f"(did you mean '{meant}'? {listed}" if meant else f"({listed}"
    assert f"no capability document for agent '{given}' {said}" in result.output


def test_default_catalog_comes_from_capidx_yaml(tmp_path: Path, server: PageServer) -> None:
    write_catalog(tmp_path / "data", {"alpha": document([source(server.url("/good"))])})
    (tmp_path / "capidx.yaml").write_text("paths:\n  agents: data/agents\n")
    result = _verify(tmp_path, *FAST)
    assert result.exit_code == 0, result.output
    assert "1 source on 1 page: 1 verified" in result.stdout


def test_markdown_and_github_formats(tmp_path: Path, server: PageServer) -> None:
    write_catalog(tmp_path, {"alpha": document([source(server.url("/good")), source(server.url("/missing"))])})
    markdown = _verify(tmp_path, "agents", "--format", "markdown", *FAST)
    assert markdown.stdout.startswith("## capidx verify")
    assert "| client-error | 1 |" in markdown.stdout and "```diff" in markdown.stdout
    summary = tmp_path / "summary.md"
    github = _verify(tmp_path, "agents", "--format", "github", *FAST, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert github.exit_code == 1
    assert github.stdout.startswith("::error file=agents/alpha/capabilities/current.json,line=22,")
    assert summary.read_text().startswith("## capidx verify")


def test_the_job_summary_shows_no_image_or_link_from_the_data(tmp_path: Path, server: PageServer) -> None:
    """A capability named with image syntax showed a live image on the job's page; a fence in the data could end the
    diff's code block early."""
    name = "Hooks ![x](https://attacker.example/p.png)"
    fenced = source(server.url("/missing"), description="``` a fence in the data")  # beside the line the diff changes
    write_catalog(tmp_path, {"alpha": document([fenced], name=name)})
    markdown = _verify(tmp_path, "agents", "--format", "markdown", *FAST).stdout
    assert "attacker.example/p.png" in markdown and "](https://attacker" not in markdown
    assert "``` a fence in the data" in markdown and "\n````diff\n" in markdown  # a longer fence than the data's


def test_github_annotations_are_grouped_and_capped(tmp_path: Path, server: PageServer) -> None:
    documents = {
        f"agent{index:02}": document([source(server.url("/missing")), source(server.url("/changed"))])
        for index in range(12)
    }
    write_catalog(tmp_path, documents)
    result = _verify(tmp_path, "agents", "--format", "github", *FAST, env={"GITHUB_STEP_SUMMARY": ""})
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert len(annotations) == 10
    assert annotations[-1].startswith("::error title=capidx verify::") and "more failing sources" in annotations[-1]


def test_yaml_catalog_round_trip(tmp_path: Path, server: PageServer) -> None:
    folder = tmp_path / "agents" / "alpha" / "capabilities"
    folder.mkdir(parents=True)
    text = f"""# kept
agent: {{name: A, vendor: V, version: '1', lastUpdated: 2026-01-01T00:00:00Z}}
capabilities:
  - name: Hooks
    sources:
      - url: {server.url("/good")}   # kept too
        description: d
        sourceGranularity: excerpt
        excerpt: >-
          {EXCERPT}
      - url: {server.url("/changed")}
        description: d
        sourceGranularity: excerpt
        excerpt: "{EXCERPT}"
        status: unknown
"""
    (folder / "current.yaml").write_text(text)
    result = _verify(tmp_path, "agents", "--write", *FAST)
    assert result.exit_code == 0, result.output
    expected = text.replace(
        f"          {EXCERPT}\n", f"          {EXCERPT}\n        verifiedDate: 2026-11-24\n        status: active\n"
    ).replace("status: unknown", "status: modified")
    assert (folder / "current.yaml").read_text() == expected


@pytest.mark.parametrize(
    ("content", "message"),
    [('{"capabilities": [}', "current.json:1:"), ("[1, 2", "current.json")],
)
def test_unreadable_document_is_a_usage_error(tmp_path: Path, content: str, message: str) -> None:
    folder = tmp_path / "agents" / "alpha" / "capabilities"
    folder.mkdir(parents=True)
    (folder / "current.json").write_text(content)
    result = _verify(tmp_path, "agents", *FAST)
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


def test_missing_path_and_bad_option(tmp_path: Path) -> None:
    assert _verify(tmp_path, "nowhere", *FAST).exit_code == 2
    assert _verify(tmp_path, "--fail-on", "sometimes").exit_code == 2
    assert _verify(tmp_path, "--timeout", "0").exit_code == 2


def test_validate_never_fetches(tmp_path: Path) -> None:
    with serving() as counted:
        write_catalog(tmp_path, {"alpha": document([source(counted.url("/good"))])})
        with contextlib.chdir(tmp_path):
            CliRunner().invoke(cli, ["validate", "agents"], catch_exceptions=False)
        assert counted.seen() == []


def test_listed_in_help() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert "verify" in result.output
    assert "--fail-on" in CliRunner().invoke(cli, ["verify", "--help"]).output


def test_the_weekly_workflow_in_ci_md() -> None:
    import re

    import yaml

    text = (Path(__file__).resolve().parents[1] / "docs" / "ci.md").read_text(encoding="utf-8")
    section = text[text.index("## Weekly source verification") :]
    workflow = yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.DOTALL).group(1))  # type: ignore[union-attr]
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "schedule" in triggers and "pull_request" not in triggers
    steps = workflow["jobs"]["verify"]["steps"]
    verify = next(step for step in steps if "capidx verify" in step.get("run", ""))
    assert "--write" in verify["run"] and "--format github" in verify["run"] and verify["continue-on-error"]
    assert any(step.get("uses", "").startswith("peter-evans/create-pull-request@") for step in steps)
    assert steps[-1]["if"] == "steps.verify.outcome == 'failure'"


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_progress_bar_on_a_terminal_only(tmp_path: Path, server: PageServer) -> None:
    import os
    import pty
    import subprocess

    write_catalog(tmp_path, {"alpha": document([source(server.url("/good"))])})
    primary, secondary = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-c", "from capidx.cli import main; main()", "verify", "agents", *FAST],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=secondary,
            timeout=120,
            check=False,
        )
    finally:
        os.close(secondary)
    terminal = b""
    with contextlib.suppress(OSError):  # EIO once the terminal's other side is closed
        while chunk := os.read(primary, 65536):
            terminal += chunk
    os.close(primary)
    assert done.returncode == 0, done.stdout
    assert b"fetching pages" in terminal and b"fetching pages" not in done.stdout


def test_only_the_verify_command_imports_the_verify_package() -> None:
    """`build` and `validate` must never reach the network: nothing but the command imports the package."""
    compiler = Path(__file__).resolve().parents[1] / "compiler"
    importers = {
        str(path.relative_to(compiler))
        for path in compiler.rglob("*.py")
        if "verify" not in path.relative_to(compiler).parts and "capidx.compiler.verify" in path.read_text()
    }
    assert importers == {"cli.py"}


def test_a_value_shared_through_a_yaml_alias_is_not_edited(tmp_path: Path, server: PageServer) -> None:
    folder = tmp_path / "agents" / "alpha" / "capabilities"
    folder.mkdir(parents=True)
    text = f"""agent: {{name: A, vendor: V, version: '1', lastUpdated: 2026-01-01T00:00:00Z}}
capabilities:
  - name: Hooks
    status: &shared unknown
    sources:
      - url: {server.url("/good")}
        description: d
        sourceGranularity: section
        status: *shared
"""
    (folder / "current.yaml").write_text(text)
    result = _verify(tmp_path, "agents", "--write", *FAST)
    assert result.exit_code == 2
    assert "agents/alpha/capabilities/current.yaml: not edited" in result.stdout
    assert (folder / "current.yaml").read_text() == text


def test_the_command_offers_what_the_package_implements() -> None:
    from capidx.compiler import cli as cli_verify
    from capidx.compiler.verify import report, run

    assert set(cli_verify.VERIFY_FORMATS) == set(report.RENDERERS) == set(report.FORMATS)
    assert cli_verify.FAIL_ON == run.FAIL_ON


def test_a_host_that_did_not_resolve_is_not_asked_or_waited_for_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Offline, five pages on one host were each waited for (a second apart, the rate limit) and resolved again, to
    fail the same way: the host is asked once, its other pages fail at once with the same reason."""
    asked: list[str] = []

    def no_dns(host: str, *_args: Any, **_kwargs: Any) -> Any:
        asked.append(host)
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    pages = [source(f"https://docs.one.example/page-{n}") for n in range(5)]
    write_catalog(tmp_path, {"alpha": document(pages)})
    # the default rate limit (one request a second per host); one page at a time, so the order is known
    result = _verify(tmp_path, "agents", "--concurrency", "1", "--today", "2026-11-24")
    assert result.exit_code == 1
    assert asked == ["docs.one.example"]
    assert result.stdout.count("cannot resolve docs.one.example") == 5, result.stdout


@pytest.mark.parametrize("hosts", [["docs.one.example", "two.example"], ["docs.one.example"]])
def test_when_no_host_name_resolves_the_report_suspects_the_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hosts: list[str]
) -> None:
    # No DNS at all (an offline machine): every URL fails the same way, and "check the URL" alone would send
    # the maintainer to edit URLs that are fine.
    def no_dns(*_args: Any, **_kwargs: Any) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    write_catalog(tmp_path, {"alpha": document([source(f"https://{host}/page") for host in hosts])})
    result = _verify(tmp_path, "agents", "--rate-limit", "0", "--today", "2026-11-24")
    assert result.exit_code == 1
    headline = result.stdout.splitlines()[0]
    assert "unresolved" in result.stdout
    if len(hosts) > 1:
        assert "none of 2 host names resolved: is this machine offline or without DNS?" in headline
        # and each source's line says the same, not "check the URL"
        assert "check the URL" not in result.stdout
        assert result.stdout.count("no host name resolved in this run: verify again where the network is") == 2
    else:  # one host that does not resolve says nothing about the machine
        assert "offline" not in result.stdout and "check the URL" in result.stdout


def test_write_to_a_document_whose_name_fits_a_folder_entry(tmp_path: Path, server: PageServer) -> None:
    """A name of 250 bytes fits the 255 a folder entry may have; the temporary file beside it was named after it
    with more added, so writing it failed (ENAMETOOLONG)."""
    agents = write_catalog(tmp_path, {"alpha": document([source(server.url("/good"), status="unknown")])})
    named = agents / "alpha" / "capabilities" / ("d" * 245 + ".json")
    assert len(os.fsencode(named.name)) == 250
    (agents / "alpha" / "capabilities" / "current.json").rename(named)
    result = _verify(tmp_path, str(named.relative_to(tmp_path)), "--write", *FAST)
    assert result.exit_code == 0, result.output
    assert json.loads(named.read_text())["capabilities"][0]["sources"][0]["verifiedDate"] == "2026-11-24"
    assert sorted(path.name for path in named.parent.iterdir()) == [named.name]  # nothing left beside it


def test_write_never_lets_others_read_a_document_only_its_owner_may(
    tmp_path: Path, server: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new text goes to a temporary file before it is renamed over the document: made with the umask's mode
    (0644), that file let anyone open it, and keep reading, while the text of a document of mode 0600 was written
    into it. It is made for the owner alone, and given the document's mode once written."""
    agents = write_catalog(tmp_path, {"alpha": document([source(server.url("/good"), status="unknown")])})
    named = agents / "alpha" / "capabilities" / "current.json"
    named.chmod(0o600)
    made: list[int] = []
    real_open = os.open

    def spy(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        descriptor = real_open(path, flags, *args, **kwargs)
        if flags & os.O_CREAT:
            made.append(stat.S_IMODE(os.fstat(descriptor).st_mode))
        return descriptor

    monkeypatch.setattr(os, "open", spy)
    umask = os.umask(0o022)
    try:
        result = _verify(tmp_path, "agents", "--write", *FAST)
    finally:
        os.umask(umask)
    assert result.exit_code == 0, result.output
    assert _sources(agents)[0]["verifiedDate"] == "2026-11-24"
    assert made and all(mode & 0o077 == 0 for mode in made), [oct(mode) for mode in made]
    assert stat.S_IMODE(named.stat().st_mode) == 0o600
