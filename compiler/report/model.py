"""`capidx report`: what a build costs in a context window, and what a change does to that cost.

The report's figures come from `manifest.json` alone (docs/build-directory.md; with `--against`, `datadiff`
compares the two builds' records, read by `run`): every figure was
measured by `capidx build`, so this module never imports a tokenizer. Loading and validation live in
`manifest_reader`; `build_report` is pure and returns a `Report` value; `json_form` gives its JSON
form and `formats` prints it; `run.run_report` ties them together for the command.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capidx.compiler.artifacts import ALL_KINDS, CONTEXT_WINDOWS, SINGLE_KINDS, short_uri
from capidx.compiler.errors import UsageError
from capidx.compiler.report.datadiff import DataDiff
from capidx.compiler.report.manifest_reader import Manifest

# Context windows the shares are computed against: (JSON key, label, tokens).
WINDOWS = tuple((key, key.upper(), size) for key, size in CONTEXT_WINDOWS.items())
NEAR_BUDGET = 0.9  # a kind at or above 90% of its budget is "near" (a warning)
GROWTH_WARNING = 0.10  # a kind growing more than 10% against the baseline is a warning,
# when it also grew by at least this many tokens: one capability added to a catalog of five made ten warnings, each of
# a few dozen tokens (a snippet 48 → 74), which a large catalog's 10% never is
GROWTH_WARNING_TOKENS = 200
TOP_DOCUMENTS = 3
LARGEST_KINDS = ("agent", "capability", "lookup")


# --- the report model ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Delta:
    """A figure in the baseline and in the build."""

    before: int
    after: int

    @property
    def tokens(self) -> int:
        return self.after - self.before

    @property
    def relative(self) -> float | None:
        """Change as a fraction of the baseline; None when there was nothing before."""
        return self.tokens / self.before if self.before else None


@dataclass(frozen=True)
class Budget:
    """One row of the manifest's `budgets`: the largest document of `kind` against its budget."""

    kind: str
    budget: int
    tokens: int
    uri: str
    ok: bool
    # `--baseline-budgets`: the baseline's budget was the tighter one, and this is the build's own (None: it sets none).
    held: bool = False
    own: int | None = None
    # Held to a budget the baseline breaches itself: the baseline's largest document of the kind, the most this build
    # may have (a pull request raising the budget could never pass otherwise; it may not grow past the base branch).
    base: int | None = None

    @property
    def use(self) -> float:
        return self.tokens / self.budget

    @property
    def near(self) -> bool:
        return self.ok and self.use >= NEAR_BUDGET and self.base is None


@dataclass(frozen=True)
class BudgetPlace:
    """Where the capidx.yaml in force sets a budget (its key), and to what: a breach of that budget is annotated
    there when the build was checked against the same number (a build made with another file is not)."""

    file: str  # as validate names it: relative to the working folder when inside it
    line: int
    col: int
    budget: int


@dataclass(frozen=True)
class Document:
    kind: str
    uri: str
    path: str
    title: str
    tokens: int  # primary encoding


@dataclass(frozen=True)
class KindRow:
    """Every document of one artifact kind."""

    kind: str
    documents: int
    tokens: Mapping[str, int]  # total per encoding
    largest: Mapping[str, int]  # largest document per encoding
    largest_uri: str | None
    bytes: int
    budget: Budget | None
    total_delta: Delta | None  # primary encoding, None without a baseline
    largest_delta: Delta | None
    documents_delta: Delta | None

    @property
    def status(self) -> str:
        """breach, near, ok, or unbudgeted."""
        if self.budget is None:
            return "unbudgeted"
        if not self.budget.ok:
            return "breach"
        return "near" if self.budget.near else "ok"

    @property
    def single(self) -> bool:
        return self.kind in SINGLE_KINDS


@dataclass(frozen=True)
class Change:
    """An artifact added, removed or changed (sha256 differs) against the baseline."""

    kind: str
    uri: str
    path: str
    before: int | None  # primary-encoding tokens; None when added
    after: int | None  # None when removed

    @property
    def delta(self) -> int:
        return (self.after or 0) - (self.before or 0)


@dataclass(frozen=True)
class Finding:
    """A warning: a kind near its budget, or growing fast."""

    kind: str
    reason: str  # "near-budget", "growth", "budget-loosened", "overview-form" or "baseline-breach"
    message: str
    # "budget-loosened": the capidx.yaml section and the value the build sets (None: it sets none), to annotate its key.
    section: str = ""
    budget: int | None = None


