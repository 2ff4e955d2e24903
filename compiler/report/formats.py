"""Renderers for `capidx report`: the same `Report` as text, Markdown, JSON, GitHub annotations or HTML.

Results are data, reporters print them (STYLE.md): each renderer is a pure function from a `Report`
to a string, registered in `run.RENDERER_BY_NAME`. Side effects (the step summary file, colour detection)
stay in `capidx.compiler.report.run`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from capidx.compiler.diagnostics import (
    ANNOTATIONS_PER_LEVEL,
    escape_workflow_data,
    escape_workflow_property,
    plural,
    within_annotation_cap,
)
from capidx.compiler.emit.budgets import budget_remedy
from capidx.compiler.emit.table import STATUS_TEXT, overview_breach, overview_text
from capidx.compiler.report.datadiff import DataDiff
from capidx.compiler.report.json_form import report_to_dict
from capidx.compiler.report.model import (
    WINDOWS,
    Budget,
    BudgetPlace,
    Change,
    Delta,
    KindRow,
    Overview,
    Report,
    share,
    use_percent,
)

MARKER = "<!-- capidx-report -->"
HEADING = "## capidx token report"
MINUS = "\u2212"
UP, DOWN = "▲", "▼"
MAX_LISTED_CHANGES = 20  # per list in text and Markdown; JSON and HTML list every change
MAX_DATA_LINES = 10  # per section of the data changes in text, Markdown and HTML (JSON: json_form.MAX_DATA_ITEMS)
SESSION_KINDS = ("instructions", "memory", "summary")  # what a model reads at the start of a session
STATUS_ICON = {"breach": "❌", "near": "⚠️", "ok": "✅", "unbudgeted": ""}
_COLOURS = {"breach": ("red", True), "near": ("yellow", False), "ok": ("green", False)}


# --- numbers --------------------------------------------------------------------------------------


def number(value: int) -> str:
    text = f"{abs(value):,}"
    return f"{MINUS}{text}" if value < 0 else text


def signed(value: int) -> str:
    return f"+{value:,}" if value >= 0 else f"{MINUS}{abs(value):,}"


def percent(fraction: float) -> str:
    """Shares of a context window: small numbers keep two decimals so they do not read as 0."""
    value = abs(fraction) * 100
    if value == 0:
        text = "0%"
    elif value < 0.01:
        text = "<0.01%"
    elif value < 1:
        text = f"{value:.2f}%"
    else:
        text = f"{value:.1f}%"
    return f"{MINUS}{text}" if fraction < 0 else text


def delta_text(delta: Delta | None) -> str:
    """`▲ +1,234 (+5.2%)`, `▼ −120 (−3.1%)`, `▲ +500 (new)`, `▼ −80 (gone)`, `±0`; empty without a baseline."""
    if delta is None:
        return ""
    if delta.tokens == 0:
        return "±0"
    marker = UP if delta.tokens > 0 else DOWN
    if delta.relative is None:
        return f"{marker} {signed(delta.tokens)} (new)"
    if delta.after == 0:
        return f"{marker} {signed(delta.tokens)} (gone)"
    relative = percent(delta.relative)
    return f"{marker} {signed(delta.tokens)} ({relative if delta.relative < 0 else '+' + relative})"


def use_text(budget: Budget | None) -> str:
    return use_percent(budget) if budget else ""


def _summary_line(report: Report) -> str:
    totals = report.totals
    text = (
        f"{number(totals.tokens.get(report.encoding, 0))} {report.encoding} tokens "
        f"in {number(totals.documents)} documents"
    )
    return text + (f", {delta_text(totals.delta)} against the baseline" if totals.delta else "")


def verdict(report: Report) -> str:
    breaches = len(report.breaches) + len(report.overview_breaches)
    warnings = len(report.warnings)
    if breaches:
        verdict = f"{plural(breaches, 'budget')} breached"
    else:
        verdict = "all budgets met" if report.budgeted else "no budgets configured"
    return verdict + (f", {plural(warnings, 'warning')}" if warnings else "")


def breach_remedy(report: Report, config_file: str | None) -> str:
    """What to do about the token budgets breached: `capidx build`'s wording (`budget_remedy`); for those held to
    the baseline's (`--baseline-budgets`), raising them in this build's capidx.yaml changes nothing."""
    own = [(budget.kind, report.short_uri(budget.uri)) for budget in report.breaches if not budget.held]
    held = [budget for budget in report.breaches if budget.held]
    lines = [budget_remedy(own, config_file)] if own else []
    if held:
        keys = ", ".join(f"budgets.{budget.kind}" for budget in held)
        documents = ", ".join(report.short_uri(budget.uri) for budget in held)
        lines.append(
            f"the baseline's budgets hold here: shorten the catalog text behind {documents}, or raise {keys} "
            "on the base branch first"
        )
    return "; ".join(lines)


# Said once per report made with --baseline-budgets.
HELD = "budgets: each the tighter of this build's and the baseline's (--baseline-budgets)"


def breach_message(report: Report, budget: Budget) -> str:
    document = report.short_uri(budget.uri)
    subject = document if document == budget.kind else f"{budget.kind}: {document}"
    whose = (
        f"the baseline's budget of {number(budget.budget)}" if budget.held else f"the budget of {number(budget.budget)}"
    )
    own = "" if not budget.held else f"; this build sets {'none' if budget.own is None else number(budget.own)}"
    if budget.base is not None:  # held to the size of a baseline that breaches that budget itself
        return (
            f"{subject} is {number(budget.tokens)} tokens, {number(budget.tokens - budget.base)} over the baseline's "
            f"{number(budget.base)}, which already breaches its budget of {number(budget.budget)}{own}"
        )
    return (
        f"{subject} is {number(budget.tokens)} tokens, "
        f"{number(budget.tokens - budget.budget)} over {whose} ({use_percent(budget)} of it{own})"
    )


def overview_breach_message(row: Mapping[str, Any]) -> str:
    """`capidx build`'s wording (`overview_breach`), or for a row held to the baseline's character budget
    (`--baseline-budgets`), what the build's own capidx.yaml set instead: the build chose the form for that."""
    if "held" not in row:
        return overview_breach(row)
    return (
        f"{row['kind']}: {row['characters']:,} characters > the baseline's budget {row['budget']:,} in the form this "
        f"build chose ({row['form']}) for its own budget of {row['held']:,}"
    )


