"""Records that validate used to accept without a word: a repeated or self-naming alias, a page cited twice by one
record, and plan or maturity labels on a capability the agent lacks (docs/data-format.md's conventions)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import documents, run_cli, write_catalog

NEW_CODES = ("alias-repeated", "alias-own-name", "source-repeated", "unavailable-label")


def diagnostics_of(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
    """What `capidx validate -v --format json` says once `edit` has changed Claude Code's document; the run must
    pass (warnings do not fail it)."""
    docs = documents()
    edit(docs["claude-code"])
    write_catalog(tmp_path, docs)
    result = run_cli(["validate", "-v", "--format", "json"], tmp_path)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["diagnostics"]


def warnings_of(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
    """The new warnings once `edit` has changed Claude Code's document."""
    return [problem for problem in diagnostics_of(tmp_path, edit) if problem["code"] in NEW_CODES]


def mcp(document: dict[str, Any]) -> dict[str, Any]:
    return document["capabilities"][0]  # MCP Servers: available, with aliases, two sources, tier and maturityLevel


def said(problems: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(problem["code"], problem["severity"], problem["pointer"]) for problem in problems]


def test_an_unchanged_catalog_gets_none_of_these_warnings(tmp_path: Path) -> None:
    assert warnings_of(tmp_path, lambda document: None) == []


@pytest.mark.parametrize("repeat", ["tool servers", "Tool  Servers", "tool-servers"])
def test_an_alias_given_twice_in_one_record_is_warned_at_the_repeat(tmp_path: Path, repeat: str) -> None:
    found = warnings_of(tmp_path, lambda document: mcp(document)["aliases"].append(repeat))
    assert said(found) == [("alias-repeated", "warning", "$.capabilities[0].aliases[2]")]
    assert "first as aliases[1]" in found[0]["message"] and "remove the repeat" in found[0]["hint"]
    assert found[0]["line"] and found[0]["col"]


@pytest.mark.parametrize("alias", ["MCP Servers", "mcp servers", "mcp-servers"])
def test_an_alias_that_is_the_record_s_own_name_is_warned(tmp_path: Path, alias: str) -> None:
    found = warnings_of(tmp_path, lambda document: mcp(document)["aliases"].insert(0, alias))
    assert said(found) == [("alias-own-name", "warning", "$.capabilities[0].aliases[0]")]
    assert "own name 'MCP Servers'" in found[0]["message"] and found[0]["hint"].startswith("remove it")


def test_one_alias_repeated_and_naming_the_record_is_said_once_as_its_name(tmp_path: Path) -> None:
    found = warnings_of(tmp_path, lambda document: mcp(document)["aliases"].extend(["MCP Servers", "mcp servers"]))
    assert [code for code, _, _ in said(found)] == ["alias-own-name", "alias-own-name"]


def test_a_page_cited_twice_by_one_record_is_warned_at_the_second_url(tmp_path: Path) -> None:
    def cite_twice(document: dict[str, Any]) -> None:
        first = dict(mcp(document)["sources"][0])
        mcp(document)["sources"].append({**first, "verifiedDate": "2026-01-11"})

    found = warnings_of(tmp_path, cite_twice)
    assert said(found) == [("source-repeated", "warning", "$.capabilities[0].sources[2].url")]
    assert "first as sources[0]" in found[0]["message"] and "cite each page once" in found[0]["hint"]


def test_one_page_cited_by_two_records_is_no_repeat(tmp_path: Path) -> None:
    def cite_elsewhere(document: dict[str, Any]) -> None:
        document["capabilities"][3]["sources"] = [dict(mcp(document)["sources"][0])]

    assert warnings_of(tmp_path, cite_elsewhere) == []


def test_labels_on_an_unavailable_capability_are_warned_each_at_its_key(tmp_path: Path) -> None:
    def lacks(document: dict[str, Any]) -> None:
        mcp(document)["available"] = False

    found = warnings_of(tmp_path, lacks)
    assert said(found) == [
        ("unavailable-label", "warning", f"$.capabilities[0].{key}") for key in ("tier", "maturityLevel", "status")
    ]
    assert all("docs/data-format.md" in problem["hint"] for problem in found)


def test_limitations_on_an_unavailable_capability_are_not_warned(tmp_path: Path) -> None:
    """The convention names tier, maturityLevel and status; what an absent capability lacks may be recorded."""

    def lacks(document: dict[str, Any]) -> None:
        record = mcp(document)
        record["available"] = False
        for key in ("tier", "maturityLevel", "status"):
            del record[key]
        assert record["limitations"]

    assert warnings_of(tmp_path, lacks) == []


def test_two_capabilities_with_one_description_get_none_of_these_warnings(tmp_path: Path) -> None:
    def same_words(document: dict[str, Any]) -> None:
        document["capabilities"][3]["description"] = mcp(document)["description"]

    assert warnings_of(tmp_path, same_words) == []


