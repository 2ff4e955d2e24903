"""Effective settings for `capidx serve`: flags > CAPIDX_* environment > capidx.yaml `serve:` > defaults.

Every value remembers where it came from, so `--print-config` can say so and every error can name
the value and its source (`CAPIDX_EXPOSE: unknown resource 'fulll' (did you mean 'full'?)`). All
problems are collected and reported together; nothing falls back silently.

The server reads capidx.yaml itself (it may not import the compiler), through the YAML reading it shares
with validate and build (`capidx.schema.yamldata`), and checks the whole file against the bundled config
schema, not only the `serve:` section it uses: a misspelled `Serve:` or `paths: {ot: dist}` would otherwise
leave serve running on defaults, on the wrong directory and transport, while validate and build refuse the
same file. `paths.out` is read as the default build directory.
"""

from __future__ import annotations

import difflib
import ipaddress
import json
import os
import re
import socket
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from capidx.schema.homepath import EMPTY_PATH, expand_home, unreadable
from capidx.schema.printable import visible, visible_lines
from capidx.schema.realpath import leads_out
from capidx.schema.wording import (
    LINKED_OUT,
    LINKED_OUT_HINT,
    NOT_SETTINGS,
    UTF8_HINT,
    describe,
    not_utf8,
    said,
    shown,
    without_shadowed,
    yaml_problem,
)
from capidx.schema.yamldata import (
    MAX_FILE_BYTES,
    MAX_NESTING,
    Parts,
    Position,
    SourceMap,
    YamlDocument,
    YamlShapeError,
    YamlTooDeep,
    editor_lines,
    json_path,
    parse_yaml,
    shown_key,
    too_deep,
    whole_numbers,
    written_scalar,
    yaml_scalar,
)
from capidx.server.limits import clip

CONFIG_FILE_NAME = "capidx.yaml"
DEFAULT_EXPOSE = ("summary", "stats", "agents", "capabilities", "categories")
# Exposure name -> artifact kind in the manifest.
EXPOSE_KIND = {
    "summary": "summary",
    "stats": "stats",
    "full": "full",
    "agents": "agent",
    "capabilities": "capability",
    "categories": "category",
}
EXPOSABLE = tuple(EXPOSE_KIND)
TRANSPORTS = ("stdio", "http")
# What InitializeResult.instructions holds (capidx.server.instructions): the build's overview by default, as
# clients put instructions into every session and seldom read resources (docs/server.md, "Instructions").
INSTRUCTIONS = ("pointer", "summary")
DEFAULT_INSTRUCTIONS = "summary"
LOOPBACK_ALLOWED_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
LOOPBACK_ALLOWED_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")
# Bounds on what one client can make the server hold (docs/server.md "Limits").
DEFAULT_MAX_CONNECTIONS = 100
DEFAULT_IDLE_TIMEOUT = 5  # seconds
DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024  # the SDK's default HTTP body limit, and now stdio's line limit
MIN_MAX_MESSAGE_BYTES = 64 * 1024  # below this an ordinary tools/call or initialize would not fit
MAX_IDLE_TIMEOUT = 86_400  # a day; a timer of 10**400 seconds failed every connection
# `allowed_hosts` / `allowed_origins` patterns: exactly what the SDK's `TransportSecuritySettings` matches
# (an exact value, or `:*` = any port) and nothing it would silently treat as a literal, such as `*`.
_HOST_PART = r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?)"
HOST_PATTERN = re.compile(rf"{_HOST_PART}(:([0-9]{{1,5}}|\*))?")
ORIGIN_PATTERN = re.compile(rf"https?://{_HOST_PART}(:([0-9]{{1,5}}|\*))?")
_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})

