"""A bound on the work of checking documents against a user's schema (`--schema`, `paths.schema`).

Why: `anyOf` / `oneOf` nested in each other try every branch at every level, so a schema of a few lines can ask for
more work than a CI job has time for: a chain of 12 levels, each referring twice to the next, took 20 s for the
bundled catalog's four documents, and each level more doubles it. The schema may come from a pull request, and
jsonschema has no such bound. `counted` gives a validator class whose keyword checks, and the validators it makes for
subschemas, spend from a `Budget`, also in the draft a subschema switches to by a `$schema` of its own (jsonschema
applies it with that draft's own class, which would count nothing). A count of checks alone bounds no time (a
failing check formats the whole value it failed on: 0.3 ms for a document of the bundled catalog), so the budget is
time, read every `CLOCK_EVERY` checks.

A keyword check that matches a regex is one step the clock cannot interrupt: `Budget.search` matches with a time limit
of its own (`MAX_MATCH_SECONDS`, and never past the document's deadline), and `counted` makes jsonschema's regex
keywords use it (`schemaregex`).
"""

from __future__ import annotations

import functools
import re
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from capidx.compiler.validate.regexrisk import MAX_WRITTEN_OUT, written_out
from capidx.compiler.validate.schemaregex import with_search
from capidx.schema.wording import json_identity

# How long checking one document against a user's schema may take. The bundled schema checks a document of the
# bundled catalog in about 3,000 keyword checks, a few milliseconds. Once one document has taken longer, the schema
# is said to be too costly and no other document is checked with it.
MAX_SECONDS = 10.0
CLOCK_EVERY = 16  # keyword checks and validators made between two readings of the clock
# How long one match of one of the schema's regexes against one value may take. A value of the bundled catalog is
# matched in microseconds: a pattern that needs a second is backtracking, and would most likely need hours.
MAX_MATCH_SECONDS = 1.0


class TooCostly(Exception):
    """Checking a document passed `MAX_SECONDS`: said as an error of the schema file. `pattern`: the regex being
    matched when the time ran out, if one was."""

    def __init__(self, reason: str, pattern: str | None = None) -> None:
        super().__init__(reason)
        self.pattern = pattern


class SlowPattern(TooCostly):
    """One match of the schema's regex `pattern` against `text` passed `MAX_MATCH_SECONDS`: said at the value, whose
    place `path` collects on the way out, as jsonschema's errors collect theirs."""

    def __init__(self, pattern: str, text: str, seconds: float) -> None:
        super().__init__(f"more than {seconds:g} s for one match", pattern)
        self.text = text
        self.seconds = seconds
        self.path: deque[Any] = deque()


class Budget:
    """The time the document being checked may still take (`start` before each)."""

    def __init__(self) -> None:
        self.checks = 0
        self.deadline = 0.0
        self.exhausted = False
        self.exhausted_in: str | None = None  # the pattern being matched when the time ran out, if one was
        self.stopped = False  # the document being checked was stopped (TooCostly): not to be checked further

    def start(self) -> None:
        if self.exhausted:  # one document was too costly: so would the next be, very likely
            raise TooCostly(self.reason, self.exhausted_in)
        self.checks = 0
        self.stopped = False
        self.deadline = time.monotonic() + MAX_SECONDS

    def spend(self) -> None:
        self.checks += 1
        if self.checks % CLOCK_EVERY == 0 and time.monotonic() > self.deadline:
            raise self._exhausted()

    def search(self, pattern: str, text: str) -> bool:
        """Whether `pattern` matches in `text`, as `re.search` says, matched by the `regex` package in its
        re-compatible mode (V0), which stops after `MAX_MATCH_SECONDS` or at the document's deadline, whichever comes
        first: SlowPattern, or TooCostly. A pattern `regex` cannot compile raises `re.error`, as `re` would."""
        compiled = _compiled(pattern)
        seconds = min(MAX_MATCH_SECONDS, self.deadline - time.monotonic())
        if seconds <= 0:
            raise self._exhausted(pattern)
        try:
            return compiled.search(text, timeout=seconds) is not None
        except TimeoutError:
            if seconds < MAX_MATCH_SECONDS:
                raise self._exhausted(pattern) from None
            self.stopped = True
            raise SlowPattern(pattern, text, seconds) from None

    def _exhausted(self, pattern: str | None = None) -> TooCostly:
        self.exhausted = self.stopped = True
        self.exhausted_in = pattern
        return TooCostly(self.reason, pattern)

    @property
    def reason(self) -> str:
        return f"more than {MAX_SECONDS:g} s for one document"


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str) -> Any:
    """`pattern` compiled once by `regex` in its re-compatible mode (its own cache costs more than the match of a short
    value); `re.error` when `re` refuses it, and when `regex` would write it out past `MAX_WRITTEN_OUT` parts: compiling
    has no time limit (the schema's patterns are refused at their place before this, `schemas._risky_patterns`)."""
    import regex

    if (size := written_out(pattern)) > MAX_WRITTEN_OUT:
        raise re.error(f"its repeats come to {size:,} parts written out, more than {MAX_WRITTEN_OUT:,}", pattern)
    try:
        return regex.compile(pattern, flags=regex.V0)
    except regex.error as exc:
        raise re.error(exc.msg, exc.pattern, exc.pos) from None


