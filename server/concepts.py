"""Related words of the field, and word families: what lets a described task find the feature that does it.

Why: a user describes what they want to do ("remember this for next time", "undo the last edit", "run it
from a cron job") while a catalog names and describes the feature in its own words ("memory",
"checkpoints", "non-interactive mode"). Plain term matching only finds the words both sides share. Two
general mechanisms widen that, both used by the resolver (server/resolve.py) as lower-weighted
alternatives of a query word, never as a replacement of the word itself:

- `CONCEPTS`: small groups of words that software-tool documentation uses for the same idea. Written
  from general knowledge of developer tools (version control, editors, terminals, CI, AI assistants),
  independently of any catalog: each group is a common idea with its usual wordings. A group is
  deliberately narrow: a word that means many things in the field ("change", "get", "use") is in no
  group, because it would relate everything to everything.
- `root`: the Snowball (Porter 2) stem of a word, via PyStemmer, so that derivations the light
  `capidx.schema.text.stem` keeps apart ("approval" / "approve", "explanation" / "explain" is not one;
  "compression" / "compress", "configuration" / "configure") meet. The index keeps its light terms (what
  the compiler writes in match.json is unchanged); the server groups index terms by root once per build.

Both are matched on `terms()` forms (stemmed, stop words removed), like any query text.

Some groups hold the everyday words of intent people use for the same ideas (resume: "keep going", "left off";
explain: "tell", "teach", "break down"; edit: "rename"; plan: "sketch", "design"; multi-file: "everywhere",
"project-wide"), and a few hold the field's common names (test frameworks; SQL databases; symbols and
definitions; external / third-party). All of it is general knowledge, not phrases of any query; its check is a
blind query set written without it in view.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from types import MappingProxyType

import Stemmer

from capidx.schema.text import terms

# Groups of wordings of one idea. A member may be a phrase ("pull request"): it then matches only where
# all its terms occur. Keep groups narrow; see the module docstring.
CONCEPTS: tuple[tuple[str, ...], ...] = (
    # remembering and context
    ("remember", "memory", "memorize", "recall", "persist", "persistent", "long-term"),
    ("forget", "clear", "reset"),
    ("conversation", "chat", "transcript", "dialogue", "thread", "history"),
    ("compress", "compact", "compaction", "condense", "summarize", "summary", "shrink", "truncate"),
    ("context window", "context limit", "token limit"),
    ("resume", "continue", "reopen", "restore session", "keep going", "left off", "previous session", "last session"),
    ("undo", "revert", "rollback", "roll back", "rewind", "restore", "checkpoint", "snapshot"),
    # instructions and customization
    ("instruction", "rule", "guideline", "convention", "style guide", "rulebook"),
    ("preference", "setting", "option", "configuration", "customize"),
    ("template", "saved prompt", "snippet", "macro", "shortcut", "alias"),
    ("persona", "profile", "role", "specialist"),
    ("subagent", "sub-agent", "worker", "helper", "delegate", "parallel"),
    ("skill", "procedure", "playbook", "recipe", "workflow"),
    ("plugin", "extension", "addon", "bundle", "package", "marketplace"),
    ("hook", "event", "lifecycle", "callback", "trigger"),
    ("integration", "connector", "connect", "server", "tool server"),
    # models and reasoning
    ("model", "llm", "engine", "provider"),
    ("think", "thinking", "reasoning", "deliberate", "effort", "reason", "ponder", "harder"),
    ("plan", "planning", "propose", "proposal", "approach", "outline", "strategy", "sketch", "design", "roadmap"),
    # permissions and safety
    ("permission", "allow", "deny", "allowlist", "denylist", "block", "approve", "approval", "confirm"),
    ("automatic", "unattended", "autonomous", "hands-off", "auto-approve", "unsupervised", "overnight"),
    ("sandbox", "container", "isolate", "isolation", "docker", "contained", "jail"),
    ("secret", "credential", "password", "api key"),
    # code work
    ("edit", "modify", "rewrite", "refactor", "patch", "rename", "restructure", "rework"),
    (
        "multi-file",
        "multiple files",
        "across files",
        "changeset",
        "everywhere",
        "project-wide",
        "codebase-wide",
        "bulk",
    ),
    ("review", "inspect", "audit", "critique", "feedback"),
    ("bug", "defect", "error", "issue", "problem"),
    ("test", "unit test", "test case", "coverage", "spec", "pytest", "jest", "junit", "mocha", "vitest", "rspec"),
    ("symbol", "definition", "call site", "declaration"),
    (
        "explain",
        "explanation",
        "describe",
        "understand",
        "walkthrough",
        "walk through",
        "clarify",
        "tell",
        "teach",
        "break down",
    ),
    ("search", "find", "locate", "grep", "lookup", "query"),
    ("codebase", "repository", "project", "workspace", "source code"),
    ("file", "path"),
    ("mention", "reference", "attach", "cite", "tag"),
    ("completion", "autocomplete", "suggestion", "type-ahead", "ghost text", "predict", "prediction"),
    ("inline", "cursor", "selection"),
    ("editor", "ide"),
    ("diff", "patch"),
    # running things
    ("terminal", "shell", "command line", "console", "bash"),
    ("run", "execute", "invoke", "launch"),
    ("script", "headless", "non-interactive", "batch", "scripted", "programmatic"),
    ("pipeline", "ci", "continuous integration", "cron", "scheduled", "nightly", "automation"),
    ("cloud", "remote", "hosted", "background", "offload", "handoff"),
    # the web and media
    ("internet", "online", "web"),
    ("database", "sql", "postgres", "postgresql", "mysql", "sqlite"),
    ("external", "third-party", "outside"),
    ("fetch", "download", "retrieve", "scrape", "crawl", "open url"),
    ("url", "link", "web page", "website", "page"),
    ("image", "picture", "photo", "screenshot", "diagram", "mockup", "visual"),
    ("voice", "speech", "speak", "dictate", "dictation", "microphone", "talk"),
    # accounts, cost and observability
    ("cost", "price", "spend", "spending", "spent", "burn", "billing", "dollar", "money", "expense", "budget"),
    ("usage", "consumption", "quota", "token count"),
    ("telemetry", "metrics", "monitoring", "observability", "tracing", "opentelemetry", "analytics"),
    ("log", "logging", "audit log", "trace"),
    # version control
    ("git", "version control", "source control", "commit", "branch"),
    ("pull request", "merge request", "code review"),
)


def _phrase(text: str) -> tuple[str, ...]:
    """The member's terms; () when stop words would drop some of its words ('pick up' is not 'pick', 'in-editor'
    is not 'editor'): such a member would relate the idea to a different word."""
    words = tuple(terms(text))
    return words if len(words) == len(text.replace("-", " ").split()) else ()


@lru_cache(maxsize=1)
def _related_table() -> Mapping[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """member (a run of terms) -> the other members of its groups, as term runs. A phrase member is a key too: a
    query's neighbouring words may be one ('walk through' relates to 'explain', 'roll back' to 'undo')."""
    table: dict[tuple[str, ...], dict[tuple[str, ...], None]] = {}
    for group in CONCEPTS:
        members = [m for m in dict.fromkeys(_phrase(text) for text in group) if m]
        for member in members:
            others = table.setdefault(member, {})
            for other in members:
                if other != member:
                    others[other] = None
    return MappingProxyType({member: tuple(others) for member, others in table.items()})


def related(term: str) -> tuple[tuple[str, ...], ...]:
    """The other wordings of the ideas a (stemmed) query term belongs to, as term runs; () if none."""
    return _related_table().get((term,), ())


def related_phrase(words: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """The same for a run of query terms that is a phrase member ('walk', 'through'); () if it is none."""
    return _related_table().get(words, ()) if len(words) > 1 else ()


_STEMMER = Stemmer.Stemmer("english")


@lru_cache(maxsize=65536)
def root(term: str) -> str:
    """The Snowball stem of a term (itself already `stem()`-ed): 'approval' and 'approve' -> 'approv'."""
    return str(_STEMMER.stemWord(term))


def families(vocabulary: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """root -> the vocabulary's terms with that root (one pass): a query word finds the index's forms of it
    ('summarizing' -> 'summarize') even when the index has only one."""
    found: dict[str, list[str]] = {}
    for term in vocabulary:
        found.setdefault(root(term), []).append(term)
    return {key: tuple(sorted(group)) for key, group in found.items()}


__all__ = ["CONCEPTS", "families", "related", "related_phrase", "root"]