# setting name -> (environment variable, flag)
NAMES: dict[str, tuple[str, str]] = {
    "build": ("CAPIDX_BUILD", "--build"),
    "resources": ("CAPIDX_RESOURCES", "--resources/--no-resources"),
    "expose": ("CAPIDX_EXPOSE", "--expose"),
    "index_tool": ("CAPIDX_INDEX_TOOL", "--index-tool"),
    "transport": ("CAPIDX_TRANSPORT", "--transport"),
    "host": ("CAPIDX_HOST", "--host"),
    "port": ("CAPIDX_PORT", "--port"),
    "allowed_hosts": ("CAPIDX_ALLOWED_HOSTS", "--allowed-host"),
    "allowed_origins": ("CAPIDX_ALLOWED_ORIGINS", "--allowed-origin"),
    "reload": ("CAPIDX_RELOAD", "--reload/--no-reload"),
    "max_connections": ("CAPIDX_MAX_CONNECTIONS", "--max-connections"),
    "idle_timeout": ("CAPIDX_IDLE_TIMEOUT", "--idle-timeout"),
    "max_message_bytes": ("CAPIDX_MAX_MESSAGE_BYTES", "--max-message-bytes"),
    "instructions": ("CAPIDX_INSTRUCTIONS", "--instructions"),
}
DEFAULTS: dict[str, Any] = {
    "build": Path("build"),
    "resources": True,
    "expose": DEFAULT_EXPOSE,
    "index_tool": False,
    "transport": "stdio",
    "host": "127.0.0.1",
    "port": 8000,
    "allowed_hosts": (),
    "allowed_origins": (),
    "reload": True,
    "max_connections": DEFAULT_MAX_CONNECTIONS,
    "idle_timeout": DEFAULT_IDLE_TIMEOUT,
    "max_message_bytes": DEFAULT_MAX_MESSAGE_BYTES,
    "instructions": DEFAULT_INSTRUCTIONS,
}


class SettingsError(Exception):
    """One or more settings are invalid; `problems` holds one message each."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = tuple(problems)


@dataclass(frozen=True)
class Settings:
    build: Path
    resources: bool
    expose: tuple[str, ...]
    index_tool: bool
    transport: str
    host: str
    port: int
    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...]
    reload: bool
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    idle_timeout: int = DEFAULT_IDLE_TIMEOUT
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    instructions: str = DEFAULT_INSTRUCTIONS
    config_file: Path | None = None
    sources: Mapping[str, str] = field(default_factory=dict)

    @property
    def exposed_kinds(self) -> frozenset[str]:
        """Artifact kinds served as resources; empty when the resources capability is off."""
        return frozenset(EXPOSE_KIND[name] for name in self.expose) if self.resources else frozenset()

    @property
    def index_variants(self) -> tuple[str, ...]:
        """Variants `get_capability_index` may return: the exposed ones among summary/stats/full."""
        return tuple(name for name in ("summary", "stats", "full") if name in self.expose)

    @property
    def tool_variants(self) -> tuple[str, ...] | None:
        """What `get_capability_index` offers; None when the tool is off."""
        return self.index_variants if self.index_tool else None

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    def security_hosts(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Host and Origin headers accepted over HTTP (DNS-rebinding protection is always on): the loopback names,
        the address bound (the URL the server prints: `--host 127.0.0.2` refused it) and `--allowed-host`. A
        rebinding page's requests carry the attacker's DNS name as Host, never an address or `localhost`, so the
        loopback names are accepted on any bind too: a health check on the server's machine needs them."""
        own = (self.bound_host.lower(),) if self.bound_host else ()  # lower case, as HostGuard passes Host on
        allowed, allowed_origins = (
            tuple(p.lower() for p in found) for found in (self.allowed_hosts, self.allowed_origins)
        )
        hosts = tuple(dict.fromkeys((*LOOPBACK_ALLOWED_HOSTS, *own, *allowed)))
        if self.loopback:
            origins = (*LOOPBACK_ALLOWED_ORIGINS, *(f"http://{h}" for h in own), *allowed_origins)
            return hosts, tuple(dict.fromkeys(origins))
        named = (*own, *allowed)
        return hosts, allowed_origins or tuple(f"{s}://{h}" for h in named for s in ("http", "https"))

    @property
    def bound_host(self) -> str | None:
        """The Host pattern of the address bound (`127.0.0.2:*`, `[fd00::5]:*`), or None for every address
        (`0.0.0.0`, `::`): no client writes that in a URL."""
        host = self.host.strip("[]")
        if not host or is_unspecified(host):
            return None
        return f"[{host}]:*" if ":" in host else f"{host}:*"