# --- the table every format shares ------------------------------------------------------------------


def _columns(report: Report) -> list[tuple[str, str]]:
    """(header, alignment) — the kind table's columns."""
    columns = [
        ("kind", "<"),
        ("docs", ">"),
        ("tokens", ">"),
        ("largest", ">"),
        ("budget", ">"),
        ("used", ">"),
        ("status", "<"),
    ]
    columns += [(label, ">") for _key, label, _size in WINDOWS]
    if report.baseline is not None:
        columns += [("Δ tokens", "<"), ("Δ largest", "<")]
    return columns


def _row_cells(report: Report, row: KindRow) -> list[str]:
    largest = row.largest.get(report.encoding, 0)
    cells = [
        row.kind,
        number(row.documents),
        number(row.tokens.get(report.encoding, 0)),
        "" if row.single else number(largest),
        number(row.budget.budget) if row.budget else "",
        use_text(row.budget),
        STATUS_TEXT[row.status],
    ]
    cells += [percent(share(largest, size)) for _key, _label, size in WINDOWS]
    if report.baseline is not None:
        cells += [delta_text(row.total_delta), "" if row.single else delta_text(row.largest_delta)]
    return cells


def _total_cells(report: Report) -> list[str]:
    total = report.totals.tokens.get(report.encoding, 0)
    cells = ["total", number(report.totals.documents), number(total), "", "", "", ""]
    cells += [percent(share(total, size)) for _key, _label, size in WINDOWS]
    if report.baseline is not None:
        cells += [delta_text(report.totals.delta), ""]
    return cells


