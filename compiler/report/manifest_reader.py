"""Reading a build's manifest.json for `capidx report`: parse, validate, refuse what breaks the contract.

The manifest is the report's only input (docs/build-directory.md). Problems come back as one
`ManifestError` naming the file and listing every problem (`$.json.path: message`), so the command
can exit 2 with a message that says what to fix.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from capidx.compiler.errors import UsageError

MANIFEST_NAME = "manifest.json"
# A manifest larger than this is not one capidx wrote (20,000 capabilities make one of ~50 MB).
MAX_MANIFEST_BYTES = 512 * 1024 * 1024
_MAX_SCHEMA_ERRORS = 10
_MAX_MESSAGE = 200
_REBUILD = "rebuild with `capidx build`"


class ManifestError(UsageError):
    """manifest.json is missing, unreadable or does not follow the build-manifest schema."""

    def __init__(self, path: Path, problems: Sequence[str], *, prefixed: bool = True) -> None:
        self.path = path
        self.problems = tuple(problems)
        lines = (f"{path}: {problem}" if prefixed else problem for problem in self.problems)
        super().__init__("\n".join(lines))


@dataclass(frozen=True)
class Manifest:
    path: Path  # the manifest.json file
    data: Mapping[str, Any]

    @property
    def encoding(self) -> str:
        return self.data["encodings"][0]

    @property
    def artifacts(self) -> Sequence[Mapping[str, Any]]:
        return self.data["artifacts"]


def manifest_file(location: Path) -> Path:
    """A build directory stands for its manifest.json; a file is taken as the manifest itself."""
    return location / MANIFEST_NAME if location.is_dir() else location


def load_manifest(location: Path, option: str = "--build DIR") -> Manifest:
    """Read and validate the manifest of a build directory (or a manifest.json path).

    `option` is the flag that names `location`, for the hint when there is no build there."""
    path = manifest_file(location)
    text = _read(path, location, option)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ManifestError(path, [f"{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}"]) from None
    except RecursionError:  # the parser's own guard against a stack overflow: not a manifest capidx writes
        raise ManifestError(path, [f"nested too deeply to be a build manifest; {_REBUILD}"]) from None
    try:
        problems = manifest_problems(data)
    except RecursionError:
        problems = [f"nested too deeply to be a build manifest; {_REBUILD}"]
    if problems:
        raise ManifestError(path, problems)
    return Manifest(path, data)


def _no_build(location: Path, path: Path, option: str) -> str:
    """The server's wording (`capidx serve` with no build): where it looked, and the two ways out."""
    where = f"no build at {location.absolute()}"
    if location.is_dir():
        where += f" ({MANIFEST_NAME} is missing)"
    return f"{where}: run `capidx build` first, or pass {option}"


def _read(path: Path, location: Path, option: str) -> str:
    """The manifest's text. Only a regular file is read: a pipe would block and a device never end."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise ManifestError(path, [_no_build(location, path, option)], prefixed=False) from None
    except OSError as exc:
        raise ManifestError(path, [f"cannot read the build manifest: {exc.strerror or exc}"]) from None
    if not stat.S_ISREG(info.st_mode):
        raise ManifestError(path, ["cannot read the build manifest: not a regular file (a pipe or a device?)"])
    if info.st_size > MAX_MANIFEST_BYTES:
        raise ManifestError(path, [f"cannot read the build manifest: over {MAX_MANIFEST_BYTES >> 20} MiB"])
    try:
        with open(path, "rb") as handle:
            return handle.read(MAX_MANIFEST_BYTES + 1).decode("utf-8")
    except OSError as exc:
        raise ManifestError(path, [f"cannot read the build manifest: {exc.strerror or exc}"]) from None
    except UnicodeDecodeError as exc:
        raise ManifestError(path, [f"cannot read the build manifest: {exc}"]) from None


def manifest_problems(data: Any) -> list[str]:
    """Schema errors (`$.json.path: message`), then what the schema cannot say."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(manifest_schema())
    errors = sorted(validator.iter_errors(data), key=lambda error: list(map(str, error.absolute_path)))
    problems = [f"{_json_path(error.absolute_path)}: {_short(error.message)}" for error in errors]
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


def _short(message: str) -> str:
    """jsonschema quotes the offending value, which may be a whole object: keep messages readable."""
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 1] + "…"


@cache
def manifest_schema() -> dict[str, Any]:
    text = resources.files("capidx.schema").joinpath("build-manifest.schema.json").read_text("utf-8")
    return json.loads(text)


def _json_path(parts: Iterable[Any]) -> str:
    return "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in parts)
