"""The site's page in a real browser (issue 17, item 3): headless Chromium runs its script on the bundled build.

`--dump-dom` prints the DOM after the page's scripts ran: the matrix has one row per canonical capability and
one column per agent, filters given in the URL (the page reads `?q=…&category=…&tier=…&availability=…` and
the same after `#`) reduce the rows, `#agent=ID` shows one agent's cards and `#cap-SLUG` opens a row. Screenshots
(desktop and phone width) are written under pytest's tmp path: test artifacts, never committed.

Without a browser these tests skip, saying how to install one, unless CAPIDX_REQUIRE_BROWSER=1 (.ci/run sets it,
after installing the browser when missing), which makes a missing browser a failure. CAPIDX_BROWSER=/abs/path
names another Chromium (tests/test_site_browser_missing.py uses it to check the skip and the failure).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

import pytest

pytestmark = pytest.mark.slow

# Debian's packages: chromium-headless-shell (a wrapper script in /usr/bin, the binary in /usr/lib/chromium),
# or the full chromium. Absolute paths: PATH is not relied on.
BROWSER_CANDIDATES = (
    "/usr/bin/chromium-headless-shell",
    "/usr/lib/chromium/chromium-headless-shell",
    "/usr/lib/chromium/headless_shell",
    "/usr/bin/chromium",
)


def install_hint(candidates: tuple[str, ...]) -> str:
    return (
        f"no headless Chromium found at {', '.join(candidates)}; install one with "
        "`apt-get install --no-install-recommends chromium-headless-shell` (Debian/Ubuntu) to run the browser tests"
    )


def browser_candidates() -> tuple[str, ...]:
    """CAPIDX_BROWSER (an absolute path: another Chromium, or none at all to see the skip) or the Debian paths."""
    chosen = os.environ.get("CAPIDX_BROWSER")
    return (chosen,) if chosen else BROWSER_CANDIDATES


# Session scope, like the shared builds: pytest sets up wider scopes first, so a module-scoped browser would be
# looked for only after the bundled build had been made, even when the tests then skip.
@pytest.fixture(scope="session", name="browser")
def fixture_browser() -> str:
    candidates = browser_candidates()
    found = next((path for path in candidates if os.path.isabs(path) and os.access(path, os.X_OK)), None)
    if found is None:
        if os.environ.get("CAPIDX_REQUIRE_BROWSER") == "1":
            pytest.fail(f"CAPIDX_REQUIRE_BROWSER=1 but {install_hint(candidates)}")
        pytest.skip(install_hint(candidates))
    return found


def _run(browser: str, profile: Path, *args: str) -> str:
    command = [
        browser,
        "--headless",
        "--no-sandbox",  # tests may run as root (CI containers), where Chromium's sandbox refuses to start
        "--disable-gpu",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=5000",  # let the deferred script run before the DOM is dumped
        *args,
    ]
    env = {**os.environ, "HOME": str(profile)}
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


class _Dom(HTMLParser):
    """The parts of the dumped DOM the tests read: capability rows, header cells, views, the status line."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, dict[str, str | None]] = {}  # slug -> attributes of its <tbody>
        self.details: dict[str, dict[str, str | None]] = {}  # detail row id -> attributes
        self.columns = 0
        self.sections: dict[str, dict[str, str | None]] = {}
        self.buttons: list[dict[str, str | None]] = []
        self._in_head = False
        self._status: list[str] | None = None
        self.status = ""
        self.no_match: dict[str, str | None] = {}
        self.table_wrap: dict[str, str | None] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        classes = (values.get("class") or "").split()
        if tag == "thead":
            self._in_head = True
        elif tag == "th" and self._in_head:
            self.columns += 1
        elif tag == "tbody" and "capability" in classes:
            self.rows[values["data-slug"] or ""] = values
        elif tag == "tr" and "detail" in classes:
            self.details[values["id"] or ""] = values
        elif tag == "section" and values.get("id"):
            self.sections[values["id"] or ""] = values
        elif tag == "button" and "expand" in classes:
            self.buttons.append(values)
        elif tag == "p" and values.get("id") == "shown":
            self._status = []
        elif tag == "p" and values.get("id") == "no-match":
            self.no_match = values
        elif tag == "div" and "table-wrap" in classes:
            self.table_wrap = values

    def handle_endtag(self, tag: str) -> None:
        if tag == "thead":
            self._in_head = False
        elif tag == "p" and self._status is not None:
            self.status, self._status = "".join(self._status), None

    def handle_data(self, data: str) -> None:
        if self._status is not None:
            self._status.append(data)

    def visible_rows(self) -> set[str]:
        return {slug for slug, values in self.rows.items() if "hidden" not in values}


