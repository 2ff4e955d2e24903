"""Render a `VerifyResult`: text for a terminal, json for programs, github annotations, markdown.

Reporters print; they decide nothing. Every format lists each source that did not verify with its
file:line:col, the URL and the reason, and a summary table: how the pages answered (by status class)
and what became of the sources (by outcome). A dry run (no `--write`) also shows the diff `--write`
would apply.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

from capidx.compiler.diagnostics import (
    escape_workflow_data,
    escape_workflow_property,
    plural,
    visible,
    within_annotation_cap,
)
from capidx.compiler.markup import defuse
from capidx.compiler.render.markdown import cell, inline
from capidx.compiler.verify.run import VerifyResult
from capidx.compiler.verify.verdicts import (
    OFFLINE_ADVICE,
    OUTCOMES,
    STATUS_CLASSES,
    UNRESOLVED_ADVICE,
    Verdict,
    status_class,
)
from capidx.schema.wording import shown as shown_path
from capidx.schema.yamldata import json_path

FORMATS = ("text", "json", "github", "markdown")


def _location(verdict: Verdict, cwd: Path) -> str:
    source = verdict.source
    where = shown_path(source.path, cwd)
    return f"{where}:{source.line}:{source.col}" if source.line is not None else where


def _failures(result: VerifyResult) -> list[Verdict]:
    return [verdict for verdict in _told(result) if not verdict.passed]


def _told(result: VerifyResult) -> list[Verdict]:
    """The verdicts, each with the advice its reason ends with; when no host name resolved (`_offline`), an
    unresolved host's advice is to look again online, not to check a URL that may well be right."""
    if _offline(result) is None:
        return list(result.verdicts)
    return [
        replace(verdict, reason=verdict.reason.removesuffix(UNRESOLVED_ADVICE) + OFFLINE_ADVICE)
        if verdict.status_class == "unresolved" and verdict.reason.endswith(UNRESOLVED_ADVICE)
        else verdict
        for verdict in result.verdicts
    ]


def _page_counts(result: VerifyResult) -> Counter[str]:
    return Counter(status_class(fetched) for fetched in result.fetched.values())


def _source_counts(result: VerifyResult) -> Counter[tuple[str, str]]:
    return Counter((verdict.status_class, verdict.outcome) for verdict in result.verdicts)


def _headline(result: VerifyResult) -> str:
    counts = Counter(verdict.outcome for verdict in result.verdicts)
    parts = [f"{counts[outcome]} {outcome}" for outcome in OUTCOMES if counts[outcome]]
    pages = plural(len(result.fetched), "page")
    line = f"{plural(len(result.verdicts), 'source')} on {pages}: {', '.join(parts) or 'nothing to check'}"
    return line + (f" ({offline})" if (offline := _offline(result)) else "")


def _offline(result: VerifyResult) -> str | None:
    """When no host name of several resolved, the likelier cause is this machine's network, not every URL."""
    hosts = {urlsplit(fetched.url).hostname for fetched in result.fetched.values()}
    if len(hosts) < 2 or any(fetched.outcome != "unresolved" for fetched in result.fetched.values()):
        return None
    return f"none of {len(hosts)} host names resolved: is this machine offline or without DNS? the URLs may be right"


def _table_rows(result: VerifyResult) -> list[tuple[str, ...]]:
    """status class | pages | sources per outcome, for the classes that occurred."""
    pages = _page_counts(result)
    sources = _source_counts(result)
    rows = []
    for klass in STATUS_CLASSES:
        per_outcome = [sources[(klass, outcome)] for outcome in OUTCOMES]
        if pages[klass] or any(per_outcome):
            rows.append((klass, str(pages[klass]), *(str(n) if n else "" for n in per_outcome)))
    totals = [sum(sources[(k, outcome)] for k in STATUS_CLASSES) for outcome in OUTCOMES]
    rows.append(("total", str(len(result.fetched)), *(str(n) for n in totals)))
    return rows


_HEADER = ("status", "pages", *OUTCOMES)


def _changes_line(result: VerifyResult) -> str:
    count = sum(len(edit.changes) for edit in result.edits)
    if not count:
        return "no changes to write"
    files = plural(len(result.edits), "file")
    if result.written:
        return f"wrote {plural(count, 'change')} to {files}"
    return f"--write would make {plural(count, 'change')} in {files} (diff below)"


def render_text(result: VerifyResult, cwd: Path) -> str:
    lines = [f"capidx verify: {_headline(result)}", ""]
    failures = _failures(result)
    for verdict in failures:
        lines.append(f"{_location(verdict, cwd)}: {verdict.outcome} ({verdict.status_class}): {verdict.source.url}")
        lines.append(f"    {verdict.source.agent} / {verdict.source.capability}: {verdict.reason}")
    if failures:
        lines.append("")
    widths = [max(len(row[i]) for row in [_HEADER, *_table_rows(result)]) for i in range(len(_HEADER))]
    for row in [_HEADER, *_table_rows(result)]:
        cells = [row[0].ljust(widths[0]), *(cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True))]
        lines.append("  ".join(cells).rstrip())
    lines += ["", *result.problems, _changes_line(result)]
    shown = [visible(line) for line in lines]  # a reason quotes what a server answered, a problem a file's name
    if not result.written:
        shown += [visible(line, keep="\t") for line in _diff_lines(result, cwd)]
    return "\n".join(shown)