def counted(cls: Any, budget: Budget) -> Any:
    """`cls` (a jsonschema validator class) whose every keyword check spends from `budget`, and whose validators for
    subschemas, of whatever draft, do too."""
    import attrs  # jsonschema's own dependency: its validator classes are attrs classes
    import jsonschema

    made: dict[type, Any] = {}

    def counting(plain: Any) -> Any:
        if plain in made:
            return made[plain]
        checks = {
            keyword: _spending(with_search(check, budget.search), budget) for keyword, check in plain.VALIDATORS.items()
        }
        if "uniqueItems" in checks:
            checks["uniqueItems"] = _spending(_unique_items, budget)
        new = jsonschema.validators.extend(plain, checks)
        evolve, descend = new.evolve, new.descend

        def evolve_counted(self: Any, **changes: Any) -> Any:
            # Spent too: unevaluatedProperties / unevaluatedItems follow `$ref`, `$dynamicRef` and `$recursiveRef`
            # through jsonschema's own functions, which evolve a validator at each step and call no keyword check
            # (a chain whose every level holds both a `$ref` and a `$dynamicRef` to the next doubles per level).
            budget.spend()
            evolved = evolve(self, **changes)  # another draft's own class when the subschema names it
            target = counting(type(evolved))
            if type(evolved) is target:
                return evolved
            fields = attrs.fields(type(evolved))
            return target(**{field.alias: getattr(evolved, field.name) for field in fields if field.init})

        def descend_placing(
            self: Any, instance: Any, schema: Any, path: Any = None, *args: Any, **kw: Any
        ) -> Iterator[Any]:
            # A slow match is an exception, not an error (under `not` or `anyOf` an error changes the verdict): it is
            # given its place as it leaves each level, as jsonschema gives an error its place.
            try:
                yield from descend(self, instance, schema, path, *args, **kw)
            except SlowPattern as slow:
                if path is not None:
                    slow.path.appendleft(path)
                raise

        new.evolve = evolve_counted
        new.descend = descend_placing
        made[plain] = made[new] = new
        return new

    return counting(cls)


def _spending(check: Callable[..., Any], budget: Budget) -> Callable[..., Any]:
    def spent(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        budget.spend()
        return check(validator, value, instance, schema)

    return spent


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Any:
    """jsonschema's `uniqueItems` (the same equality, the same error) in linear time: its own search compares every
    pair of items that cannot be sorted (objects), within one keyword check: 8,000 small objects took 93 s."""
    from jsonschema.exceptions import ValidationError

    if unique and validator.is_type(instance, "array") and len(set(map(json_identity, instance))) < len(instance):
        yield ValidationError(f"{instance!r} has non-unique elements")
