"""`capidx report --propose-budgets`: a `budgets:` block for capidx.yaml sized from a build's measured tokens.

Pure: the manifest in, YAML text out. One entry per artifact kind the manifest measures that the config schema
takes as a budget (`budgets.<kind>`): the largest document of the kind (for a kind of one document, its size) plus
the headroom, rounded up to a readable step. A kind the build was checked against (the manifest's `budgets`, set
by the capidx.yaml it used) is kept even when the build has no document of it, and a value that differs from the
one in force says what it was.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable, Mapping

from capidx.compiler.artifacts import ALL_KINDS, SINGLE_KINDS
from capidx.compiler.report.manifest_reader import Manifest
from capidx.schema.printable import visible

DEFAULT_HEADROOM = 20  # percent above the measured size, as the bundled capidx.yaml's budgets were set


def budget_kinds() -> tuple[str, ...]:
    """The kinds `budgets:` accepts, from the bundled config schema, in the report's order of kinds."""
    from capidx.compiler.validate.schemas import CONFIG_SCHEMA, bundled_schema

    accepted = bundled_schema(CONFIG_SCHEMA)["properties"]["budgets"]["properties"]
    return tuple(kind for kind in ALL_KINDS if kind in accepted) + tuple(
        sorted(kind for kind in accepted if kind not in ALL_KINDS)
    )


def readable(value: float) -> int:
    """`value` rounded up to half a unit of its second significant digit (at least 5): 681 → 685, 1,609 → 1,650,
    13,385 → 13,500, 93,886 → 94,000; a whole multiple of the step stays as it is."""
    whole = math.ceil(value - 1e-9)
    step = max(5, 10 ** (len(str(max(whole, 1))) - 2) // 2)
    return max(step, -(-whole // step) * step)


def propose_budgets(manifest: Manifest, headroom: float = DEFAULT_HEADROOM, kinds: Iterable[str] | None = None) -> str:
    """The YAML text of the proposal: comments first (where it comes from, what changed), then `budgets:`."""
    order = tuple(kinds) if kinds is not None else budget_kinds()
    primary = manifest.encoding
    largest: dict[str, int] = {}
    for row in manifest.artifacts:
        kind, tokens = row["kind"], row["tokens"][primary]
        largest[kind] = max(largest.get(kind, 0), tokens)
    current: Mapping[str, int] = {row["kind"]: row["budget"] for row in manifest.data.get("budgets", ())}
    lines: list[str] = []
    changed: list[str] = []
    for kind in order:
        if kind in largest:
            measured = largest[kind]
            value = readable(measured * (1 + headroom / 100))
            size = f"measured {measured:,}" if kind in SINGLE_KINDS else f"largest {measured:,}"
            was = current.get(kind)
            if was is None:
                note = f"{size}; new"
            elif was == value:
                note = f"{size}; unchanged"
            else:
                note = f"{size}; was {was:,}"
                changed.append(f"{kind} {was:,} -> {value:,}")
        elif kind in current:  # budgeted, but the build has no document of the kind: kept as it is
            value, note = current[kind], "no document of this kind in the build; kept"
        else:
            continue
        lines.append(f"  {kind}: {value}  # {note}")
    source = visible(str(manifest.path))  # on a comment line: a line break in a folder's name would end it
    head = [
        f"# budgets proposed by `capidx report --propose-budgets --headroom {headroom:g}` from {source}:",
        f"# the largest document of each kind ({primary} tokens) plus {headroom:g}%, rounded up. Replace the",
        "# budgets: block of capidx.yaml with it, or copy the lines you want.",
    ]
    if not current:
        head.append("# the build was checked against no budgets: every value is new")
    elif changed:
        said = f"changed from the budgets the build was checked against: {', '.join(changed)}"
        head += [f"# {line}" for line in textwrap.wrap(said, 110, break_on_hyphens=False)]
    else:
        head.append("# the budgets the build was checked against are all unchanged")
    if not lines:
        return "\n".join([*head, "# the build measured no kind that takes a budget", "budgets: {}"]) + "\n"
    return "\n".join([*head, "budgets:", *lines]) + "\n"
