"""`capidx inject FILE...`: one marked block per memory file, equal to the build's memory.md; every byte outside
it kept; idempotent; `--check` for CI; every bad input refused with exit 2 before any file is written.

Builds here are synthetic (tests/manifest_factory.py: a valid manifest plus memory.md); tests/test_inject_build.py
runs the command on what `capidx build` writes.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from catalog_factory import deny_listing, deny_search, tree
from click.testing import CliRunner, Result
from manifest_factory import make_manifest, write_build, write_memory_build

from capidx.cli import cli
from capidx.compiler import files
from capidx.compiler.render.environment import MAX_NAMES_FOLLOWED

MEMORY = "# Coding-agent capabilities\n\n| capability | alpha | beta |\n|---|---|---|\n| hooks | ✓ | – |\n"
NEWER = MEMORY.replace("| hooks | ✓ | – |", "| hooks | ✓ | ✓ |")
BEGIN = "<!-- capidx:begin"
END = "<!-- capidx:end -->"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project without capidx.yaml (the working directory is the project) and a build at build/."""
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.chdir(root)
    write_memory_build(root / "build", MEMORY)
    return root


def inject(*args: str) -> Result:
    return CliRunner().invoke(cli, ["inject", *args])


def block_of(text: str) -> str:
    start = text.index(BEGIN)
    return text[start : text.index(END) + len(END)]


def body_of(text: str, newline: str = "\n") -> str:
    """The lines between the markers, with their line breaks."""
    block = block_of(text)
    return block[block.index(newline) + len(newline) : -len(END)]


def leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.rglob("*") if "capidx-inject" in path.name)