_FOOTNOTE = (
    "Shares of a {windows} context window: the largest document of each kind (what one read costs);\n"
    "the total row adds every document up."
).format(windows=" and a ".join(label for _key, label, _size in WINDOWS))


# --- text -------------------------------------------------------------------------------------------


def render_text(report: Report, *, color: bool = False, config_file: str | None = None) -> str:
    paint = _painter(color)
    lines = [paint(f"capidx token report: {report.build.manifest}", bold=True)]
    lines.append(f"capidx {report.build.capidx}, {report.encoding}, {_catalog_text(report)}")
    if report.baseline:
        lines.append(f"baseline: {report.baseline.manifest} (capidx {report.baseline.capidx})")
    if report.held:
        lines.append(HELD)
    lines.append("")
    lines += _text_findings(report, paint, config_file)
    lines += _text_table(report, paint)
    lines += ["", _FOOTNOTE, ""]
    lines += [*overview_lines(report), ""] if report.overview else []
    lines += _text_data(report)
    lines += _text_largest(report)
    if report.baseline:
        lines += _text_changes(report)
    closing = f"{'OK' if report.ok else 'FAIL'}: {verdict(report)}; {_summary_line(report)}"
    lines.append(paint(closing, fg="green" if report.ok else "red", bold=True))
    return "\n".join(lines) + "\n"


# Where each overview artifact goes, and so who pays its tokens in every session.
_OVERVIEW_ROUTE = {
    "instructions": "server instructions, every session (capidx serve --instructions summary, the default)",
    "memory": "memory-file block, every session of an agent reading the file (the inject command)",
}


def overview_lines(report: Report) -> list[str]:
    """`Per session: …` lines for the overview artifacts: form, characters against the budget, tokens."""
    lines = ["Per session (the overview, fitted to a character budget):"]
    for item in report.overview:
        lines.append(f"  {overview_line(report, item)}")
        if not item.ok:
            lines.append(f"  {overview_breach_message(item.row)}")
    return lines


def overview_line(report: Report, item: Overview) -> str:
    """`instructions: matrix form, 1,716 of 2,048 characters; 463 cl100k_base tokens: server instructions, …`"""
    route = _OVERVIEW_ROUTE.get(item.row["kind"], "")
    return f"{overview_text(item.row)}; {number(item.tokens)} {report.encoding} tokens: {route}"


def _catalog_text(report: Report) -> str:
    info = report.build
    counts = plural(info.agents, "agent"), plural(info.capabilities, "capability", "capabilities")
    return f"{counts[0]}, {counts[1]}, {plural(info.categories, 'category', 'categories')}"


def _painter(color: bool) -> Callable[..., str]:
    import click

    def paint(text: str, fg: str | None = None, bold: bool = False) -> str:
        return click.style(text, fg=fg, bold=bold) if color and (fg or bold) else text

    return paint


def _text_findings(report: Report, paint: Callable[..., str], config_file: str | None = None) -> list[str]:
    lines = []
    if report.breaches:
        lines.append(paint(f"✗ {plural(len(report.breaches), 'budget')} breached", fg="red", bold=True))
        lines += [f"  {breach_message(report, budget)}" for budget in report.breaches]
        lines.append(f"  {breach_remedy(report, config_file)}")
    if report.warnings:
        lines.append(paint(f"! {plural(len(report.warnings), 'warning')}", fg="yellow", bold=True))
        lines += [f"  {finding.message}" for finding in report.warnings]
    return [*lines, ""] if lines else []


