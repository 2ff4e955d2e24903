"""Software abbreviations read both ways, programming languages by name, and the identifier tokens of a text: people
shorten what catalogs spell out, and name features by identifiers (`/compact`, `CLAUDE.md`) that word splitting would
break. Shared by the query analysis and the build's match index so that both agree. The table is general knowledge
of software tooling, written independently of any catalog; an entry lists each usual meaning, and its one-word
readings name one thing ('pic': 'picture', 'image').
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from functools import lru_cache
from itertools import takewhile
from types import MappingProxyType

from capidx.schema.text import KEY_CHORD_PATTERN, stem, terms

# abbreviation (normalized): its usual expansions, separated by '|'; entries by ';'.
_TABLE = """
repo: repository; repos: repositories; pr: pull request; prs: pull requests; mr: merge request; mrs: merge requests;
vcs: version control; scm: source control; ci: continuous integration; cd: continuous delivery;
cicd: continuous integration; config: configuration; configs: configurations; cfg: configuration;
conf: configuration; env: environment; envs: environments; var: variable; vars: variables; prefs: preferences;
perm: permission; perms: permissions; auth: authentication; authn: authentication; authz: authorization;
creds: credentials; dir: directory; dirs: directories; cwd: working directory; pkg: package; pkgs: packages;
deps: dependencies; dep: dependency; cmd: command; cmds: commands; cli: command line interface | command line;
args: arguments; arg: argument; param: parameter; params: parameters; opts: options; exec: execute; proc: process;
fn: function; func: function; impl: implementation; lib: library; libs: libraries; util: utility; utils: utilities;
tty: terminal; stdin: standard input; stdout: standard output; ide: integrated development environment | editor;
ides: integrated development environments | editors; lsp: language server protocol | language server;
vsc: visual studio code; vscode: visual studio code; ui: user interface; tui: terminal user interface;
gui: graphical user interface; ux: user experience; api: application programming interface;
sdk: software development kit; mcp: model context protocol; otel: opentelemetry; db: database; vm: virtual machine;
vms: virtual machines; k8s: kubernetes; os: operating system; fs: file system; url: web address | link;
llm: language model | large language model | model; llms: language models | models; ai: artificial intelligence;
nl: natural language; byok: bring your own key; ctx: context; sys: system; tok: token; toks: tokens; img: image;
imgs: images; pic: picture | image; pics: pictures | images; doc: documentation | document;
docs: documentation | documents; msg: message; msgs: messages; info: information; ops: operations; op: operation;
max: maximum; min: minimum; stats: statistics; temp: temporary; tmp: temporary; sec: security; dev: development;
prod: production; e2e: end to end; ref: reference; refs: references; gh: github; ext: extension; exts: extensions;
gen: generation | generate; regex: regular expression; perf: performance; mgmt: management;
repl: read eval print loop; instr: instruction; instrs: instructions; ckpt: checkpoint; ckpts: checkpoints;
vuln: vulnerability; vulns: vulnerabilities; cve: vulnerability; i18n: internationalization; l10n: localization;
a11y: accessibility; o11y: observability; rbac: role based access control | access control;
acl: access control list | access control; sso: single sign on; iac: infrastructure as code; js: javascript;
ts: typescript; py: python; ws: workspace | web socket
"""
# Programming languages, which a catalog names by their kind ("multiple programming languages"); not 'go', 'swift'
# or 'c', which a question often means otherwise.
PROGRAMMING_LANGUAGES = frozenset(
    "python javascript typescript java kotlin rust golang ruby php scala haskell elixir erlang clojure csharp cpp perl "
    "lua dart julia ocaml fsharp cobol fortran zig groovy".split()
)
ABBREVIATIONS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        word.strip(): tuple(e.strip() for e in expanded.split("|"))
        for word, expanded in (entry.split(":") for entry in _TABLE.replace("\n", " ").split(";") if entry.strip())
    }
)

# An identifier as typed: a flag needs two dashes (`-p` is a hyphen too), a dotted name letters in two of its parts
# (`identifiers`: not `4.2` or `e.g.`). Matched on the NFKC text before case folding (environment variables).
IDENTIFIER_PATTERN = re.compile(
    rf"""
      (?<![\w/.])/[A-Za-z][\w-]*(?![\w/])               # /compact
    | (?<![\w-])--[A-Za-z][\w-]+                         # --yolo
    | (?<![\w#@])[#@][A-Za-z][\w-]*                      # #codebase, @workspace
    | (?<![\w.])\.?[A-Za-z0-9_][\w-]*(?:\.[A-Za-z0-9_][\w-]*)+   # CLAUDE.md, .mcp.json, a.b.c
    | (?<![\w.])\.[A-Za-z][\w-]+                         # .claude
    | \b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b                      # MY_API_KEY
    | {KEY_CHORD_PATTERN}                               # Ctrl+I, Cmd+Shift+P
    """,
    re.VERBOSE,
)
_MARKS = frozenset("/#@._-+")
PUNCTUATION = ",;:!?()[]{}'\"`"  # around a word as typed: 'GEMINI.md?', '(JetBrains)'
_LETTERS = re.compile(r"[a-z]{2,}")
_PATH_SEGMENT = re.compile(r"[\w.-]+")
MAX_WORD = 200  # a longer word is no identifier anyone types: skipped, so hostile text cannot cost more
MAX_PATH_SEGMENTS = 6  # k segments would make k prefixes of O(k²) characters in all


@lru_cache(maxsize=16384)
def identifiers(text: str) -> tuple[str, ...]:
    """The identifier tokens of a text, case-folded, in order, with repeats; not URLs. Memoized: the build reads
    many texts twice."""
    found = []
    for raw in unicodedata.normalize("NFKC", text).split():
        word = raw.strip(PUNCTUATION).rstrip(".")
        if len(word) > MAX_WORD or _MARKS.isdisjoint(word) or "://" in word:
            continue
        for match in IDENTIFIER_PATTERN.finditer(word):
            token = match.group(0).casefold().rstrip(".-")
            parts = token.strip(".").split(".")
            if len(token) > 2 and (len(parts) == 1 or sum(bool(_LETTERS.search(part)) for part in parts) >= 2):
                found.append(token)
        found += _config_paths(word)
    return tuple(found)


def _config_paths(word: str) -> list[str]:
    """A path under a dot-directory names a feature's place: its prefixes of two or more plain segments are tokens
    ('~/.claude/agents/<name>.md' -> '.claude/agents'), so a query's path finds a text's longer one."""
    path = word.casefold().removeprefix("~/").removeprefix("./")
    segments = path.split("/", MAX_PATH_SEGMENTS)[:MAX_PATH_SEGMENTS]
    if len(segments) < 2 or not segments[0].startswith(".") or not _LETTERS.search(segments[0]):
        return []
    plain = list(takewhile(_PATH_SEGMENT.fullmatch, segments))
    return ["/".join(plain[:end]) for end in range(2, len(plain) + 1)]


def expansions(word: str) -> tuple[str, ...]:
    """The usual expansions of a normalized word (or its light stem: 'pref'), or ()."""
    return _BY_WORD.get(word, ())


def kinds(word: str) -> tuple[str, ...]:
    """The kind of thing a word names, also abbreviated ('kotlin', 'py' -> ('programming language',)), or ()."""
    named = word in PROGRAMMING_LANGUAGES or not PROGRAMMING_LANGUAGES.isdisjoint(expansions(word))
    return ("programming language",) if named else ()


def abbreviations(words: tuple[str, ...]) -> tuple[str, ...]:
    """The abbreviations whose expansion is this run of terms (('command', 'line', 'interface') -> ('cli',))."""
    return _BY_EXPANSION.get(words, ())


def _inverted() -> tuple[Mapping[str, tuple[str, ...]], Mapping[tuple[str, ...], tuple[str, ...]]]:
    """The table by abbreviation and its stem (an entry wins over a stem), and by expansion."""
    by_word = dict(ABBREVIATIONS)
    by_expansion: dict[tuple[str, ...], dict[str, None]] = {}
    for word, expanded in ABBREVIATIONS.items():
        by_word.setdefault(stem(word), expanded)
        for text in expanded:
            by_expansion.setdefault(tuple(terms(text)), {})[stem(word)] = None
    expansion = {words: tuple(abbrevs) for words, abbrevs in by_expansion.items() if words}
    return MappingProxyType(by_word), MappingProxyType(expansion)


_BY_WORD, _BY_EXPANSION = _inverted()