def is_unspecified(host: str) -> bool:
    """Whether `host` is the address of every address of the machine, however written (`0.0.0.0`, `::`, `::0`, and
    `0`, which the system's resolver reads as 0.0.0.0 as it reads `127.1` as 127.0.0.1)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        pass
    try:
        return socket.inet_aton(host) == bytes(4)
    except OSError:
        return False


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# --- parsing one value ------------------------------------------------------------------------------


def _bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ValueError(f"expected true/false, 1/0 or yes/no, got {text!r}")


def _list(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item.strip() for item in text.split(",") if item.strip()))


def _expose(items: Sequence[str]) -> tuple[str, ...]:
    problems = [f"unknown resource {item!r}{did_you_mean(item, EXPOSABLE)}" for item in items if item not in EXPOSABLE]
    if problems:
        raise ValueError("; ".join(problems) + f" (choose from {', '.join(EXPOSABLE)})")
    return tuple(dict.fromkeys(items))


def _choice(what: str, choices: tuple[str, str]) -> Callable[[str], str]:
    """A parser for one of two words (transport, instructions), case-insensitive."""

    def parse(text: str) -> str:
        value = text.strip().lower()
        if value not in choices:
            either = " or ".join(choices)
            raise ValueError(f"unknown {what} {text!r}{did_you_mean(value, choices)} (choose {either})")
        return value

    return parse


def _port(text: str) -> int:
    try:
        port = int(text.strip())
    except ValueError:
        raise ValueError(f"expected a port number 0-65535, got {text!r}") from None
    if not 0 <= port <= 65535:
        raise ValueError(f"expected a port number 0-65535, got {port}")
    return port


def _count(minimum: int, what: str, maximum: int | None = None) -> Callable[[str], int]:
    """A parser for a whole number of at least `minimum` (connections, seconds, bytes), and at most `maximum`."""

    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise ValueError(f"expected a whole number of {what} (at least {minimum}), got {clip(text)!r}") from None
        if value < minimum:
            raise ValueError(f"expected at least {minimum} {what}, got {clip(str(value))}")
        if maximum is not None and value > maximum:
            raise ValueError(f"expected at most {maximum:,} {what}, got {clip(str(value))}")
        return value

    return parse


def _host(text: str) -> str:
    host = text.strip()
    if not host or any(c.isspace() for c in host) or "/" in host:
        raise ValueError(f"expected a host name or IP address, got {text!r}")
    return host


def _build(text: str) -> Path:
    """No shell expands `~` in a client's env or args; an empty path (`--build "$DIR"`, unset) is not the folder
    serve runs in."""
    if not text.strip():
        raise ValueError(EMPTY_PATH)
    return Path(expand_home(text))


ENV_PARSERS: dict[str, Callable[[str], Any]] = {
    "build": _build,
    "resources": _bool,
    "expose": lambda text: _expose(_list(text)),
    "index_tool": _bool,
    "transport": _choice("transport", TRANSPORTS),
    "host": _host,
    "port": _port,
    "allowed_hosts": _list,
    "allowed_origins": _list,
    "reload": _bool,
    "max_connections": _count(1, "connections"),
    "idle_timeout": _count(1, "seconds", MAX_IDLE_TIMEOUT),
    "max_message_bytes": _count(MIN_MAX_MESSAGE_BYTES, "bytes"),
    "instructions": _choice("instructions", INSTRUCTIONS),
}


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


# --- the three sources ------------------------------------------------------------------------------


def from_flags(flags: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Flags the user gave (`None` or an empty tuple = not given), parsed."""
    values: dict[str, Any] = {}
    problems: list[str] = []
    for name, raw in flags.items():
        if raw is None or raw == ():
            continue
        flag = NAMES[name][1]
        try:
            if name in ("expose", "build", "host"):  # free text, parsed as from the environment
                values[name] = ENV_PARSERS[name](raw)
            elif name in ("allowed_hosts", "allowed_origins"):
                values[name] = tuple(dict.fromkeys(item for part in raw for item in _list(part)))
            else:
                values[name] = raw
        except ValueError as error:
            problems.append(f"{flag}: {error}")
    return values, problems


