"""A warning for catalog text that addresses the reader as instructions (prompt injection).

Catalog text is pasted into the context of every agent that connects (`summary.md` is injected into each
conversation), so a description such as "Ignore all previous instructions and ..." or a name carrying
`<|im_start|>system` speaks to the model instead of describing a capability.

The heuristic, and why: a short list of phrasings that only make sense when *addressed to a model*, matched
case-insensitively in every string of a capability document and of the alias table (values and keys):

- overriding what came before: "ignore / disregard / forget", up to three words such as "all", "any",
  "the", "previous", "prior", "above", "earlier", "system", then "instructions / prompts / rules /
  guidelines / directions";
- a new identity or orders: "you are now", "you must now", "from now on, you", "new instructions:";
- role markers that chat formats use to start a turn: a line starting with `SYSTEM:`, `assistant:`,
  `user:` or `developer:` (optionally after `#` heading marks or `>`), and chat-template tokens such as
  `<|im_start|>`, `<|system|>`, `<|endoftext|>`, `[INST]`, `<<SYS>>`, `<system>`.

It is a warning (an error with `--strict`, as every warning): a capability may legitimately *describe* such
text (a guard against prompt injection, a chat template feature), and no list of phrasings can recognise
every injection.
Plain imperatives ("Run `npm test`", "You can ...") are everyday documentation and are not matched.
Cheap: a substring pre-check rejects almost every string before any regular expression runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from capidx.compiler.diagnostics import Diagnostic
from capidx.compiler.validate.load import SourceFile
from capidx.compiler.validate.textrules import quote, strings

# Lower-case substrings one of which every match below contains: a document (or a string) holding none of
# them is passed over without walking it or running the expression.
_KEYWORDS = (
    *("ignore", "disregard", "forget", "you are now", "you must now", "you will now", "you should now"),
    *("from now on", "instruction", "system:", "assistant:", "user:", "developer:", "<|", "inst]", "sys>>"),
    "system>",
)
_ADDRESSED = re.compile(
    r"\b(?:ignore|disregard|forget)\s+(?:(?:all|any|the|your|my|previous|prior|above|earlier|preceding|former|system|"
    r"other|of|these|those)\s+){0,3}(?:instructions?|prompts?|rules|guidelines|directions)\b"
    r"|\byou (?:are|must|will|should) now\b"
    r"|\bfrom now on,? you\b"
    r"|\bnew instructions?\s*:"
    r"|^[ \t>#]*(?:system|assistant|user|developer):"
    r"|<\|[a-z_]{2,30}\|>"
    r"|\[/?inst\]"
    r"|<</?sys>>"
    r"|</?(?:system|instructions?)>",
    re.IGNORECASE | re.MULTILINE,
)


def check_document(source: SourceFile) -> list[Diagnostic]:
    """One warning per string value that reads as instructions to the model."""
    if "\\u" not in source.text and not _mentions(source.text.lower()):
        return []  # (a `\\u` escape could spell a keyword the text does not show)
    return [
        source.diagnostic(
            parts,
            "warning",
            f"text addresses the reader as instructions ({quote(match)}); agents read this catalog as data",
            "describe the capability; do not instruct the agent that reads it",
            "instructions",
        )
        for parts, match in _findings(source.data, ())
    ]


def addressed_to_reader(text: str) -> str | None:
    """The first phrase of `text` that addresses the reader as instructions, or None."""
    if not _mentions(text.lower()):
        return None
    found = _ADDRESSED.search(text)
    return found.group(0) if found else None


def _mentions(lower: str) -> bool:
    return any(keyword in lower for keyword in _KEYWORDS)


def _findings(value: Any, parts: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], str]]:
    for path, text, _ in strings(value, parts):  # values and keys: alias phrases are keys
        if match := addressed_to_reader(text):
            yield path, match
