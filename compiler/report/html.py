"""The HTML report: `templates/report.html.j2` rendered from the JSON form of the report.

The template sees exactly what `--format json` prints (docs/report.md), plus a few display filters,
so the two cannot disagree. StrictUndefined: a typo in the template fails instead of rendering blank.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from capidx.compiler.artifacts import SINGLE_KINDS
from capidx.compiler.report.formats import (
    MAX_DATA_LINES,
    breach_message,
    delta_text,
    number,
    overview_breach_message,
    overview_line,
    percent,
    session_changes,
    verdict,
)
from capidx.compiler.report.json_form import report_to_dict
from capidx.compiler.report.model import WINDOWS, Budget, Delta, Report, use_percent

TEMPLATE = "report.html.j2"


def render_page(report: Report) -> str:
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.FunctionLoader(_load_bundled),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters.update(
        number=number, percent=percent, delta=_delta, change=_change, use=_use, width=_width, short=report.short_uri
    )
    context = report_to_dict(report)
    return environment.get_template(TEMPLATE).render(
        report=context,
        windows=[{"key": key, "label": label, "size": size} for key, label, size in WINDOWS],
        verdict=verdict(report).capitalize(),
        single_kinds=sorted(SINGLE_KINDS),
        breach_messages=[breach_message(report, budget) for budget in report.breaches]
        + [overview_breach_message(item.row) for item in report.overview_breaches],
        per_session=[overview_line(report, item) for item in report.overview],
        session_changes=session_changes(report),
        data_lines=MAX_DATA_LINES,
    )


def _load_bundled(name: str) -> str:
    return resources.files("capidx.templates").joinpath(name).read_text("utf-8")


def _delta(delta: dict[str, Any] | None) -> str:
    return "" if delta is None else delta_text(Delta(delta["before"], delta["after"]))


def _change(change: dict[str, Any]) -> str:
    return delta_text(Delta(change["before"] or 0, change["after"] or 0))


def _use(budget: dict[str, Any]) -> str:
    return use_percent(Budget(budget["kind"], budget["budget"], budget["tokens"], budget["uri"], budget["ok"]))


def _width(fraction: float) -> str:
    """CSS for a bar's fill: a share of its track, capped at the track; a hairline when non-zero."""
    width = f"width: {min(max(fraction, 0.0), 1.0) * 100:.2f}%"
    return f"{width}; min-width: 2px" if fraction > 0 else width
