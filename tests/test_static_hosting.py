"""A build directory served by any static host is the same API (issue 15, item 7): fetched over HTTP
from `python -m http.server`, every artifact the manifest lists comes back byte for byte, with the
Content-Type of its `mimeType` (a resource), or as its `bytes` from `offset` of its pack (a tool answer)."""

from __future__ import annotations

import hashlib
import http.client
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.fixture(name="static_server")
def fixture_static_server(bundled_build: Path) -> Iterator[int]:
    """`python -m http.server` on a free loopback port, serving the build directory; yields the port."""
    process = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", str(bundled_build)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()  # "Serving HTTP on 127.0.0.1 port N (http://127.0.0.1:N/) ..."
        port = re.search(r"port (\d+)", first)
        assert port, f"http.server did not start: {first!r}"
        yield int(port.group(1))
    finally:
        process.terminate()
        process.communicate(timeout=30)  # reaps it and closes its stdout pipe


def _get(port: int, path: str) -> tuple[int, str, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", "/" + path)
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type") or "", response.read()
    finally:
        connection.close()


def test_every_artifact_is_served_verbatim_with_its_media_type(static_server: int, bundled_build: Path) -> None:
    status, content_type, body = _get(static_server, "manifest.json")
    assert (status, content_type) == (200, "application/json")
    manifest = json.loads(body)

    packs: dict[str, bytes] = {}
    for artifact in manifest["artifacts"]:
        if "offset" in artifact:  # a tool answer: its bytes of the pack (a client would send a Range request)
            if artifact["path"] not in packs:
                status, _, packs[artifact["path"]] = _get(static_server, artifact["path"])
                assert status == 200, artifact["path"]
            start = artifact["offset"]
            body = packs[artifact["path"]][start : start + artifact["bytes"]]
        else:
            status, content_type, body = _get(static_server, artifact["path"])
            assert status == 200, artifact["path"]
            assert content_type.split(";")[0] == artifact["mimeType"], artifact["path"]
        assert len(body) == artifact["bytes"]
        assert hashlib.sha256(body).hexdigest() == artifact["sha256"], artifact["uri"]
    assert packs  # the tool answers are packed


def test_the_pages_workflow_example_publishes_the_build_directory() -> None:
    workflow = yaml.safe_load((DOCS / "examples" / "pages.yml").read_text(encoding="utf-8"))
    steps = workflow["jobs"]["deploy"]["steps"]
    runs = [step.get("run", "") for step in steps]
    assert "capidx build" in runs
    upload = next(step for step in steps if str(step.get("uses", "")).startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "build"
    assert any(str(step.get("uses", "")).startswith("actions/deploy-pages") for step in steps)
    assert "examples/pages.yml" in (DOCS / "build-directory.md").read_text(encoding="utf-8")
