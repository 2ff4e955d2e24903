"""The sample `capidx report` output in docs/cli.md is what a real run on the bundled catalog prints.

The samples are the first thing a reader compares with their own run, so they are checked, not trusted: the
bundled catalog is built with the repository's own capidx.yaml (its budgets), then reported in the text and
markdown formats, and each sample must equal the output (the manifest's path written as `build/manifest.json`).
After a change to the catalog, the templates or the budgets, `python tests/test_doc_samples.py` rewrites the
samples from a fresh run.

One figure moves with every change to capidx's own code: `site/api/index.json` names the build's input digest,
which fingerprints the compiler's source, and a new sha256 can tokenize one token longer or shorter. The lines
that carry it (the site-index row and the totals) are compared with their numbers masked.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLI_MD = ROOT / "docs" / "cli.md"
# The text sample: a ```text fence whose first line is the prompt; the markdown sample: a ````markdown fence.
_TEXT = re.compile(r"(```text\n\$ capidx report\n)(.*?)(^```\n)", re.MULTILINE | re.DOTALL)
_MARKDOWN = re.compile(r"(````markdown\n)(<!-- capidx-report -->\n.*?)(^````\n)", re.MULTILINE | re.DOTALL)


def _capidx(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "capidx", *args], cwd=cwd, capture_output=True, text=True, encoding="utf-8", check=False
    )


def real_samples(workdir: Path) -> dict[str, str]:
    """What `capidx report` prints for the bundled catalog, in each sampled format."""
    config = ROOT / "capidx.yaml"
    build = workdir / "build"
    built = _capidx(
        "build", "-q", "--config", str(config), "--agents", str(ROOT / "agents"), "--out", str(build), cwd=workdir
    )
    assert built.returncode == 0, built.stderr[-2000:]
    samples = {}
    for fmt in ("text", "markdown"):
        report = _capidx("report", "--build", str(build), "--config", str(config), "--format", fmt, cwd=workdir)
        assert report.returncode == 0, report.stderr[-2000:]
        samples[fmt] = report.stdout.replace(str(build / "manifest.json"), "build/manifest.json")
    return samples


# Lines whose figures include the input digest's tokens: the site-index row and every total.
_VOLATILE = re.compile(r"^(?:\| ✅ )?site-index\b|total|all budgets met", re.IGNORECASE)
_FIGURE = re.compile(r"\d[\d,.]*")


def masked(sample: str) -> str:
    """The sample with the figures of `_VOLATILE` lines replaced by `#`."""
    lines = sample.splitlines(keepends=True)
    return "".join(_FIGURE.sub("#", line) if _VOLATILE.search(line) else line for line in lines)


def documented_samples(text: str) -> dict[str, str]:
    found = {"text": _TEXT.search(text), "markdown": _MARKDOWN.search(text)}
    missing = [fmt for fmt, match in found.items() if match is None]
    assert not missing, f"docs/cli.md has no sample of: {missing}"
    return {fmt: match.group(2) for fmt, match in found.items() if match is not None}


def rewritten(text: str, samples: dict[str, str]) -> str:
    text = _TEXT.sub(lambda match: match.group(1) + samples["text"] + match.group(3), text, count=1)
    return _MARKDOWN.sub(lambda match: match.group(1) + samples["markdown"] + match.group(3), text, count=1)


@pytest.fixture(scope="module", name="samples")
def fixture_samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return real_samples(tmp_path_factory.mktemp("doc-samples"))


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_the_report_sample_in_cli_md_is_a_real_run(samples: dict[str, str], fmt: str) -> None:
    documented = documented_samples(CLI_MD.read_text(encoding="utf-8"))[fmt]
    assert masked(documented) == masked(samples[fmt]), (
        "docs/cli.md is out of date: run `python tests/test_doc_samples.py`"
    )


def test_masking_hides_only_the_figures_the_digest_moves() -> None:
    sample = "summary   1   575\nsite-index  1  4,225  5,100  82%\ntotal  797  479,835\n| ✅ site-index | 1 | 4,225 |\n"
    assert masked(sample) == "summary   1   575\nsite-index  #  #  #  #%\ntotal  #  #\n| ✅ site-index | # | # |\n"


def test_rewriting_replaces_only_the_samples() -> None:
    text = "intro\n```text\n$ capidx report\nold\n```\nmiddle\n````markdown\n<!-- capidx-report -->\nold\n````\nend\n"
    new = rewritten(text, {"text": "new text\n", "markdown": "<!-- capidx-report -->\nnew md\n"})
    assert new == (
        "intro\n```text\n$ capidx report\nnew text\n```\nmiddle\n"
        "````markdown\n<!-- capidx-report -->\nnew md\n````\nend\n"
    )


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        fresh = real_samples(Path(scratch))
    CLI_MD.write_text(rewritten(CLI_MD.read_text(encoding="utf-8"), fresh), encoding="utf-8")
    print(f"rewrote the report samples in {CLI_MD.relative_to(ROOT)}")
