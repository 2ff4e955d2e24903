"""`capidx validate`: load every data file, check it, and collect every problem.

INTERIM IMPLEMENTATION: the public interface (`validate_project`, `ValidationResult`,
`LoadedDocument`) is fixed; the body is being replaced with the full validator (positions,
lint rules, malformed-input handling).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any

from capidx.compiler.config import Config
from capidx.compiler.diagnostics import Diagnostic


@dataclass(frozen=True)
class LoadedDocument:
    """A parsed data file. `agent_id` is the agent directory name (None for the alias table)."""

    path: Path
    agent_id: str | None
    data: Any
    raw: bytes = field(repr=False)


@dataclass(frozen=True)
class ValidationResult:
    documents: tuple[LoadedDocument, ...]  # capability documents, sorted by agent id
    aliases: LoadedDocument | None
    diagnostics: tuple[Diagnostic, ...]

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.is_error)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if not d.is_error)

    @property
    def ok(self) -> bool:
        return not self.errors


def validate_project(
    config: Config, paths: Sequence[Path] = (), *, strict: bool = False, today: date | None = None
) -> ValidationResult:
    """Validate the catalog named by `config` (or only `paths`, when given)."""
    import jsonschema

    schema_text = (
        config.schema.read_text("utf-8")
        if config.schema
        else resources.files("capidx.schema").joinpath("capability-schema.json").read_text("utf-8")
    )
    validator = jsonschema.Draft202012Validator(
        json.loads(schema_text), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    documents: list[LoadedDocument] = []
    diagnostics: list[Diagnostic] = []
    for path in sorted(config.agents.glob("*/capabilities/current.json")):
        raw = path.read_bytes()
        data = json.loads(raw)
        documents.append(LoadedDocument(path, path.parent.parent.name, data, raw))
        for error in validator.iter_errors(data):
            diagnostics.append(Diagnostic(str(path), None, None, error.json_path, "error", error.message))
    aliases = None
    if config.aliases:
        raw = config.aliases.read_bytes()
        aliases = LoadedDocument(config.aliases, None, json.loads(raw), raw)
    return ValidationResult(tuple(documents), aliases, tuple(diagnostics))