def _dom(browser: str, tmp_path: Path, build: Path, suffix: str = "") -> _Dom:
    page = (build / "site" / "index.html").as_uri() + suffix
    dom = _Dom()
    dom.feed(_run(browser, tmp_path / "profile", "--dump-dom", page))
    return dom


# Injected into a copy of the page by the narrow-screen test (never into the build): after the page's script ran,
# it lists what of the matrix (caption, capability names, agent cells of shown rows) lies outside the viewport.
_OFF_SCREEN_PROBE = """<script>
window.addEventListener("load", function () { setTimeout(function () {
  var width = document.documentElement.clientWidth, off = [];
  document.querySelectorAll("#matrix-table caption, tbody.capability:not([hidden]) tr.summary-row > *")
    .forEach(function (element) {
      var box = element.getBoundingClientRect();
      var outside = box.right > width + 1 || box.left < -1;
      if (box.width > 0 && outside) off.push(element.tagName + " " + element.textContent);
    });
  var found = {width: width, off: off.slice(0, 5), count: off.length};
  document.body.setAttribute("data-off-screen", JSON.stringify(found));
}, 100); });
</script>"""


def _api(build: Path, name: str) -> dict:
    return json.loads((build / "site" / "api" / name).read_text("utf-8"))


def test_the_matrix_has_a_row_per_capability_and_a_column_per_agent(
    browser: str, tmp_path: Path, bundled_build: Path
) -> None:
    manifest = json.loads((bundled_build / "manifest.json").read_text("utf-8"))
    dom = _dom(browser, tmp_path, bundled_build)
    assert sorted(dom.rows) == sorted(manifest["catalog"]["capabilities"])
    assert dom.columns == 1 + len(manifest["catalog"]["agents"])
    assert dom.visible_rows() == set(dom.rows)
    total = len(dom.rows)
    assert dom.status == f"{total} of {total} capabilities shown."
    # the script ran: rows start collapsed, the agents' views are hidden until asked for
    assert {button["aria-expanded"] for button in dom.buttons} == {"false"}
    assert all("hidden" in values for values in dom.details.values())
    assert "hidden" not in dom.sections["matrix"]
    assert all("hidden" in dom.sections[f"agent-{agent}"] for agent in manifest["catalog"]["agents"])


def test_filters_in_the_url_reduce_the_rows(browser: str, tmp_path: Path, bundled_build: Path) -> None:
    capabilities = _api(bundled_build, "capabilities.json")["capabilities"]
    category = capabilities[0]["category"]
    expected = {row["slug"] for row in capabilities if row["category"] == category}
    dom = _dom(browser, tmp_path, bundled_build, f"?category={quote(category)}")
    assert dom.visible_rows() == expected and len(expected) < len(capabilities)
    assert dom.status == f"{len(expected)} of {len(capabilities)} capabilities shown."

    free = {
        row["slug"]
        for row in capabilities
        if any(cell.get("available") and cell.get("tier") == "free" for cell in row["cells"].values())
    }
    assert _dom(browser, tmp_path, bundled_build, "#tier=free").visible_rows() == free

    target = capabilities[-1]
    found = _dom(browser, tmp_path, bundled_build, f"?q={quote(target['name'].upper())}").visible_rows()
    assert target["slug"] in found and len(found) < len(capabilities)
    assert _dom(browser, tmp_path, bundled_build, "#q=no-such-capability-anywhere").visible_rows() == set()


def test_one_agent_view_and_one_opened_row(browser: str, tmp_path: Path, bundled_build: Path) -> None:
    # `#agent-ID` is the section's own anchor (the menu's link, which works without the script); `#agent=ID` too
    agents = _api(bundled_build, "agents.json")["agents"]
    chosen = agents[0]["id"]
    for form in ("#agent-{}", "#agent={}"):
        dom = _dom(browser, tmp_path, bundled_build, form.format(chosen))
        assert "hidden" in dom.sections["matrix"], form
        assert "hidden" not in dom.sections[f"agent-{chosen}"], form
        assert all("hidden" in dom.sections[f"agent-{agent['id']}"] for agent in agents[1:]), form

    slug = _api(bundled_build, "capabilities.json")["capabilities"][0]["slug"]
    opened = _dom(browser, tmp_path, bundled_build, f"#cap-{slug}")
    assert "hidden" not in opened.details[f"detail-{slug}"]
    assert [b["aria-controls"] for b in opened.buttons if b["aria-expanded"] == "true"] == [f"detail-{slug}"]


