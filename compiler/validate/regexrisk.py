"""Does a `useWhen` pattern risk catastrophic backtracking? A bounded, structural check at validate time.

`useWhen` patterns come from catalog data (a fork's pull request may write them), and so do the `pattern`s of a
project's own JSON Schema (`paths.schema`), which validate runs on every document. The server runs no catalog
pattern; other tools reading the data may. This check refuses, with a clear message, the shapes that make a
backtracking engine take exponential time, so that such a pattern never reaches a build or a schema check.

What it catches, read from the parse tree of Python's own regex parser (`re._parser`, the tree `re.compile`
works from; private, but stable since Python 3.11 where it was renamed from `sre_parse`):

- **nested quantifiers**: a group repeated more than once (`+`, `*`, `{2,}`, `{1,10}`, lazy or greedy) that
  contains a part of variable length repeated more than once: `(a+)+`, `(a*)*`, `(\\w+\\s?)+`, `(x{1,9}){2,}`.
  A possessive inner part (`(a++)+`) or an atomic group (`((?>a+))+`) cannot be re-split and is fine,
  and so is a possessive outer repeat (`(a+)++`), which never gives an iteration back;
- **alternatives that can match the same text inside a repeated group**: `(a|a)+`, `(a|aa)*`, `(ab|a)+`
  (the parser factors out their common start, leaving an alternative that may be empty) or alternatives
  that begin with a character class or `.` (`(\\d\\w|x)+`), whose overlap it does not try to decide;
- **a repeated group whose text splits many ways**: one that may match nothing or more than one character
  (`(a?a?)+`: each turn takes none, one or two), or more than `MAX_SPLIT_COUNT` turns of a part of variable
  length (`(aa?)+`, `(?:a?){30}`: each turn takes the letter or not, 2³⁰ ways);
- **more than `MAX_SPLIT_COUNT` optional parts decided in sequence** (`?`, `*`, `{0,n}`), repeated or written out
  (`a?a?…a?aaa…`, `(?:a?){16}(?:a?){16}`), atomic, possessive and conditional groups included, counting the most of
  any alternatives.

What it cannot catch: polynomial blow-ups between *adjacent* quantifiers (`\\d+\\d+x`, `.*.*=`), overlaps
decided by what follows a group, and back-references. It also flags some harmless shapes (`(ab|a)+`,
`(\\w+ )+` with a separator, `(x?y?z)+`), which are easy to rewrite. What slips through a user schema's check is
bounded when it runs: validate matches a user schema's regexes with a time limit (schemacost, schemaregex), where `re`
has none. Compiling is bounded by no time limit: `written_out` measures what the `regex` package writes out to compile
a user schema's pattern, which a large repeat count makes unbounded (schemas.py refuses it). capidx never runs a
`useWhen` pattern.
"""

from __future__ import annotations

import re
import re._constants as c  # type: ignore[import-not-found]
import re._parser as parser  # type: ignore[import-not-found]
import warnings
from typing import Any

MAX_PATTERN_CHARS = 500  # the bundled catalog's longest pattern has ~150; a request is matched against them all
MAX_SPLIT_COUNT = 16  # turns of a variable-length part a fixed count may ask for: 2**16 ways at most
# The parts the `regex` package writes out compiling one pattern of a user schema (`written_out`): it repeats a part as
# many times as its minimum count, with no time limit (`a{10000000}`: 15 s and 2.6 GB; `a{4294967294}` exhausts memory),
# where `re` compiles any count at once. `a{10000}` takes it about 15 ms and 3 MB; a schema's patterns need far less.
MAX_WRITTEN_OUT = 10_000

_REPEATS = (c.MAX_REPEAT, c.MIN_REPEAT)
# (what is wrong, how to fix it), as `backtracking_risk` reports them
_NESTED = (
    "a repeated group contains another quantifier, like (a+)+",
    "rewrite it without a quantifier inside a repeated group ((a+)+ -> a+), or make the inner one possessive (a++)",
)
_SPLITS = (
    "a repeated group's text can be split between its turns in many ways, like (a?a?)+ or (?:a?){30}",
    "give each turn of a repeated group at least one character it must match ((a?a?)+ -> a*)",
)
_OPTIONALS = (
    f"more than {MAX_SPLIT_COUNT} optional parts decided in sequence, like a?a?…a?aaa",
    "make fewer parts optional, or write the alternatives out",
)
_OVERLAP = (
    "a repeated group has alternatives that can match the same text, like (a|aa)+",
    "make the alternatives of a repeated group start differently ((a|aa)+ -> a+)",
)


def backtracking_risk(pattern: str) -> tuple[str, str] | None:
    """Why `pattern` may backtrack catastrophically and what to do, or None (also when it does not parse:
    the compile check reports that)."""
    try:
        with warnings.catch_warnings():  # the compile check reports the parser's warnings, once
            warnings.simplefilter("ignore")
            tree = parser.parse(pattern, re.IGNORECASE)
    except (re.error, RecursionError, OverflowError):
        return None
    return _walk(tree, repeated=False) or (_OPTIONALS if _choices(tree) > MAX_SPLIT_COUNT else None)


def written_out(pattern: str) -> int:
    """How many parts `regex` writes out to compile `pattern`: a repeated part once per turn of its minimum count (at
    least once), repeats inside repeats multiplied. re.error where `re` refuses the pattern, as re.compile would."""
    try:
        with warnings.catch_warnings():  # the meta-schema's check reports the parser's warnings
            warnings.simplefilter("ignore")
            tree = parser.parse(pattern)
    except (RecursionError, OverflowError) as exc:
        raise re.error(f"cannot be read: {type(exc).__name__}", pattern) from None
    return _written(tree)


