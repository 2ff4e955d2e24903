"""Page text, anchors and verdicts of `capidx verify` (pure functions, no network)."""

from __future__ import annotations

from pathlib import Path

import pytest

from capidx.compiler.verify.content import find_excerpt, has_anchor, mentions, normalize, parse_page
from capidx.compiler.verify.fetch import FetchResult, Hop
from capidx.compiler.verify.sources import Source, document_sources
from capidx.compiler.verify.verdicts import judge, status_class

HTML = b"""<html><head><title>T</title><style>p::after { content: "styled words" }</style></head><body>
<script>document.write("scripted words")</script><noscript>fallback words</noscript>
<h2 id="set-up">Set up</h2><a name="old-name"></a>
<p>Don&#8217;t   forget: the <code>--flag</code> turns
   it \xe2\x80\x9con\xe2\x80\x9d \xe2\x80\x94 see <a href="#x">the guide</a>.</p>
<p>Agent&nbsp;Skills are folders of instructions.</p>
</body></html>"""


def test_visible_text_drops_scripts_and_styles() -> None:
    page = parse_page(HTML, "text/html")
    assert "scripted words" not in page.text
    assert "styled words" not in page.text
    assert "fallback words" not in page.text
    assert "folders of instructions" in page.text


@pytest.mark.parametrize(
    "excerpt",
    [
        'Don\'t forget: the --flag turns it "on" - see the guide.',
        "DON’T FORGET: the --flag turns it “on” — see the guide.",
        "the --flag turns it ... see the guide",
        "Agent Skills are folders",
    ],
)
def test_excerpt_found_despite_typography_case_and_wrapping(excerpt: str) -> None:
    assert find_excerpt(parse_page(HTML, "text/html"), excerpt)


@pytest.mark.parametrize("excerpt", ["the --flag turns it off", "scripted words", "see the guide … turns it"])
def test_excerpt_not_found(excerpt: str) -> None:
    assert not find_excerpt(parse_page(HTML, "text/html"), excerpt)


def test_anchors_from_id_and_a_name() -> None:
    page = parse_page(HTML, "text/html")
    assert has_anchor(page, "set-up") and has_anchor(page, "old-name")
    assert not has_anchor(page, "setup")
    github = parse_page(b'<h2 id="user-content-usage">Usage</h2>', "text/html")
    assert has_anchor(github, "usage")


def test_charset_from_meta_and_plain_text() -> None:
    latin = parse_page('<meta charset="iso-8859-1"><p>déjà vu</p>'.encode("latin-1"), "text/html")
    assert "déjà vu" in latin.text
    plain = parse_page(b"<p>not parsed</p>", "text/plain")
    assert plain.text == "<p>not parsed</p>" and not plain.anchors


def test_mentions_name_alias_or_piece_of_terminology() -> None:
    page = parse_page(HTML, "text/html")
    assert mentions(page, ["Skills Catalog", "agent skills"]) == "agent skills"
    assert mentions(page, ["Plugins", "toolkits (instructions, prompts)"]) == "instructions"
    assert mentions(page, ["Skill"]) is None  # whole words only
    assert normalize("  A\u00a0B\n  C ") == "a b c"


def _source(url: str = "https://docs.test/page", granularity: str = "excerpt", excerpt: str | None = None) -> Source:
    return Source(
        path=Path("agents/a/capabilities/current.json"),
        agent="a",
        capability="Agent Skills",
        parts=("capabilities", 0, "sources", 0),
        url=url,
        granularity=granularity,
        excerpt=excerpt,
        names=("Agent Skills",),
        status="unknown",
        verified_date=None,
    )


def _ok(url: str = "https://docs.test/page", hops: tuple[Hop, ...] = ()) -> FetchResult:
    final = "https://docs.test/new" if hops else url
    return FetchResult(url, "ok", 200, final, hops, HTML, "text/html")