def test_a_manifest_this_user_may_not_read_names_the_inject_command(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """inject reads the build's manifest with report's reader, which named `capidx report` as the command whose
    user needs the permission: the user of `capidx inject` does. Simulated: root reads a file of mode 000."""
    manifest = str(project / "build" / "manifest.json")
    real_open = os.open

    def guarded(path: object, *args: object, **kwargs: object) -> int:
        if os.path.abspath(str(path)) == manifest:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", guarded)
    result = inject("AGENTS.md")

    assert result.exit_code == 2, result.output
    assert "cannot read: Permission denied; the user running `capidx inject` needs read and search permission" in (
        result.output
    )
    assert "capidx report" not in result.output and not (project / "AGENTS.md").exists()


# ---- writing -----------------------------------------------------------------------------------------------


def test_a_missing_file_and_its_folder_are_created_holding_the_memory_verbatim(project: Path) -> None:
    umask = os.umask(0o027)
    try:
        result = inject("AGENTS.md", ".github/copilot-instructions.md")
    finally:
        umask = os.umask(umask)

    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == ["AGENTS.md: created", ".github/copilot-instructions.md: created"]
    for path in (project / "AGENTS.md", project / ".github" / "copilot-instructions.md"):
        text = path.read_text("utf-8")
        assert text.startswith(BEGIN) and text.endswith(END + "\n")
        assert body_of(text) == MEMORY
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask  # as any new file, not mkstemp's 0600
    assert leftovers(project) == []


def test_a_file_whose_name_fits_a_folder_entry_is_written(project: Path) -> None:
    """A name of 250 bytes fits the 255 a folder entry may have; its temporary file was named after it with more
    added, so the write failed (ENAMETOOLONG, exit 2). Created, then updated."""
    name = "m" * 247 + ".md"
    assert len(os.fsencode(name)) == 250
    result = inject(name)
    assert result.exit_code == 0, result.output
    write_memory_build(project / "build", NEWER)
    result = inject(name)
    assert result.exit_code == 0, result.output
    assert body_of((project / name).read_text("utf-8")) == NEWER
    assert leftovers(project) == []


# (original bytes, newline the block must use)
FILE_STYLES = {
    "lf": (b"# Project\n\nOur rules.\n", "\n"),
    "crlf": (b"# Project\r\n\r\nOur rules.\r\n", "\r\n"),
    "no-final-newline": (b"# Project\n\nOur rules.", "\n"),
    "crlf-no-final-newline": (b"# Project\r\nOur rules.", "\r\n"),
    "bom-unicode": ("\ufeff# Projekt — Regeln ✓\n\nÜberall 日本語 👍\n".encode(), "\n"),
    "empty": (b"", "\n"),
}


@pytest.mark.parametrize("case", FILE_STYLES)
def test_a_block_added_to_a_file_keeps_every_byte_before_it(project: Path, case: str) -> None:
    original, newline = FILE_STYLES[case]
    (project / "AGENTS.md").write_bytes(original)

    result = inject("AGENTS.md")

    assert result.exit_code == 0, result.output
    assert result.output == "AGENTS.md: block added\n"
    after = (project / "AGENTS.md").read_bytes()
    assert after.startswith(original)
    text = after.decode("utf-8")
    assert body_of(text, newline) == MEMORY.replace("\n", newline)
    added = after[len(original) :].decode("utf-8")
    assert added.count("\n") == added.count(newline)  # one line-ending style: the file's
    assert added.endswith(END + newline)


@pytest.mark.parametrize("case", [case for case in FILE_STYLES if case != "empty"])
def test_a_block_updated_in_place_keeps_every_byte_before_and_after_it(project: Path, case: str) -> None:
    text, newline = FILE_STYLES[case]
    before = text
    after = text.replace(b"Project", b"Tail").replace(b"Projekt", b"Ende")  # text after the block, same style
    (project / "AGENTS.md").write_bytes(before)
    assert inject("AGENTS.md").exit_code == 0
    injected = (project / "AGENTS.md").read_bytes()
    # the block is now in the middle: text before it (the original), text after it (no final newline kept)
    (project / "AGENTS.md").write_bytes(injected + newline.encode() + after)
    whole = (project / "AGENTS.md").read_bytes()
    start, end = whole.index(BEGIN.encode()), whole.index(END.encode()) + len(END)
    write_memory_build(project / "build", NEWER)

    result = inject("AGENTS.md")

    assert result.exit_code == 0, result.output
    assert result.output == "AGENTS.md: block updated\n"
    updated = (project / "AGENTS.md").read_bytes()
    assert updated.startswith(whole[:start])
    assert updated.endswith(whole[end:])
    assert body_of(updated.decode("utf-8"), newline) == NEWER.replace("\n", newline)


def test_a_second_run_changes_nothing_and_says_so(project: Path) -> None:
    (project / "CLAUDE.md").write_bytes(b"# Notes\r\n\r\nKeep this.")
    assert inject("CLAUDE.md").exit_code == 0
    first = (project / "CLAUDE.md").read_bytes()
    stamp = os.stat(project / "CLAUDE.md").st_mtime_ns
    os.utime(project / "CLAUDE.md", ns=(stamp - 10**9, stamp - 10**9))

    result = inject("CLAUDE.md")

    assert result.exit_code == 0, result.output
    assert result.output == "CLAUDE.md: unchanged (the block is current)\n"
    assert (project / "CLAUDE.md").read_bytes() == first
    assert os.stat(project / "CLAUDE.md").st_mtime_ns == stamp - 10**9  # not even rewritten
    assert inject("--check", "CLAUDE.md").exit_code == 0


def test_the_begin_marker_names_the_builds_memory_by_its_sha256(project: Path) -> None:
    assert inject("AGENTS.md").exit_code == 0
    first = (project / "AGENTS.md").read_text("utf-8").splitlines()[0]
    write_memory_build(project / "build", NEWER)
    assert inject("AGENTS.md").exit_code == 0
    second = (project / "AGENTS.md").read_text("utf-8").splitlines()[0]

    for line, text in ((first, MEMORY), (second, NEWER)):
        assert line.startswith(BEGIN + " memory=sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16])
        assert "capidx" in line and line.endswith("-->")


def test_a_block_on_the_first_line_after_a_byte_order_mark_is_found(project: Path) -> None:
    assert inject("AGENTS.md").exit_code == 0
    path = project / "AGENTS.md"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes() + b"\n## Ours\n")
    write_memory_build(project / "build", NEWER)

    assert inject("AGENTS.md").output == "AGENTS.md: block updated\n"

    text = path.read_bytes()
    assert text.startswith(b"\xef\xbb\xbf" + BEGIN.encode()) and text.endswith(END.encode() + b"\n\n## Ours\n")
    assert body_of(text.decode("utf-8")) == NEWER


def test_the_file_mode_is_kept(project: Path) -> None:
    path = project / "AGENTS.md"
    path.write_text("# Rules\n", encoding="utf-8")
    path.chmod(0o640)

    assert inject("AGENTS.md").exit_code == 0

    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_a_read_only_file_is_refused_and_kept(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`chmod a-w CLAUDE.md`: the block was written to a new file renamed over it, which a write protection does not
    stop (`echo >>` is refused). It is refused, nothing written. Simulated: the suite may run as root, whom no mode
    stops."""
    path = project / "CLAUDE.md"
    path.write_text("# Mine\n", encoding="utf-8")
    real_access = os.access
    monkeypatch.setattr(
        os, "access", lambda p, mode, **kw: False if Path(p) == path and mode & os.W_OK else real_access(p, mode, **kw)
    )

    result = inject("CLAUDE.md")

    assert result.exit_code == 2, result.output
    assert "CLAUDE.md: read-only (no write permission)" in result.output and "nothing written" in result.output
    assert path.read_text("utf-8") == "# Mine\n"


def test_a_file_with_another_name_is_refused_not_parted(project: Path) -> None:
    """`ln AGENTS.md CLAUDE.md`: writing one through a rename parted the two names, the other keeping the old text,
    unsaid. Refused, with the way on (a symbolic link, which inject follows)."""
    (project / "AGENTS.md").write_text("# Shared\n", encoding="utf-8")
    os.link(project / "AGENTS.md", project / "CLAUDE.md")

    result = inject("CLAUDE.md")

    assert result.exit_code == 2, result.output
    assert "CLAUDE.md: has 1 other name (a hard link)" in result.output and "ln -sf" in result.output
    assert (project / "AGENTS.md").read_text("utf-8") == "# Shared\n"
    assert os.stat(project / "AGENTS.md").st_ino == os.stat(project / "CLAUDE.md").st_ino


def test_a_link_inside_the_project_stays_a_link_and_its_target_is_written(project: Path) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "AGENTS.md").write_text("# Shared\n", encoding="utf-8")
    (project / "CLAUDE.md").symlink_to(Path("docs") / "AGENTS.md")

    result = inject("CLAUDE.md", "docs/AGENTS.md")  # the same file twice: written once

    assert result.exit_code == 0, result.output
    # the second name is said, not passed over in silence
    assert result.output == "CLAUDE.md: block added\ndocs/AGENTS.md: the same file as CLAUDE.md, done once\n"
    assert (project / "CLAUDE.md").is_symlink()
    assert body_of((project / "docs" / "AGENTS.md").read_text("utf-8")) == MEMORY


def test_the_project_and_the_build_follow_capidx_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "catalog"
    root.mkdir()
    (root / "capidx.yaml").write_text("paths:\n  out: out/index\n", encoding="utf-8")
    write_memory_build(root / "out" / "index", MEMORY)
    monkeypatch.chdir(root)

    assert inject("AGENTS.md").exit_code == 0
    assert body_of((root / "AGENTS.md").read_text("utf-8")) == MEMORY

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = inject("--config", str(root / "capidx.yaml"), str(root / "GEMINI.md"))
    assert result.exit_code == 0, result.output
    assert body_of((root / "GEMINI.md").read_text("utf-8")) == MEMORY
    outside = inject("--config", str(root / "capidx.yaml"), "AGENTS.md")  # the cwd is not the project then
    assert outside.exit_code == 2
    assert "outside the project" in outside.output
    assert not (elsewhere / "AGENTS.md").exists()


def test_build_names_another_build(project: Path) -> None:
    write_memory_build(project / "other", NEWER)

    assert inject("--build", "other", "AGENTS.md").exit_code == 0

    assert body_of((project / "AGENTS.md").read_text("utf-8")) == NEWER


def test_the_projects_own_build_is_refused_when_build_names_another(project: Path) -> None:
    """`--build other` reads another build; the project's build folder (paths.out) is still never written."""
    write_memory_build(project / "other", NEWER)
    before = tree(project / "build")

    default = inject("--build", "other", "build/AGENTS.md")

    assert default.exit_code == 2, default.output
    assert "build/AGENTS.md: inside the build directory" in default.output
    assert tree(project / "build") == before
    (project / "capidx.yaml").write_text("paths:\n  out: site/index\n", encoding="utf-8")  # not built yet
    configured = inject("--build", "other", "site/index/AGENTS.md")
    assert configured.exit_code == 2, configured.output
    assert "inside the build directory" in configured.output and not (project / "site").exists()


# ---- --check -----------------------------------------------------------------------------------------------


def test_check_exits_0_when_current_and_1_when_stale_writing_nothing(project: Path) -> None:
    (project / "AGENTS.md").write_bytes(b"# Rules\r\n")
    assert inject("AGENTS.md", "CLAUDE.md").exit_code == 0

    current = inject("--check", "AGENTS.md", "CLAUDE.md")
    assert current.exit_code == 0, current.output
    assert current.output.splitlines() == ["AGENTS.md: current", "CLAUDE.md: current"]

    write_memory_build(project / "build", NEWER)  # the catalog changed and was rebuilt
    files = {name: (project / name).read_bytes() for name in ("AGENTS.md", "CLAUDE.md")}
    stale = inject("--check", "AGENTS.md", "CLAUDE.md", "GEMINI.md")

    assert stale.exit_code == 1, stale.output
    lines = stale.output.splitlines()
    assert lines[0].startswith("AGENTS.md: stale: the block holds memory sha256:")
    assert lines[1].startswith("CLAUDE.md: stale")
    assert lines[2] == "GEMINI.md: missing: the file does not exist"
    assert lines[3].endswith("then capidx inject AGENTS.md CLAUDE.md GEMINI.md")
    assert {name: (project / name).read_bytes() for name in files} == files
    assert not (project / "GEMINI.md").exists()
    assert leftovers(project) == []


def test_check_suggests_commands_with_the_build_and_config_it_was_given(project: Path) -> None:
    write_memory_build(project / "other dir", NEWER)
    (project / "alt.yaml").write_text("title: Agents\n", encoding="utf-8")
    stale = inject("--check", "--build", "other dir", "--config", "alt.yaml", "AGENTS.md")
    assert stale.exit_code == 1, stale.output
    assert stale.output.splitlines()[-1] == (
        "to update: capidx build --out 'other dir' --config alt.yaml (if the catalog changed), "
        "then capidx inject --build 'other dir' --config alt.yaml AGENTS.md"
    )


def test_check_names_a_file_without_block_and_a_block_edited_by_hand(project: Path) -> None:
    """An edited block is not current (exit 1); the command offered for it is the one that replaces it."""
    (project / "AGENTS.md").write_text("# Rules\n", encoding="utf-8")
    assert inject("CLAUDE.md").exit_code == 0
    claude = project / "CLAUDE.md"
    claude.write_text(claude.read_text("utf-8").replace("hooks", "hook"), encoding="utf-8")

    result = inject("--check", "--build", "build", "AGENTS.md", "CLAUDE.md")

    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "AGENTS.md: no capidx block",
        "CLAUDE.md: the capidx block at line 1 was edited since capidx inject wrote it: it no longer matches the "
        f"sha256:{hashlib.sha256(MEMORY.encode()).hexdigest()[:16]} its marker records",
        "to update: capidx build --out build (if the catalog changed), then capidx inject --build build AGENTS.md",
        "to replace the blocks edited by hand, losing their text: capidx inject --build build --force CLAUDE.md",
    ]


# ---- blocks capidx did not write, or that were edited since: kept unless --force -------------------------

HAND_WRITTEN = """# Contributing
`capidx inject` adds a block like this:

```markdown
<!-- capidx:begin -->
(our hand-written, annotated example)
<!-- capidx:end -->
```
"""


def test_a_block_written_by_hand_is_kept_and_the_write_refused(project: Path) -> None:
    """The markers quoted in a code fence are a block to the tool, but not one it wrote: its text is kept."""
    (project / "CONTRIBUTING.md").write_text(HAND_WRITTEN, encoding="utf-8")
    before = tree(project)

    result = inject("AGENTS.md", "CONTRIBUTING.md")
    check = inject("--check", "CONTRIBUTING.md")

    assert result.exit_code == 2, result.output
    assert (
        "CONTRIBUTING.md: the capidx block at line 5 was not written by capidx inject: its begin marker records no "
        "memory=sha256 (written by hand?). To keep that text, move it out of the block (to quote the markers, put "
        "them within a line of text); to replace the block with the build's memory, losing that text: "
        "capidx inject --force CONTRIBUTING.md"
    ) in result.output
    assert result.output.rstrip().endswith("nothing written")
    assert tree(project) == before  # AGENTS.md, named with it, not created either
    assert check.exit_code == 1, check.output
    assert check.output.splitlines() == [
        "CONTRIBUTING.md: the capidx block at line 5 was not written by capidx inject: its begin marker records no "
        "memory=sha256 (written by hand?)",
        "to replace the blocks edited by hand, losing their text: capidx inject --force CONTRIBUTING.md",
    ]


def _edit_a_line(block: str) -> str:
    return block.replace("| hooks |", "| hooks (ours) |")


def _add_a_line(block: str) -> str:
    return block.replace(END, "A rule of ours.\n" + END)


def _remove_a_line(block: str) -> str:
    return block.replace("| hooks | ✓ | – |\n", "")


def _text_after_the_end_marker(block: str) -> str:
    return block.replace(END, END + " and a note of ours")


def _text_after_the_begin_marker(block: str) -> str:
    return block.replace("block) -->", "block) --> and a note of ours", 1)


def _another_hash(block: str) -> str:
    digits = hashlib.sha256(NEWER.encode()).hexdigest()[:16]  # a real memory's hash, not this text's
    return block.replace(block[block.index("sha256:") + 7 : block.index("sha256:") + 23], digits, 1)


def _a_short_hash(block: str) -> str:
    """A few digits would match some text by chance: a block proves itself with the 16 capidx writes."""
    start = block.index("sha256:") + 7
    return block[:start] + hashlib.sha256(MEMORY.encode()).hexdigest()[:4] + block[start + 16 :]


def _no_hash(block: str) -> str:
    return BEGIN + " -->" + block[block.index("\n") :]


EDITS = {
    fn.__name__.strip("_"): fn
    for fn in (
        _edit_a_line,
        _add_a_line,
        _remove_a_line,
        _text_after_the_end_marker,
        _text_after_the_begin_marker,
        _another_hash,
        _a_short_hash,
        _no_hash,
    )
}


@pytest.mark.parametrize("case", EDITS)
def test_an_edited_block_is_kept_unless_forced(project: Path, case: str) -> None:
    path = project / "AGENTS.md"
    path.write_text("# Rules\n\nOurs.\n", encoding="utf-8")
    assert inject("AGENTS.md").exit_code == 0
    injected = path.read_text("utf-8")
    start = injected.index(BEGIN)
    edited = injected[:start] + EDITS[case](injected[start:]) + "\n## After\n"
    path.write_text(edited, encoding="utf-8")
    write_memory_build(project / "build", NEWER)  # the catalog changed too: the block is stale besides

    refused = inject("AGENTS.md")
    check = inject("--check", "AGENTS.md")

    assert refused.exit_code == 2, refused.output
    assert "AGENTS.md: the capidx block at line 5 was " in refused.output
    assert "capidx inject --force AGENTS.md" in refused.output and "nothing written" in refused.output
    assert path.read_text("utf-8") == edited
    assert check.exit_code == 1
    assert check.output.startswith("AGENTS.md: the capidx block at line 5 was ")
    assert check.output.splitlines()[-1].endswith("capidx inject --force AGENTS.md")

    forced = inject("--force", "AGENTS.md")

    assert forced.exit_code == 0, forced.output
    assert forced.output == "AGENTS.md: block replaced (--force: the text that was in it is gone)\n"
    text = path.read_text("utf-8")
    assert text.startswith("# Rules\n\nOurs.\n\n" + BEGIN) and text.endswith(END + "\n\n## After\n")
    assert body_of(text) == NEWER
    assert inject("--check", "AGENTS.md").exit_code == 0
    assert inject("AGENTS.md").output == "AGENTS.md: unchanged (the block is current)\n"


def _converted_to_crlf(text: str) -> str:
    """A checkout with `core.autocrlf` turns every line ending into CRLF, the block's too."""
    return text.replace("\n", "\r\n")


def _an_older_note_in_the_marker(text: str) -> str:
    """What the begin marker says besides the hash is capidx's own note, which a release may reword."""
    return text.replace("(generated by capidx inject", "(written by capidx inject", 1)


def _indented_markers(text: str) -> str:
    return text.replace(BEGIN, "  " + BEGIN).replace(END, "  " + END)


def _blanks_after_the_markers(text: str) -> str:
    return text.replace("block) -->", "block) -->  ", 1).replace(END, END + "\t")


UNEDITED = {
    fn.__name__.strip("_"): fn
    for fn in (_converted_to_crlf, _an_older_note_in_the_marker, _indented_markers, _blanks_after_the_markers)
}


@pytest.mark.parametrize("case", UNEDITED)
def test_a_block_capidx_wrote_is_updated_without_force(project: Path, case: str) -> None:
    """Only the text between the markers and text after them is anyone's: what else differs is replaced."""
    path = project / "AGENTS.md"
    assert inject("AGENTS.md").exit_code == 0
    path.write_bytes(UNEDITED[case](path.read_text("utf-8")).encode("utf-8"))
    write_memory_build(project / "build", NEWER)

    stale = inject("--check", "AGENTS.md")
    result = inject("AGENTS.md")

    assert stale.exit_code == 1 and stale.output.startswith("AGENTS.md: stale: ")
    assert result.exit_code == 0, result.output
    assert result.output == "AGENTS.md: block updated\n"
    newline = "\r\n" if case == "converted_to_crlf" else "\n"
    assert body_of(path.read_bytes().decode("utf-8"), newline) == NEWER.replace("\n", newline)


def test_a_block_differing_only_in_its_markers_is_stale_not_edited(project: Path) -> None:
    """Same memory, marker reworded: --check says so and a plain inject rewrites it."""
    path = project / "AGENTS.md"
    assert inject("AGENTS.md").exit_code == 0
    path.write_text(_an_older_note_in_the_marker(path.read_text("utf-8")), encoding="utf-8")

    check = inject("--check", "AGENTS.md")

    assert check.exit_code == 1
    assert check.output.splitlines()[0] == (
        "AGENTS.md: stale: the block's markers or line endings differ from those capidx inject writes"
    )
    assert inject("AGENTS.md").output == "AGENTS.md: block updated\n"
    assert inject("--check", "AGENTS.md").exit_code == 0


def test_force_overrides_nothing_but_an_edited_block(project: Path) -> None:
    (project / "CLAUDE.md").write_text("<!-- capidx:begin -->\n<!-- capidx:begin -->\n<!-- capidx:end -->\n", "utf-8")
    (project / "capidx.yaml").write_text("title: Ours\n", encoding="utf-8")
    before = tree(project)

    result = inject("--force", "CLAUDE.md", "capidx.yaml", "../elsewhere.md")

    assert result.exit_code == 2
    assert "CLAUDE.md: duplicated capidx markers" in result.output
    assert "capidx.yaml: it is the capidx.yaml in force" in result.output
    assert "../elsewhere.md: it is outside the project" in result.output
    assert tree(project) == before


def test_check_and_force_together_are_refused(project: Path) -> None:
    result = inject("--check", "--force", "AGENTS.md")

    assert result.exit_code == 2
    assert "--check writes nothing, so --force has nothing to replace: give one of them" in result.output
    assert not (project / "AGENTS.md").exists()


# ---- bad input: exit 2, every file untouched -------------------------------------------------------------

BAD_MARKERS = {
    "two-begins": ("a\n<!-- capidx:begin x -->\nb\n<!-- capidx:begin y -->\n<!-- capidx:end -->\n", "duplicated"),
    "two-blocks": ("<!-- capidx:begin -->\n<!-- capidx:end -->\n<!-- capidx:begin -->\n<!-- capidx:end -->\n", "dup"),
    "begin-only": ("a\n<!-- capidx:begin memory=sha256:00 -->\nb\n", "unbalanced"),
    "end-only": ("a\n  <!-- capidx:end -->\n", "unbalanced"),
    "end-first": ("<!-- capidx:end -->\nx\n<!-- capidx:begin -->\n", "the capidx end marker comes before its begin"),
}


@pytest.mark.parametrize("case", BAD_MARKERS)
def test_markers_that_do_not_pair_are_refused(project: Path, case: str) -> None:
    text, problem = BAD_MARKERS[case]
    (project / "AGENTS.md").write_text(text, encoding="utf-8")

    result = inject("AGENTS.md", "CLAUDE.md")
    check = inject("--check", "AGENTS.md")

    assert result.exit_code == 2 and check.exit_code == 2
    assert f"AGENTS.md: {problem}" in result.output
    assert "line " in result.output and "nothing written" in result.output
    assert (project / "AGENTS.md").read_text("utf-8") == text
    assert not (project / "CLAUDE.md").exists()  # checked first, so the good file is not written either


def _outside(project: Path) -> tuple[str, str]:
    (project.parent / "elsewhere.md").write_text("# theirs\n", encoding="utf-8")
    return "../elsewhere.md", "outside the project"


def _absolute_outside(project: Path) -> tuple[str, str]:
    (project.parent / "elsewhere.md").write_text("# theirs\n", encoding="utf-8")
    return str(project.parent / "elsewhere.md"), "outside the project"


def _file_link_out(project: Path) -> tuple[str, str]:
    (project.parent / "elsewhere.md").write_text("# theirs\n", encoding="utf-8")
    (project / "AGENTS.md").symlink_to(project.parent / "elsewhere.md")
    return "AGENTS.md", "symbolic link on the way leads out of the project"


def _folder_link_out(project: Path) -> tuple[str, str]:
    (project.parent / "outside").mkdir()
    (project / ".github").symlink_to(project.parent / "outside")
    return ".github/copilot-instructions.md", "symbolic link on the way leads out of the project"


def _dangling_link(project: Path) -> tuple[str, str]:
    (project / "AGENTS.md").symlink_to("missing.md")
    return "AGENTS.md", "a symbolic link to a missing file"


def _link_loop(project: Path) -> tuple[str, str]:
    (project / "AGENTS.md").symlink_to("AGENTS.md")
    return "AGENTS.md", "symbolic link"


def _not_utf8(project: Path) -> tuple[str, str]:
    (project / "AGENTS.md").write_bytes("# Règles\n".encode("latin-1"))
    return "AGENTS.md", "AGENTS.md:1:4: not valid UTF-8: byte 0xe8 at offset 3 (save the file as UTF-8)"


def _folder(project: Path) -> tuple[str, str]:
    (project / "AGENTS.md").mkdir()
    return "AGENTS.md", "not a regular file"


def _fifo(project: Path) -> tuple[str, str]:
    os.mkfifo(project / "AGENTS.md")
    return "AGENTS.md", "not a regular file"


def _file_as_folder(project: Path) -> tuple[str, str]:
    (project / "docs").write_text("a file\n", encoding="utf-8")
    return "docs/AGENTS.md", "is not a folder"


def _inside_git(project: Path) -> tuple[str, str]:
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    return ".git/hooks/pre-commit", "inside .git"


def _inside_build(project: Path) -> tuple[str, str]:
    return "build/memory.md", "inside the build directory"


def _too_large(project: Path) -> tuple[str, str]:
    (project / "AGENTS.md").write_bytes(b"x" * (4 * 1024 * 1024 + 1))
    return "AGENTS.md", "larger than 4 MiB"


def _inside_git_in_capitals(project: Path) -> tuple[str, str]:
    """On a file system that ignores case (macOS, Windows) `.GIT` is the repository's `.git`."""
    (project / ".GIT" / "hooks").mkdir(parents=True)
    (project / ".GIT" / "hooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    return ".GIT/hooks/pre-commit", "inside .git"


def _the_config_in_force(project: Path) -> tuple[str, str]:
    (project / "capidx.yaml").write_text("title: Ours\n", encoding="utf-8")
    return "capidx.yaml", "it is the capidx.yaml in force (capidx.yaml), an input of capidx build"


def _a_config_given_by_config(project: Path) -> tuple[str, str]:
    """`--config` names the file in force whatever it is called: its name would pass as Markdown."""
    (project / "settings.md").write_text("title: Ours\n", encoding="utf-8")
    return "--config=settings.md settings.md", "it is the capidx.yaml in force (settings.md)"


def _a_hard_link_to_the_config(project: Path) -> tuple[str, str]:
    (project / "capidx.yaml").write_text("title: Ours\n", encoding="utf-8")
    os.link(project / "capidx.yaml", project / "CLAUDE.md")  # the same file under a Markdown name
    return "CLAUDE.md", "it is the capidx.yaml in force"


def _a_link_to_the_config(project: Path) -> tuple[str, str]:
    (project / "capidx.yaml").write_text("title: Ours\n", encoding="utf-8")
    (project / "AGENTS.md").symlink_to("capidx.yaml")
    return "AGENTS.md", "it is the capidx.yaml in force"


def _a_capability_document(project: Path) -> tuple[str, str]:
    document = project / "agents" / "alpha" / "capabilities" / "current.json"
    document.parent.mkdir(parents=True)
    document.write_text('{"agent": "alpha"}\n', encoding="utf-8")
    return "agents/alpha/capabilities/current.json", (
        "it is a capability document (agents/alpha/capabilities/current.json), an input of capidx build"
    )


def _a_link_target_of_a_capability_document(project: Path) -> tuple[str, str]:
    """The build reads the file a document's link leads to (inside the catalog): under a Markdown name too."""
    (project / "agents" / "alpha" / "capabilities").mkdir(parents=True)
    (project / "agents" / "alpha" / "notes.md").write_text('{"agent": "alpha"}\n', encoding="utf-8")
    (project / "agents" / "alpha" / "capabilities" / "current.json").symlink_to(Path("..") / "notes.md")
    return "agents/alpha/notes.md", "it is a capability document (agents/alpha/capabilities/current.json)"


def _a_hard_link_to_a_capability_document(project: Path) -> tuple[str, str]:
    document = project / "data" / "alpha" / "capabilities" / "current.yaml"
    document.parent.mkdir(parents=True)
    document.write_text("agent: alpha\n", encoding="utf-8")
    (project / "capidx.yaml").write_text("paths:\n  agents: data\n", encoding="utf-8")
    os.link(document, project / "NOTES.md")
    return "NOTES.md", "it is a capability document (data/alpha/capabilities/current.yaml)"


def _the_alias_table(project: Path) -> tuple[str, str]:
    (project / "capidx.yaml").write_text("paths:\n  aliases: names.md\n", encoding="utf-8")
    (project / "names.md").write_text("{}\n", encoding="utf-8")
    return "names.md", "it is the alias table (names.md)"


def _an_alias_table_named_agents_md(project: Path) -> tuple[str, str]:
    """The name a refusal suggests is never one refused itself: here AGENTS.md is the alias table."""
    (project / "capidx.yaml").write_text("paths:\n  aliases: AGENTS.md\n", encoding="utf-8")
    (project / "AGENTS.md").write_text("{}\n", encoding="utf-8")
    return "AGENTS.md", (
        "AGENTS.md: it is the alias table (AGENTS.md), an input of capidx build, not a memory file; "
        "name one such as CLAUDE.md\n"
    )


def _a_schema_file_the_schema_refers_to(project: Path) -> tuple[str, str]:
    (project / "schema").mkdir()
    (project / "schema" / "capability.json").write_text('{"$ref": "defs.json"}\n', encoding="utf-8")
    (project / "schema" / "defs.json").write_text('{"type": "object"}\n', encoding="utf-8")
    os.link(project / "schema" / "defs.json", project / "schema" / "NOTES.md")
    (project / "capidx.yaml").write_text("paths:\n  schema: schema/capability.json\n", encoding="utf-8")
    return "schema/NOTES.md", "it is a schema file the schema refers to (schema/defs.json)"


def _what_a_link_to_the_alias_table_will_lead_to(project: Path) -> tuple[str, str]:
    """The alias table is a link to a file not made yet: made by inject, it would be read as the table."""
    (project / "capidx.yaml").write_text("paths:\n  aliases: names.md\n", encoding="utf-8")
    (project / "docs").mkdir()
    (project / "names.md").symlink_to("docs/AGENTS.md")
    return "docs/AGENTS.md", "it is the alias table (names.md)"


def _templates(project: Path, folder: str, summary: str) -> None:
    """A templates folder (`folder`, given by capidx.yaml) whose summary template is `summary`."""
    (project / "capidx.yaml").write_text(f"paths:\n  templates: {folder}\n", encoding="utf-8")
    (project / folder).mkdir(exist_ok=True)
    (project / folder / "summary.md.j2").write_text(summary, encoding="utf-8")


def _a_file_a_template_includes(project: Path) -> tuple[str, str]:
    """Included by a template, not there yet: a file made under that name would be read by the next build."""
    _templates(project, "templates", '# {{ title }}\n{% include "partials/notes.md" %}\n')
    return "templates/partials/notes.md", (
        "it is a template or a file a template includes (templates/partials/notes.md), an input of capidx build"
    )


def _a_file_a_template_includes_in_turn(project: Path) -> tuple[str, str]:
    _templates(project, "templates", '{% include "partials/a.md" %}\n')
    (project / "templates" / "partials").mkdir()
    (project / "templates" / "partials" / "a.md").write_text('{% import "b.txt" as b %}\n', encoding="utf-8")
    return "templates/b.txt", "it is a template or a file a template includes (templates/b.txt)"


def _a_template(project: Path) -> tuple[str, str]:
    (project / "templates").mkdir()
    (project / "templates" / "agent.md.j2").write_text("# {{ agent.name }}\n", encoding="utf-8")
    return "templates/agent.md.j2", "it is a template or a file a template includes (templates/agent.md.j2)"


def _templates_including_a_computed_name(project: Path) -> tuple[str, str]:
    """Which file `{% include "parts/" ~ title %}` reads is known only when it renders: the folder is refused."""
    _templates(project, "templates", '{% include "parts/" ~ title %}\n')
    return "templates/NOTES.md", (
        "inside the templates folder (templates), which capidx build may read whole: which of its files the "
        "templates read cannot be told (a name computed at render time"
    )


def _templates_naming_too_many_files(project: Path) -> tuple[str, str]:
    """More names than `MAX_NAMES_FOLLOWED`: the folder counts as read whole (following hostile templates that name
    hundreds of thousands of files took inject several times the build's time)."""
    includes = "".join(f'{{% include "p/{number}.md" ignore missing %}}' for number in range(MAX_NAMES_FOLLOWED + 1))
    _templates(project, "templates", includes)
    return "templates/NOTES.md", "inside the templates folder (templates), which capidx build may read whole"


def _a_template_that_does_not_parse(project: Path) -> tuple[str, str]:
    _templates(project, "templates", "{% include %}\n")
    return "templates/NOTES.md", "inside the templates folder (templates), which capidx build may read whole"


def _templates_at_the_project_root_including_agents_md(project: Path) -> tuple[str, str]:
    _templates(project, ".", '{% include "AGENTS.md" %}\n')
    (project / "AGENTS.md").write_text("# Rules\n", encoding="utf-8")
    return "AGENTS.md", (
        "AGENTS.md: it is a template or a file a template includes (AGENTS.md), an input of capidx build, not a "
        "memory file; name one such as CLAUDE.md\n"
    )


def _templates_at_the_project_root_including_a_computed_name(project: Path) -> tuple[str, str]:
    """Every name a refusal could suggest is inside the folder refused: it suggests none."""
    _templates(project, ".", '{% include "parts/" ~ title %}\n')
    return "AGENTS.md", (
        "AGENTS.md: inside the templates folder (.), which capidx build may read whole: which of its files the "
        "templates read cannot be told (a name computed at render time, a template that cannot be read or parsed, "
        "or more than 10,000 names to follow); not a memory file; name a memory file that capidx build does not "
        "read\n"
    )


def _an_executable_script(project: Path) -> tuple[str, str]:
    (project / "deploy").write_text("#!/bin/sh\necho deployed\n", encoding="utf-8")
    (project / "deploy").chmod(0o755)
    return "deploy", "deploy: a program, not a memory file: it starts with a #! line, and a script runs text appended"


def _an_executable_script_without_a_shebang(project: Path) -> tuple[str, str]:
    """A shell runs an executable text file as a script (ENOEXEC): text appended to it would run."""
    (project / "tools").mkdir()
    (project / "tools" / "deploy").write_text("echo deployed\n", encoding="utf-8")
    (project / "tools" / "deploy").chmod(0o755)
    return "tools/deploy", "tools/deploy: executable, with a name without a suffix: a script that a shell runs"


def _a_link_to_a_script(project: Path) -> tuple[str, str]:
    (project / "run.sh").write_text("echo hi\n", encoding="utf-8")
    (project / "AGENTS.md").symlink_to("run.sh")
    return "AGENTS.md", "run.sh is not a Markdown or plain-text file by its name"


BAD_PATHS = {
    fn.__name__.strip("_"): fn
    for fn in (
        _outside,
        _absolute_outside,
        _file_link_out,
        _folder_link_out,
        _dangling_link,
        _link_loop,
        _not_utf8,
        _folder,
        _fifo,
        _file_as_folder,
        _inside_git,
        _inside_build,
        _too_large,
        _inside_git_in_capitals,
        _the_config_in_force,
        _a_config_given_by_config,
        _a_hard_link_to_the_config,
        _a_link_to_the_config,
        _a_capability_document,
        _a_link_target_of_a_capability_document,
        _a_hard_link_to_a_capability_document,
        _the_alias_table,
        _what_a_link_to_the_alias_table_will_lead_to,
        _an_alias_table_named_agents_md,
        _a_schema_file_the_schema_refers_to,
        _a_file_a_template_includes,
        _a_file_a_template_includes_in_turn,
        _a_template,
        _templates_including_a_computed_name,
        _templates_naming_too_many_files,
        _a_template_that_does_not_parse,
        _templates_at_the_project_root_including_agents_md,
        _templates_at_the_project_root_including_a_computed_name,
        _an_executable_script,
        _an_executable_script_without_a_shebang,
        _a_link_to_a_script,
    )
}


@pytest.mark.parametrize("case", BAD_PATHS)
@pytest.mark.parametrize("check", [False, True], ids=["write", "check"])
def test_a_file_that_may_not_be_used_is_refused_and_nothing_is_written(project: Path, case: str, check: bool) -> None:
    (project / "GEMINI.md").write_text("# Ours\n", encoding="utf-8")
    given, problem = BAD_PATHS[case](project)
    *options, name = given.split(" ")
    before = tree(project.parent)

    result = inject(*(["--check"] if check else []), *options, "GEMINI.md", name, "CONVENTIONS.md")

    assert result.exit_code == 2, result.output
    assert f"{name}:" in result.output and problem in result.output  # "name: problem", or "name:line:column: ..."
    assert "Traceback" not in result.output
    assert tree(project.parent) == before  # the good files named with it were neither written nor created


# A program is told by its first bytes, whatever its name and mode: (name, bytes, mode, what the message says).
_ELF = b"\x7fELF\x02\x01\x01\x00" + bytes(8) + b"\x02\x00\x3e\x00"
_PE = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff" + bytes(46) + b"\x80\x00\x00\x00"
PROGRAMS = {
    "script-executable": ("deploy", b"#!/bin/sh\necho deployed\n", 0o755, "a #! line, and a script runs text"),
    "script-not-executable": ("deploy", b"#!/bin/sh\necho deployed\n", 0o644, "a #! line"),  # `sh deploy` runs it
    "script-named-as-markdown": ("setup.md", b"#!/usr/bin/env python3\nprint('hi')\n", 0o644, "a #! line"),
    "script-named-as-rules": (".windsurfrules", b"#!/bin/sh\nexit 0\n", 0o777, "a #! line"),
    "elf": ("tool", _ELF, 0o755, "an ELF header, and text appended to an executable breaks it"),
    "elf-named-as-markdown": ("AGENTS.md", _ELF, 0o644, "an ELF header"),
    "mach-o-32": ("tool", b"\xfe\xed\xfa\xce" + bytes(12), 0o755, "a Mach-O header"),
    "mach-o-64": ("tool", b"\xfe\xed\xfa\xcf" + bytes(12), 0o755, "a Mach-O header"),
    "mach-o-32-reversed": ("tool", b"\xce\xfa\xed\xfe" + bytes(12), 0o755, "a Mach-O header"),
    "mach-o-64-reversed": ("tool", b"\xcf\xfa\xed\xfe" + bytes(12), 0o755, "a Mach-O header"),
    "mach-o-universal": ("tool", b"\xca\xfe\xba\xbe" + bytes(12), 0o755, "a Mach-O universal header"),
    "pe": ("tool.txt", _PE, 0o644, "an MZ (DOS or Windows PE) header"),
}


@pytest.mark.parametrize("case", PROGRAMS)
@pytest.mark.parametrize("how", ["write", "check", "force"])
def test_a_program_is_refused_whatever_its_name_and_mode(project: Path, case: str, how: str) -> None:
    """Text appended to a script runs with it, and breaks a binary: refused by content, with no advice to change
    its mode (which decides nothing, and which some file systems cannot change), and --force does not help."""
    name, content, mode, problem = PROGRAMS[case]
    (project / name).write_bytes(content)
    (project / name).chmod(mode)
    before = tree(project)

    result = inject(*{"write": [], "check": ["--check"], "force": ["--force"]}[how], "AGENTS.md", name)

    assert result.exit_code == 2, result.output
    assert f"{name}: a program, not a memory file: it starts with {problem}" in result.output
    assert "chmod" not in result.output and "execute" not in result.output
    assert "nothing written" in result.output
    assert tree(project) == before
    assert stat.S_IMODE((project / name).stat().st_mode) == mode


# Text is a memory file whatever its mode: a Windows drive under WSL, or a FAT stick, shows every file as 777.
EXECUTABLE_TEXT = {
    "markdown": ("AGENTS.md", "# Rules\n"),
    "windsurf": (".windsurfrules", "# Rules\n\nUse tabs.\n"),
    "cursor": (".cursorrules", "Use tabs.\n"),
    "cline": (".clinerules", "- Use tabs.\n"),
    "letters-mz": ("NOTES.md", "MZ-80 notes: the letters of an executable's header, but text\n"),
    "hash-bang-later": ("CLAUDE.md", "# Rules\n#!/bin/sh is how a script starts\n"),
}


@pytest.mark.parametrize("name", ["x\\ud800.md", "x\\x00y.md"])
def test_a_template_including_a_name_no_file_can_have_is_no_problem(project: Path, name: str) -> None:
    """A lone surrogate or a NUL, which Jinja's string escapes allow, names no file: the build reads nothing there,
    and inject neither refuses for it nor fails with a traceback."""
    _templates(project, "templates", f'# {{{{ title }}}}\n{{% include "{name}" ignore missing %}}\n')

    result = inject("AGENTS.md")

    assert result.exit_code == 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("case", EXECUTABLE_TEXT)
def test_an_executable_text_file_is_a_memory_file(project: Path, case: str) -> None:
    name, text = EXECUTABLE_TEXT[case]
    (project / name).write_text(text, encoding="utf-8")
    (project / name).chmod(0o777 if case == "windsurf" else 0o755)
    mode = stat.S_IMODE((project / name).stat().st_mode)

    result = inject(name)

    assert result.exit_code == 0, result.output
    assert result.output == f"{name}: block added\n"
    written = (project / name).read_text("utf-8")
    assert written.startswith(text) and body_of(written) == MEMORY
    assert stat.S_IMODE((project / name).stat().st_mode) == mode  # kept


# Names that say the file is code or data, not Markdown; compared ignoring case.
NOT_MEMORY_NAMES = [
    "notes.json",
    "settings.YAML",
    "ci.yml",
    "pyproject.toml",
    "tool.py",
    "setup.sh",
    "app.js",
    "app.ts",
    "Gemfile.lock",
    "page.mdx",  # MDX has no HTML comments: the markers would break it
    "index.html",
    "guide.rst",
    "Makefile",
    "Dockerfile",
    ".gitignore",
    ".gitattributes",
    ".npmrc",
    ".env",
    ".python-version",
    ".github/CODEOWNERS",
]


@pytest.mark.parametrize("name", NOT_MEMORY_NAMES)
@pytest.mark.parametrize("exists", [False, True], ids=["new", "existing"])
def test_a_name_that_is_not_markdown_or_plain_text_is_refused(project: Path, name: str, exists: bool) -> None:
    if exists:
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("key = 1\n", encoding="utf-8")
    before = tree(project)

    result = inject("AGENTS.md", name)

    assert result.exit_code == 2, result.output
    assert f"{name}: {Path(name).name} is not a Markdown or plain-text file by its name; name a memory file" in (
        result.output
    )
    assert "nothing written" in result.output
    assert tree(project) == before


@pytest.mark.parametrize(
    "name",
    [
        "requirements.txt",
        "requirements-dev.txt",
        "test-requirements.txt",
        "dev_requirements.txt",
        "requirements/dev.txt",
        "constraints.txt",
        "upper-constraints.txt",
        "constraints/py311.txt",
        "requirements/ci/test.txt",  # a folder below one of pip's: every folder on the way counts
        "Constraints/old/py38/pins.txt",
        "CMakeLists.txt",
        "requirements3.txt",  # a digit after the word, as projects kept lists for Python 2 and 3
        "requirement.txt",  # the singular: pip reads whatever -r names
        "dev-constraint.txt",
    ],
)
def test_a_text_file_its_tool_reads_line_by_line_is_refused(project: Path, name: str) -> None:
    # a memory file named so ('agent-constraints.txt') is refused too: a message costs less than a broken pip file
    """`.txt` is a memory file's suffix too, but pip or CMake would fail on the markers appended to these."""
    (project / name).parent.mkdir(parents=True, exist_ok=True)
    (project / name).write_text("requests==2.0\n", encoding="utf-8")
    before = tree(project)

    result = inject("AGENTS.md", name)

    assert result.exit_code == 2 and f"{Path(name).name} is read line by line by its tool" in result.output
    assert tree(project) == before


@pytest.mark.parametrize(("link", "target", "name"), [
    ("requirements", "deps", "requirements/dev.txt"),  # a folder pip is given by its link's name
    ("requirements.txt", "notes.txt", "requirements.txt"),  # a file pip reads, linked to a memory-like name
])  # fmt: skip
def test_a_pip_file_reached_through_a_link_is_refused_by_the_name_written(
    project: Path, link: str, target: str, name: str
) -> None:
    """pip reads `requirements/dev.txt` whatever the folder's link leads to: the path as written counts as much
    as the file it reaches."""
    final = project / target / "dev.txt" if link == "requirements" else project / target
    final.parent.mkdir(parents=True, exist_ok=True)
    final.write_text("requests==2.0\n", encoding="utf-8")
    (project / link).symlink_to(project / target)
    before = tree(project)

    result = inject("AGENTS.md", name)

    assert result.exit_code == 2 and "is read line by line by its tool" in result.output, result.output
    assert tree(project) == before


@pytest.mark.parametrize("through", ["the file", "--config"])
def test_a_linked_pip_folder_is_refused_when_the_project_itself_is_named_through_a_link(
    project: Path, tmp_path: Path, through: str
) -> None:
    """The project reached through a link (`/elsewhere/link/requirements/dev.txt`, or --config so named) still
    has its `requirements/` link read by pip as requirements/dev.txt."""
    (project / "deps").mkdir()
    (project / "deps" / "dev.txt").write_text("requests==2.0\n", encoding="utf-8")
    (project / "requirements").symlink_to("deps")
    (project / "capidx.yaml").write_text("title: Ours\n", encoding="utf-8")
    link = tmp_path / "elsewhere" / "link"
    link.parent.mkdir()
    link.symlink_to(project)
    before = tree(project)

    if through == "the file":
        result = inject(str(link / "requirements" / "dev.txt"))
    else:
        result = inject("--config", str(link / "capidx.yaml"), "requirements/dev.txt")

    assert result.exit_code == 2 and "dev.txt is read line by line by its tool" in result.output, result.output
    assert tree(project) == before


def test_a_text_file_in_another_folder_is_written_even_in_a_project_kept_in_a_requirements_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the folders between the project and the file tell pip's files: `.txt` is a memory file's suffix in
    `docs/ci/`, also when the project itself lives in a folder named `requirements`."""
    project = tmp_path / "requirements" / "app"
    project.mkdir(parents=True)
    monkeypatch.chdir(project)
    write_memory_build(project / "build", MEMORY)

    result = inject("docs/ci/notes.txt", "notes.txt")

    assert result.exit_code == 0, result.output
    assert body_of((project / "docs" / "ci" / "notes.txt").read_text("utf-8")) == MEMORY
    assert body_of((project / "notes.txt").read_text("utf-8")) == MEMORY


MEMORY_FILES = [
    "AGENTS.md",
    "CLAUDE.md",
    "GEMINI.md",
    "Agents.MD",
    ".github/copilot-instructions.md",
    ".github/instructions/python.instructions.md",
    ".cursor/rules/capabilities.mdc",
    ".windsurfrules",
    ".clinerules",
    ".cursorrules",
    ".rules",
    "CONVENTIONS.markdown",
    "notes.txt",
]


@pytest.mark.parametrize("exists", [False, True], ids=["new", "existing"])
def test_memory_files_of_every_agent_are_written(project: Path, exists: bool) -> None:
    """The suffixes agents use (.md, Cursor's .mdc, plain text) and the dotfiles without one (.windsurfrules)."""
    (project / "agents").mkdir()  # the catalog folder: what is beside it is not inside it
    for name in MEMORY_FILES if exists else ():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("Rules of our own.\n", encoding="utf-8")

    result = inject(*MEMORY_FILES)

    assert result.exit_code == 0, result.output
    for name in MEMORY_FILES:
        text = (project / name).read_text("utf-8")
        assert body_of(text) == MEMORY
        assert text.startswith("Rules of our own.\n\n" if exists else BEGIN)
    assert inject("--check", *MEMORY_FILES).exit_code == 0


def _the_catalog_at_the_project_root(project: Path) -> list[str]:
    (project / "capidx.yaml").write_text("paths:\n  agents: .\n", encoding="utf-8")
    (project / "alpha" / "capabilities").mkdir(parents=True)
    (project / "alpha" / "capabilities" / "current.json").write_text('{"agent": "alpha"}\n', encoding="utf-8")
    (project / "aliases.json").write_text("{}\n", encoding="utf-8")
    return ["AGENTS.md", ".windsurfrules", "alpha/README.md", "alpha/capabilities/NOTES.md"]


def _markdown_beside_the_catalogs_data(project: Path) -> list[str]:
    (project / "agents" / "alpha" / "capabilities").mkdir(parents=True)
    (project / "agents" / "alpha" / "capabilities" / "current.json").write_text("{}\n", encoding="utf-8")
    (project / "agents" / "README.md").write_text("# The catalog\n", encoding="utf-8")
    return ["agents/README.md", "agents/alpha/AGENTS.md"]


def _a_moved_catalog(project: Path) -> list[str]:
    (project / "capidx.yaml").write_text("paths:\n  agents: data/catalog\n", encoding="utf-8")
    (project / "data" / "catalog").mkdir(parents=True)
    return ["data/catalog/AGENTS.md"]


def _markdown_beside_templates(project: Path) -> list[str]:
    _templates(project, "templates", '{% include "partials/notes.md" %}\n')
    return ["templates/NOTES.md", "templates/partials/other.md", "AGENTS.md"]


def _templates_at_the_project_root(project: Path) -> list[str]:
    _templates(project, ".", '{% import "_macros.md.j2" as m %}{% include "partials/notes.md" %}\n')
    return ["AGENTS.md", "CLAUDE.md", "partials/README.md"]


UNREAD_PLACES = {
    fn.__name__.strip("_"): fn
    for fn in (
        _the_catalog_at_the_project_root,
        _markdown_beside_the_catalogs_data,
        _a_moved_catalog,
        _markdown_beside_templates,
        _templates_at_the_project_root,
    )
}


@pytest.mark.parametrize("case", UNREAD_PLACES)
def test_a_file_the_build_does_not_read_is_written_wherever_it_is(project: Path, case: str) -> None:
    """The catalog and templates folders may be the project's own (`paths.agents: .`): what is refused is what
    the build reads from them (documents, the alias table, templates and what they include), not every file there."""
    names = UNREAD_PLACES[case](project)
    existing = names[0]
    (project / existing).parent.mkdir(parents=True, exist_ok=True)
    (project / existing).write_text("# Ours\n", encoding="utf-8")

    result = inject(*names)

    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [f"{existing}: block added", *(f"{name}: created" for name in names[1:])]
    for name in names:
        assert body_of((project / name).read_text("utf-8")) == MEMORY
    assert inject("--check", *names).exit_code == 0


def test_every_bad_file_is_named_at_once(project: Path) -> None:
    (project / "AGENTS.md").write_bytes(b"\xff\xfe")
    (project / "CLAUDE.md").write_text("<!-- capidx:end -->\n", encoding="utf-8")

    result = inject("AGENTS.md", "CLAUDE.md", "../x.md")

    assert result.exit_code == 2
    assert "AGENTS.md:1:1: not valid UTF-8: the file is UTF-16 or UTF-32" in result.output  # \xff\xfe: its mark
    assert "CLAUDE.md: unbalanced" in result.output
    assert "../x.md: it is outside the project" in result.output


def test_no_build_says_to_run_capidx_build(project: Path) -> None:
    result = inject("--build", "nowhere", "AGENTS.md")

    assert result.exit_code == 2
    assert "capidx build" in result.output
    assert not (project / "AGENTS.md").exists()


def test_a_build_without_memory_says_to_run_capidx_build(project: Path) -> None:
    write_build(project / "old", make_manifest())

    result = inject("--build", "old", "AGENTS.md")
    check = inject("--check", "--build", "old", "AGENTS.md")

    assert result.exit_code == 2 and check.exit_code == 2
    assert "no memory artifact" in result.output and "capidx build" in result.output
    assert not (project / "AGENTS.md").exists()


def test_a_memory_md_that_does_not_match_the_manifest_is_refused(project: Path) -> None:
    (project / "build" / "memory.md").write_text(NEWER, encoding="utf-8")

    result = inject("AGENTS.md")

    assert result.exit_code == 2
    assert "sha256" in result.output and "capidx build" in result.output
    assert not (project / "AGENTS.md").exists()


def test_a_memory_md_linked_out_of_the_build_is_refused_unread(project: Path, tmp_path: Path) -> None:
    """A build a pull request commits may link its memory.md to any file of the machine: inject followed the link and
    copied the file into AGENTS.md when its sha256 matched the row (report and serve refuse such a link)."""
    outside = tmp_path / "outside.md"
    outside.write_text(MEMORY, encoding="utf-8")
    (project / "build" / "memory.md").unlink()
    (project / "build" / "memory.md").symlink_to(outside)

    result = inject("AGENTS.md")

    assert result.exit_code == 2, result.output
    assert "memory.md: leads out of the build directory; rebuild with `capidx build`" in result.output
    assert not (project / "AGENTS.md").exists()


def test_a_memory_row_listing_more_bytes_than_its_file_is_refused_before_it_is_read(project: Path) -> None:
    """The row's `bytes` was handed to `read`: 2**53 - 1, which the manifest's schema allows, asked for that much
    memory at once (a MemoryError traceback, exit 1); a large file was read as far as the row said."""
    manifest_file = project / "build" / "manifest.json"
    manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    row = next(row for row in manifest["artifacts"] if row["kind"] == "memory")
    row["bytes"] = 2**53 - 1
    manifest_file.write_text(json.dumps(manifest), encoding="utf-8")

    result = inject("AGENTS.md")

    assert result.exit_code == 2, result.output
    assert f"memory.md: {len(MEMORY.encode()):,} bytes, fewer than the 9,007,199,254,740,991 its row in" in (
        result.output
    )
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not (project / "AGENTS.md").exists()


def test_a_memory_holding_a_marker_line_is_refused(project: Path) -> None:
    """A catalog whose text renders a marker on a line of its own would end the block early on the next run."""
    write_memory_build(project / "build", MEMORY + "<!-- capidx:end -->\n")

    result = inject("AGENTS.md")

    assert result.exit_code == 2
    assert "marker" in result.output
    assert not (project / "AGENTS.md").exists()


def test_no_file_named_is_a_usage_error(project: Path) -> None:
    result = inject()

    assert result.exit_code == 2
    assert "FILES" in result.output


# ---- atomicity ---------------------------------------------------------------------------------------------


def test_a_failed_write_leaves_the_file_and_no_temporary_file(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "AGENTS.md").write_bytes(b"# Rules\n")

    def refuse(source: object, target: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    result = inject("AGENTS.md", "docs/CLAUDE.md")

    assert result.exit_code == 2
    assert "AGENTS.md: cannot write it: No space left on device" in result.output
    assert (project / "AGENTS.md").read_bytes() == b"# Rules\n"
    assert leftovers(project) == []


def _full_disk_for_the_second(monkeypatch: pytest.MonkeyPatch) -> None:
    """Making the second temporary file (that of the second file named) fails as on a full disk; every other write
    works. Counted, not told by name: a temporary name does not hold its file's."""
    real_open = os.open
    made = 0

    def full(path: object, flags: int, *args: object, **kwargs: object) -> int:
        nonlocal made
        if "capidx-inject" in Path(str(path)).name and flags & os.O_CREAT:
            made += 1
            if made == 2:
                raise OSError(28, "No space left on device")
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", full)


def test_a_memory_text_holding_a_marker_line_is_refused_with_its_line(project: Path) -> None:
    # Catalog text that starts a line with a marker would end the block early on the next run.
    write_memory_build(
        project / "build", "# Capabilities\n\nsee <!-- capidx:end --> inline is fine\n<!-- capidx:end -->\n"
    )
    (project / "AGENTS.md").write_bytes(b"# Rules\n")
    result = inject("AGENTS.md")

    assert result.exit_code == 2
    assert "memory.md:4: a line starting with a capidx marker; remove it from the catalog" in result.output
    assert (project / "AGENTS.md").read_bytes() == b"# Rules\n"


def test_a_failed_run_leaves_no_folder_it_created(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "docs").mkdir()
    _full_disk_for_the_second(monkeypatch)
    result = inject(".github/instructions/copilot.md", "docs/CLAUDE.md")

    assert result.exit_code == 2
    assert not (project / ".github").exists()  # created for the first file, removed with its temporary file
    assert (project / "docs").is_dir()  # there before the run: stays
    assert leftovers(project) == []


def test_a_folder_that_holds_a_renamed_file_stays(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_replace = os.replace

    def refuse_the_second(source: object, target: object) -> None:
        if Path(str(target)).name == "CLAUDE.md":
            raise OSError(13, "Permission denied")
        real_replace(source, target)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", refuse_the_second)
    result = inject(".github/copilot-instructions.md", "notes/CLAUDE.md")

    assert result.exit_code == 2
    assert (project / ".github" / "copilot-instructions.md").is_file()  # renamed before the failure: kept
    assert not (project / "notes").exists()  # created for the file that failed, empty again: removed
    assert leftovers(project) == []


def test_a_full_disk_on_the_second_file_leaves_every_file_as_it_was(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exit 2 means nothing written in any file: the first file is not replaced before the second is written."""
    (project / "AGENTS.md").write_bytes(b"# Rules\n")
    (project / "CLAUDE.md").write_bytes(b"# Claude\n")
    _full_disk_for_the_second(monkeypatch)
    result = inject("AGENTS.md", "CLAUDE.md")

    assert result.exit_code == 2
    assert "CLAUDE.md: cannot write it: No space left on device" in result.output
    assert (project / "AGENTS.md").read_bytes() == b"# Rules\n"
    assert (project / "CLAUDE.md").read_bytes() == b"# Claude\n"
    assert leftovers(project) == []


def test_a_file_changed_since_it_was_read_is_not_overwritten(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another writer between the check and the write: its text wins, and the user is told to run again."""
    from capidx.compiler.inject import target

    (project / "AGENTS.md").write_bytes(b"# Rules\n")
    real = target.open_target

    def open_then_edit(*args: object) -> target.Target:
        opened = real(*args)  # type: ignore[arg-type]
        (project / "AGENTS.md").write_bytes(b"# Rules, edited\n")
        return opened

    monkeypatch.setattr("capidx.compiler.inject.run.open_target", open_then_edit)
    result = inject("AGENTS.md")

    assert result.exit_code == 2
    assert "changed while capidx inject ran" in result.output
    assert (project / "AGENTS.md").read_bytes() == b"# Rules, edited\n"
    assert leftovers(project) == []


# ---- documentation -----------------------------------------------------------------------------------------


def test_inject_md_documents_every_option_and_the_hook_exists() -> None:
    import click
    import yaml

    root = Path(__file__).resolve().parent.parent
    text = (root / "docs" / "inject.md").read_text("utf-8")
    for param in cli.commands["inject"].params:
        if isinstance(param, click.Option) and param.name != "help":
            assert f"`{param.opts[0]}" in text, param.opts[0]
    hooks = {hook["id"]: hook for hook in yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text("utf-8"))}
    assert hooks["capidx-inject-check"]["entry"] == "capidx inject --check"
    assert "capidx-inject-check" in (root / "docs" / "ci.md").read_text("utf-8")
    assert "inject" in CliRunner().invoke(cli, ["--help"]).output


def test_inject_md_checks_an_app_s_block_against_the_build_its_ci_writes() -> None:
    """docs/inject.md's CI check for an app whose block comes from a catalog of its own repository built the catalog
    with `capidx build` (to the catalog's `paths.out`, which the same paragraph says to set to `.capidx`) and checked
    against `/tmp/catalog/build`: no build there, exit 2. The build's `--out` is the check's `--build`."""
    root = Path(__file__).resolve().parent.parent
    text = (root / "docs" / "inject.md").read_text("utf-8")
    fence = text[text.index("in the app's CI") :].split("```sh\n", 1)[1].split("```", 1)[0]
    (built,) = re.findall(r"capidx build --out (\S+?)\)?$", fence, re.MULTILINE)
    (checked,) = re.findall(r"capidx inject --check --build (\S+)", fence)
    assert built == checked


def test_a_block_pointing_at_a_build_not_there_yet_says_so(project: Path) -> None:
    """The block names the project's build folder (paths.out, here build/) for the details; injected from a
    build elsewhere while build/ does not exist, a model reading it would find nothing there: said, not refused."""
    os.rename(project / "build", project / "elsewhere")
    result = inject("AGENTS.md", "--build", "elsewhere")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1].startswith("note: the block points at build/ (paths.out), which does not")
    again = inject("AGENTS.md", "--build", "elsewhere")  # still no build/: still said
    assert "note: the block points at build/" in again.output
    os.rename(project / "elsewhere", project / "build")
    assert "note:" not in inject("AGENTS.md").output


def test_a_build_from_outside_a_project_without_catalog_is_said_to_be_another_project_s(
    project: Path, tmp_path: Path
) -> None:
    """A catalog kept in its own repository, its block injected into an app's: the block's build files are the
    catalog project's, and `capidx build` run in the app (no catalog there) failed. The note says where the details
    come from instead, and `--check` says to rebuild that build in its own project, not here. In a project with a
    catalog a build outside it (CI's `--out ../out/head`) is the project's, as before."""
    elsewhere = tmp_path / "catalog-repo" / "build"
    write_memory_build(elsewhere, MEMORY)
    result = inject("--build", str(elsewhere), "AGENTS.md")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == (
        f"note: {elsewhere} is the build of a catalog outside this project, so the build files the block names for"
        " details are not here unless a copy is kept (docs/inject.md): agents here get the details from the capidx"
        " MCP server"
    )
    write_memory_build(elsewhere, NEWER)
    stale = inject("--check", "--build", str(elsewhere), "AGENTS.md")
    assert stale.exit_code == 1, stale.output
    assert stale.output.splitlines()[-1] == (
        f"to update: rebuild {elsewhere} in its catalog's project (if the catalog changed), "
        f"then capidx inject --build {elsewhere} AGENTS.md"
    )
    assert "capidx build" not in stale.output
    (project / "agents").mkdir()
    assert (
        inject("--check", "--build", str(elsewhere), "AGENTS.md")
        .output.splitlines()[-1]
        .startswith(f"to update: capidx build --out {elsewhere} (if the catalog changed)")
    )


def test_another_project_s_build_named_by_paths_out_is_named_in_check_s_advice(project: Path, tmp_path: Path) -> None:
    """Without `--build`, a build of another project's catalog found through paths.out is named by where it is: the
    advice said 'rebuild None in its catalog's project'."""
    elsewhere = tmp_path / "catalog-repo" / "build"
    write_memory_build(elsewhere, MEMORY)
    (project / "capidx.yaml").write_text(f"paths:\n  out: {elsewhere}\n", encoding="utf-8")
    assert inject("AGENTS.md").exit_code == 0
    write_memory_build(elsewhere, NEWER)
    stale = inject("--check", "AGENTS.md")
    assert stale.exit_code == 1, stale.output
    assert stale.output.splitlines()[-1] == (
        f"to update: rebuild {elsewhere} in its catalog's project (if the catalog changed), "
        "then capidx inject AGENTS.md"
    )


def test_a_catalog_or_build_folder_this_user_may_not_look_at_is_no_traceback(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """capidx.yaml's catalog a link into a folder this user may not search, its build folder inside one: Python
    3.11's Path.is_dir raised the PermissionError, and inject ended in a traceback (the second after the file was
    written). No file inside such a folder could be written, so the catalog refuses none; of such a build folder
    nothing can be said, so there is no note. Simulated (as if `hidden` had mode 000): root searches any folder."""
    (project / "hidden" / "catalog").mkdir(parents=True)
    (project / "catalog").symlink_to("hidden/catalog")
    (project / "capidx.yaml").write_text("paths:\n  agents: catalog\n  out: hidden/build\n", encoding="utf-8")
    deny_search(monkeypatch, project / "hidden", project / "catalog")

    result = inject("AGENTS.md", "--build", "build")

    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == ["AGENTS.md: created"]
    assert body_of((project / "AGENTS.md").read_text("utf-8")) == MEMORY


def test_a_memory_file_in_a_folder_this_user_may_not_search_is_said_to_be_unreadable(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file inside a folder this user may not search, named as the memory file: the alias table capidx.yaml names
    there was asked Path.is_dir (to say "inside" or "it is") and Python 3.11 raised the PermissionError, a traceback;
    another file there was "cannot read it: Permission denied", without the permission needed. Both are said to be
    unreadable, with it, and nothing is written. Simulated (as if `hidden` had mode 000): root searches any folder."""
    (project / "hidden").mkdir()
    (project / "hidden" / "notes.md").write_text("# Notes\n", encoding="utf-8")
    (project / "capidx.yaml").write_text("paths:\n  aliases: hidden/notes.md\n", encoding="utf-8")
    deny_search(monkeypatch, project / "hidden")
    needed = (
        "the user running capidx needs read permission on the file, and search permission on the folders above it"
        " and, for a link, the folders it leads through"
    )

    result = inject("hidden/notes.md", "hidden/other.md", "AGENTS.md")

    assert result.exit_code == 2, result.output
    assert result.output.splitlines() == [
        f"Error: hidden/notes.md: cannot be read: permission denied ({needed})",
        f"hidden/other.md: cannot be read: permission denied ({needed})",
        "nothing written",
    ]
    assert not (project / "AGENTS.md").exists()


def test_a_memory_file_this_user_may_not_read_says_the_permission_needed(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memory file of mode 000, in a folder this user may search: inject said "cannot read it: Permission denied",
    where validate, build and inject itself (for a file in a folder it may not search) say what permission is
    missing. It is said in those words, and nothing is written. Simulated: root reads a file of mode 000."""
    (project / "AGENTS.md").write_text("# Rules\n", encoding="utf-8")
    denied = str(project / "AGENTS.md")
    real_open = open

    def guarded(path: object, *args: object, **kwargs: object) -> object:
        if isinstance(path, str | os.PathLike) and os.path.abspath(path) == denied:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_open(path, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(files, "open", guarded, raising=False)
    needed = (
        "the user running capidx needs read permission on the file, and search permission on the folders above it"
        " and, for a link, the folders it leads through"
    )

    result = inject("AGENTS.md", "CLAUDE.md")

    assert result.exit_code == 2, result.output
    assert result.output.splitlines() == [
        f"Error: AGENTS.md: cannot be read: permission denied ({needed})",
        "nothing written",
    ]
    assert (project / "AGENTS.md").read_text("utf-8") == "# Rules\n" and not (project / "CLAUDE.md").exists()


def test_a_folder_of_the_catalog_this_user_may_not_list_stops_inject(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which files the build reads is told by walking the catalog as validate does; a folder in it this user may
    search but not list (mode 111) was passed over, its capability documents not refused as memory files. It stops
    inject, as it stops validate and build, with the permission needed (exit 2), naming the folder as validate does:
    relative to the working directory (it was named by its whole path). Simulated: root lists any folder."""
    (project / "catalog" / "agent" / "capabilities").mkdir(parents=True)
    (project / "capidx.yaml").write_text("paths:\n  agents: catalog\n", encoding="utf-8")
    deny_listing(monkeypatch, project / "catalog" / "agent")

    result = inject("AGENTS.md")

    assert result.exit_code == 2, result.output
    folder = Path("catalog", "agent")
    needed = "the user running capidx needs read permission on the folder, to list what it holds"
    assert f"Error: {folder}: cannot be listed: permission denied ({needed})" in result.output.splitlines()
    assert not (project / "AGENTS.md").exists()


@pytest.mark.parametrize("deny", [deny_listing, deny_search], ids=["mode-111", "mode-000"])
def test_a_folder_named_as_a_memory_file_that_this_user_may_not_list_is_said_to_be_a_folder(
    project: Path, monkeypatch: pytest.MonkeyPatch, deny: Callable[..., None]
) -> None:
    """A folder named as a memory file, which this user may search but not list (mode 111) or not search (000), was
    refused by click's own check before inject looked: "Path 'AGENTS.md' is not readable.", after the usage line.
    It is refused as any folder named is, as not a regular file (exit 2), nothing written. Simulated: root lists and
    searches any folder."""
    (project / "AGENTS.md").mkdir()
    deny(monkeypatch, project / "AGENTS.md")

    result = inject("AGENTS.md")

    assert result.exit_code == 2, result.output
    assert "not readable" not in result.output
    assert "Error: AGENTS.md: not a regular file" in result.output
    assert (project / "AGENTS.md").is_dir()


def test_a_catalog_folder_this_user_may_not_list_stops_inject(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The catalog folder itself of mode 111 (searchable, not listable): walked for the capability documents the build
    reads, it seemed empty, so a file in it that one of them is (through a link) was written to, where a folder of mode
    111 inside the catalog stops inject. Its documents cannot be told, so inject stops the same way, with the
    permission needed (exit 2), nothing written, naming the folder as validate does. Simulated: root lists any
    folder."""
    (project / "catalog" / "agent" / "capabilities").mkdir(parents=True)
    (project / "catalog" / "agent" / "capabilities" / "current.json").symlink_to("../../notes.md")
    (project / "catalog" / "notes.md").write_text("# Notes\n", encoding="utf-8")
    (project / "capidx.yaml").write_text("paths:\n  agents: catalog\n", encoding="utf-8")
    assert "it is a capability document (catalog/agent/capabilities/current.json)" in inject("catalog/notes.md").output
    deny_listing(monkeypatch, project / "catalog")

    result = inject("catalog/notes.md")

    assert result.exit_code == 2, result.output
    folder = Path("catalog")
    needed = "the user running capidx needs read permission on the folder, to list what it holds"
    assert f"Error: {folder}: cannot be listed: permission denied ({needed})" in result.output.splitlines()
    assert (project / "catalog" / "notes.md").read_text("utf-8") == "# Notes\n"