@dataclass(frozen=True)
class BuildInfo:
    manifest: Path
    capidx: str
    input_digest: str
    encodings: tuple[str, ...]
    uri_prefix: str
    agents: int
    capabilities: int
    categories: int


@dataclass(frozen=True)
class Overview:
    """An overview artifact (instructions, memory) as the manifest's `overview` row records it, with its
    tokens: what it costs in every session that receives it."""

    row: Mapping[str, Any]
    tokens: int

    @property
    def ok(self) -> bool:
        return bool(self.row["ok"])


@dataclass(frozen=True)
class Totals:
    documents: int
    tokens: Mapping[str, int]
    bytes: int
    delta: Delta | None


@dataclass(frozen=True)
class Report:
    build: BuildInfo
    baseline: BuildInfo | None
    encoding: str  # the primary encoding: budgets, shares and deltas use it
    kinds: tuple[KindRow, ...]  # breaches first, then near, then the schema's order
    totals: Totals
    largest: Mapping[str, tuple[Document, ...]]  # agent / capability / lookup → top documents
    added: tuple[Change, ...]
    removed: tuple[Change, ...]
    changed: tuple[Change, ...]
    breaches: tuple[Budget, ...]
    warnings: tuple[Finding, ...]
    overview: tuple[Overview, ...] = ()  # empty for builds made before the overview artifacts
    data: DataDiff | None = None  # what changed in the catalog's records; None without a baseline
    held: bool = False  # `--baseline-budgets`: each budget is the tighter of the build's and the baseline's

    @property
    def overview_breaches(self) -> tuple[Overview, ...]:
        """The overview artifacts over their character budget (token budgets are `breaches`)."""
        return tuple(item for item in self.overview if not item.ok)

    @property
    def ok(self) -> bool:
        return not self.breaches and not self.overview_breaches

    @property
    def budgeted(self) -> bool:
        """Whether the build checked any budget: without one, "all budgets met" would be an empty boast."""
        return any(row.budget is not None for row in self.kinds)

    def short_uri(self, uri: str) -> str:
        return short_uri(uri, self.build.uri_prefix)


class BaselineError(UsageError):
    """The baseline cannot be compared with the build (different primary encoding)."""


def share(tokens: int, window: int) -> float:
    return tokens / window


# --- building the report (pure) -----------------------------------------------------------------


def build_report(
    build: Manifest, baseline: Manifest | None = None, data: DataDiff | None = None, *, held: bool = False
) -> Report:
    """The report of `build`, compared with `baseline` when given; `data` is the comparison of their records
    (`datadiff.diff_builds`, which reads documents: the caller's I/O). `held`: the build is checked against the
    tighter of its own budgets and the baseline's (`held_to`)."""
    encoding = build.encoding
    if baseline is not None and encoding not in baseline.data["encodings"]:
        raise BaselineError(
            f"{baseline.path}: the baseline was measured with {', '.join(baseline.data['encodings'])}, "
            f"not {encoding}; compare builds measured with the same primary encoding"
        )
    if held and baseline is not None and baseline.encoding != encoding:
        # The baseline's budgets count its primary encoding's tokens: held to them, a build that switched its primary
        # encoding (to one that counts the same text in fewer tokens) would be measured in another unit.
        raise BaselineError(
            f"{baseline.path}: the baseline's budgets count {baseline.encoding} tokens, this build's primary encoding "
            f"is {encoding}; --baseline-budgets compares builds with the same primary encoding"
        )
    loosened = (*_loosened(build, baseline), *_reformed(build, baseline)) if baseline is not None else ()
    if held and baseline is not None:
        build = held_to(build, baseline)
    rows = _kind_rows(build, baseline, encoding)
    added, removed, changed = _changes(build, baseline, encoding) if baseline else ((), (), ())
    breaches = tuple(row for row in build.data["budgets"] if not row["ok"])
    return Report(
        build=_build_info(build),
        baseline=_build_info(baseline) if baseline else None,
        encoding=encoding,
        kinds=rows,
        totals=_totals(build, baseline, encoding),
        largest=_largest(build.artifacts, encoding),
        added=added,
        removed=removed,
        changed=changed,
        breaches=tuple(sorted((Budget(**row) for row in breaches), key=lambda b: (-b.use, b.kind))),
        warnings=loosened + tuple(_over_at_base(build)) + tuple(_warnings(rows, build.data["uriPrefix"])),
        overview=_overview(build, encoding),
        data=data if baseline is not None else None,
        held=held and baseline is not None,
    )


# The two budget sections of a manifest: (capidx.yaml section, manifest key, what the budget counts).
_BUDGET_ROWS = (("budgets", "budgets", "tokens"), ("character_budgets", "overview", "characters"))


