"""capidx.yaml: a typed, documented configuration with phased validation.

The file is checked against `schema/config-schema.json` (types, unknown keys) and problems come
back as diagnostics, all of them at once, with "did you mean" for mistyped keys. Flags override the
file: callers pass only the flags the user actually gave (`None` means "not given"), as mkdocs does.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field, fields, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from capidx.compiler.diagnostics import Diagnostic

CONFIG_FILE_NAME = "capidx.yaml"
DEFAULT_URI_PREFIX = "capability-index://"
DEFAULT_ENCODING = "cl100k_base"


@dataclass(frozen=True)
class Staleness:
    warn_days: int = 30
    old_days: int = 90
    error_days: int | None = None


@dataclass(frozen=True)
class Relationships:
    similarity_threshold: float = 0.15
    max_similar: int = 5


@dataclass(frozen=True)
class InjectionLabel:
    label: str
    min_confidence: float


DEFAULT_LABELS = (
    InjectionLabel("✓ Recommended", 0.8),
    InjectionLabel("○ Consider", 0.5),
    InjectionLabel("△ Possible", 0.0),
)


@dataclass(frozen=True)
class Injection:
    max_tokens: int = 500
    max_snippets: int = 3
    labels: tuple[InjectionLabel, ...] = DEFAULT_LABELS


@dataclass(frozen=True)
class Config:
    """Effective settings for validate/build/report. Paths are absolute."""

    root: Path
    config_file: Path | None
    agents: Path
    aliases: Path | None
    schema: Path | None  # None: the bundled capability schema
    templates: Path | None
    out: Path
    uri_prefix: str = DEFAULT_URI_PREFIX
    encodings: tuple[str, ...] = (DEFAULT_ENCODING,)
    budgets: dict[str, int] = field(default_factory=dict)
    staleness: Staleness = Staleness()
    min_description_entropy: float = 2.5
    relationships: Relationships = Relationships()
    injection: Injection = Injection()
    serve: dict[str, Any] = field(default_factory=dict)  # read by capidx.server, passed through verbatim

    @property
    def primary_encoding(self) -> str:
        return self.encodings[0]

    def with_overrides(self, **overrides: Any) -> Config:
        """Apply command-line flags; a `None` value means the flag was not given."""
        given = {key: value for key, value in overrides.items() if value is not None}
        unknown = set(given) - {f.name for f in fields(self)}
        if unknown:
            raise TypeError(f"unknown override(s): {sorted(unknown)}")
        return replace(self, **given)


@cache
def config_schema() -> dict[str, Any]:
    return json.loads(resources.files("capidx.schema").joinpath("config-schema.json").read_text("utf-8"))


def find_config_file(start: Path) -> Path | None:
    candidate = start / CONFIG_FILE_NAME
    return candidate if candidate.is_file() else None


def default_config(root: Path) -> Config:
    """Defaults for a project rooted at `root` (the directory holding capidx.yaml, or the cwd)."""
    agents = root / "agents"
    aliases = agents / "aliases.json"
    templates = root / "templates"
    return Config(
        root=root,
        config_file=None,
        agents=agents,
        aliases=aliases if aliases.is_file() else None,
        schema=None,
        templates=templates if _is_user_templates(templates) else None,
        out=root / "build",
    )


def _is_user_templates(path: Path) -> bool:
    """A `templates/` folder overrides bundled templates only if it holds templates.

    In this repository `templates/` *is* the bundled package; treating it as an override folder
    would be harmless but confusing, so a folder with an `__init__.py` is not a user override.
    """
    return path.is_dir() and not (path / "__init__.py").exists() and any(path.glob("*.j2"))


def config_from_mapping(data: dict[str, Any], root: Path, config_file: Path | None) -> Config:
    """Build a Config from an already validated mapping (pure)."""
    base = default_config(root)
    paths = data.get("paths", {})
    staleness = data.get("staleness", {})
    relationships = data.get("relationships", {})
    injection = data.get("injection", {})
    labels = tuple(
        InjectionLabel(item["label"], float(item["min_confidence"])) for item in injection.get("labels", [])
    )
    aliases: Path | None = base.aliases
    if "aliases" in paths:
        aliases = None if paths["aliases"] is None else root / paths["aliases"]
    elif "agents" in paths:
        candidate = root / paths["agents"] / "aliases.json"
        aliases = candidate if candidate.is_file() else None
    return replace(
        base,
        config_file=config_file,
        agents=root / paths["agents"] if "agents" in paths else base.agents,
        aliases=aliases,
        schema=root / paths["schema"] if paths.get("schema") else None,
        templates=root / paths["templates"] if paths.get("templates") else base.templates,
        out=root / paths["out"] if "out" in paths else base.out,
        uri_prefix=data.get("uri_prefix", DEFAULT_URI_PREFIX),
        encodings=tuple(data.get("encodings", (DEFAULT_ENCODING,))),
        budgets=dict(data.get("budgets", {})),
        staleness=replace(Staleness(), **staleness),
        min_description_entropy=float(data.get("lint", {}).get("min_description_entropy", 2.5)),
        relationships=replace(Relationships(), **relationships),
        injection=replace(
            Injection(),
            **{key: value for key, value in injection.items() if key != "labels"},
            **({"labels": labels} if labels else {}),
        ),
        serve=dict(data.get("serve", {})),
    )


def check_config_mapping(data: Any, path: str) -> list[Diagnostic]:
    """Schema errors for a parsed capidx.yaml, with "did you mean" for unknown keys."""
    import jsonschema

    if data is None:
        return []
    validator = jsonschema.Draft202012Validator(config_schema())
    problems: list[Diagnostic] = []
    for error in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path)):
        pointer = _json_path(error.absolute_path)
        if error.validator == "additionalProperties":
            problems.extend(_unknown_key_diagnostics(error, path, pointer))
            continue
        problems.append(Diagnostic(path, None, None, pointer, "error", error.message, code="config"))
    return problems


def _unknown_key_diagnostics(error: Any, path: str, pointer: str) -> list[Diagnostic]:
    allowed = sorted(error.schema.get("properties", {}))
    extra = sorted(set(error.instance) - set(allowed))
    out = []
    for key in extra:
        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        hint = f"did you mean '{close[0]}'?" if close else f"valid keys: {', '.join(allowed)}"
        key_pointer = f"{pointer}.{key}" if pointer != "$" else f"$.{key}"
        out.append(Diagnostic(path, None, None, key_pointer, "error", f"unknown key '{key}'", hint, "config"))
    return out


def _json_path(parts: Any) -> str:
    text = "$"
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def load_config(config_path: Path | None, cwd: Path) -> tuple[Config, list[Diagnostic]]:
    """Read capidx.yaml (given, or found in `cwd`); defaults when there is none.

    Returns the config and any problems; on problems the returned config is the defaults, so a
    caller can still report everything before deciding to stop.
    """
    import yaml

    path = config_path or find_config_file(cwd)
    if path is None:
        return default_config(cwd.resolve()), []
    path = path.resolve()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return default_config(path.parent), [
            Diagnostic(str(path), None, None, "", "error", f"cannot read config: {exc}", code="io")
        ]
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else None
        col = mark.column + 1 if mark else None
        return default_config(path.parent), [
            Diagnostic(str(path), line, col, "", "error", f"invalid YAML: {exc}", code="parse")
        ]
    if data is not None and not isinstance(data, dict):
        return default_config(path.parent), [
            Diagnostic(str(path), 1, 1, "$", "error", "capidx.yaml must be a mapping of settings", code="config")
        ]
    problems = check_config_mapping(data, str(path))
    if problems:
        return default_config(path.parent), problems
    return config_from_mapping(data or {}, path.parent, path), []
