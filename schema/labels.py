"""The label line of a budgeted suggestion, which build and server must write and count alike.

The server prefixes each suggested snippet with a label line (`✓ Recommended (0.85)`), and has no
tokenizer; the build measures, with its tokenizer, what the largest such line adds (`measure_overhead`),
and the server charges that constant. Both must therefore agree on the exact strings: they live here.
Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple, Protocol

BLOCK_SEPARATOR = "\n\n"


class Label(NamedTuple):
    label: str
    min_confidence: float


class LabelLike(Protocol):
    @property
    def label(self) -> str: ...

    @property
    def min_confidence(self) -> float: ...


DEFAULT_LABELS = (Label("✓ Recommended", 0.8), Label("○ Consider", 0.5), Label("△ Possible", 0.0))


def label_line(label: str, confidence: float) -> str:
    return f"{label} ({confidence:.2f})\n"


def sorted_labels(labels: Iterable[LabelLike | tuple[str, float]]) -> tuple[Label, ...]:
    """Highest threshold first, whatever order they came in (stable for equal thresholds)."""
    pairs = (
        Label(item.label, float(item.min_confidence)) if hasattr(item, "label") else Label(item[0], float(item[1]))
        for item in labels
    )
    return tuple(sorted(pairs, key=lambda label: -label.min_confidence))


def measure_overhead(
    count: Callable[[str], int], labels: Iterable[LabelLike | tuple[str, float]] = DEFAULT_LABELS
) -> int:
    """`overhead_tokens` for these labels, with the build's token counter: the largest label line plus a separator.

    Every label line the server can write ("✓ Recommended (0.00)\n" … "(1.00)\n") is measured on its own, and
    the separator on its own: pieces measured apart are an upper bound on what they add to a snippet (the label
    line ends in ")\n", which BPE pre-tokenizers such as cl100k_base's keep apart from the snippet's first word).
    """
    lines = (label_line(label.label, hundredths / 100) for label in sorted_labels(labels) for hundredths in range(101))
    return max((count(line) for line in lines), default=0) + count(BLOCK_SEPARATOR)