def _text_table(report: Report, paint: Callable[..., str]) -> list[str]:
    columns = _columns(report)
    rows = [_row_cells(report, row) for row in report.kinds]
    total = _total_cells(report)
    widths = [max(len(cells[i]) for cells in [[h for h, _ in columns], *rows, total]) for i in range(len(columns))]

    def line(cells: Sequence[str], status: str | None = None) -> str:
        padded = [f"{cell:{align}{width}}" for cell, (_h, align), width in zip(cells, columns, widths, strict=True)]
        if status in _COLOURS:
            fg, bold = _COLOURS[status]
            padded[6] = paint(padded[6], fg=fg, bold=bold)
        padded = [
            _paint_delta(cell, paint) if header.startswith("Δ") else cell
            for cell, (header, _a) in zip(padded, columns, strict=True)
        ]
        return "  ".join(padded).rstrip()

    out = [paint(line([header for header, _ in columns]), bold=True)]
    out += [line(cells, row.status) for cells, row in zip(rows, report.kinds, strict=True)]
    out.append(paint(line(total), bold=True))
    return out


def _paint_delta(cell: str, paint: Callable[..., str]) -> str:
    if UP in cell:
        return paint(cell, fg="yellow")
    return paint(cell, fg="green") if DOWN in cell else cell


def session_changes(report: Report) -> list[str]:
    """`instructions: 442 → 450 tokens (▲ +8 (+1.8%))` for each document read at the start of a session whose
    tokens changed against the baseline."""
    rows = {row.kind: row for row in report.kinds}
    return [
        f"{kind}: {number(delta.before)} → {number(delta.after)} tokens ({delta_text(delta)})"
        for kind in SESSION_KINDS
        if (row := rows.get(kind)) is not None and (delta := row.total_delta) is not None and delta.tokens
    ]


def data_heading(data: DataDiff) -> str:
    return f"Data changes against the baseline: {data.summary()}"


def data_groups(report: Report, data: DataDiff) -> list[tuple[str, list[str], int]]:
    """What the text and Markdown forms list under the data heading, one group per title: its lines (the documents
    read every session, then each section's first `MAX_DATA_LINES` items) and how many more it has."""
    groups = [("Read at the start of every session", session_changes(report), 0)]
    groups += [
        (section.title, [item.text for item in section.items[:MAX_DATA_LINES]], len(section.items) - MAX_DATA_LINES)
        for section in data.sections
    ]
    return [(title, lines, more) for title, lines, more in groups if lines]


def _text_data(report: Report) -> list[str]:
    """What the model will now answer differently: the records' changes, section by section (`datadiff`)."""
    data = report.data
    if data is None:
        return []
    lines = [data_heading(data)]
    for title, listed, more in data_groups(report, data):
        lines += [f"  {title}:", *(f"    {line}" for line in listed)]
        lines += [f"    … and {more} more (--format json lists them)"] if more > 0 else []
    return [*lines, ""]


def _text_largest(report: Report) -> list[str]:
    lines = [f"Largest documents ({report.encoding} tokens):"]
    width = max((len(number(doc.tokens)) for docs in report.largest.values() for doc in docs), default=0)
    for kind, documents in report.largest.items():
        for index, doc in enumerate(documents):
            label = kind if index == 0 else ""
            lines.append(f"  {label:<11} {number(doc.tokens):>{width}}  {report.short_uri(doc.uri)}")
    return [*lines, ""]


def _text_changes(report: Report) -> list[str]:
    """Added, removed and changed artifacts, largest change first, in columns: before → after  delta."""
    lines = [f"Changes against the baseline: {_changes_count(report)}"]
    groups = [
        (sign, _by_size_of_change(changes)[:MAX_LISTED_CHANGES], len(changes))
        for sign, changes in (("+", report.added), (MINUS, report.removed), ("~", report.changed))
    ]
    shown = [change for _sign, changes, _count in groups for change in changes]
    width = max((len(report.short_uri(change.uri)) for change in shown), default=0)
    before_width = max((len(_figure(change.before)) for change in shown), default=0)
    after_width = max((len(_figure(change.after)) for change in shown), default=0)
    for sign, changes, count in groups:
        for change in changes:
            arrow = "→" if change.before is not None and change.after is not None else " "
            lines.append(
                f"  {sign} {report.short_uri(change.uri):<{width}}  {_figure(change.before):>{before_width}} {arrow} "
                f"{_figure(change.after):>{after_width}}  {delta_text(Delta(change.before or 0, change.after or 0))}"
            )
        if count > MAX_LISTED_CHANGES:
            lines.append(f"    … {count - MAX_LISTED_CHANGES} more (--format json lists every change)")
    return [*lines, ""]