def test_the_text_report_places_each_warning_and_says_what_to_do(tmp_path: Path) -> None:
    docs = documents()
    mcp(docs["claude-code"])["aliases"].append("tool servers")
    write_catalog(tmp_path, docs)
    result = run_cli(["validate", "-v"], tmp_path)
    assert result.exit_code == 0, result.output
    (line,) = [line for line in result.output.splitlines() if "given twice" in line]
    assert line.startswith("agents/claude-code/capabilities/current.json:")
    assert "$.capabilities[0].aliases[2]: warning: alias 'tool servers'" in line and "(remove the repeat" in line
    strict = run_cli(["validate", "--strict", "-q"], tmp_path)
    assert strict.exit_code == 1 and "given twice" in strict.output


def uncited_warnings(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
    """`no-sources` warnings at Claude Code's MCP Servers once `edit` has changed it (the factory's catalog has
    available records citing nothing elsewhere: Hooks, Custom Instructions, …)."""
    return [
        problem
        for problem in diagnostics_of(tmp_path, edit)
        if problem["code"] == "no-sources"
        and problem["path"].startswith("agents/claude-code/")
        and problem["pointer"] == "$.capabilities[0]"
    ]


@pytest.mark.parametrize("cites", ["no key", "empty list"])
def test_an_available_record_citing_nothing_is_warned_at_the_record(tmp_path: Path, cites: str) -> None:
    """A claim with no source gets at least the attention of one with an unverified source (`never-verified`)."""

    def uncited(document: dict[str, Any]) -> None:
        if cites == "no key":
            del mcp(document)["sources"]
        else:
            mcp(document)["sources"] = []

    assert uncited_warnings(tmp_path, lambda document: None) == []
    found = uncited_warnings(tmp_path, uncited)
    assert said(found) == [("no-sources", "warning", "$.capabilities[0]")]
    assert found[0]["message"] == "available capability 'MCP Servers' cites no source"
    assert "add sources" in found[0]["hint"] and "available: false" in found[0]["hint"]
    assert found[0]["line"] and found[0]["col"]
    text = run_cli(["validate"], tmp_path)
    (line,) = [line for line in text.output.splitlines() if "'MCP Servers' cites no source" in line]
    assert line.startswith("agents/claude-code/capabilities/current.json:") and ": $.capabilities[0]: warning:" in line
    strict = run_cli(["validate", "--strict", "-q"], tmp_path)
    assert (
        strict.exit_code == 1
        and ": $.capabilities[0]: available capability 'MCP Servers' cites no source" in strict.output
    )


def test_an_unavailable_record_citing_nothing_is_not_warned(tmp_path: Path) -> None:
    def absent(document: dict[str, Any]) -> None:
        for key in ("tier", "maturityLevel", "status"):
            mcp(document).pop(key, None)
        mcp(document)["available"] = False
        del mcp(document)["sources"]

    assert uncited_warnings(tmp_path, absent) == []


def placeholder_warnings(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
    docs = documents()
    edit(docs["claude-code"])
    write_catalog(tmp_path, docs)
    result = run_cli(["validate", "-v", "--format", "json"], tmp_path)
    assert result.exit_code == 0, result.output
    return [problem for problem in json.loads(result.stdout)["diagnostics"] if problem["code"] == "placeholder-url"]


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://example.com/replace-with-the-page", "example.com"),
        ("https://docs.Example.ORG/page", "docs.example.org"),
        ("http://example.net./x", "example.net"),
        ("https://vendor.example/docs", "vendor.example"),
        ("https://docs.acme.test/mcp", "docs.acme.test"),
        ("https://nothing.invalid/", "nothing.invalid"),
        ("http://localhost:8080/docs", "localhost"),
        ("https://app.localhost/docs", "app.localhost"),
    ],
)
def test_a_source_url_on_a_reserved_example_domain_is_warned_at_the_url(tmp_path: Path, url: str, host: str) -> None:
    assert placeholder_warnings(tmp_path, lambda document: None) == []
    found = placeholder_warnings(tmp_path, lambda document: mcp(document)["sources"][0].update(url=url))
    assert said(found) == [("placeholder-url", "warning", "$.capabilities[0].sources[0].url")]
    assert found[0]["message"].startswith(f"placeholder URL: '{host}' is a domain reserved for examples")
    assert found[0]["hint"] == "replace it with the page that states the fact"
    assert found[0]["line"] and found[0]["col"]
    text = run_cli(["validate"], tmp_path)
    (line,) = [line for line in text.output.splitlines() if "placeholder URL" in line]
    assert line.startswith("agents/claude-code/capabilities/current.json:")
    assert ": $.capabilities[0].sources[0].url: warning: placeholder URL" in line


@pytest.mark.parametrize(
    "url",
    [
        "https://example.community/docs",
        "https://notexample.com/",
        "https://example.com.evil.io/",
        "https://testing.dev/",
    ],
)
def test_a_real_domain_that_looks_like_an_example_is_not_warned(tmp_path: Path, url: str) -> None:
    assert placeholder_warnings(tmp_path, lambda document: mcp(document)["sources"][0].update(url=url)) == []


