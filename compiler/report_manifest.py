"""Reading a build's manifest.json for `capidx report`: parse, validate, refuse what breaks the contract.

The manifest is the report's only input (docs/build-directory.md). Problems come back as one
`ManifestError` naming the file and listing every problem (`$.json.path: message`), so the command
can exit 2 with a message that says what to fix.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

MANIFEST_NAME = "manifest.json"
_MAX_SCHEMA_ERRORS = 10


class ManifestError(Exception):
    """manifest.json is missing, unreadable or does not follow the build-manifest schema."""

    def __init__(self, path: Path, problems: Sequence[str]) -> None:
        self.path = path
        self.problems = tuple(problems)
        super().__init__("\n".join(f"{path}: {problem}" for problem in self.problems))


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


def load_manifest(location: Path) -> Manifest:
    """Read and validate the manifest of a build directory (or a manifest.json path)."""
    path = manifest_file(location)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        hint = "no build here; run `capidx build` first" if path.name == MANIFEST_NAME else "no such file"
        raise ManifestError(path, [f"cannot read the build manifest: {hint}"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(path, [f"cannot read the build manifest: {exc}"]) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ManifestError(path, [f"{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}"]) from None
    problems = manifest_problems(data)
    if problems:
        raise ManifestError(path, problems)
    return Manifest(path, data)


def manifest_problems(data: Any) -> list[str]:
    """Schema errors (`$.json.path: message`), then what the schema cannot say."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(manifest_schema())
    errors = sorted(validator.iter_errors(data), key=lambda error: list(map(str, error.absolute_path)))
    problems = [f"{_json_path(error.absolute_path)}: {error.message}" for error in errors]
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


@cache
def manifest_schema() -> dict[str, Any]:
    text = resources.files("capidx.schema").joinpath("build-manifest.schema.json").read_text("utf-8")
    return json.loads(text)


def _json_path(parts: Iterable[Any]) -> str:
    return "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in parts)