def _figure(tokens: int | None) -> str:
    return "" if tokens is None else number(tokens)


def _changes_count(report: Report) -> str:
    return f"{len(report.added)} added, {len(report.removed)} removed, {len(report.changed)} changed"


def _by_size_of_change(changes: Iterable[Change]) -> list[Change]:
    return sorted(changes, key=lambda change: (-abs(change.delta), change.uri))


# --- Markdown ---------------------------------------------------------------------------------------


def render_markdown(report: Report, *, color: bool = False, config_file: str | None = None) -> str:
    """A compact PR comment / step summary. The marker lets CI find and update one comment in place."""
    lines = [MARKER, HEADING, ""]
    icon = "❌" if not report.ok else "✅" if report.budgeted else "ℹ️"
    lines.append(f"{icon} **{verdict(report)}** · {_summary_line(report)} · {_catalog_text(report)}")
    lines.append("")
    if not report.ok or report.warnings:
        lines += [f"- ❌ {_md(breach_message(report, budget))}" for budget in report.breaches]
        lines += [f"- {_md(breach_remedy(report, config_file))}"] if report.breaches else []
        lines += [f"- ❌ {_md(overview_breach_message(item.row))}" for item in report.overview_breaches]
        lines += [f"- ⚠️ {_md(finding.message)}" for finding in report.warnings]
        lines.append("")
    lines += _md_table(report)
    lines += ["", f"<sub>{_FOOTNOTE}</sub>", ""]
    if report.overview:
        head, *items = overview_lines(report)
        lines += [head, *(f"- {_md(item.strip())}" for item in items), ""]
    lines += _md_data(report)
    lines += _md_largest(report)
    if report.baseline:
        lines += _md_changes(report)
    baseline = f" against `{report.baseline.manifest}`" if report.baseline else ""
    held = f" · {HELD}" if report.held else ""
    lines.append(f"<sub>capidx {report.build.capidx} · `{report.build.manifest}`{baseline}{held}</sub>")
    return "\n".join(lines) + "\n"


_MD_LINK = str.maketrans({"[": "\\[", "]": "\\]"})
# Backslashes before a bracket, doubled: the bracket's own escape would otherwise be escaped by them (`\[x\](…)`
# became `\\[x\\](…)`, a literal backslash and a live link).
_MD_BACKSLASHES = re.compile(r"\\+(?=[\[\]])")


def _md(text: str) -> str:
    """Escape what would break a table cell or start markup; no entity either (`&#64;` would show as `@`), and no
    link or image: a forged manifest's budget kind `[review](https://…)` or `![](https://…)` was one in the pull
    request's comment (capidx's own messages use code spans, which stay)."""
    text = _MD_BACKSLASHES.sub(lambda run: run[0] * 2, text.replace("&", "&amp;"))
    return _inert_references(_md_code(text.translate(_MD_LINK)))


def _md_code(text: str) -> str:
    """`_md` for a code span, where GitHub reads neither mentions, references nor entities."""
    return text.replace("|", "\\|").replace("<", "&lt;")


def _md_span(text: str) -> str:
    """`text` (a document's URI) as a code span, fenced by more backticks than any run of them in it: a URI of a
    forged manifest is free text, and its own backtick would end the span and leave `@name` or `#12` live."""
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if len(fence) > 1 else ""  # a space each side: a backtick at an end is not read as the fence's
    return f"{fence}{pad}{_md_code(text)}{pad}{fence}"


