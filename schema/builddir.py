"""The build directory's layout and its manifest reader: what `capidx build` writes and every reader reads.

The compiler writes a build directory, the server and `capidx report` read one; this module is the one
place that names its files and reads its manifest, so the writer and the readers cannot drift apart. The
manifest's structure is `build-manifest.schema.json` beside this file. Standard library only at import
time; `jsonschema` is imported only to explain a manifest that is refused.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shlex
import stat
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from capidx.schema.pathkind import PathKind, path_kind

MANIFEST = "manifest.json"
MATCH_INDEX = "index/match.json"  # the resolution index the server loads
MANIFEST_SCHEMA = "build-manifest.schema.json"
# The layout's version: 2 since tool answers are packed (issue 13; a row may give an `offset` into a pack).
# Readers accept every version in READABLE_FORMATS; an older capidx refuses a format it does not know by name.
FORMAT = 2
READABLE_FORMATS = (1, 2)
# A manifest larger than this is not one capidx wrote (20,000 capabilities make one of ~50 MB).
MAX_MANIFEST_BYTES = 512 * 1024 * 1024
REBUILD = "rebuild with `capidx build`"
# A folder whose manifest is damaged or missing is not provably a build, and a build replaces nothing else.
REBUILD_DAMAGED = (
    "if it is a capidx build, delete the folder and run `capidx build` (a build replaces only a folder its manifest"
    " proves is one)"
)
_MAX_SCHEMA_ERRORS = 10
_MAX_MESSAGE = 200


def read_permission(command: str) -> str:
    """What a build that `capidx <command>` may not read needs: one wording for every reader (serve, report)."""
    return f"the user running `capidx {command}` needs read and search permission on the build and the folders above it"


class ManifestUnreadable(Exception):
    """The manifest cannot be read or parsed: `reason` says why in a few words, `missing` when there is none,
    `denied` when this user may not read it (a damaged build is rebuilt; that one is not).

    Each side wraps it in its own error (the compiler's `CapidxError`, the server's `BuildError`): this
    package imports neither."""

    def __init__(self, path: Path, reason: str, *, missing: bool = False, denied: bool = False) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
        self.missing = missing
        self.denied = denied


def manifest_path(location: Path) -> Path:
    """A build directory stands for its manifest.json; a file is taken as the manifest itself. So is a location
    this user may not look at (a folder above it is not searchable), which reading then says is denied: Python
    3.11's `Path.is_dir` raised that PermissionError."""
    return location / MANIFEST if path_kind(location) is PathKind.FOLDER else location


_VERSION = re.compile(r"[0-9A-Za-z.+!-]{1,40}")  # a version quoted back: nothing a terminal would act on


def newer_format(data: Any, action: str = "read") -> str | None:
    """What to say of a manifest a newer capidx wrote (its `format` above this one's), None otherwise: such a build
    is fine, and rebuilding or deleting it is not the way to read it (or, `action`, to replace it)."""
    if not isinstance(data, dict) or not isinstance(data.get("artifacts"), list):
        return None  # not a build's header at all: the schema says what it is
    found, version = data.get("format"), data.get("capidx")
    if isinstance(found, bool) or not isinstance(found, int) or not FORMAT < found < 10**6:
        return None
    shown = isinstance(version, str) and _VERSION.fullmatch(version)
    made = f"capidx {version}" if shown else "a newer capidx"
    readable = ", ".join(map(str, READABLE_FORMATS))
    return f"written by {made} (build format {found}; this capidx reads {readable}): upgrade capidx to {action} it"


def build_remains(folder: Path) -> str:
    """What a folder with no manifest.json holds: "empty"; "nothing of a build" (no `index/match.json`: the catalog, a
    home folder, another tool's `build/`); or "part of a build" (a build's index without its manifest)."""
    try:
        with os.scandir(folder) as entries:
            empty = next(entries, None) is None
    except OSError:
        empty = True
    if empty:
        return "empty"
    return "part of a build" if os.path.lexists(folder / MATCH_INDEX) else "nothing of a build"


def move_away(out: str = "") -> str:
    """For a folder that is part of a build: `capidx build` replaces a folder holding anything only when its manifest
    proves it is a build, so what it holds must go first (`out`: the build's options that write there again)."""
    return f"if it held a capidx build, move what it holds away (or delete it), then run `capidx build{out}`"


def make_build(folder: Path) -> str:
    """How to get a build where there is none: `capidx build`, which replaces a folder holding anything only when
    its manifest proves it is a build (a non-empty folder without one must be emptied first). A folder with no sign
    of a build (no `index/match.json`: the catalog, a home folder) is not to be moved or deleted: either it was named
    by mistake and the build is elsewhere, or it is where a build is looked for by default (`build/`, which other
    tools write too) and `capidx build` must write elsewhere, so both ways are said."""
    remains = build_remains(folder)
    if remains == "empty":
        return "run `capidx build` first"
    if remains == "nothing of a build" and (inside := build_inside(folder)) is not None:
        return f"it holds no capidx build, its build/ folder does: pass --build {shlex.quote(str(inside))}"
    if remains == "nothing of a build":
        return (
            "it holds no capidx build: name the folder `capidx build` wrote (`build/` unless told otherwise), or have"
            " it write a new or empty one (`capidx build --out DIR`)"
        )
    return move_away()


