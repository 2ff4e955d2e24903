"""The memory files `capidx inject` may read and write: inside the project, regular, UTF-8, bounded; written
atomically.

Defense in depth, because the file names come from the command line, a pre-commit configuration or a CI
script, and the files (or links) may come from a pull request: a path is refused when it, or a symbolic link
on the way, leads out of the project (the folder of the capidx.yaml in force, else the working directory);
a link is followed to its target, which is what gets written (the link stays a link). Nothing but regular
files is read (a pipe would block, a device never end), and nothing larger than `MAX_BYTES`.

A memory file is also what its name and first bytes say it is: Markdown or plain text, not a program.
Appending a Markdown block to `capidx.yaml`, a capability document or a script breaks it (or, in a script,
runs), so what the project's build reads (`_refuse_inputs`), programs (`_refuse_program`) and names that say
another format (`_check_name`) are refused.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from capidx.compiler.errors import UsageError
from capidx.compiler.files import read_at_most, write_beside
from capidx.schema.pathkind import PathKind, path_kind, refusal
from capidx.schema.printable import unlike_command
from capidx.schema.realpath import resolve
from capidx.schema.wording import UTF8_HINT, not_utf8, said

# A memory file is read whole by an agent at start: one of 4 MiB is not one, whatever it claims.
MAX_BYTES = 4 * 1024 * 1024
TEMP_TAG = "capidx-inject"  # a temporary file beside its target: `.capidx-inject-<random>.tmp`

# The suffixes of a memory file, compared ignoring case: Markdown (Cursor's rules are `.mdc`) and plain text.
# An allow-list, so that an unlisted code or data format is refused rather than corrupted: see `_check_name`.
# Not `.mdx`: MDX has no HTML comments, so the markers would break it.
MEMORY_SUFFIXES = frozenset({".md", ".markdown", ".mdown", ".mkd", ".mkdn", ".mdwn", ".mdc", ".txt", ".text"})
# Names without a suffix that are nonetheless not Markdown: a build recipe (Makefile, Dockerfile, Justfile,
# .profile), an ignore list, a run-commands file (.bashrc, .npmrc, .envrc), git's own files (.gitattributes),
# a version pin (.python-version), environment variables, owners, editor settings.
_NOT_MEMORY_NAME = re.compile(
    r"(?i).+file|\..*ignore|\..+rc|\.git.*|\..*versions?|\.env|\.editorconfig|\.mailmap|codeowners"
)
# Plain-text files that tools read line by line: a pip requirements or constraints list, a CMake project, robots.txt.
# pip reads whatever `-r` or `-c` names, so the word's singular and a version after it count too (`requirement.txt`,
# `requirements3.txt`).
_NOT_MEMORY_TEXT = re.compile(
    r"(?i)([^/]*[-_.])?(requirements?|constraints?)\d*([-_.][^/]*)?\.txt|cmakelists\.txt|robots\.txt"
)
_PIP_FOLDERS = ("requirements", "constraints")


# The first bytes of a program: a `#!` line (a script, whatever its name or mode) and the headers of the
# executable formats (ELF; Mach-O, 32 and 64 bits in either byte order, and universal; PE/DOS `MZ`).
_SHEBANG = b"#!"
_BINARY_MAGIC = (
    (b"\x7fELF", "an ELF header"),
    (b"\xfe\xed\xfa\xce", "a Mach-O header"),
    (b"\xfe\xed\xfa\xcf", "a Mach-O header"),
    (b"\xce\xfa\xed\xfe", "a Mach-O header"),
    (b"\xcf\xfa\xed\xfe", "a Mach-O header"),
    (b"\xca\xfe\xba\xbe", "a Mach-O universal header"),
)
_DOS_HEADER_BYTES = 64  # an `MZ` header's size; it holds NUL bytes, which text does not (`_refuse_program`)
# Names a refusal offers instead, in this order, relative to the project: the first the build does not read.
_SUGGESTED = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")


class InjectError(UsageError):
    """A memory file that may not or cannot be read or written (exit 2; the message names it)."""


@dataclass(frozen=True)
class Input:
    """Something `capidx build` reads, never written: a file, or a folder read whole (every file inside it is
    refused). `what` names it in a message (`the alias table`); `why` says why it is refused."""

    what: str
    path: Path
    why: str = "an input of capidx build, not a memory file"


@dataclass(frozen=True)
class Target:
    """One memory file: as the user named it, where it really is, and what it holds (None: not there yet)."""

    shown: str
    path: Path  # links resolved: the file written
    text: str | None
    raw: bytes | None
    mode: int | None


def open_target(
    name: Path,
    project: Path,
    cwd: Path,
    build: Path,
    project_out: Path | None = None,
    inputs: InputIndex | None = None,
    below: Path | None = None,
) -> Target:
    """Read the memory file `name` (relative to `cwd`) or learn that it is missing; `InjectError` when it may
    not be used. `project` is the folder it must be in: the project's, or (`below`, the same folder) the top of the
    git work tree the project's folder is below, where agents read memory files. `build` is the build directory read
    (`--build`, or its manifest.json) and `project_out` the project's own (`paths.out`): neither is ever written.
    `inputs` are what the project's build reads (`compiler/inject/inputs.py`): never written either."""
    shown = unlike_command(str(name))  # begins the lines about it
    given = Path(os.path.abspath(cwd / name))
    root = _resolve(project, shown)
    path = _resolve(given, shown)
    if not path.is_relative_to(root):
        inside = given.is_relative_to(root) or given.is_relative_to(project)
        how = "a symbolic link on the way leads out of" if inside else "it is outside"
        where = "the project" if below is None else "the git work tree the project is in"
        raise InjectError(f"{shown}: {how} {where} ({project}); name a file inside it")
    build = _resolve(Path(os.path.abspath(cwd / build)), shown)
    folders = [build if build.is_dir() else build.parent]
    if project_out is not None:  # a folder by configuration, whether built yet or not
        folders.append(_resolve(Path(os.path.abspath(cwd / project_out)), shown))
    builds = InputIndex.of([Input("the build directory", folder) for folder in folders])
    _refuse_special_folders(path, root, builds, shown)
    # In a folder this user may not search nothing can be read or written, and what is there cannot be told (asked
    # whether an input it is is a folder, Path.is_dir raised the PermissionError)
    if path_kind(given) is PathKind.DENIED:
        raise _denied(shown)
    index = inputs or InputIndex.of(())
    _refuse_inputs(path, root, index, shown, lambda: _suggestion(root, cwd, builds, index))
    _refuse_line_files(given, _project_as_written(given, Path(os.path.abspath(project)), root), shown)
    _check_name(path, root, shown)
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        if os.path.lexists(given):
            raise InjectError(f"{shown}: a symbolic link to a missing file ({path}); fix or remove the link") from None
        _check_folder(path.parent, root, shown)
        return Target(shown, path, None, None, None)
    except PermissionError:
        raise _denied(shown) from None
    except OSError as exc:
        raise InjectError(f"{shown}: cannot read it: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise InjectError(f"{shown}: not a regular file (a folder, a pipe or a device?)")
    raw = _read(path, shown)
    _refuse_program(raw, shown)
    _refuse_script(path, info, shown)
    _refuse_kept(path, info, shown)
    return Target(shown, path, _decode(raw, shown), raw, stat.S_IMODE(info.st_mode))


def _refuse_kept(path: Path, info: os.stat_result, shown: str) -> None:
    """A file its owner keeps from being written, or one with other names: the block is written to a new file renamed
    over it, which a write protection does not stop (`chmod a-w` was written through, where `echo >>` is refused)
    and which parts a hard link (`ln AGENTS.md CLAUDE.md`: the other name kept the old text, unsaid)."""
    if not os.access(path, os.W_OK):
        raise InjectError(f"{shown}: read-only (no write permission): make it writable for the block, or leave it out")
    if info.st_nlink > 1:
        raise InjectError(
            f"{shown}: has {info.st_nlink - 1} other name{'s' if info.st_nlink > 2 else ''} (a hard link): writing it"
            " would part them, the others keeping the old text; make the other names symbolic links to it"
            " (`ln -sf`), which inject follows, or name a file with one name"
        )


def _refuse_special_folders(path: Path, root: Path, builds: InputIndex, shown: str) -> None:
    """Not git's own files (a hook is a program: text written into it would run) and not a build (the one
    read, or the project's own when `--build` names another), which the next `capidx build` replaces (and
    whose memory.md would no longer match its manifest)."""
    # Ignoring case: on a file system that does (macOS, Windows) `.GIT/hooks/x` is `.git/hooks/x`.
    if any(part.casefold() == ".git" for part in path.relative_to(root).parts):
        raise InjectError(f"{shown}: inside .git; name a memory file of the working tree")
    if input_of(path, builds) is not None:
        raise InjectError(f"{shown}: inside the build directory, which capidx build replaces")


def _refuse_inputs(path: Path, root: Path, inputs: InputIndex, shown: str, suggestion: Callable[[], str]) -> None:
    """Not what the project's build reads: a block appended to it would make the next validate or build fail,
    or (in a template or a file one includes) carry it into every artifact.

    What the build reads, not where: a capability document, the alias table, a template or a file a template
    includes is refused wherever it is, and a Markdown file is not refused for sitting in the catalog folder or
    the templates folder, which may be the project's own folder (`paths.agents: .`). The build reads nothing
    else there: a README.md beside the capability documents is no input, and its block reaches no artifact."""
    found = input_of(path, inputs)
    if found is not None:
        place = found.path
        shown_place = _relative(place, root)
        relation = "inside" if _resolve_quietly(place).is_dir() else "it is"
        raise InjectError(f"{shown}: {relation} {found.what} ({shown_place}), {found.why}; {suggestion()}")


def input_of(path: Path, inputs: InputIndex) -> Input | None:
    """The input that `path` (links resolved) is or is inside, None when it is none of them: by name, or for what
    exists by device and inode (on a file system that ignores case `Agents/x.md` is inside `agents/` though no
    name says so, and a hard link is its file)."""
    for candidate in (path, *path.parents):
        if (found := inputs.by_name.get(candidate)) is not None:
            return found
        with contextlib.suppress(OSError, ValueError):  # ValueError: a name no file can have (a NUL)
            info = os.stat(candidate)
            if (found := inputs.by_inode.get((info.st_dev, info.st_ino))) is not None:
                return found
    return None


@dataclass(frozen=True)
class InputIndex:
    """Places no memory file may be (what the build reads; the build directories), by resolved path and by device
    and inode, made once per run (`of`): a templates folder may name thousands of files, and every memory file
    named is checked against all of them. Made afresh for each run, so that it sees the files as they are."""

    by_name: Mapping[Path, Input]
    by_inode: Mapping[tuple[int, int], Input]

    @classmethod
    def of(cls, inputs: Sequence[Input]) -> InputIndex:
        by_name: dict[Path, Input] = {}
        by_inode: dict[tuple[int, int], Input] = {}
        folders: dict[Path, Path] = {}  # a folder's links resolved once: thousands of names share a few folders
        for entry in inputs:  # the first input of each name or file wins, as listed
            parent = entry.path.parent
            folder = folders.get(parent) or folders.setdefault(parent, _resolve_quietly(parent))
            by_name.setdefault(folder / entry.path.name, entry)
            if os.path.islink(entry.path):  # a link to a file not made yet: its target's name is read too
                by_name.setdefault(_resolve_quietly(entry.path), entry)
            with contextlib.suppress(OSError, ValueError):
                info = os.stat(entry.path)
                by_inode.setdefault((info.st_dev, info.st_ino), entry)
        return cls(by_name, by_inode)


def _suggestion(root: Path, cwd: Path, builds: InputIndex, inputs: InputIndex) -> str:
    """What a refusal offers instead: the first of `_SUGGESTED` at the project's top that would not be refused
    as an input or a build (AGENTS.md may itself be the alias table, or what a template includes), named from
    `cwd` as the user would type it; never a name that is refused itself."""
    for name in _SUGGESTED:
        candidate = _resolve_quietly(root / name)
        if input_of(candidate, inputs) is None and input_of(candidate, builds) is None:
            try:
                typed = os.path.relpath(root / name, cwd)
            except ValueError:  # another drive (Windows)
                typed = str(root / name)
            return f"name one such as {shlex.quote(typed)}"
    return "name a memory file that capidx build does not read"


def _relative(place: Path, root: Path) -> str:
    """`place` as the project names it: relative to its folder when inside it (the name configured, not a link's
    target: `agents/a/capabilities/current.json` rather than the file it leads to), else as it is."""
    for candidate in (Path(os.path.abspath(place)), _resolve_quietly(place)):
        if candidate.is_relative_to(root):
            return candidate.relative_to(root).as_posix()
    return str(place)


def _check_name(path: Path, root: Path, shown: str) -> None:
    """`InjectError` unless the name of `path` (the file written, links followed, inside the project `root`) is that
    of a Markdown or plain-text file.

    A suffix must be on the allow-list `MEMORY_SUFFIXES`, because the harm is one-sided: a name refused by
    mistake costs a message (and renaming the file), while a deny-list misses some format nobody listed
    (.rb, .ini, .lock, …) and silently appends Markdown to it, which is what this check is for. Names without a
    suffix cannot be listed the same way: the agents' own rule files are dotfiles named by each tool
    (.windsurfrules, .clinerules, .cursorrules, .rules, .goosehints) and new ones keep appearing. So a name
    without a suffix passes unless it belongs to a well-known family that is not Markdown (`_NOT_MEMORY_NAME`);
    a script among them is refused by its first bytes (`_refuse_program`) or, without a leading dot, its execute
    bits (`_refuse_script`)."""
    _refuse_line_files(path, root, shown)
    suffix = path.suffix.lower()
    if suffix in MEMORY_SUFFIXES or (not suffix and not _NOT_MEMORY_NAME.fullmatch(path.name)):
        return
    raise InjectError(
        f"{shown}: {path.name} is not a Markdown or plain-text file by its name; name a memory file "
        "(.md, .mdc, .txt, or a name without a suffix such as .windsurfrules)"
    )


def _refuse_line_files(path: Path, root: Path, shown: str) -> None:
    """`InjectError` for a text file its tool reads line by line (pip, CMake), by its name or its folders."""
    if _NOT_MEMORY_TEXT.fullmatch(path.name) or (path.suffix.lower() == ".txt" and _in_pip_folder(path, root)):
        raise InjectError(f"{shown}: {path.name} is read line by line by its tool, not as Markdown; name a memory file")


def _project_as_written(given: Path, project: Path, root: Path) -> Path:
    """The folder on the way of `given` (absolute, links not followed) that is the project, so that the folders
    written after it are asked as pip reads them: the project as named (`project`) or as found (`root`), else the
    deepest folder of `given` that is the project reached through a link (`/tmp/link/requirements/dev.txt` with
    `/tmp/link` the project). `root` when none is: only the file's name is asked then."""
    if given.is_relative_to(project):
        return project
    if given.is_relative_to(root):
        return root
    try:
        identity = os.stat(root)
    except OSError:
        return root
    for folder in given.parents:
        with contextlib.suppress(OSError, ValueError):
            if os.path.samestat(os.stat(folder), identity):
                return folder
    return root


def _in_pip_folder(path: Path, root: Path) -> bool:
    """Whether a folder between the project `root` and `path` is a `requirements/` or `constraints/` folder: its
    files are pip's at any depth (`requirements/dev.txt`, `requirements/ci/test.txt`, each `-r` of another). The
    folders above the project are not asked: a project kept in a folder so named has memory files of its own."""
    inside = path.is_relative_to(root)  # as written, a path may reach the project through a link from outside
    return inside and any(folder.lower() in _PIP_FOLDERS for folder in path.relative_to(root).parent.parts)


def _refuse_program(raw: bytes, shown: str) -> None:
    """Not a program: text appended to a script runs the next time the script does, and a binary is broken by
    it. Told by the file's first bytes, whatever its name and mode: a `#!` line, or an executable's header.

    Not by the execute bits alone: a Windows drive under WSL (drvfs) or a FAT stick shows every file as mode 777,
    so they would refuse `.windsurfrules` there, and no `chmod` can clear them; they are asked only of a name
    without a suffix or leading dot (`_refuse_script`), which a shell runs as a script even without `#!`.

    `MZ` counts only with a NUL byte in the first 64 bytes, as a DOS or PE header holds (small numbers in 16- and
    32-bit fields, the PE header's offset at byte 60 among them): text that begins with the letters MZ holds none,
    and is no program."""
    if raw.startswith(_SHEBANG):
        what, harm = "a #! line", "a script runs text appended to it"
    else:
        what = next((name for magic, name in _BINARY_MAGIC if raw.startswith(magic)), "")
        if not what and raw.startswith(b"MZ") and b"\0" in raw[:_DOS_HEADER_BYTES]:
            what = "an MZ (DOS or Windows PE) header"
        if not what:
            return
        harm = "text appended to an executable breaks it"
    raise InjectError(
        f"{shown}: a program, not a memory file: it starts with {what}, and {harm}; name a Markdown or "
        "plain-text memory file"
    )


def _refuse_script(path: Path, info: os.stat_result, shown: str) -> None:
    """Not a script without a `#!` line: a shell runs an executable text file as a script (the ENOEXEC fallback),
    so text appended to `tools/deploy` would run. Asked only of a name without a suffix and without a leading dot:
    the agents' rule files are dotfiles (`.windsurfrules`), and a Windows drive under WSL or a FAT stick shows
    every file as executable, where no `chmod` could clear the bits."""
    if path.suffix or path.name.startswith(".") or not info.st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH):
        return
    raise InjectError(
        f"{shown}: executable, with a name without a suffix: a script that a shell runs, not a memory file; name a "
        "Markdown or plain-text memory file"
    )