def from_environment(environ: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
    """CAPIDX_* variables; an empty variable counts as unset. A CAPIDX_ variable that is none of them but close to
    one (`CAPIDX_RELOD=0`) is a problem, as a misspelled key of capidx.yaml is: ignored, it would leave the setting
    as it was without a word."""
    values: dict[str, Any] = {}
    problems: list[str] = []
    known = [variable for variable, _flag in NAMES.values()]
    for variable in sorted(v for v in environ if v.startswith("CAPIDX_") and v not in known and environ[v].strip()):
        if close := difflib.get_close_matches(variable, known, n=1, cutoff=0.85):
            problems.append(visible(f"{variable}: not a capidx setting (did you mean {close[0]}?)"))
    for name, (variable, _flag) in NAMES.items():
        raw = environ.get(variable, "")
        if not raw.strip():
            continue
        try:
            values[name] = ENV_PARSERS[name](raw)
        except ValueError as error:
            problems.append(f"{variable}: {error}")
    return values, problems


@cache
def config_schema() -> dict[str, Any]:
    text = resources.files("capidx.schema").joinpath("config-schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def config_validator() -> Any:
    """A `jsonschema` validator for the whole of capidx.yaml, imported only when there is a file to check: the
    MCP SDK imports jsonschema anyway once serving starts, but `--print-config` and a run refused for want of a
    build need not pay for it when there is no file."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(config_schema(), format_checker=Draft202012Validator.FORMAT_CHECKER)


def find_config(cwd: Path, explicit: Path | None) -> Path | None:
    if explicit is not None:
        return explicit
    candidate = cwd / CONFIG_FILE_NAME
    # Whatever it is: a capidx.yaml that cannot be read (a folder, a pipe, a broken link) is refused, as validate
    # and build refuse it, never taken for "no file" and the defaults.
    return candidate if os.path.lexists(candidate) else None


def from_file(path: Path, cwd: Path | None = None) -> tuple[dict[str, Any], list[str]]:
    """The `serve:` section of capidx.yaml (and `paths.out` as the default build), once the whole file is valid.

    Every problem is a `file:line:col: $.json.path: message` line (`file: message` for a file that cannot be
    read at all), the file named as validate names it (`wording.shown`: relative to the working folder `cwd`).
    The file is checked as `capidx validate` checks it: readable, UTF-8, YAML, no duplicate or
    non-string keys, valid against config-schema.json everywhere; the rules relating staleness or injection
    keys to each other concern only the compiler and are left to it.
    """
    named = Path(shown(path, cwd))
    try:
        document, text = _parse(named, _read(path, named))
    except SettingsError as error:
        return {}, list(error.problems)
    data = document.data
    if data is None:  # an empty file, or only comments: every default
        return {}, []
    if not isinstance(data, dict):
        return {}, [_at(named, document.source_map.locate(()), (), NOT_SETTINGS)]
    problems = _schema_problems(named, data, document.source_map, text)
    if problems:
        return {}, problems
    serve = whole_numbers(data, config_schema()).get("serve", {})  # `port: 8000.0` is 8000, as the compiler reads it
    values = _file_values(path.parent, serve)
    # where each value is written, for problems found only once every source is merged
    values["_positions"] = {name: at for name in serve if (at := document.source_map.locate(("serve", name)))}
    out = data.get("paths", {}).get("out")
    if "build" not in values and out is not None:
        values["build"] = path.parent / expand_home(out)
        values["_build_key"] = "paths.out"
    return values, []


def _read(path: Path, named: Path) -> bytes:
    """The file's bytes; `SettingsError` saying why they cannot be had (naming the file as `named`). A pipe,
    socket or device is refused before it is opened: opening a FIFO waits for a writer, so serve would hang at
    start instead of saying what is wrong."""
    try:
        info = os.stat(path)
    except OSError as error:
        raise SettingsError([f"{named}: {_stat_problem(path, error)}"]) from None
    if stat.S_ISDIR(info.st_mode):
        raise SettingsError([f"{named}: is a directory, expected a file"])
    not_regular = SettingsError([f"{named}: is not a regular file (a device, socket or pipe?)"])
    if not stat.S_ISREG(info.st_mode):
        raise not_regular
    too_large = SettingsError([f"{named}: file is over the {MAX_FILE_BYTES // 1024 // 1024} MB limit for data files"])
    if info.st_size > MAX_FILE_BYTES:  # as validate and build refuse it
        raise too_large
    try:
        # O_NONBLOCK: should a pipe replace the file between the stat and the open, the open does not wait.
        with os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise not_regular
            raw = handle.read(MAX_FILE_BYTES + 1)  # the file may have grown since the stat
    except OSError as error:
        raise SettingsError([f"{named}: {_stat_problem(path, error)}"]) from None
    if len(raw) > MAX_FILE_BYTES:
        raise too_large
    return raw


def _stat_problem(path: Path, error: OSError) -> str:
    problem, hint = unreadable(path, error)
    return f"{problem} ({hint})" if hint else problem


def _parse(path: Path, raw: bytes) -> tuple[YamlDocument, str]:
    """The YAML document and its text; `SettingsError` when it is not one, or has duplicate or non-string keys or
    values JSON cannot hold (as in validate, the schema is then not applied: the data is not what the file seems to
    say)."""
    import yaml

    try:
        text = raw.decode("utf-8-sig")  # a leading BOM is tolerated and not counted as a column, as in validate
    except UnicodeDecodeError as error:
        line, column, message = not_utf8(raw, error)
        raise SettingsError([f"{path}:{line}:{column}: {said(message, UTF8_HINT)}"]) from None
    try:
        document = parse_yaml(text)
    except yaml.MarkedYAMLError as error:  # worded and placed as validate does (`wording.yaml_problem`)
        (line, column), message, hint = yaml_problem(error, text)
        where = str(path) if line is None else f"{path}:{line}:{column}"
        raise SettingsError([visible(f"{where}: {said(message, hint)}")]) from None
    except yaml.YAMLError as error:
        raise SettingsError([visible(f"{path}: invalid YAML: {' '.join(str(error).split())}")]) from None
    except YamlTooDeep as error:  # as `too_deep` below says it of the parsed data
        raise SettingsError([_at(path, error.position, error.parts, str(error))]) from None
    except YamlShapeError as error:
        line, column = error.position
        raise SettingsError([f"{path}:{line}:{column}: unusable YAML: {error}"]) from None
    except RecursionError:
        raise SettingsError([f"{path}: invalid YAML: nested too deeply"]) from None
    found: list[tuple[Position, Parts | None, str]] = []
    for value in document.unusable:  # every one, as validate says them
        found.append((value.position, value.parts, f"unusable YAML: {value.message}"))
    for dup in document.source_map.duplicates:
        first = f"first at line {dup.first[0]}, column {dup.first[1]}; parsers keep only the last value"
        found.append((dup.position, dup.parts, f"duplicate key {shown_key(dup.parts[-1])!r} ({first})"))
    for parts, at, key in document.unsaid_keys():
        found.append(
            (at, parts, f"key {shown_key(key)!r} is not a string (quote it: JSON data allows only string keys)")
        )
    if found:
        raise SettingsError([_at(path, *problem) for problem in sorted(found, key=lambda problem: problem[0])])
    if (deep := too_deep(document.data)) is not None:
        message = f"nested more than {MAX_NESTING} levels deep"
        raise SettingsError([_at(path, *_placed(document.source_map, deep, message))])
    return document, text


def _file_values(base: Path, serve: Mapping[str, Any]) -> dict[str, Any]:
    values = {name: tuple(dict.fromkeys(raw)) if isinstance(raw, list) else raw for name, raw in serve.items()}
    if "build" in values:
        values["build"] = base / expand_home(values["build"])  # relative to the directory holding capidx.yaml
    return values


def _schema_problems(path: Path, data: dict[str, Any], source_map: SourceMap, text: str) -> list[str]:
    """Every place the file breaks config-schema.json, in the order they are written, in validate's words
    (`capidx.schema.wording`: the same misspelled key reads the same in validate, build and serve; a hint that
    quotes a value, `on` read as true, quotes it as written)."""
    try:
        errors = list(config_validator().iter_errors(data))
    except RecursionError:
        return [f"{path}: nested too deeply to check"]
    lines = editor_lines(text)  # as the source map counts them, as validate reads them (`SourceFile.written`)

    def written(parts: Parts, value: Any) -> str | None:
        return written_scalar(lines, source_map.locate(parts), value, yaml_scalar)

    found: list[tuple[Position, Parts, str]] = []
    for error in without_shadowed(errors):
        for problem in describe(error, written):
            found.append(_placed(source_map, problem.parts, problem.message, problem.hint, key=problem.key))
    return [_at(path, *problem) for problem in sorted(found, key=lambda problem: problem[0])]


def _placed(
    source_map: SourceMap, parts: Parts, message: str, hint: str | None = None, *, key: bool = False
) -> tuple[Position, Parts, str]:
    """A problem placed and said as `capidx validate` does (`SourceMap.place`, `wording.said`): for a value used
    through an alias, where the alias stands, the message saying where the value is written, then the hint."""
    at, written = source_map.place(parts, key=key)
    return at or (1, 1), parts, said(message + written, hint)


def _at(path: Path, at: Position | None, parts: Parts | None, message: str) -> str:
    """`file:line:col: $.json.path: message` (no path for a problem in a key, which has none, as validate says it);
    nothing from the file can move the terminal's cursor or reorder its text (a key is quoted in the path as
    written)."""
    line, column = at or (1, 1)
    where = "" if parts is None else f"{json_path(parts)}: "
    return visible(f"{path}:{line}:{column}: {where}{message}")


# --- merge ------------------------------------------------------------------------------------------


def resolve_settings(
    flags: Mapping[str, Any],
    environ: Mapping[str, str],
    cwd: Path,
    config: Path | None = None,
) -> Settings:
    """Merge the sources; raises `SettingsError` listing every problem."""
    config_file = find_config(cwd, config)
    problems: list[str] = []
    file_values: dict[str, Any] = {}
    if config is not None and not os.path.lexists(config):  # anything else there is read, or refused for what it is
        problems.append(f"--config: {config} does not exist")
    elif config_file is not None and config is None and (out := leads_out(config_file)) is not None:
        problems.append(f"{shown(config_file, cwd)}: {said(LINKED_OUT.format(*out), LINKED_OUT_HINT)}")
    elif config_file is not None:
        file_values, file_problems = from_file(config_file, cwd)
        problems += file_problems
    env_values, env_problems = from_environment(environ)
    flag_values, flag_problems = from_flags(flags)
    problems += env_problems + flag_problems
    chosen: dict[str, Any] = {}
    sources: dict[str, str] = {}
    build_key = file_values.pop("_build_key", "serve.build")
    positions: dict[str, tuple[int, int]] = file_values.pop("_positions", {})
    for name in NAMES:
        env_name, flag = NAMES[name]
        if name in flag_values:
            chosen[name], sources[name] = flag_values[name], f"flag {flag.split('/')[0]}"
        elif name in env_values:
            chosen[name], sources[name] = env_values[name], f"env {env_name}"
        elif name in file_values:
            key = build_key if name == "build" else f"serve.{name}"
            chosen[name], sources[name] = file_values[name], f"file {config_file} ({key})"
        else:
            chosen[name], sources[name] = DEFAULTS[name], "default"
    if sources["build"] == "default" and config_file is not None:  # the build `capidx build` writes for that file
        chosen["build"] = cwd / config_file.parent / chosen["build"]
    elif not sources["build"].startswith("file "):
        chosen["build"] = cwd / chosen["build"]  # flags, environment and the default are relative to the cwd
    settings = Settings(**chosen, config_file=config_file, sources=sources)
    where = {name: _origin(settings, name) for name in NAMES}
    for name, (line, column) in positions.items():
        if name in where and sources[name].startswith("file "):  # file:line:col: key, as other file problems
            where[name] = f"{shown(config_file, cwd)}:{line}:{column}: {json_path(('serve', name))}"
    problems += _cross_checks(settings, where) if not problems else []
    if problems:
        raise SettingsError(problems)
    return settings


def _cross_checks(settings: Settings, where: Mapping[str, str]) -> list[str]:
    """Problems of combinations; `where[name]` names where a setting came from (flag, variable, file:line:col)."""
    problems = _pattern_problems(settings, where)
    if settings.transport == "http" and not settings.loopback and not settings.allowed_hosts:
        problems.append(
            f"{where['host']}: {settings.host} is not a "
            "loopback address; binding it requires --allowed-host HOST[:PORT] (or CAPIDX_ALLOWED_HOSTS, "
            "serve.allowed_hosts) naming the Host headers to accept, so DNS-rebinding protection stays on"
        )
    if settings.index_tool and not settings.index_variants:
        problems.append(
            f"{where['index_tool']}: get_capability_index "
            "would have nothing to return: expose at least one of summary, stats, full"
        )
    return problems


def _pattern_problems(settings: Settings, where: Mapping[str, str]) -> list[str]:
    """Allowed hosts and origins the SDK would match as written. It knows an exact value and a `:*` port
    wildcard only: `*` or `*.example.com` would silently match nothing but that literal text, so they are
    refused here instead of leaving an HTTP server that answers every client 421."""
    problems = []
    for name, pattern, form in (
        ("allowed_hosts", HOST_PATTERN, "HOST, HOST:PORT or HOST:* (any port)"),
        ("allowed_origins", ORIGIN_PATTERN, "http(s)://HOST, http(s)://HOST:PORT or http(s)://HOST:* (any port)"),
    ):
        for value in getattr(settings, name):
            if not pattern.fullmatch(value):
                why = (
                    "a wildcard is allowed only as the whole port (`:*`); accepting any host would turn "
                    "DNS-rebinding protection off, so name the hosts clients use"
                    if "*" in value
                    else "not a host name, IP address or [IPv6] address"
                )
                problems.append(f"{where[name]}: {value!r} is not a valid pattern ({why}); write {form}")
    return problems


def _origin(settings: Settings, name: str) -> str:
    """Where a setting came from, as an error message names it: `--host`, `CAPIDX_HOST`, `file ... (serve.host)`."""
    return settings.sources[name].removeprefix("flag ").removeprefix("env ")


def render(settings: Settings) -> str:
    """`--print-config`: the effective `serve:` section as YAML, each line saying where it came from."""
    hosts, origins = settings.security_hosts()
    rows = [
        ("build", _as_in_file(settings)),
        ("resources", _yaml_bool(settings.resources)),
        ("expose", f"[{', '.join(settings.expose)}]"),
        ("index_tool", _yaml_bool(settings.index_tool)),
        ("transport", settings.transport),
        ("host", settings.host),
        ("port", str(settings.port)),
        ("allowed_hosts", f"[{', '.join(settings.allowed_hosts)}]"),
        ("allowed_origins", f"[{', '.join(settings.allowed_origins)}]"),
        ("reload", _yaml_bool(settings.reload)),
        ("max_connections", str(settings.max_connections)),
        ("idle_timeout", str(settings.idle_timeout)),
        ("max_message_bytes", str(settings.max_message_bytes)),
        ("instructions", settings.instructions),
    ]
    rows = [(name, visible(value)) for name, value in rows]  # aligned as printed (below)
    width = max(len(f"  {name}: {value}") for name, value in rows) + 2
    lines = [
        "# capidx serve: effective settings (flags > environment > capidx.yaml > defaults)",
        f"# config file: {settings.config_file or 'none'}",
        "serve:",
    ]
    lines += [f"{f'  {name}: {value}':<{width}}# {settings.sources[name]}" for name, value in rows]
    lines += [
        f"# accepted Host headers over HTTP: {', '.join(hosts)}",
        f"# accepted Origin headers over HTTP: {', '.join(origins)}",
        "# tools: lookup_capability, compare_capability, list_capabilities, get_sources"
        + (f", get_capability_index ({', '.join(settings.index_variants)})" if settings.index_tool else ""),
    ]
    return visible_lines(lines) + "\n"  # the values are capidx.yaml's, perhaps a fork's: one line each


def _as_in_file(settings: Settings) -> str:
    """The build folder as capidx.yaml would give it: relative to that file's folder (the paths of capidx.yaml are
    read against it), so the printed section pasted into it names the same build (`tools/capidx/build`, printed
    relative to the working folder, read as tools/capidx/tools/capidx/build); absolute when outside it."""
    config = settings.config_file
    return shown(os.path.abspath(settings.build), Path(os.path.abspath(config)).parent if config else Path.cwd())


def _yaml_bool(value: bool) -> str:
    return "true" if value else "false"