def _tightest(rows: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Kind -> its budget; should a kind have several rows, the tightest."""
    found: dict[str, int] = {}
    for row in rows:
        found[row["kind"]] = min(found.get(row["kind"], row["budget"]), row["budget"])
    return found


def _loosened(build: Manifest, baseline: Manifest) -> Iterable[Finding]:
    """A warning per budget the build sets looser than the baseline, or not at all: a pull request's capidx.yaml
    sets the budgets its own build is checked against, so a raised budget passes a check it would fail."""
    for section, key, unit in _BUDGET_ROWS:
        own = _tightest(build.data.get(key, ()))
        for kind, theirs in sorted(_tightest(baseline.data.get(key, ())).items()):
            mine = own.get(kind)
            if mine is None:
                said = f"{section}.{kind}: the baseline's budget of {theirs:,} {unit} is not set for this build"
            elif mine > theirs:
                said = f"{section}.{kind} raised from {theirs:,} to {mine:,} {unit} against the baseline"
            else:
                continue
            yield Finding(kind, "budget-loosened", said, section, mine)


def _reformed(build: Manifest, baseline: Manifest) -> Iterable[Finding]:
    """A warning per overview whose form differs from the baseline's ('instructions: matrix form -> names form'): the
    build picks the richest form that fits a character budget, so a few characters more can drop every ✓ and ✗ of
    what each session receives, and its tokens read as a saving."""
    before = {row.get("kind"): row.get("form") for row in baseline.data.get("overview", ()) if isinstance(row, dict)}
    for row in build.data.get("overview", ()):
        kind, form, was = row.get("kind"), row.get("form"), before.get(row.get("kind"))
        if isinstance(was, str) and isinstance(form, str) and form != was:
            said = f"{kind}: {was} form → {form} form against the baseline (the richest form that fits its budget)"
            yield Finding(str(kind), "overview-form", said)


def held_to(build: Manifest, baseline: Manifest) -> Manifest:
    """`build` with each budget the tighter of its own and the baseline's, a kind only the baseline budgets
    included, each checked again against the build's documents (`report --baseline-budgets`): the base branch's
    budgets gate a pull request, which cannot loosen them in its own capidx.yaml. A budget the baseline breaches
    itself holds the build to the baseline's size instead (`Budget.base`): no pull request could pass it, not even
    the one raising it, and the base branch is not made to fit by its own pull requests' checks."""
    encoding, own = build.encoding, _tightest(build.data["budgets"])
    largest: dict[str, Mapping[str, Any]] = {}  # a kind's largest document, ties by path, as the build's check has it
    for artifact in sorted(build.artifacts, key=lambda a: (-a["tokens"].get(encoding, 0), a["path"])):
        largest.setdefault(artifact["kind"], {"tokens": artifact["tokens"].get(encoding, 0), "uri": artifact["uri"]})
    base: dict[str, int] = {}  # the baseline's largest document of each kind
    for artifact in baseline.artifacts:
        base[artifact["kind"]] = max(base.get(artifact["kind"], 0), artifact["tokens"].get(encoding, 0))
    budgets = [dict(row) for row in build.data["budgets"]]
    for kind, theirs in sorted(_tightest(baseline.data["budgets"]).items()):
        if kind in own and own[kind] <= theirs:
            continue
        budgets = [row for row in budgets if row["kind"] != kind]
        top = largest.get(kind, {"tokens": 0, "uri": ""})
        tokens, uri = top["tokens"], top["uri"]
        breached = base.get(kind, 0) if base.get(kind, 0) > theirs else None  # the base branch breaches it itself
        budgets.append(
            {"kind": kind, "budget": theirs, "tokens": tokens, "uri": uri, "ok": tokens <= (breached or theirs)}
            | {"held": True, "own": own.get(kind), "base": breached}
        )
    characters = _tightest(baseline.data.get("overview", ()))
    over = {row["kind"]: row["characters"] for row in baseline.data.get("overview", ()) if not row.get("ok", True)}
    overview = [
        _held_overview(row, characters.get(row["kind"]), over.get(row["kind"]))
        for row in build.data.get("overview", ())
    ]
    return Manifest(build.path, {**build.data, "budgets": budgets, "overview": overview})


def _held_overview(row: Mapping[str, Any], theirs: int | None, base: int | None = None) -> Mapping[str, Any]:
    """An overview row held to the baseline's character budget when that is the tighter (`held`: the build's own).
    The build chose the overview's form for its own budget, so a row held breaches in the form it has. A budget the
    baseline breaches itself (`base`: its characters) holds the row to the baseline's size, as `held_to` does."""
    if theirs is None or row["budget"] <= theirs:
        return row
    limit = base if base is not None and base > theirs else theirs
    return {**row, "budget": theirs, "ok": row["ok"] and row["characters"] <= limit, "held": row["budget"]}


def _overview(build: Manifest, encoding: str) -> tuple[Overview, ...]:
    tokens = {row["kind"]: row["tokens"].get(encoding, 0) for row in build.artifacts}
    return tuple(Overview(row, tokens.get(row["kind"], 0)) for row in build.data.get("overview", ()))


def _build_info(manifest: Manifest) -> BuildInfo:
    data = manifest.data
    catalog = data["catalog"]
    return BuildInfo(
        manifest=manifest.path,
        capidx=data["capidx"],
        input_digest=data["inputDigest"],
        encodings=tuple(data["encodings"]),
        uri_prefix=data["uriPrefix"],
        agents=len(catalog["agents"]),
        capabilities=len(catalog["capabilities"]),
        categories=len(catalog["categories"]),
    )


def _by_kind(artifacts: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for artifact in artifacts:
        groups.setdefault(artifact["kind"], []).append(artifact)
    return groups


def _kind_key(kind: str) -> tuple[int, str]:
    """The schema's order (`ALL_KINDS`); kinds a build does not know (a budget row, say) sort after these."""
    return (ALL_KINDS.index(kind) if kind in ALL_KINDS else len(ALL_KINDS), kind)


def _kind_rows(build: Manifest, baseline: Manifest | None, encoding: str) -> tuple[KindRow, ...]:
    now = _by_kind(build.artifacts)
    before = _by_kind(baseline.artifacts) if baseline else {}
    budgets = _budgets_by_kind(build.data["budgets"])
    kinds = sorted(set(now) | set(before) | set(budgets), key=_kind_key)
    rows = [
        _kind_row(kind, now.get(kind, []), before.get(kind, []), budgets.get(kind), baseline, encoding)
        for kind in kinds
    ]
    severity = {"breach": 0, "near": 1}
    return tuple(sorted(rows, key=lambda row: (severity.get(row.status, 2), _kind_key(row.kind))))


def _budgets_by_kind(rows: Iterable[Mapping[str, Any]]) -> dict[str, Budget]:
    """One budget per kind; should a kind have several rows, the tightest one stands for it."""
    chosen: dict[str, Budget] = {}
    for row in rows:
        budget = Budget(**row)
        current = chosen.get(budget.kind)
        if current is None or (not budget.ok, budget.use) > (not current.ok, current.use):
            chosen[budget.kind] = budget
    return chosen


def _kind_row(
    kind: str,
    artifacts: Sequence[Mapping[str, Any]],
    baseline_artifacts: Sequence[Mapping[str, Any]],
    budget: Budget | None,
    baseline: Manifest | None,
    encoding: str,
) -> KindRow:
    encodings = sorted({name for artifact in artifacts for name in artifact["tokens"]})
    largest = max(artifacts, key=lambda item: (item["tokens"][encoding], item["uri"]), default=None)
    compared = baseline is not None
    return KindRow(
        kind=kind,
        documents=len(artifacts),
        tokens={name: _total(artifacts, name) for name in encodings},
        largest={name: _max(artifacts, name) for name in encodings},
        largest_uri=largest["uri"] if largest else None,
        bytes=sum(item["bytes"] for item in artifacts),
        budget=budget,
        total_delta=Delta(_total(baseline_artifacts, encoding), _total(artifacts, encoding)) if compared else None,
        largest_delta=Delta(_max(baseline_artifacts, encoding), _max(artifacts, encoding)) if compared else None,
        documents_delta=Delta(len(baseline_artifacts), len(artifacts)) if compared else None,
    )


def _total(artifacts: Iterable[Mapping[str, Any]], encoding: str) -> int:
    return sum(item["tokens"].get(encoding, 0) for item in artifacts)


def _max(artifacts: Iterable[Mapping[str, Any]], encoding: str) -> int:
    return max((item["tokens"].get(encoding, 0) for item in artifacts), default=0)


def _totals(build: Manifest, baseline: Manifest | None, encoding: str) -> Totals:
    encodings = build.data["encodings"]
    return Totals(
        documents=len(build.artifacts),
        tokens={name: _total(build.artifacts, name) for name in encodings},
        bytes=sum(item["bytes"] for item in build.artifacts),
        delta=Delta(_total(baseline.artifacts, encoding), _total(build.artifacts, encoding)) if baseline else None,
    )


def _largest(artifacts: Sequence[Mapping[str, Any]], encoding: str) -> dict[str, tuple[Document, ...]]:
    groups = _by_kind(artifacts)
    return {
        kind: tuple(
            _document(item, encoding)
            for item in sorted(groups.get(kind, []), key=lambda item: (-item["tokens"][encoding], item["uri"]))[
                :TOP_DOCUMENTS
            ]
        )
        for kind in LARGEST_KINDS
    }


def _document(artifact: Mapping[str, Any], encoding: str) -> Document:
    tokens = artifact["tokens"][encoding]
    return Document(artifact["kind"], artifact["uri"], artifact["path"], artifact["title"], tokens)


def _changes(
    build: Manifest, baseline: Manifest, encoding: str
) -> tuple[tuple[Change, ...], tuple[Change, ...], tuple[Change, ...]]:
    """Artifacts added, removed and changed, matched by URI and compared by sha256; sorted by URI."""
    now = {item["uri"]: item for item in build.artifacts}
    before = {item["uri"]: item for item in baseline.artifacts}
    added = tuple(_change(now[uri], None, now[uri], encoding) for uri in sorted(now.keys() - before.keys()))
    removed = tuple(_change(before[uri], before[uri], None, encoding) for uri in sorted(before.keys() - now.keys()))
    changed = tuple(
        _change(now[uri], before[uri], now[uri], encoding)
        for uri in sorted(now.keys() & before.keys())
        if now[uri]["sha256"] != before[uri]["sha256"]
    )
    return added, removed, changed


def _change(
    artifact: Mapping[str, Any], old: Mapping[str, Any] | None, new: Mapping[str, Any] | None, encoding: str
) -> Change:
    return Change(
        kind=artifact["kind"],
        uri=artifact["uri"],
        path=artifact["path"],
        before=old["tokens"].get(encoding, 0) if old else None,
        after=new["tokens"].get(encoding, 0) if new else None,
    )


def _over_at_base(build: Manifest) -> Iterable[Finding]:
    """A warning per budget held to the baseline that the baseline breaches itself, and this build too, no more than
    the baseline: the build is held to the baseline's size until the base branch fits its budget. A build within the
    budget is held to nothing more (its largest document was said as "that size", which it is not)."""
    for row in build.data["budgets"]:
        if row.get("base") is not None and row["ok"] and row["tokens"] > row["budget"]:
            said = (
                f"{row['kind']}: the baseline breaches its own budget of {row['budget']:,} ({row['base']:,} tokens): "
                f"this build ({row['tokens']:,}) is held to that size until the base branch fits its budget"
            )
            yield Finding(row["kind"], "baseline-breach", said)


def _warnings(rows: Iterable[KindRow], prefix: str) -> Iterable[Finding]:
    """Kinds within 10% of their budget, then kinds growing more than 10% against the baseline: a single document's
    total, a per-item kind's largest document (what one read costs, and what its budget holds). A per-item kind's
    total grows with every capability added; warned on, it made a dozen warnings of one new capability. Against a
    baseline, a kind near its budget is warned about only when that figure grew: the same warning on every pull
    request, whatever it changed, is one reviewers learn to skip (the table still says `near`). Growth is warned of
    when it is also `GROWTH_WARNING_TOKENS` or more: a small catalog grows by more than 10% with each capability."""
    for row in rows:
        grown = row.total_delta if row.single else row.largest_delta
        if row.budget is not None and row.budget.near and (grown is None or grown.tokens > 0):
            b = row.budget
            yield Finding(
                row.kind,
                "near-budget",
                f"{row.kind}: {short_uri(b.uri, prefix)} is {b.tokens:,} tokens, "
                f"{use_percent(b)} of the budget of {b.budget:,}",
            )
    for row in rows:
        figures = (("total", row.total_delta),) if row.single else (("largest", row.largest_delta),)
        grown = [
            (label, delta)
            for label, delta in figures
            if delta is not None
            and delta.relative is not None
            and delta.relative > GROWTH_WARNING
            and delta.tokens >= GROWTH_WARNING_TOKENS
        ]
        if grown:
            parts = "; ".join(f"{label} {d.before:,} → {d.after:,} tokens (▲ +{d.relative:.1%})" for label, d in grown)
            yield Finding(row.kind, "growth", f"{row.kind}: grew more than {GROWTH_WARNING:.0%}: {parts}")


def use_percent(budget: Budget) -> str:
    """Rounded towards the verdict: 99.6% of a budget that holds reads 99%, 100.01% of one that breaks 101%."""
    value = budget.use * 100
    return f"{math.floor(value) if budget.ok else math.ceil(value)}%"
