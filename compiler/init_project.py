"""`capidx init`: scaffold a catalog that validates, builds and serves at once.

The files come from `compiler/scaffold/` (package data, so a wheel has them too). The CI workflow and
the pre-commit configuration are the ones docs/ci.md shows (`docs/examples/`, kept identical by a test):
a maintainer who reads the docs finds the same files in the new repository.

Nothing is overwritten unless asked: every existing target is named and nothing is written, so a
half-scaffolded repository cannot happen.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from capidx.compiler.errors import UsageError
from capidx.compiler.files import read_at_most, write_whole

EXAMPLE_AGENT = "example-agent"

# (file in compiler/scaffold/, where it goes in the new catalog)
SCAFFOLD: tuple[tuple[str, str], ...] = (
    ("capidx.yaml", "capidx.yaml"),
    ("current.json", f"agents/{EXAMPLE_AGENT}/capabilities/current.json"),
    ("aliases.json", "agents/aliases.json"),
    ("pre-commit-config.yaml", ".pre-commit-config.yaml"),
    ("workflow.yml", ".github/workflows/capidx.yml"),
)

NEXT_STEPS = f"""\
Next:
  capidx validate && capidx build && capidx serve   # works now, on the example agent
  1. Rename agents/{EXAMPLE_AGENT}/ to your agent's id and replace its example values; every
     source url is a placeholder (example.com) that must point to the page documenting the claim.
  2. In .pre-commit-config.yaml and .github/workflows/capidx.yml replace OWNER (the account that
     hosts capidx) and COMMIT (a full commit sha or a release tag), then `pre-commit install`."""
GITIGNORE = ".gitignore"
IGNORED = "build/"  # the default paths.out: output, never committed
_MODE = 0o644  # of a file capidx init creates, whatever the umask
_IGNORED_FORMS = frozenset({"build", "build/", "/build", "/build/"})  # lines that already ignore it
_MAX_GITIGNORE = 1 << 20  # a larger .gitignore is not read (nor changed): the hint says what to add


class InitError(UsageError):
    """Targets exist (without --force), or the directory cannot be written: exit 2."""


@dataclass(frozen=True)
class Scaffolded:
    root: Path
    written: tuple[str, ...]  # relative POSIX paths, in SCAFFOLD order
    replaced: tuple[str, ...]  # those that existed before (only with force)
    gitignore: str = "kept"  # created, updated (build/ appended), kept (it ignores build/ already) or skipped


def existing(root: Path) -> list[str]:
    """The scaffold's targets already present under `root` (anything at the path counts: file, folder, link)."""
    return [target for _source, target in SCAFFOLD if os.path.lexists(root / target)]


def scaffold(root: Path, *, force: bool = False) -> Scaffolded:
    """Write the scaffold under `root` (created if missing). Without `force`, refuse before writing anything
    when a target exists; with it, replace the existing files (never a folder)."""
    present = existing(root)
    if present and not force:
        raise InitError(f"{root}: would overwrite {', '.join(present)}; nothing written (pass --force to replace them)")
    folders = [target for target in present if (root / target).is_dir() and not (root / target).is_symlink()]
    if folders:
        raise InitError(f"{root}: {', '.join(folders)} is a folder, not a file; nothing written")
    try:
        for source, target in SCAFFOLD:
            write_whole(root / target, _bundled(source), _MODE)  # whole or not at all
        gitignore = _ignore_build(root / GITIGNORE)
    except OSError as exc:
        file = f"{exc.filename}: " if exc.filename else ""  # which file, when the error says
        raise InitError(f"cannot write the scaffold under {root}: {file}{exc.strerror or exc}") from None
    return Scaffolded(root, tuple(target for _source, target in SCAFFOLD), tuple(present), gitignore)


def _ignore_build(path: Path) -> str:
    """Make `path` (.gitignore) ignore build/: create it, or append one line to it, keeping every other line
    byte for byte. A link, a folder or a file too large to read is left alone ("skipped")."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        write_whole(path, f"{IGNORED}\n".encode(), _MODE)
        return "created"
    if not stat.S_ISREG(info.st_mode) or (data := read_at_most(path, _MAX_GITIGNORE)) is None:
        return "skipped"
    lines = data.decode("utf-8", "replace").splitlines()
    if any(line.strip().removeprefix("!") in _IGNORED_FORMS for line in lines):  # "!build/": theirs to decide
        return "kept"
    separator = b"" if not data or data.endswith(b"\n") else b"\n"
    write_whole(path, data + separator + f"{IGNORED}\n".encode(), info.st_mode & 0o777)
    return "updated"


def _bundled(name: str) -> bytes:
    return resources.files("capidx.compiler").joinpath("scaffold", name).read_bytes()


_GITIGNORE_LINES = {
    "created": [f"created {GITIGNORE} ({IGNORED})"],
    "updated": [f"added {IGNORED} to {GITIGNORE}"],
    "kept": [],
    "skipped": [],
}


def summary(result: Scaffolded, shown_root: str) -> Sequence[str]:
    """What `capidx init` prints: each file, then what to do next."""
    lines = [f"{'replaced' if target in result.replaced else 'created'} {target}" for target in result.written]
    lines += _GITIGNORE_LINES[result.gitignore]
    where = "" if shown_root == "." else f"cd {shown_root} && "
    steps = NEXT_STEPS.replace("  capidx validate", f"  {where}capidx validate", 1)
    if result.gitignore == "skipped":
        steps += f"\n  3. Add {IGNORED} to {GITIGNORE}: it is output."
    return [f"capidx init: a catalog in {result.root}", *lines, "", steps]