_MD_ACTIVE = str.maketrans({char: "\\" + char for char in "\\`*_[]~#!"} | {"&": "&amp;", ">": "&gt;"})


def _md_text(text: str) -> str:
    """`_md`, and no emphasis, link, code span, heading or quote either: for the catalog's texts outside a table
    (a fork writes them: `[x](https://…)` stays text)."""
    return _inert_references(_md_code(text.translate(_MD_ACTIVE)))


# GitHub makes `@name` a mention (a notification to that user or team) and `#12`, `owner/repo#12`, `GH-12` or an
# issue's address on github.com a reference (an entry in that timeline): a fork's catalog text in a pull
# request's comment must do neither.
_GITHUB_REFERENCE = re.compile(r"(?<=@)(?=\w)|(?<=#)(?=\d)|(?<=\bgh)(?=-\d)|(?<=\bgithub)(?=\.com\b)", re.IGNORECASE)


def _inert_references(markdown: str) -> str:
    """A zero-width space after each `@` or `#` GitHub would read as a mention or reference (before the `-` of
    `GH-12`, the `.com` of github.com): it breaks them and shows nothing."""
    return _GITHUB_REFERENCE.sub("&#8203;", markdown)


def _md_data(report: Report) -> list[str]:
    data = report.data
    if data is None:
        return []
    lines = [f"**{_md_text(data_heading(data))}**", ""]
    for title, listed, more in data_groups(report, data):
        lines += [f"- {title}:", *(f"  - {_md_text(line)}" for line in listed)]
        lines += [f"  - … and {more} more (`--format json` lists them)"] if more > 0 else []
    return [*lines, ""] if len(lines) > 2 else lines


def _md_table(report: Report) -> list[str]:
    columns = _columns(report)
    header = "| " + " | ".join(h.capitalize() if h[0].isalpha() and h.islower() else h for h, _ in columns) + " |"
    rule = "|" + "|".join(":--" if align == "<" else "--:" for _h, align in columns) + "|"
    lines = [header, rule]
    for row in report.kinds:
        cells = _row_cells(report, row)
        cells[0] = f"{STATUS_ICON[row.status]} {row.kind}".strip()
        cells[6] = row.status if row.status != "unbudgeted" else ""
        lines.append("| " + " | ".join(_md(cell) for cell in cells) + " |")
    total = [f"**{cell}**" if cell else "" for cell in _total_cells(report)]
    lines.append("| " + " | ".join(total) + " |")
    return lines


def _md_largest(report: Report) -> list[str]:
    rows = [
        f"| {kind} | "
        + " · ".join(f"{_md_span(report.short_uri(doc.uri))} {number(doc.tokens)}" for doc in docs)
        + " |"
        for kind, docs in report.largest.items()
        if docs
    ]
    if not rows:
        return []
    return ["**Largest documents** (what to trim first)", "", "| Kind | Documents (tokens) |", "|:--|:--|", *rows, ""]


def _md_changes(report: Report) -> list[str]:
    lines = [f"<details><summary>Changes against the baseline: {_changes_count(report)}</summary>", ""]
    if report.added or report.removed or report.changed:
        lines += ["| | Document | Before | After | Δ |", "|:--|:--|--:|--:|:--|"]
        for sign, changes in (("added", report.added), ("removed", report.removed), ("changed", report.changed)):
            ordered = _by_size_of_change(changes)
            for change in ordered[:MAX_LISTED_CHANGES]:
                before, after = _figure(change.before), _figure(change.after)
                delta = delta_text(Delta(change.before or 0, change.after or 0))
                lines.append(f"| {sign} | {_md_span(report.short_uri(change.uri))} | {before} | {after} | {delta} |")
            if len(ordered) > MAX_LISTED_CHANGES:
                lines.append(f"| {sign} | … {len(ordered) - MAX_LISTED_CHANGES} more | | | |")
    else:
        lines.append("No artifact changed.")
    return [*lines, "", "</details>", ""]