def _diff_lines(result: VerifyResult, cwd: Path) -> list[str]:
    """The lines of the diff `--write` would apply, each to be printed `visible` but for its tabs (a document
    indented with tabs); a document's own line ends (`\\r\\n`) end its lines."""
    diffs = (edit.diff(shown_path(edit.path, cwd)).rstrip("\n") for edit in result.edits)
    return [line.removesuffix("\r") for diff in diffs for line in diff.split("\n")]


def render_json(result: VerifyResult, cwd: Path) -> str:
    payload = {
        "version": 1,
        "summary": {
            "sources": len(result.verdicts),
            "pages": len(result.fetched),
            "outcomes": {outcome: result.count(outcome) for outcome in OUTCOMES},
            "statusClasses": dict(sorted(_page_counts(result).items())),
        },
        "sources": [_json_source(verdict, cwd) for verdict in _told(result)],
        "changes": [
            {
                "path": shown_path(edit.path, cwd),
                "pointer": json_path((*change.parts, change.key)),
                "key": change.key,
                "value": change.value,
            }
            for edit in result.edits
            for change in edit.changes
        ],
        "written": result.written,
        "problems": list(result.problems),
    }
    return json.dumps(payload, indent=2, ensure_ascii=False)


def _json_source(verdict: Verdict, cwd: Path) -> dict[str, object]:
    source = verdict.source
    return {
        "path": shown_path(source.path, cwd),
        "line": source.line,
        "col": source.col,
        "pointer": json_path(source.parts),
        "agent": source.agent,
        "capability": source.capability,
        "url": source.url,
        "outcome": verdict.outcome,
        "statusClass": verdict.status_class,
        "httpStatus": verdict.http_status,
        "finalUrl": verdict.final_url,
        "reason": verdict.reason,
        "newStatus": verdict.new_status,
        "newUrl": verdict.new_url,
    }


def render_markdown(result: VerifyResult, cwd: Path) -> str:
    failures = _failures(result)
    icon = "✅" if not failures else "❌" if result.count("broken") else "⚠️"
    lines = ["## capidx verify", "", f"{icon} **{_headline(result)}**", ""]
    lines += ["| " + " | ".join(_HEADER) + " |", "|:--|" + "--:|" * (len(_HEADER) - 1)]
    lines += ["| " + " | ".join(row) + " |" for row in _table_rows(result)]
    if failures:
        lines += ["", "| where | capability | url | outcome | reason |", "|:--|:--|:--|:--|:--|"]
        for verdict in failures:
            cells = (
                f"`{_location(verdict, cwd)}`",
                f"{verdict.source.agent} / {verdict.source.capability}",
                verdict.source.url,
                f"{verdict.outcome} ({verdict.status_class})",
                verdict.reason,
            )
            # the job's page renders Markdown: a name or reason from a fork's data shows no image or link there
            lines.append("| " + " | ".join(cell(defuse(text)) for text in cells) + " |")
    lines += ["", *(f"- {inline(defuse(problem))}" for problem in result.problems), _changes_line(result)]
    lines = [visible(line) for line in lines]
    if result.edits and not result.written:
        diff = [visible(line, keep="\t") for line in _diff_lines(result, cwd)]
        longest = max((len(run) for line in diff for run in re.findall(r"`+", line)), default=0)
        fence = "`" * max(3, 1 + longest)  # the data cannot close it
        lines += ["", "<details><summary>diff</summary>", "", f"{fence}diff", *diff, fence, "", "</details>"]
    return "\n".join(lines)


def render_github(result: VerifyResult, cwd: Path) -> str:
    """Annotations, one per file and outcome (GitHub drops annotations beyond ten a level per step: the groups
    past the cap are folded into one last annotation), then the text report for the log. The command also appends
    the markdown report to the step summary."""
    groups: dict[tuple[str, str], list[Verdict]] = {}
    for verdict in _failures(result):
        level = "error" if verdict.outcome == "broken" else "warning"
        groups.setdefault((shown_path(verdict.source.path, cwd), level), []).append(verdict)
    lines = []
    ordered = sorted(groups.items(), key=lambda item: (item[0][1] != "error", item[0][0]))
    shown, rest = within_annotation_cap(ordered)  # errors first: a capped list keeps them
    for (path, level), verdicts in shown:
        first = verdicts[0].source
        title = f"capidx verify: {plural(len(verdicts), 'source')} {_VERB[level]}"
        # as validate's annotations: line breaks encoded as the command's, any other control character `visible`
        body = visible("\n".join(f"line {v.source.line}: {v.source.url}: {v.reason}" for v in verdicts), keep="\n")
        where = escape_workflow_property(visible(path))
        properties = f"file={where},line={first.line or 1},title={escape_workflow_property(title)}"
        lines.append(f"::{level} {properties}::{escape_workflow_data(body)}")
    if rest:
        count = sum(len(verdicts) for _, verdicts in rest)
        files = visible(", ".join(sorted({path for (path, _), _ in rest})))
        lines.append(f"::error title=capidx verify::{escape_workflow_data(f'{count} more failing sources in {files}')}")
    lines.append(render_text(result, cwd))
    return "\n".join(lines)


_VERB = {"error": "broken", "warning": "not verified"}

RENDERERS: dict[str, Callable[[VerifyResult, Path], str]] = {
    "text": render_text,
    "json": render_json,
    "markdown": render_markdown,
    "github": render_github,
}
