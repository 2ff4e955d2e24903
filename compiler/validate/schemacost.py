"""A bound on the work of checking documents against a user's schema (`--schema`, `paths.schema`).

Why: `anyOf` / `oneOf` nested in each other try every branch at every level, so a schema of a few lines can ask for
more work than a CI job has time for: a chain of 12 levels, each referring twice to the next, took 20 s for the
bundled catalog's four documents, and each level more doubles it. The schema may come from a pull request, and
jsonschema has no such bound. `counted` gives a validator class whose keyword checks, and the validators it makes for
subschemas, spend from a `Budget`, also in the draft a subschema switches to by a `$schema` of its own (jsonschema
applies it with that draft's own class, which would count nothing). A count of checks alone bounds no time (a
failing check formats the whole value it failed on: 0.3 ms for a document of the bundled catalog), so the budget is
time, read every `CLOCK_EVERY` checks.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from capidx.schema.wording import json_identity

# How long checking one document against a user's schema may take. The bundled schema checks a document of the
# bundled catalog in about 3,000 keyword checks, a few milliseconds. Once one document has taken longer, the schema
# is said to be too costly and no other document is checked with it.
MAX_SECONDS = 10.0
CLOCK_EVERY = 16  # keyword checks and validators made between two readings of the clock


class TooCostly(Exception):
    """Checking a document passed `MAX_SECONDS`: said as an error of the schema file."""


class Budget:
    """The time the document being checked may still take (`start` before each)."""

    def __init__(self) -> None:
        self.checks = 0
        self.deadline = 0.0
        self.exhausted = False

    def start(self) -> None:
        if self.exhausted:  # one document was too costly: so would the next be, very likely
            raise TooCostly(self.reason)
        self.checks = 0
        self.deadline = time.monotonic() + MAX_SECONDS

    def spend(self) -> None:
        self.checks += 1
        if self.checks % CLOCK_EVERY == 0 and time.monotonic() > self.deadline:
            self.exhausted = True
            raise TooCostly(self.reason)

    @property
    def reason(self) -> str:
        return f"more than {MAX_SECONDS:g} s for one document"


def counted(cls: Any, budget: Budget) -> Any:
    """`cls` (a jsonschema validator class) whose every keyword check spends from `budget`, and whose validators for
    subschemas, of whatever draft, do too."""
    import attrs  # jsonschema's own dependency: its validator classes are attrs classes
    import jsonschema

    made: dict[type, Any] = {}

    def counting(plain: Any) -> Any:
        if plain in made:
            return made[plain]
        checks = {keyword: _spending(check, budget) for keyword, check in plain.VALIDATORS.items()}
        if "uniqueItems" in checks:
            checks["uniqueItems"] = _spending(_unique_items, budget)
        new = jsonschema.validators.extend(plain, checks)
        evolve = new.evolve

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

        new.evolve = evolve_counted
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
