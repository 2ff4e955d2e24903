"""A small, general lexicon of software abbreviations and acronyms, and the identifier tokens of a text.

Why: people and models shorten the words of the field ("repo", "PR", "env var", "cmds") while catalogs
spell them out, and they name features by their identifiers (`/compact`, `CLAUDE.md`, `.mcp.json`,
`--yolo`, `#codebase`, `@workspace`, `MY_API_KEY`) which plain word splitting turns into ordinary words.
The resolver (server/resolve.py) and the match index (compiler/derive/match.py) use both, so that build and run
time agree.

The lexicon is general knowledge of software tooling, written independently of any catalog or
benchmark: every entry is a common abbreviation with its usual expansion. An abbreviation is matched
as a whole word after normalization; its expansion is compared with the catalog's `terms()` like any
query text, and the abbreviation itself still counts when a catalog uses it (a catalog that says
"MCP" matches "MCP" directly). Entries with several usual meanings list them all.

Standard library only (the server imports it at start).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from capidx.schema.text import KEY_CHORD_PATTERN, stem

# abbreviation (as normalized: lower case, no punctuation) -> its usual expansions
ABBREVIATIONS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        # source control and review
        "repo": ("repository",),
        "repos": ("repositories",),
        "pr": ("pull request",),
        "prs": ("pull requests",),
        "mr": ("merge request",),
        "mrs": ("merge requests",),
        "vcs": ("version control",),
        "scm": ("source control",),
        "ci": ("continuous integration",),
        "cd": ("continuous delivery",),
        "cicd": ("continuous integration",),
        # configuration and environment
        "config": ("configuration",),
        "configs": ("configurations",),
        "cfg": ("configuration",),
        "conf": ("configuration",),
        "env": ("environment",),
        "envs": ("environments",),
        "var": ("variable",),
        "vars": ("variables",),
        "prefs": ("preferences",),
        "perm": ("permission",),
        "perms": ("permissions",),
        "auth": ("authentication",),
        "authn": ("authentication",),
        "authz": ("authorization",),
        "creds": ("credentials",),
        "dir": ("directory",),
        "dirs": ("directories",),
        "cwd": ("working directory",),
        "pkg": ("package",),
        "pkgs": ("packages",),
        "deps": ("dependencies",),
        "dep": ("dependency",),
        # commands and programs
        "cmd": ("command",),
        "cmds": ("commands",),
        "cli": ("command line",),
        "args": ("arguments",),
        "arg": ("argument",),
        "param": ("parameter",),
        "params": ("parameters",),
        "opts": ("options",),
        "exec": ("execute",),
        "proc": ("process",),
        "fn": ("function",),
        "func": ("function",),
        "impl": ("implementation",),
        "lib": ("library",),
        "libs": ("libraries",),
        "util": ("utility",),
        "utils": ("utilities",),
        "tty": ("terminal",),
        "stdin": ("standard input",),
        "stdout": ("standard output",),
        # editors and tools
        "ide": ("integrated development environment", "editor"),
        "ides": ("integrated development environments", "editors"),
        "lsp": ("language server protocol", "language server"),
        "vsc": ("visual studio code",),
        "vscode": ("visual studio code",),
        "ui": ("user interface",),
        "tui": ("terminal user interface",),
        "gui": ("graphical user interface",),
        "ux": ("user experience",),
        "api": ("application programming interface",),
        "sdk": ("software development kit",),
        "mcp": ("model context protocol",),
        "otel": ("opentelemetry",),
        "db": ("database",),
        "vm": ("virtual machine",),
        "vms": ("virtual machines",),
        "k8s": ("kubernetes",),
        "os": ("operating system",),
        "fs": ("file system",),
        "url": ("web address", "link"),
        # models and AI
        "llm": ("language model", "large language model"),
        "llms": ("language models",),
        "ai": ("artificial intelligence",),
        "byok": ("bring your own key",),
        "ctx": ("context",),
        "sys": ("system",),
        "tok": ("token",),
        "toks": ("tokens",),
        # everyday shortenings
        "img": ("image",),
        "imgs": ("images",),
        "pic": ("picture", "image"),
        "pics": ("pictures", "images"),
        "doc": ("documentation", "document"),
        "docs": ("documentation", "documents"),
        "msg": ("message",),
        "msgs": ("messages",),
        "info": ("information",),
        "ops": ("operations",),
        "op": ("operation",),
        "max": ("maximum",),
        "min": ("minimum",),
        "stats": ("statistics",),
        "temp": ("temporary",),
        "tmp": ("temporary",),
        "sec": ("security",),
        "dev": ("development",),
        "prod": ("production",),
        "e2e": ("end to end",),
        "ref": ("reference",),
        "refs": ("references",),
        "gh": ("github",),
        "ext": ("extension",),
        "exts": ("extensions",),
        "gen": ("generation", "generate"),
        "regex": ("regular expression",),
        "perf": ("performance",),
        "mgmt": ("management",),
        "repl": ("read eval print loop",),
    }
)

# An identifier as people type it: a slash command (`/compact`), a flag (`--yolo`, `-p` is too short to
# tell from a hyphen), a mention (`#codebase`, `@workspace`), a dotted name with a letter in two of its
# parts (`CLAUDE.md`, `.mcp.json`, `chat.checkpoints.enabled`; not `4.2` or `e.g.`), a dotfile or
# dot-directory (`.claude`, `.github/`), an environment variable (`MY_API_KEY`, upper case with an
# underscore). Matched on the NFKC text before case folding (environment variables are upper case).
IDENTIFIER_PATTERN = re.compile(
    r"""
      (?<![\w/.])/[A-Za-z][\w-]*(?![\w/])               # /compact
    | (?<![\w-])--[A-Za-z][\w-]+                         # --yolo
    | (?<![\w#@])[#@][A-Za-z][\w-]*                      # #codebase, @workspace
    | (?<![\w.])\.?[A-Za-z0-9_][\w-]*(?:\.[A-Za-z0-9_][\w-]*)+   # CLAUDE.md, .mcp.json, a.b.c
    | (?<![\w.])\.[A-Za-z][\w-]+                         # .claude
    | \b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b                      # MY_API_KEY
    | """
    + KEY_CHORD_PATTERN  # Ctrl+I, Cmd+Shift+P
    + """
    """,
    re.VERBOSE,
)
_MARKS = frozenset("/#@._-+")
_PUNCTUATION = ",;:!?()[]{}'\"`"
_LETTERS = re.compile(r"[a-z]{2,}")


def identifiers(text: str) -> list[str]:
    """The identifier tokens of a text, case-folded, in order, with repeats ('Run /compact' -> ['/compact']).

    URLs are skipped (a host name is not a feature's identifier), as are dotted numbers and one-letter
    abbreviations ('v4.2', 'e.g.'): a dotted token needs two parts with at least two letters each. Only
    whitespace-separated words with a mark an identifier needs (`/#@._-`, a sentence's full stop aside)
    are matched against the pattern, and the result is memoized: the build runs this over every text of
    the catalog, some of them twice (term counts and the `identifiers` map).
    """
    return list(_identifiers(text))


@lru_cache(maxsize=16384)
def _identifiers(text: str) -> tuple[str, ...]:
    found = []
    for raw in unicodedata.normalize("NFKC", text).split():
        word = raw.strip(_PUNCTUATION).rstrip(".")
        if _MARKS.isdisjoint(word) or "://" in word:
            continue
        for match in IDENTIFIER_PATTERN.finditer(word):
            token = match.group(0).casefold().rstrip(".-")
            if "." in token.strip("."):
                parts = [part for part in token.split(".") if _LETTERS.search(part)]
                if len(parts) < 2:
                    continue
            if len(token) > 2:
                found.append(token)
        found += _config_paths(word)
    return tuple(found)


_PATH_SEGMENT = re.compile(r"[\w.-]+")


def _config_paths(word: str) -> list[str]:
    """A path under a dot-directory names a feature's place ('.claude/agents/' holds Claude's custom agents): its
    prefixes of two or more plain segments are tokens of their own, case-folded, with '~/' and './' dropped
    ('~/.claude/agents/<name>.md' -> '.claude/agents'), so a query's path finds a text's longer one. Paths
    elsewhere ('/usr/bin', 'and/or', 'ci/cd') are not identifiers."""
    path = word.casefold().removeprefix("~/").removeprefix("./")
    segments = path.split("/")
    if len(segments) < 2 or not segments[0].startswith(".") or not _LETTERS.search(segments[0]):
        return []
    plain: list[str] = []
    for segment in segments:
        if not _PATH_SEGMENT.fullmatch(segment):
            break
        plain.append(segment)
    return ["/".join(plain[:end]) for end in range(2, len(plain) + 1)]


def expansions(word: str) -> tuple[str, ...]:
    """The usual expansions of a normalized word, or () when it is not a known abbreviation.

    The word may also be the light stem of an abbreviation (`capidx.schema.text.stem`), which is what the
    resolver holds once a query is split into `terms()`: 'prefs' arrives as 'pref', 'creds' as 'cred'."""
    return ABBREVIATIONS.get(word) or _by_stem().get(word, ())


@lru_cache(maxsize=1)
def _by_stem() -> Mapping[str, tuple[str, ...]]:
    """stem -> expansions, for the abbreviations whose light stem is not an entry itself ('prefs' -> 'pref')."""
    found: dict[str, tuple[str, ...]] = {}
    for word, expanded in ABBREVIATIONS.items():
        key = stem(word)
        if key not in ABBREVIATIONS:
            found.setdefault(key, expanded)
    return MappingProxyType(found)


__all__ = ["ABBREVIATIONS", "IDENTIFIER_PATTERN", "expansions", "identifiers"]