def _written(items: Any) -> int:
    total = 0
    for op, av in items:
        if op in (*_REPEATS, c.POSSESSIVE_REPEAT):
            total += max(av[0], 1) * _written(av[2])
        elif op is c.SUBPATTERN:
            total += 1 + _written(av[3])
        elif op is c.ATOMIC_GROUP:
            total += 1 + _written(av)
        elif op is c.BRANCH:
            total += 1 + sum(_written(branch) for branch in av[1])
        elif op is c.GROUPREF_EXISTS:
            total += 1 + _written(av[1]) + (_written(av[2]) if av[2] else 0)
        elif op in (c.ASSERT, c.ASSERT_NOT):
            total += 1 + _written(av[1])
        else:
            total += 1
    return total


def _flexible(items: Any) -> bool:
    """Whether a part may take more or less text in ways backtracking revisits (a possessive or atomic part decides
    once): a quantifier with a range, or alternatives of different lengths."""
    for op, av in items:
        if op in _REPEATS and (av[0] != av[1] or _flexible(av[2])):
            return True
        if op is c.SUBPATTERN and _flexible(av[3]):
            return True
        if op is c.BRANCH and (len({branch.getwidth() for branch in av[1]}) > 1 or any(map(_flexible, av[1]))):
            return True
    return False


def _choices(items: Any) -> int:
    """How many optional or ranged parts (`?`, `*`, `{0,n}`, `{1,3}`) a match decides in sequence (`(?:a?){16}`
    sixteen: turns multiply what they repeat; of alternatives the most): past `MAX_SPLIT_COUNT`, a failing match may
    try 2**n ways (`a?a?…a?aaa…`). Inside an atomic, possessive or conditional group they still backtrack before it
    commits."""
    total = 0
    for op, av in items:
        if op in (*_REPEATS, c.POSSESSIVE_REPEAT):
            low, high, body = av
            bounded = high < c.MAXREPEAT  # an unbounded repeat's turns are judged by `_item_risk`
            # a range decides how much (a{1,3}: a choice); of an unbounded one only a possible absence (* but not +)
            total += (low != high if bounded else low == 0) + (high if bounded else 1) * _choices(body)
        elif op is c.SUBPATTERN:
            total += _choices(av[3])
        elif op is c.ATOMIC_GROUP:
            total += _choices(av)
        elif op is c.BRANCH:
            total += max(_choices(branch) for branch in av[1])
        elif op is c.GROUPREF_EXISTS:
            total += max(_choices(av[1]), _choices(av[2]) if av[2] else 0)
        elif op in (c.ASSERT, c.ASSERT_NOT):
            total += _choices(av[1])
    return total


def _walk(items: Any, *, repeated: bool) -> tuple[str, str] | None:
    """The first risk among `items` (a parsed sequence); `repeated`: they sit inside a group repeated more than once."""
    for op, av in items:
        risk = _item_risk(op, av, repeated)
        if risk:
            return risk
    return None


def _item_risk(op: Any, av: Any, repeated: bool) -> tuple[str, str] | None:
    if op in _REPEATS:
        low, high, body = av
        many = high > 1
        if many and repeated and low != high:
            return _NESTED
        if many and _ambiguous(body):
            return _OVERLAP
        if inner := _walk(body, repeated=repeated or many):  # (a+)+ is said as the nested quantifier it is
            return inner
        least, most = body.getwidth()
        if many and _flexible(body) and ((least == 0 and most > 1) or (least > 0 and high > MAX_SPLIT_COUNT)):
            return _SPLITS  # (a?a?)+, (aa?)+, (\d\d?){1,50}: each turn may take more or less of the same text
        return None
    if op is c.POSSESSIVE_REPEAT:  # never gives back what it matched: nothing inside can be re-split
        return _walk(av[2], repeated=False)
    if op is c.ATOMIC_GROUP:
        return _walk(av, repeated=False)
    if op is c.SUBPATTERN:
        return _walk(av[3], repeated=repeated)
    if op is c.BRANCH:
        return next((risk for branch in av[1] if (risk := _walk(branch, repeated=repeated))), None)
    if op in (c.ASSERT, c.ASSERT_NOT):
        return _walk(av[1], repeated=repeated)
    if op is c.GROUPREF_EXISTS:
        return _walk(av[1], repeated=repeated) or (_walk(av[2], repeated=repeated) if av[2] else None)
    return None


def _ambiguous(items: Any) -> bool:
    """Whether a repeated body holds an alternation (at its top, or in a plain group) whose alternatives may
    start alike: two can start with the same literal, or one starts with anything but a literal."""
    for op, av in items:
        if op is c.SUBPATTERN and _ambiguous(av[3]):
            return True
        if op is c.BRANCH:
            starts = [_first_literal(branch) for branch in av[1]]
            literals = [start for start in starts if start is not None]
            if len(literals) < len(starts) or len(set(literals)) < len(literals):
                return True
    return False


def _first_literal(items: Any) -> int | None:
    """The (case-folded) literal an alternative must start with, or None when that is not one known literal."""
    for op, av in items:
        if op is c.AT:  # anchors match no character: look at what follows
            continue
        if op is c.LITERAL:
            return ord(chr(av).casefold()[0])
        if op is c.SUBPATTERN:
            return _first_literal(av[3])
        return None
    return None