# Injected into a copy of the page: follows two links within it, then changes a filter as a person would, and
# records what was shown after each step and the address the page wrote back.
_NAVIGATION_PROBE = """<script>
window.addEventListener("load", function () {
  var steps = [];
  function record() { steps.push([document.body.dataset.shown, location.hash]); }
  location.hash = "#q=no-such-capability-anywhere";
  setTimeout(function () {
    record();
    location.hash = "#availability=all";
    setTimeout(function () {
      record();
      var q = document.getElementById("filter-q");
      q.value = "hooks";
      q.dispatchEvent(new Event("input", {bubbles: true}));
      record();
      document.body.setAttribute("data-steps", JSON.stringify(steps));
    }, 100);
  }, 100);
});
</script>"""


def test_a_link_s_filters_replace_the_ones_in_force_and_a_change_is_written_to_the_address(
    browser: str, tmp_path: Path, bundled_build: Path
) -> None:
    site = tmp_path / "site"
    shutil.copytree(bundled_build / "site", site)
    page = site / "index.html"
    page.write_text(page.read_text("utf-8").replace("</body>", _NAVIGATION_PROBE + "</body>"), encoding="utf-8")
    dumped = _run(browser, tmp_path / "profile", "--dump-dom", page.as_uri())
    found = re.search(r'data-steps="([^"]*)"', dumped)
    assert found, "the probe did not run"
    (none, _), (every, _), (hooks, address) = json.loads(html.unescape(found.group(1)))
    capabilities = _api(bundled_build, "capabilities.json")["capabilities"]
    agents = len(_api(bundled_build, "agents.json")["agents"])
    assert none == "0"
    # "#availability=all" alone: the search of the link before does not carry over
    assert int(every) == sum(1 for row in capabilities if len(row["availableFor"]) == agents) > 0
    assert int(hooks) >= 1 and address == "#q=hooks&availability=all"


def test_screenshots_at_desktop_and_phone_width(browser: str, tmp_path: Path, bundled_build: Path) -> None:
    page = (bundled_build / "site" / "index.html").as_uri()
    for name, size in (("desktop", "1280,1000"), ("phone", "412,915")):
        shot = tmp_path / f"site-{name}.png"
        _run(browser, tmp_path / "profile", "--hide-scrollbars", f"--window-size={size}", f"--screenshot={shot}", page)
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, shot
        width = int.from_bytes(data[16:20], "big")
        assert width == int(size.split(",")[0])


def test_at_420_px_no_agent_column_and_no_caption_is_off_screen(
    browser: str, tmp_path: Path, bundled_build: Path
) -> None:
    """Issue 29, item 8: a phone-width window shows the matrix as one card per capability, every agent's cell on
    screen, the caption wrapped within the page."""
    site = tmp_path / "site"
    shutil.copytree(bundled_build / "site", site)
    page = site / "index.html"
    page.write_text(page.read_text("utf-8").replace("</body>", _OFF_SCREEN_PROBE + "</body>"), encoding="utf-8")
    dumped = _run(browser, tmp_path / "profile", "--window-size=420,900", "--dump-dom", page.as_uri())
    found = re.search(r'data-off-screen="([^"]*)"', dumped)
    assert found, "the probe did not run"
    measured = json.loads(html.unescape(found.group(1)))
    assert measured["width"] <= 420 and measured["count"] == 0, measured


def test_a_filter_with_no_match_says_so_instead_of_an_empty_table(
    browser: str, tmp_path: Path, bundled_build: Path
) -> None:
    none = _dom(browser, tmp_path, bundled_build, "#q=no-such-capability-anywhere")
    assert none.visible_rows() == set()
    assert "hidden" not in none.no_match and "hidden" in none.table_wrap
    some = _dom(browser, tmp_path, bundled_build, "#q=hooks")
    assert some.visible_rows() and "hidden" in some.no_match and "hidden" not in some.table_wrap


def test_the_counts_say_what_they_count(browser: str, tmp_path: Path, bundled_build: Path) -> None:
    """Issue 29, item 8: the stale line names its date, gone and never-verified unknowns are told apart, and an
    agent's cards count against the same capability total as the header."""
    dumped = _run(browser, tmp_path / "profile", "--dump-dom", (bundled_build / "site" / "index.html").as_uri())
    text = " ".join(re.sub(r"<[^>]+>", " ", html.unescape(dumped)).split())
    quality = _api(bundled_build, "quality.json")
    reference = quality["referenceDate"]
    assert f"days before {reference}, the newest date in the catalog, not the build date" in text
    assert "page gone, or never checked" not in text
    assert f"{quality['urls']['gone']} gone (status unknown after a verification)" in text
    assert f"{quality['urls']['unknownUnverified']} with status unknown, never verified" in text
    total = len(_api(bundled_build, "capabilities.json")["capabilities"])
    assert f"{total} capabilities" in text
    agents = _api(bundled_build, "agents.json")["agents"]
    for agent in agents:
        name = re.escape(agent["name"])
        assert re.search(rf"of the \d+ capabilities recorded for {name} \(the catalog has {total}\)", text), name