def test_a_warning_about_a_source_names_its_capability_and_keeps_its_place(tmp_path: Path) -> None:
    """`$.capabilities[7].sources[0]` alone does not tell a reviewer of a CI log which capability it is: every message
    about a source names it (quoted and escaped as catalog text is), while `path:line:col: $.pointer: ` and the github
    format's `file=…,line=…,col=…,title=capidx <code>::` stay as editors and GitHub parse them."""
    docs = documents()
    hooks = docs["claude-code"]["capabilities"][3]
    hooks["name"] = "Hooks\u202e"  # a bidi control: an error of its own, and escaped wherever the name is quoted
    hooks["sources"] = [
        {"url": "https://docs.acme.dev/hooks", "description": "Hooks guide", "sourceGranularity": "section"},
        {"url": "https://docs.acme.dev/hooks", "description": "Hooks again", "sourceGranularity": "excerpt"},
    ]
    mcp(docs["claude-code"])["sources"][0]["url"] = "https://docs.example.com/mcp"
    write_catalog(tmp_path, docs)
    result = run_cli(["validate", "-v", "--format", "json", "--today", "2026-01-15"], tmp_path)
    found = json.loads(result.stdout)["diagnostics"]
    about_sources = {
        (problem["code"], problem["pointer"]): problem["message"]
        for problem in found
        if problem["path"].startswith("agents/claude-code/") and ".sources[" in problem["pointer"]
    }
    assert about_sources == {
        (
            "never-verified",
            "$.capabilities[1].sources[0]",
        ): "source never verified, in capability 'Custom Instructions'",
        ("placeholder-url", "$.capabilities[0].sources[0].url"): (
            "placeholder URL: 'docs.example.com' is a domain reserved for examples, in capability 'MCP Servers'"
        ),
        ("stale", "$.capabilities[2].sources[0].verifiedDate"): (
            "stale: verified 228 days ago (over 90), in capability 'Subagents'"
        ),
        ("never-verified", "$.capabilities[3].sources[0]"): "source never verified, in capability 'Hooks\\u202e'",
        ("never-verified", "$.capabilities[3].sources[1]"): "source never verified, in capability 'Hooks\\u202e'",
        ("source-repeated", "$.capabilities[3].sources[1].url"): (
            "source 'https://docs.acme.dev/hooks' is cited twice (first as sources[0]), in capability 'Hooks\\u202e'"
        ),
        ("excerpt-required", "$.capabilities[3].sources[1].sourceGranularity"): (
            "sourceGranularity is 'excerpt' but there is no excerpt, in capability 'Hooks\\u202e'"
        ),
    }
    text = run_cli(["validate", "-v", "--today", "2026-01-15"], tmp_path).output.splitlines()
    assert (
        "agents/claude-code/capabilities/current.json:89:9: $.capabilities[1].sources[0]: warning: source never "
        "verified, in capability 'Custom Instructions' (check that it supports the claim, then add verifiedDate: "
        "YYYY-MM-DD)"
    ) in text
    github = run_cli(["validate", "--format", "github", "--today", "2026-01-15"], tmp_path).output.splitlines()
    (annotation,) = [line for line in github if "line=89,col=9," in line]  # grouped: the first names its own
    assert annotation.startswith("::warning file=agents/claude-code/capabilities/current.json,line=89,col=9,title=")
    assert "never-verified (3)::$.capabilities[1].sources[0]: source never verified, in capability " in annotation
    assert "'Custom Instructions' (check that it supports the claim" in annotation


@pytest.mark.parametrize(
    ("url", "hint"),
    [
        ("docs.vendor.dev/cli/hooks#setup", "the scheme is missing: write https://docs.vendor.dev/cli/hooks#setup"),
        ("github.com/owner/repo", "the scheme is missing: write https://github.com/owner/repo"),
        ("README.md", "write an absolute URI, starting with https:// (or http://)"),  # a file, not a host
        ("cli.md#hooks", "write an absolute URI, starting with https:// (or http://)"),
        ("v1.2.3", "write an absolute URI, starting with https:// (or http://)"),  # a version
        # it has its scheme: what keeps it from being a URI is named, not its start
        (
            'https://docs.vendor.dev/a b?x="<y>',
            "percent-encode what a URI cannot hold as it is: a space, '\"', '<', '>' (a space is %20)",
        ),
        (" https://docs.vendor.dev/hooks", "take out the space at its start or end"),  # not its scheme: the space
    ],
)
def test_an_address_without_its_scheme_is_told_the_address_with_it(tmp_path: Path, url: str, hint: str) -> None:
    """The hint offered `https://example.com/docs`, a domain validate itself warns about as a placeholder; an address
    that is a host and a path without `https://` is told the address with it, anything else how to start one."""
    docs = documents()
    mcp(docs["claude-code"])["sources"][0]["url"] = url
    write_catalog(tmp_path, docs)
    result = run_cli(["validate", "--format", "json"], tmp_path)
    assert result.exit_code == 1, result.output
    (problem,) = [p for p in json.loads(result.stdout)["diagnostics"] if p["pointer"].endswith("sources[0].url")]
    assert problem["hint"] == hint