def _resolve_quietly(path: Path) -> Path:
    """`path` with its links followed as far as they go (a broken input is the build's to report, not ours)."""
    try:
        return resolve(path)
    except (OSError, ValueError):
        return Path(os.path.abspath(path))


def _resolve(path: Path, shown: str) -> Path:
    try:
        return resolve(path)
    except OSError as exc:  # a link loop, or a chain of more links than a path may have
        raise InjectError(f"{shown}: cannot follow its symbolic links ({exc})") from None


def _check_folder(folder: Path, root: Path, shown: str) -> None:
    """The nearest existing folder above a missing file must be a folder (the rest is created)."""
    while not os.path.lexists(folder) and folder != root:
        folder = folder.parent
    if not folder.is_dir():
        raise InjectError(f"{shown}: {folder} is not a folder")


def _denied(shown: str) -> InjectError:
    """The error of a memory file this user may not read, in the words every command uses for one (`refusal`), with
    the permission needed: a file of mode 000 was "cannot read it: Permission denied", saying nothing of what to do."""
    said = refusal(PathKind.DENIED, folder=False)
    assert said is not None  # DENIED is a refusal
    problem, needed = said
    return InjectError(f"{shown}: {problem} ({needed})")


def _read(path: Path, shown: str) -> bytes:
    try:
        raw = read_at_most(path, MAX_BYTES)
    except PermissionError:
        raise _denied(shown) from None
    except OSError as exc:
        raise InjectError(f"{shown}: cannot read it: {exc.strerror or exc}") from None
    if raw is None:
        raise InjectError(f"{shown}: larger than {MAX_BYTES >> 20} MiB, not a memory file an agent reads")
    return raw


