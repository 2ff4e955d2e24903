"""`capidx inject` on what `capidx build` writes: a small catalog built, injected into AGENTS.md, changed and
built again, so `--check` and the update are checked against the real memory artifact.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from catalog_factory import documents, run_cli, write_catalog

AGENTS_MD = b"# Project rules\r\n\r\nUse tabs.\r\n\r\n## More\r\nNo final newline, CRLF, \xc3\xbcnicode."


def test_inject_follows_the_catalog_through_rebuilds(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write_catalog(root)
    assert run_cli(["build", "-q"], root).exit_code == 0
    (root / "AGENTS.md").write_bytes(AGENTS_MD)

    first = run_cli(["inject", "AGENTS.md", ".github/copilot-instructions.md"], root)
    assert first.exit_code == 0, first.output
    injected = (root / "AGENTS.md").read_bytes()
    assert injected.startswith(AGENTS_MD)
    memory = (root / "build" / "memory.md").read_text("utf-8")
    assert memory.replace("\n", "\r\n") in injected.decode("utf-8")
    new_file = (root / ".github" / "copilot-instructions.md").read_text("utf-8")
    assert memory in new_file
    again = run_cli(["inject", "AGENTS.md", ".github/copilot-instructions.md"], root)
    assert again.exit_code == 0 and again.output.count("unchanged") == 2
    assert run_cli(["inject", "--check", "AGENTS.md"], root).exit_code == 0

    docs = documents()  # the catalog changes (a capability added) and is built again
    docs["claude-code"]["capabilities"].append(
        {
            "category": "context-awareness",
            "name": "Checkpoints",
            "description": "Saves the workspace before each edit so the agent can rewind to any earlier step.",
            "available": True,
        }
    )
    write_catalog(root, docs)
    assert run_cli(["build", "-q"], root).exit_code == 0
    assert (root / "build" / "memory.md").read_text("utf-8") != memory

    stale = run_cli(["inject", "--check", "AGENTS.md", ".github/copilot-instructions.md"], root)
    assert stale.exit_code == 1, stale.output
    assert "AGENTS.md: stale" in stale.output and "copilot-instructions.md: stale" in stale.output
    assert (root / "AGENTS.md").read_bytes() == injected

    updated = run_cli(["inject", "AGENTS.md"], root)
    assert updated.exit_code == 0 and updated.output == "AGENTS.md: block updated\n"
    text = (root / "AGENTS.md").read_bytes().decode("utf-8")
    assert text.startswith(AGENTS_MD.decode("utf-8"))
    assert "Checkpoints" in text
    assert run_cli(["inject", "--check", "AGENTS.md"], root).exit_code == 0


def _open_fences(text: str, upto: str) -> int:
    """How many code fences are open (0 or 1) at the first line holding `upto`, as CommonMark counts them."""
    fence = ""
    for row in text[: text.index(upto)].splitlines():
        stripped = row.lstrip(" ")
        if len(row) - len(stripped) > 3:
            continue
        marker = stripped[:3]
        if not fence and marker in ("```", "~~~"):
            fence = marker
        elif fence and stripped.startswith(fence) and not stripped.strip("`~ "):
            fence = ""
    return 1 if fence else 0


@pytest.mark.parametrize("title", ["```text", "~~~", "# Heading", "> quoted", "- item"])
def test_a_title_that_would_start_a_block_stays_text_in_the_injected_block(tmp_path: Path, title: str) -> None:
    """capidx.yaml's `title` begins the first line of memory.md and instructions.md: escaped as a line, it can
    open no fence (which would swallow the rest of AGENTS.md), heading, quote or list."""
    write_catalog(tmp_path)
    (tmp_path / "capidx.yaml").write_text(f"title: {json.dumps(title)}\n", "utf-8")
    assert run_cli(["build", "-q"], tmp_path).exit_code == 0
    for name in ("memory.md", "instructions.md"):
        first = (tmp_path / "build" / name).read_text("utf-8").splitlines()[0]
        assert first.startswith("\\" + title[0]), first
    (tmp_path / "AGENTS.md").write_text("# Rules\n\nBefore the block.\n", "utf-8")
    assert run_cli(["inject", "AGENTS.md"], tmp_path).exit_code == 0
    (tmp_path / "AGENTS.md").write_text((tmp_path / "AGENTS.md").read_text("utf-8") + "\nAfter the block.\n", "utf-8")
    text = (tmp_path / "AGENTS.md").read_text("utf-8")
    assert _open_fences(text, "After the block.") == 0
    assert [row for row in text.splitlines() if row.startswith("#")] == ["# Rules"]


def test_a_catalog_at_the_project_root_takes_memory_files_beside_its_data(tmp_path: Path) -> None:
    """`paths.agents: .`: the project's folder is the catalog folder. The build reads its documents and alias
    table there, not AGENTS.md, so inject writes the memory files (and the build stays up to date after it),
    while still refusing what the build reads, with a suggestion that is not refused itself."""
    root = tmp_path / "project"
    write_catalog(root, agents_dir=".")
    (root / "capidx.yaml").write_text("paths: {agents: ., out: ../outbuild}\n", "utf-8")
    assert run_cli(["build", "-q"], root).exit_code == 0

    written = run_cli(["inject", "AGENTS.md", ".windsurfrules", "claude-code/NOTES.md"], root)

    assert written.exit_code == 0, written.output
    memory = (tmp_path / "outbuild" / "memory.md").read_text("utf-8")
    for name in ("AGENTS.md", ".windsurfrules", "claude-code/NOTES.md"):
        assert memory in (root / name).read_text("utf-8")
    rebuilt = run_cli(["build"], root)
    assert rebuilt.exit_code == 0 and "build up to date (inputs unchanged" in rebuilt.output
    refused = run_cli(["inject", "capidx.yaml", "aliases.json", "claude-code/capabilities/current.json"], root)
    assert refused.exit_code == 2
    assert refused.output.splitlines() == [
        "Error: capidx.yaml: it is the capidx.yaml in force (capidx.yaml), an input of capidx build, not a memory "
        "file; name one such as AGENTS.md",
        "aliases.json: it is the alias table (aliases.json), an input of capidx build, not a memory file; name one "
        "such as AGENTS.md",
        "claude-code/capabilities/current.json: it is a capability document (claude-code/capabilities/current.json), "
        "an input of capidx build, not a memory file; name one such as AGENTS.md",
        "nothing written",
    ]