def named_without_build(location: Path, flag: str, config: str = "") -> str | None:
    """What to say of a folder named with `flag` (`--build`, a BUILD argument, `--against`) that holds no build: it is
    not to be passed again, so how to make one there (nothing there, or an empty folder: `capidx build` refuses one
    holding something else; `config`: its ` --config FILE`), or where the build is. None for part of a build. Serve,
    report and inject say the same."""
    remains = build_remains(location) if path_kind(location) is PathKind.FOLDER else "empty"
    if remains == "empty":
        made = f"`capidx build --out {shlex.quote(str(location))}{config}` makes one"
        return f"{flag} needs an existing build{' to compare with' if flag == '--against' else ''} ({made})"
    if remains == "nothing of a build":
        if (inside := build_inside(location)) is not None:
            return f"it holds no capidx build, its build/ folder does: give {flag} {shlex.quote(str(inside))}"
        default = " (`build/` unless told otherwise)" if flag == "--build" else ""
        return f"it holds no capidx build: give {flag} the folder `capidx build` wrote{default}"
    return None


def build_inside(folder: Path) -> Path | None:
    """The `build/` of a folder that is no build, when it holds a build's manifest: the project's folder named where
    its build was meant (`--build my-catalog`), said with the folder to name instead."""
    inside = folder / "build"
    return inside if os.path.isfile(inside / MANIFEST) else None


def read_manifest(path: Path, *, follow_links: bool = False, limit: int = MAX_MANIFEST_BYTES) -> bytes:
    """The manifest's bytes. Only a regular file is read (a pipe would block, a device never end; a link only
    with `follow_links`), and never more than `limit` bytes: a larger file is refused before it is read.

    Checked with `lstat`, then opened without following a link at the last step (O_NOFOLLOW, where there is one)
    and without blocking (O_NONBLOCK), and checked again on the open file: a link, a pipe or a larger file put in
    its place between the check and the open is refused, never read. The folders above it may be links."""
    try:
        info = os.stat(path) if follow_links else os.lstat(path)
    except FileNotFoundError:
        raise ManifestUnreadable(path, f"no {MANIFEST}", missing=True) from None
    except OSError as exc:
        raise _cannot_read(path, exc) from None
    if not stat.S_ISREG(info.st_mode):
        raise ManifestUnreadable(path, _NOT_REGULAR)
    if info.st_size > limit:
        raise ManifestUnreadable(path, f"over {limit >> 20} MiB, not a build manifest")
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow_links and exc.errno in _LINK_REFUSED:  # a link since the lstat
            raise ManifestUnreadable(path, "not a regular file (a link: not followed)") from None
        raise _cannot_read(path, exc) from None
    try:
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ManifestUnreadable(path, _NOT_REGULAR)
            data = handle.read(limit + 1)
    except OSError as exc:
        raise _cannot_read(path, exc) from None
    if len(data) > limit:  # it grew after the lstat
        raise ManifestUnreadable(path, f"over {limit >> 20} MiB, not a build manifest")
    return data


_NOT_REGULAR = "not a regular file (a link, a pipe or a device?)"
# How an O_NOFOLLOW open refuses a link: ELOOP (Linux, macOS), EMLINK (FreeBSD).
_LINK_REFUSED = (errno.ELOOP, errno.EMLINK)


def _cannot_read(path: Path, error: OSError) -> ManifestUnreadable:
    denied = isinstance(error, PermissionError)
    return ManifestUnreadable(path, f"cannot read: {error.strerror or error}", denied=denied)


def parse_manifest(path: Path, data: bytes) -> Any:
    """The manifest's JSON value (not yet checked against the schema)."""
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ManifestUnreadable(path, f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ManifestUnreadable(path, f"{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    except ValueError:  # Python's limit on the digits of an integer it reads
        raise ManifestUnreadable(path, "a number of over 4,300 digits: not a build manifest") from None
    except RecursionError:  # the parser's own guard against a stack overflow: no manifest capidx writes is so deep
        raise ManifestUnreadable(path, "nested too deeply to be a build manifest") from None


@cache
def manifest_schema() -> dict[str, Any]:
    return json.loads(resources.files("capidx.schema").joinpath(MANIFEST_SCHEMA).read_text("utf-8"))


def manifest_problems(data: Any) -> list[str]:
    """Why `data` is not a valid build manifest, as `$.json.path: message` lines ([] when it is): the schema's
    errors (at most ten, then a count), else what the schema cannot state (`contract_problems`)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(manifest_schema())
    try:
        errors = sorted(validator.iter_errors(data), key=lambda error: list(map(str, error.absolute_path)))
    except RecursionError:
        return ["nested too deeply to be a build manifest"]
    problems = [f"{json_path(error.absolute_path)}: {_short(error.message)}" for error in errors]
    if len(problems) > _MAX_SCHEMA_ERRORS:
        hidden = len(problems) - _MAX_SCHEMA_ERRORS
        problems = [*problems[:_MAX_SCHEMA_ERRORS], f"… and {hidden} more schema errors"]
    return problems or contract_problems(data)


def contract_problems(data: Mapping[str, Any]) -> list[str]:
    """Unique URIs and a primary-encoding count on every artifact (the schema states neither)."""
    encoding = data["encodings"][0]
    seen: set[str] = set()
    problems = []
    for index, artifact in enumerate(data["artifacts"]):
        if artifact["uri"] in seen:
            problems.append(f"$.artifacts[{index}].uri: duplicate URI {artifact['uri']!r}")
        seen.add(artifact["uri"])
        if encoding not in artifact["tokens"]:
            problems.append(f"$.artifacts[{index}].tokens: no count for the primary encoding {encoding!r}")
    return problems


def json_path(parts: Iterable[Any]) -> str:
    return "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in parts)


def _short(message: str) -> str:
    """jsonschema quotes the offending value, which may be a whole object: keep messages readable."""
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 1] + "…"
