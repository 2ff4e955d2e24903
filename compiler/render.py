"""Markdown rendering with Jinja: strict, overridable, and failing with the template's file and line.

`StrictUndefined` turns a typo into an error instead of a blank. A template in the user's
templates folder (config `paths.templates` or `--templates`) overrides the bundled one of the same
name, like a theme's custom_dir. Errors become `TemplateFailure` naming the template file and line.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2

from capidx.compiler import views

BUNDLED_PACKAGE = "capidx.templates"


class TemplateFailure(Exception):
    """A template could not be loaded, compiled or rendered; the message names file and line."""


def make_environment(user_templates: Path | None) -> jinja2.Environment:
    loaders: list[jinja2.BaseLoader] = []
    if user_templates is not None:
        loaders.append(jinja2.FileSystemLoader(str(user_templates)))
    loaders.append(jinja2.PackageLoader(BUNDLED_PACKAGE, "."))
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # Markdown, not HTML: text is shown verbatim
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.filters["commas"] = lambda value: f"{value:,}"
    env.filters["inline"] = _inline
    env.filters["cell"] = _cell
    env.globals.update(mark=views.mark, record_traits=views.record_traits, source_traits=views.source_traits)
    return env


def _cell(value: str) -> str:
    """Text safe inside a Markdown table cell."""
    return _inline(value).replace("|", "\\|")


def _inline(value: str) -> str:
    """Collapse line breaks so a multi-line string stays on its Markdown line (text is kept)."""
    return " ".join(value.splitlines()) if "\n" in value else value


BUILD_TEMPLATE_SUFFIX = ".md.j2"  # what the build renders (the report's HTML template is not a build input)


def template_names(env: jinja2.Environment) -> list[str]:
    return sorted(name for name in env.list_templates() if name.endswith(BUILD_TEMPLATE_SUFFIX))


def templates_digest(env: jinja2.Environment) -> list[tuple[str, bytes]]:
    """(name, source bytes) of every build template the loader resolves (overrides win), for the input digest."""
    assert env.loader is not None
    return [(name, env.loader.get_source(env, name)[0].encode("utf-8")) for name in template_names(env)]


def get_renderer(env: jinja2.Environment, name: str) -> Callable[..., str]:
    """A function rendering template `name`; load, syntax and render errors become TemplateFailure."""
    try:
        template = env.get_template(name)
    except jinja2.TemplateSyntaxError as exc:
        where = f"{exc.filename or exc.name or name}:{exc.lineno}"
        raise TemplateFailure(f"{where}: template syntax error: {exc.message}") from None
    except jinja2.TemplateNotFound as exc:
        raise TemplateFailure(f"template not found: {exc.name}") from None

    def render(**context: Any) -> str:
        try:
            return template.render(**context)
        except jinja2.TemplateSyntaxError as exc:  # an {% include %} or {% import %} of a broken template
            raise TemplateFailure(
                f"{exc.filename or exc.name}:{exc.lineno}: template syntax error: {exc.message}"
            ) from None
        except Exception as exc:
            raise TemplateFailure(f"{_template_location(exc, template)}: {type(exc).__name__}: {exc}") from None

    return render


def _template_location(exc: BaseException, template: jinja2.Template) -> str:
    """The innermost template frame of the error (Jinja rewrites tracebacks to template lines)."""
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if frame.filename.endswith(".j2") or frame.filename == "<template>"
    ]
    if frames:
        return f"{frames[-1].filename}:{frames[-1].lineno}"
    return template.filename or template.name or "<template>"
