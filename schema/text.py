"""Text normalization and the canonical JSON form, shared by the compiler and the server.

Lives in the server package because the server may import nothing from the compiler; the
compiler imports it from here, so a name is normalized the same way when the index is built and
when a request is resolved. Pure functions, standard library only (cheap to import).
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import lru_cache

_WORD = re.compile(r"[0-9a-z]+")
# Every ASCII character outside [0-9a-z] -> " ": for ASCII text, `translate` then `split` finds the same words as
# `_WORD.findall`, three times faster (the build splits every catalog text, the server every index text).
_ASCII_SEPARATORS = str.maketrans({chr(code): " " for code in range(128) if not _WORD.fullmatch(chr(code))})

# Words that carry no meaning for matching capability names and descriptions: function words, quantifiers and
# qualifiers ("a few", "a particular file", "a different model": the thing, not which one). The second-to-last
# line holds the framing of a request ("is there a way to", "can you show me", "is it able to", "I'd like to
# know"): they say how someone asks, not what about. The last line holds what English contractions leave once
# the apostrophe splits them ("I've" -> 'i', 've'; "don't" -> 'don', 't'). Words that ask what a record says
# ("does it support hooks?") are left out of queries only: server/query.py, QUESTION_WORDS.
STOP_WORDS = frozenset(
    """
    a an and any are as at be been but by can could do does doing for from get gets had has have how i
    if in into is it its me my of on onto or our so than that the their them then there these this those
    to too up us use used uses using via was we what when where which while who will with within without
    would you your yours want wants need needs let lets make makes also just only about like some more
    most other such each every all both own same very s t
    few many much several whole various lot lots certain particular specific different entire
    way possible possibly able please something anything thing things somehow really actually show see know
    d ll m re ve don doesn didn isn aren wasn weren won wouldn shouldn couldn haven hasn
    """.split()
)


def normalize(text: str) -> str:
    """Case-, spacing- and punctuation-insensitive key: 'MCP-Servers ' -> 'mcp servers'."""
    return " ".join(_words(text))


def fold(text: str) -> str:
    """NFKC-normalized, casefolded, accents taken off: the letters `normalize` and a slug read ('Café' -> 'cafe').
    An accent is part of a letter's spelling, not a separator: 'Café Mode' is 'cafe mode', not 'caf mode'."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    if folded.isascii():
        return folded
    return "".join(c for c in unicodedata.normalize("NFKD", folded) if not unicodedata.combining(c))


def unread_words(text: str) -> list[str]:
    """The words of `text` with a letter or digit `normalize` does not read (another script, 'æ'): every lookup
    leaves them out, so an answer found without them has to say so ('без web search' is not 'web search')."""
    readable = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
    return [
        w
        for w in unicodedata.normalize("NFKC", text).split()
        if any(c.isalnum() and c not in readable for c in fold(w))
    ]


def _words(text: str) -> list[str]:
    """The runs of [0-9a-z] of the folded text (`fold`): the words `normalize` joins with spaces."""
    folded = fold(text)
    if folded.isascii():
        return folded.translate(_ASCII_SEPARATORS).split()
    return _WORD.findall(folded)


# Operating systems' names, read as written: never a plural or another form ('Windows' is not a context window) nor,
# by the server, a typo of a word of the catalog ('macos' is not 'macro').
PROPER_NAMES = frozenset({"windows", "macos", "linux"})


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Light, predictable normalization of plurals and verb forms (not a full stemmer).

    'servers' -> 'server', 'completions' -> 'completion', 'running' -> 'run', 'edited' -> 'edit',
    'policies' -> 'policy'. Short words are left alone so 'gas' or 'mcp' survive.
    """
    if len(word) <= 3 or word in PROPER_NAMES:
        return word
    for suffix, replacement in (("ies", "y"), ("sses", "ss")):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            return word[: -len(suffix)] + replacement
    if word.endswith("ing") and len(word) > 5:
        base = word[:-3]
        return base[:-1] if len(base) > 2 and base[-1] == base[-2] and base[-1] not in "lsz" else base
    if word.endswith("ed") and len(word) > 4:
        base = word[:-2]
        return base[:-1] if len(base) > 2 and base[-1] == base[-2] and base[-1] not in "lsz" else base
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def terms(text: str) -> list[str]:
    """Meaningful, stemmed terms of a text, in order, with repeats (for term frequencies).

    A fresh list each call; the work is memoized because the build asks for the same descriptions'
    terms in several derivations (relationships, triggers, semantics, the match index).
    """
    return list(_terms(text))


# A keyboard shortcut ('Ctrl+I', 'Cmd+Shift+P') names keys, not ideas: its words are not terms ('cmd' is not
# 'command'); `capidx.schema.lexicon.identifiers` keeps the whole shortcut as a token of its own.
KEY_CHORD_PATTERN = r"(?<![\w+])(?i:ctrl|cmd|alt|shift|meta|option|opt|super)(?:\+[A-Za-z0-9]+)+(?![\w+])"
KEY_CHORD = re.compile(KEY_CHORD_PATTERN)


@lru_cache(maxsize=16384)
def _terms(text: str) -> tuple[str, ...]:
    return tuple([term for term, _ in worded_terms(text)])


@lru_cache(maxsize=16384)
def worded_terms(text: str) -> tuple[tuple[str, str], ...]:
    """`terms()` each beside the word it was made from ('server', 'servers'): a reason shown to a reader names words
    as the catalog writes them, not stems ('coordinat')."""
    if "+" in text:
        text = KEY_CHORD.sub(" ", text)
    words = _words(text)
    if "non" in words:
        words = bind_negation(words)
    return tuple([(stem(word), word) for word in words if word not in STOP_WORDS])


def bind_negation(words: list[str]) -> list[str]:
    """'non' and the word after it as one word, however written ('non-interactive', 'non interactive'): the
    negated word names the opposite, so 'interactive' must not match 'Non-interactive Mode'."""
    bound: list[str] = []
    for word in words:
        if bound and bound[-1] == "non":
            bound[-1] += word
        else:
            bound.append(word)
    return bound


def slugify(text: str) -> str:
    """URL- and file-safe identifier: 'MCP Servers' -> 'mcp-servers'."""
    return normalize(text).replace(" ", "-")


def canonical_json(value: object) -> str:
    """The one JSON serialization of tool documents and the manifest: compact, sorted keys, UTF-8 text.

    The build writes documents with it, and the server re-serializes a filtered document with it, so a
    filtered answer is byte-for-byte what the build would have written (docs/build-directory.md).
    """
    return _CANONICAL.encode(value)


# What `json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))` builds on every call; one
# encoder made once (it keeps no state between calls) spares that per document, and the build writes tens of
# thousands of documents.
_CANONICAL = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 file`, `2 files`, `0 files`; `many`: a plural that is not the word and an s (`capabilities`)."""
    return f"{count:,} {word if count == 1 else many or word + 's'}"