def test_verified_excerpt_earns_active() -> None:
    verdict = judge(_source(excerpt="Agent Skills are folders of instructions."), _ok(), parse_page(HTML, "text/html"))
    assert verdict.passed and verdict.new_status == "active" and verdict.status_class == "ok"


def test_missing_excerpt_is_modified_with_a_reason() -> None:
    verdict = judge(_source(excerpt="Skills are gone."), _ok(), parse_page(HTML, "text/html"))
    assert verdict.outcome == "unsupported" and verdict.new_status == "modified"
    assert "excerpt" in verdict.reason


def test_excerpt_granularity_without_excerpt_cannot_pass() -> None:
    verdict = judge(_source(), _ok(), parse_page(HTML, "text/html"))
    assert verdict.outcome == "unchecked" and "add the passage" in verdict.reason and verdict.new_status is None


def test_missing_anchor_fails_even_when_the_page_mentions_the_capability() -> None:
    verdict = judge(_source("https://docs.test/page#gone", "section"), _ok(), parse_page(HTML, "text/html"))
    assert verdict.outcome == "unsupported" and "#gone" in verdict.reason


def test_permanent_redirect_proposes_the_target_keeping_the_fragment() -> None:
    hops = (Hop("https://docs.test/page", 301, "HEAD"),)
    verdict = judge(_source("https://docs.test/page#set-up", "section"), _ok(hops=hops), parse_page(HTML, "text/html"))
    assert verdict.passed and verdict.status_class == "redirected"
    assert verdict.new_url == "https://docs.test/new#set-up"
    temporary = (Hop("https://docs.test/page", 302, "HEAD"),)
    assert judge(_source(granularity="dedicated"), _ok(hops=temporary), parse_page(HTML, "text/html")).new_url is None


@pytest.mark.parametrize(
    ("result", "klass", "new_status"),
    [
        (FetchResult("u", "http-error", 404), "client-error", "unknown"),
        (FetchResult("u", "http-error", 410), "client-error", "unknown"),
        (FetchResult("u", "http-error", 403), "client-error", None),
        (FetchResult("u", "http-error", 503), "server-error", None),
        (FetchResult("u", "timeout", detail="no answer"), "timeout", None),
        (FetchResult("u", "tls-error", detail="bad cert"), "tls-error", None),
        (FetchResult("u", "refused", detail="refused"), "refused", None),
        (FetchResult("u", "blocked", detail="loopback"), "blocked", None),
        (FetchResult("u", "too-many-redirects", detail="many"), "redirect-loop", None),
    ],
)
def test_broken_pages_never_pass(result: FetchResult, klass: str, new_status: str | None) -> None:
    verdict = judge(_source(granularity="dedicated"), result, None)
    assert verdict.outcome == "broken" and status_class(result) == klass
    assert verdict.new_status == new_status and verdict.reason


def test_unreadable_content_is_unchecked() -> None:
    result = FetchResult("u", "ok", 200, "u", (), b"%PDF", "application/pdf")
    verdict = judge(_source(granularity="dedicated"), result, None)
    assert verdict.outcome == "unchecked" and verdict.new_status is None


def test_sources_read_leniently() -> None:
    data = {
        "capabilities": [
            "not an object",
            {"name": "A", "sources": [{"url": "https://a.test/#x", "sourceGranularity": "section"}, {"no": "url"}]},
            {"name": "B", "sources": "not a list"},
        ]
    }
    found = document_sources(Path("x.json"), "x", data)
    assert [(s.parts, s.page_url, s.fragment) for s in found] == [
        (("capabilities", 1, "sources", 0), "https://a.test/", "x")
    ]


def test_unknown_granularity_is_unchecked_not_verified() -> None:
    verdict = judge(_source(granularity=""), FetchResult("u", "ok", 200, "u"), None)
    assert verdict.outcome == "unchecked" and "sourceGranularity" in verdict.reason and verdict.new_status is None
