"""What to type to get `capidx serve`'s dependencies, from where this capidx was installed.

capidx is not on a package index, so `pip install 'capidx[serve]'` fails for most users. pip records where
a distribution came from in `direct_url.json` (PEP 610): a source folder (editable or not), a VCS URL, or an
archive. The hint repeats that origin with the `serve` extra; without the record, a generic line.
"""

from __future__ import annotations

import json
import shlex
from importlib import metadata
from typing import Any
from urllib.parse import unquote, urlsplit

DISTRIBUTION = "capidx"
EXTRA = "serve"
_MAX_RECORD = 16_384  # direct_url.json is a few hundred bytes; anything larger is not pip's


def serve_install_command(record: dict[str, Any] | None) -> str:
    """The pip command that adds the extra to an install described by `record` (direct_url.json), or ""."""
    if not isinstance(record, dict):
        return ""
    url = record.get("url")
    if not isinstance(url, str) or not url or not url.isprintable():
        return ""
    parts = urlsplit(url)
    vcs = record.get("vcs_info")
    if isinstance(vcs, dict) and isinstance(vcs.get("vcs"), str):
        revision = vcs.get("requested_revision")
        at = f"@{revision}" if isinstance(revision, str) and revision else ""
        return _pip(f"{DISTRIBUTION}[{EXTRA}] @ {vcs['vcs']}+{url}{at}")
    if parts.scheme == "file":
        path = unquote(parts.path)
        editable = isinstance(record.get("dir_info"), dict) and record["dir_info"].get("editable") is True
        return _pip(f"{path}[{EXTRA}]", editable=editable)
    if parts.scheme in ("http", "https"):
        return _pip(f"{DISTRIBUTION}[{EXTRA}] @ {url}")
    return ""


def _pip(requirement: str, editable: bool = False) -> str:
    return f"pip install {'-e ' if editable else ''}{shlex.quote(requirement)}"


def _installed_record() -> dict[str, Any] | None:
    try:
        text = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
    except (metadata.PackageNotFoundError, OSError, UnicodeDecodeError):
        return None
    if not text or len(text) > _MAX_RECORD:
        return None
    try:
        record = json.loads(text)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def serve_hint() -> str:
    """One line: what `capidx serve` needs and the command that installs it here."""
    command = serve_install_command(_installed_record())
    if command:
        return f"capidx serve needs the server's dependencies; from where capidx was installed: {command}"
    return (
        "capidx serve needs the server's dependencies: add the 'serve' extra from where you got capidx (a source "
        "folder: pip install -e '<folder>[serve]'; a package index: pip install 'capidx[serve]')"
    )
