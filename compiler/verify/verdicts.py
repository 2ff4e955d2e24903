"""Evidence -> verdict: pure functions deciding whether a source still supports its claim, and why not.

A verdict has an `outcome` (what `--write` and `--fail-on` act on), the `status_class` of the page
(how it answered), and a `reason` a person can act on. Outcomes:

- `verified`: the page answered 2xx and says what the source claims (excerpt, anchor, or a mention
  of the capability). Only this earns a `verifiedDate` and `status: active`.
- `unsupported`: the page is there but the claim is not (excerpt gone, anchor gone, capability not
  mentioned): the source's `status` becomes `modified`.
- `unchecked`: the page is there but cannot be checked: its content is not text (a PDF, an image),
  or the source lacks what it would be checked against (no excerpt, an unknown granularity). No
  date, no status change.
- `broken`: no usable page (an HTTP error, a network failure, a refused address, too large, a redirect
  loop). A page that is gone (404, 410) gets `status: unknown`; a failure that may pass (a timeout, a
  5xx) leaves the status alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from http import HTTPStatus

from capidx.compiler.verify.content import Page, find_excerpt, has_anchor, mentions
from capidx.compiler.verify.fetch import FetchResult
from capidx.compiler.verify.sources import Source

OUTCOMES = ("verified", "unsupported", "unchecked", "broken")
GRANULARITIES = ("excerpt", "section", "dedicated")
STATUS_CLASSES = (
    "ok",
    "redirected",
    "client-error",
    "server-error",
    "timeout",
    "tls-error",
    "refused",
    "unresolved",
    "blocked",
    "too-large",
    "redirect-loop",
    "invalid-url",
    "network-error",
)
_GONE = frozenset({404, 410})
_TEXT_TYPES = ("text/", "application/xhtml+xml", "application/xml", "application/json")

UNRESOLVED_ADVICE = "the host name does not exist (any more); check the URL"
# Said instead when no host name of a run resolved: the machine, not each URL, is the likelier cause.
OFFLINE_ADVICE = "no host name resolved in this run: verify again where the network is reachable"
_FAILURE_ADVICE = {
    "timeout": "try again later, or give it more time with --timeout",
    "tls-error": "the site's certificate or TLS setup is broken; check the URL's host",
    "refused": "nothing listens there; check the URL's host and port",
    "unresolved": UNRESOLVED_ADVICE,
    "blocked": "a catalog must cite public pages",
    "too-large": "cite a smaller page (a section of it), or check the URL",
    "redirect-loop": "the site redirects in a circle; find the page's real address",
    "too-many-redirects": "find the page's real address",
    "invalid-url": "fix the url",
    "network-error": "try again later",
}


@dataclass(frozen=True)
class Verdict:
    source: Source
    outcome: str
    status_class: str
    reason: str
    http_status: int | None = None
    final_url: str | None = None
    new_status: str | None = None  # what --write sets `status` to (None: leave it)
    new_url: str | None = None  # what --fix-redirects sets `url` to (a permanent redirect's target)

    @property
    def passed(self) -> bool:
        return self.outcome == "verified"


def status_class(result: FetchResult) -> str:
    """How a page answered, in one word (the summary table's rows)."""
    if result.outcome == "ok":
        return "redirected" if result.redirected else "ok"
    if result.outcome == "http-error":
        return "server-error" if (result.status or 0) >= 500 else "client-error"
    return "redirect-loop" if result.outcome == "too-many-redirects" else result.outcome


def judge(source: Source, result: FetchResult, page: Page | None) -> Verdict:
    """The verdict on one source, from its page's fetch result and (for a 2xx text page) its content."""
    klass = status_class(result)
    if result.outcome != "ok":
        return _broken(source, result, klass)
    new_url = _redirect_target(source, result)
    moved = f"; redirected to {result.final_url}" if result.redirected else ""
    incomplete = _incomplete(source)
    if incomplete is not None:  # the data, not the page, is lacking: no status change
        return Verdict(source, "unchecked", klass, incomplete + moved, result.status, result.final_url, None, new_url)
    if page is None:
        reason = f"the page is {result.content_type or 'not text'}; its content cannot be checked{moved}"
        return Verdict(source, "unchecked", klass, reason, result.status, result.final_url, None, new_url)
    problem = content_problem(source, page)
    if problem is not None:
        return Verdict(
            source, "unsupported", klass, problem + moved, result.status, result.final_url, "modified", new_url
        )
    reason = _confirmation(source, page) + moved
    if new_url:
        reason += " (permanent: --fix-redirects updates the url)"
    return Verdict(source, "verified", klass, reason, result.status, result.final_url, "active", new_url)


def is_text(content_type: str) -> bool:
    """Whether a body can be read as text (no Content-Type at all: assume it can)."""
    media = content_type.split(";", 1)[0].strip().lower()
    return not media or media.startswith(_TEXT_TYPES) or media.endswith(("+xml", "+json"))


def _incomplete(source: Source) -> str | None:
    """What the source lacks for its page to be checked against it, or None."""
    if source.granularity not in GRANULARITIES:
        return f"sourceGranularity {source.granularity!r} is not one of {', '.join(GRANULARITIES)}: nothing to check"
    if source.granularity == "excerpt" and not source.excerpt:
        return "sourceGranularity is excerpt but the source has no excerpt: add the passage it relies on"
    return None


def content_problem(source: Source, page: Page) -> str | None:
    """Why the page does not support the source, or None when it does."""
    if source.fragment and not has_anchor(page, source.fragment):
        return f"the page has no anchor #{source.fragment}: point the url at the section's current anchor"
    if source.granularity == "excerpt" and source.excerpt:
        if not find_excerpt(page, source.excerpt):
            return "the excerpt is not on the page: find the passage's current wording and update excerpt (or url)"
    elif source.granularity in ("section", "dedicated") and mentions(page, list(source.names)) is None:
        named = ", ".join(repr(name) for name in source.names) or "the capability"
        return f"the page mentions none of {named}: check that it still covers this capability"
    return None


def _confirmation(source: Source, page: Page) -> str:
    found = []
    if source.fragment:
        found.append(f"anchor #{source.fragment} found")
    if source.granularity == "excerpt":
        found.append("excerpt found")
    elif source.granularity in ("section", "dedicated"):
        found.append(f"mentions {mentions(page, list(source.names))!r}")
    return ", ".join(found) or "page reachable"


def _redirect_target(source: Source, result: FetchResult) -> str | None:
    """The URL to record instead, when every redirect was permanent; the source's fragment is kept
    unless the target has its own (browsers do the same)."""
    if not result.permanent or not result.final_url:
        return None
    target = result.final_url
    if source.fragment and "#" not in target:
        target = f"{target}#{source.fragment}"
    return target if target != source.url else None


def _broken(source: Source, result: FetchResult, klass: str) -> Verdict:
    if result.outcome == "http-error":
        status = result.status or 0
        phrase = _phrase(status)
        if status in _GONE:
            advice = "the page is gone: find where it moved and update url"
        elif status >= 500:
            advice = "the server failed: try again later"
        elif status in (401, 403):
            advice = "the server refuses the request (it may block automated clients): check the page in a browser"
        elif status == 429:
            advice = "the site limits requests: try again later"
        else:
            advice = "the server refuses the page: check the url"
        where = f" (after redirects, at {result.final_url})" if result.redirected else ""
        reason = f"HTTP {status}{phrase}{where}: {advice}"
        new_status = "unknown" if status in _GONE else None
        return Verdict(source, "broken", klass, reason, status, result.final_url, new_status)
    advice = _FAILURE_ADVICE.get(result.outcome, "check the url")
    return Verdict(source, "broken", klass, f"{result.detail}: {advice}", None, None)


def _phrase(status: int) -> str:
    try:
        return f" {HTTPStatus(status).phrase}"
    except ValueError:
        return ""