# --- GitHub -----------------------------------------------------------------------------------------


def render_github(
    report: Report, *, color: bool = False, places: Mapping[tuple[str, str], BudgetPlace] | None = None
) -> str:
    """Workflow commands: `::error` per breach, `::warning` per finding, then one plain summary line. A breach of a
    budget the capidx.yaml in force sets (`places`, by section and kind) is annotated at its key there."""
    places = places or {}
    lines = [
        _workflow_command(
            "error",
            f"capidx budget breached ({budget.kind})",
            breach_message(report, budget),
            _place(places.get(("budgets", budget.kind)), budget.budget),
        )
        for budget in report.breaches
    ]
    lines += [
        _workflow_command(
            "error",
            f"capidx character budget breached ({item.row['kind']})",
            overview_breach_message(item.row),
            _place(places.get(("character_budgets", item.row["kind"])), item.row["budget"]),
        )
        for item in report.overview_breaches
    ]
    warnings = [
        _workflow_command(
            "warning",
            f"capidx token report ({finding.kind})",
            finding.message,
            _place(places.get((finding.section, finding.kind)), finding.budget) if finding.section else None,
        )
        for finding in report.warnings
    ]
    lines = (
        _capped("error", lines)
        + _capped("warning", warnings)
        + _capped("notice", _data_notices(report), "`capidx report --format json`")
    )
    data = f"; data: {report.data.summary()}" if report.data is not None else ""
    lines.append(f"capidx report: {verdict(report)}; {_summary_line(report)}{data}")
    return "\n".join(lines) + "\n"


def _data_notices(report: Report) -> list[str]:
    """A `::notice` saying what changed in the data, then one per availability change (what the model now answers
    differently); none when nothing changed."""
    data = report.data
    if data is None or not (data.changed or data.unavailable or session_changes(report)):
        return []
    notices = [_workflow_command("notice", "capidx data changes", data_heading(data))]
    availability = next((section for section in data.sections if section.key == "availability"), None)
    for item in availability.items if availability is not None else ():
        notices.append(_workflow_command("notice", "capidx availability change", item.text))
    return notices


def _capped(level: str, commands: list[str], lists: str = "`capidx report` (text or --format markdown)") -> list[str]:
    """GitHub shows `ANNOTATIONS_PER_LEVEL` annotations of a level per step and drops the rest unsaid: past it,
    the last one says how many more there are, and `lists` where they all are (every finding is in the text and
    Markdown forms; every data change in the JSON form)."""
    shown, rest = within_annotation_cap(commands)
    if not rest:
        return shown
    more = len(rest)
    message = (
        f"{plural(more, level)} more: GitHub shows only {ANNOTATIONS_PER_LEVEL} annotations of a level per step; "
        f"{lists} lists them all"
    )
    return [*shown, _workflow_command(level, "capidx token report", message)]


def _place(place: BudgetPlace | None, budget: Any) -> dict[str, str]:
    """The annotation's file, line and column: the budget's key, when the build was checked against that number."""
    if place is None or place.budget != budget:
        return {}
    return {"file": place.file, "line": str(place.line), "col": str(place.col)}


def _workflow_command(command: str, title: str, message: str, where: Mapping[str, str] | None = None) -> str:
    fields = ",".join(
        f"{key}={escape_workflow_property(value)}" for key, value in {**(where or {}), "title": title}.items()
    )
    return f"::{command} {fields}::{escape_workflow_data(message)}"


# --- JSON and HTML ----------------------------------------------------------------------------------


def render_json(report: Report, *, color: bool = False) -> str:
    return json.dumps(report_to_dict(report), ensure_ascii=False, indent=2) + "\n"