def _decode(raw: bytes, shown: str) -> str:
    try:
        return raw.decode("utf-8")  # a byte-order mark stays in the text: it is outside the block
    except UnicodeDecodeError as exc:
        line, column, message = not_utf8(raw, exc)  # worded as validate's (a UTF-16 AGENTS.md named as such)
        raise InjectError(f"{shown}:{line}:{column}: {said(message, UTF8_HINT)}") from None


def write_all(writes: Sequence[tuple[Target, bytes]]) -> None:
    """Replace (or create) every file, all or none: each is first written whole to a temporary file in its
    own folder (given the file's mode; a new file gets the umask's), and only when every one is written are
    they renamed over their targets (a rename needs no space), so a full disk fails before any file changes.
    Refused when a file changed since it was read. On any failure no temporary file is left, nor a folder this
    run created for a new file (`.github/`) that is still empty."""
    staged: list[tuple[Target, Path]] = []
    created: list[Path] = []
    try:
        for target, data in writes:
            created += _missing_folders(target.path.parent)
            staged.append((target, _stage(target, data)))
        while staged:
            target, temporary = staged[0]
            try:
                os.replace(temporary, target.path)
            except OSError as exc:
                raise InjectError(f"{target.shown}: cannot write it: {exc.strerror or exc}") from None
            staged.pop(0)
        created.clear()  # every file is in place: its folders stay
    finally:
        for _target, temporary in staged:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        for folder in sorted(created, key=lambda path: len(path.parts), reverse=True):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only an empty folder goes: one a file was renamed into, or another writer used, stays


def _missing_folders(folder: Path) -> list[Path]:
    """`folder` and those of its parents that do not exist yet: what writing a file into it creates."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing


def _stage(target: Target, data: bytes) -> Path:
    """`data` in a new temporary file beside the target, with the target's mode; `InjectError` (and nothing
    left) when it cannot be written."""
    if _current_bytes(target) != target.raw:
        raise InjectError(f"{target.shown}: it changed while capidx inject ran; nothing written to it, run again")
    try:
        return write_beside(target.path, data, target.mode, TEMP_TAG)
    except OSError as exc:
        raise InjectError(f"{target.shown}: cannot write it: {exc.strerror or exc}") from None


def _current_bytes(target: Target) -> bytes | None:
    try:
        with open(target.path, "rb") as stream:
            return stream.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InjectError(f"{target.shown}: cannot read it again: {exc.strerror or exc}") from None
