"""Markdown rendering with Jinja: strict, overridable, and failing with the template's file and line.

`StrictUndefined` turns a typo into an error instead of a blank. A template in the user's
templates folder (config `paths.templates` or `--templates`) overrides the bundled one of the same
name, like a theme's custom_dir. Errors become `TemplateFailure` naming the template file and line.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
from jinja2.bccache import Bucket
from jinja2.utils import internalcode

from capidx.compiler import mdtext, views

BUNDLED_PACKAGE = "capidx.templates"


# Environment options that shape the compiled code (so they also name the bytecode cache's files).
_CODE_OPTIONS: dict[str, Any] = {
    "autoescape": False,  # Markdown, not HTML: text is shown verbatim
    "keep_trailing_newline": True,
    "trim_blocks": True,
    "lstrip_blocks": True,
}


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
        auto_reload=False,
        bytecode_cache=_bytecode_cache(),
        **_CODE_OPTIONS,
    )
    _use_sync_filters(env)
    env.context_class = _Context
    env.filters["commas"] = lambda value: f"{value:,}"
    env.filters.update(mdtext.FILTERS)  # inline, line, cell, block, code: data stays in its Markdown structure
    env.globals.update(
        mark=views.mark,
        marks=views.marks,
        agent_records=views.agent_records,
        group_by_category=views.group_by_category,
        record_traits=views.record_traits,
        source_traits=views.source_traits,
    )
    return env


def _use_sync_filters(env: jinja2.Environment) -> None:
    """Register the synchronous implementation of Jinja's filters that have an async variant (`join`,
    `map`, `sum`, ...). Those filters are wrappers that ask, on every call, whether the environment is
    async and then call the synchronous function; ours never is, and the wrappers cost more than the
    joins themselves (hundreds of thousands of calls in a large build). Same functions, same results."""
    if env.is_async:
        return
    for name, function in list(env.filters.items()):
        synchronous = getattr(function, "__wrapped__", None)
        if getattr(function, "jinja_async_variant", False) and callable(synchronous):
            env.filters[name] = synchronous


_EVAL_CONTEXT = jinja2.pass_eval_context(lambda: None).jinja_pass_arg  # how macros want to be called


class _Context(jinja2.runtime.Context):
    """Jinja's context with a shorter path for the template's calls (`helper(x)`, `refs.cites(...)`, macros).

    Templates make hundreds of thousands of calls at scale, and `Context.call` asks each callable (and its
    `__call__`) whether it wants the context, eval context or environment passed in. Callables marked
    for that (Jinja's `pass_*` decorators) still go the original way; the others are called directly,
    as `Context.call` would (without Jinja's loop and block bookkeeping arguments).
    """

    @internalcode
    def call(__self, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        function = getattr(__obj, "__call__", None)  # noqa: B004
        pass_arg = getattr(function, "jinja_pass_arg", None)
        if pass_arg is None:
            pass_arg = getattr(__obj, "jinja_pass_arg", None)
        else:
            __obj = function
        if pass_arg is not None:
            if pass_arg is not _EVAL_CONTEXT:  # the context (or the environment): Jinja's own way
                return jinja2.runtime.Context.call(__self, __obj, *args, **kwargs)
            args = (__self.eval_ctx, *args)  # macros are called so
        if kwargs:
            kwargs.pop("_block_vars", None)
            kwargs.pop("_loop_vars", None)
        try:
            return __obj(*args, **kwargs)
        except StopIteration:
            return __self.environment.undefined(
                "value was undefined because a callable raised a StopIteration exception"
            )


class _BytecodeCache(jinja2.FileSystemBytecodeCache):
    """Jinja's own cache of compiled templates, kept between runs, for the bundled templates.

    Compiling them takes longer than a whole no-op build (~70 ms). An entry is keyed by template
    name and file and checked against the source's checksum, so an edited template is compiled
    afresh; file names carry the Jinja version, `_CODE_OPTIONS` and the filter set, which shape the
    compiled code.
    User templates are not cached (one entry per file, ever: temporary folders would pile up).
    A cache that cannot be read or written only means compiling again: it never fails a build.
    """

    def __init__(self, pattern: str) -> None:
        super().__init__(pattern=pattern)
        self.bundled = os.path.dirname(os.path.abspath(importlib.import_module(BUNDLED_PACKAGE).__file__ or ""))

    def get_bucket(self, environment: jinja2.Environment, name: str, filename: str | None, source: str) -> Any:
        if filename is None or os.path.dirname(os.path.abspath(filename)) != self.bundled:
            return _Uncached(environment, self.get_cache_key(name, filename), self.get_source_checksum(source))
        return super().get_bucket(environment, name, filename, source)

    def load_bytecode(self, bucket: Any) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # a damaged or foreign entry
            bucket.reset()

    def dump_bytecode(self, bucket: Any) -> None:
        if not isinstance(bucket, _Uncached):
            with contextlib.suppress(OSError):
                super().dump_bytecode(bucket)


class _Uncached(Bucket):
    """A user template's bucket: compiled every time, never stored."""


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """In Jinja's per-user folder in the temp directory (private to the user, checked by Jinja); none
    where it cannot be used."""
    version = getattr(jinja2, "__version__", "")
    # The compiled code also depends on how each filter takes its arguments (Jinja decides at compile time
    # whether to pass a context): `_use_sync_filters` changes that for some, hence "sync-filters".
    key = hashlib.sha256(f"{version} {sorted(_CODE_OPTIONS.items())} sync-filters".encode()).hexdigest()[:16]
    try:
        return _BytecodeCache(pattern=f"capidx-{key}-%s.cache")
    except (OSError, RuntimeError, ImportError):
        return None


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
        raise TemplateFailure(
            f"template not found: {exc.name} (known: {', '.join(template_names(env))}; a template in the folder "
            "given by paths.templates or --templates overrides a bundled one of the same name)"
        ) from None

    # What `template.render` does, minus its per-call setup: the globals are merged into each context from
    # a plain dict made once (not from a ChainMap), as snippets render thousands of times per build.
    # Jinja's `handle_exception` rewrites the traceback to template lines, as `render` would.
    environment, root, blocks = template.environment, template.root_render_func, template.blocks
    make_context, concat, globals_ = environment.context_class, environment.concat, dict(template.globals)

    def render(**context: Any) -> str:
        try:
            try:
                parent = {**globals_, **context}
                return concat(root(make_context(environment, parent, template.name, blocks, globals=globals_)))
            except Exception:
                environment.handle_exception()
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
