"""Markdown rendering with Jinja: sandboxed, strict, overridable, and failing with the template's file and line.

`StrictUndefined` turns a typo into an error instead of a blank, with the closest name when there is one (`_Undefined`,
`undefined_hint`). A template in the user's
templates folder (config `paths.templates` or `--templates`) overrides the bundled one of the same
name, like a theme's custom_dir. Errors become `TemplateFailure` naming the template file and line.

User templates may come from a fork's pull request (docs/ci.md builds pull-request heads), so every
template runs in Jinja's immutable sandbox: no attribute starting with `_` (so no `__globals__`,
`__class__`, ...), no call of anything marked unsafe, no mutation of lists and dicts, `range` capped at
the sandbox's `MAX_RANGE`. On top of it (`_Sandbox`): repetition (`*`) and powers (`**`) that would make
huge values are refused, `lipsum` is capped, an artifact's output is capped at `MAX_OUTPUT_CHARS`, and
running out of memory or stack is a template error like any other. Templates are read only from inside
their folder (`_FolderLoader`: no symbolic link out of it), as UTF-8, and of a sane size.
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import functools
import hashlib
import importlib
import itertools
import os
import posixpath
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import jinja2
import jinja2.meta
from jinja2.bccache import Bucket
from jinja2.exceptions import SecurityError
from jinja2.loaders import split_template_path
from jinja2.sandbox import ImmutableSandboxedEnvironment, is_internal_attribute, modifies_known_mutable
from jinja2.utils import generate_lorem_ipsum, internalcode, missing

from capidx.compiler import catalog
from capidx.compiler.diagnostics import plural
from capidx.compiler.errors import InvalidError
from capidx.compiler.files import (
    FolderUnreadable,
    TooManyTemplates,
    read_at_most,
    shown,
    version_control_part,
    walk_templates,
)
from capidx.compiler.render import markdown as mdtext
from capidx.compiler.render import views
from capidx.compiler.render.phrases import join_phrases
from capidx.compiler.usercache import owned, private_cache_dir
from capidx.schema.realpath import real_path
from capidx.schema.wording import UTF8_HINT, close_match, not_utf8, said

BUNDLED_PACKAGE = "capidx.templates"


# Environment options that shape the compiled code (so they also name the bytecode cache's files).
_CODE_OPTIONS: dict[str, Any] = {
    "autoescape": False,  # Markdown, not HTML: text is shown verbatim
    "keep_trailing_newline": True,
    "trim_blocks": True,
    "lstrip_blocks": True,
}


MAX_OUTPUT_CHARS = 64 * 1024 * 1024  # per artifact: 5x the largest document of a 20,000-capability catalog
MAX_TEMPLATE_BYTES = 1024 * 1024  # per template file: the bundled ones are a few KB
_MAX_POWER_BITS = 65536  # `**` with integers: a result of at most this many bits
_MAX_LIPSUM_WORDS = 100_000
_PIECES_PER_CHECK = 1024  # the output's size is checked after every so many pieces a template yields


class TemplateFailure(InvalidError):
    """A template could not be loaded, compiled or rendered; the message names file and line."""

    def format_message(self) -> str:
        return f"template error: {clipped(self.message)}"


# Characters of a template error's message said, at most: Jinja's message quotes the name it did not find whole, and
# a template's key of 20 million characters made one line of 20 million on stderr.
MAX_MESSAGE_CHARS = 2_000


def clipped(message: str) -> str:
    """`message`, or its first `MAX_MESSAGE_CHARS` characters and how long it was."""
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    return f"{message[:MAX_MESSAGE_CHARS]}… (the message is {len(message):,} characters long)"


class _Sandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox, plus bounds on the operators that make a huge value from a small template
    (`'x' * 10**9`, `2 ** 10**9`): they fail with a SecurityError before the value is made.

    Every call a template makes goes through `SandboxedEnvironment.call`, which refuses unsafe callables and
    only then hands the call to the context (`_Context.call`); attribute and item access go through the
    sandbox's `getattr`/`getitem`. `user_loader`: the loader of the user's folder, if any."""

    intercepted_binops = frozenset({"*", "**"})
    user_loader: _FolderLoader | None = None

    # capidx's own records (`RECORD_TYPES`) are no function, method, type, frame, generator, string or mutable
    # container, so for them the sandbox's answer is "any name not starting with `_`"; given at once, not
    # through the ten or so checks that establish it per access, which doubled the rendering time of a large
    # catalog (hundreds of thousands of accesses).

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) in RECORD_TYPES and not attribute.startswith("_"):
            try:  # what an environment without the sandbox does (a record has no items to fall back to)
                return getattr(obj, attribute)
            except AttributeError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if type(obj) in RECORD_TYPES:
            return not attr.startswith("_")
        return super().is_safe_attribute(obj, attr, value)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            _check_repetition(left, right)
            _check_repetition(right, left)
        else:
            _check_power(left, right)
        return super().call_binop(context, operator, left, right)


# The catalog's frozen dataclasses and the views' records: plain objects (tests/test_security_templates.py
# checks that the sandbox's own answer for each of their attributes is the one `_Sandbox` gives at once).
RECORD_TYPES: frozenset[type] = frozenset(
    {
        catalog.Source,
        catalog.ImplementationNotes,
        catalog.UseWhen,
        catalog.Capability,
        catalog.Integration,
        catalog.Model,
        catalog.Agent,
        catalog.Vocabulary,
        catalog.CanonicalCapability,
        catalog.Catalog,
        views.Reference,
        views.References,
    }
)


class _Undefined(jinja2.StrictUndefined):
    """Jinja's `StrictUndefined`, whose error for a misspelt attribute or key names the closest one the object has
    (`'… Catalog object' has no attribute 'agnets': did you mean 'agents'?`), as validate does for a misspelt key; a
    misspelt variable, the closest of the variables and globals of the template being rendered (`_RENDERING`)."""

    __slots__ = ()

    @property
    def _undefined_message(self) -> str:
        message: str = super()._undefined_message
        obj, name = self._undefined_obj, self._undefined_name
        if self._undefined_hint or not isinstance(name, str):
            return message
        if obj is missing:  # a variable: those the render was given
            return message + undefined_hint(name, _RENDERING.get({}))
        return message + undefined_hint(name, _names_of(obj), obj)


# The variables and globals of the template being rendered (`get_renderer`), for `_Undefined`'s hint on a variable.
_RENDERING: contextvars.ContextVar[Mapping[str, Any]] = contextvars.ContextVar("capidx_rendering")


def _names_of(obj: Any) -> list[str]:
    """What a template may write after `obj.`: a mapping's keys, else the object's attributes the immutable sandbox
    allows (`ImmutableSandboxedEnvironment.is_safe_attribute`: none starting with `_`, no internal attribute such as
    a generator's `gi_frame`, no method that modifies a known mutable such as a list's `append`)."""
    try:
        if isinstance(obj, Mapping):
            return [key for key in obj if isinstance(key, str)]
        return [
            name
            for name in dir(obj)
            if not (name.startswith("_") or is_internal_attribute(obj, name) or modifies_known_mutable(obj, name))
        ]
    except Exception:  # an object that cannot list itself: no hint
        return []


def undefined_hint(name: str, candidates: Iterable[str], obj: Any = None) -> str:
    """`: did you mean 'agents'?` for a misspelt name (`close_match`, as validate's hints); for a capidx record with
    no close attribute, its attributes (`; attributes: …`); else nothing."""
    names = [candidate for candidate in candidates if candidate != name]  # a macro's caller has it: no hint of it
    if meant := close_match(name, names):
        return f": did you mean '{meant}'?"
    if type(obj) in RECORD_TYPES:
        return f"; attributes: {', '.join(sorted(names))}"
    return ""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_repetition(sequence: Any, times: Any) -> None:
    if isinstance(sequence, str | list | tuple) and _is_int(times) and len(sequence) * times > MAX_OUTPUT_CHARS:
        raise SecurityError(f"a repetition (*) too large for a template (at most {MAX_OUTPUT_CHARS:,} items)")


def _check_power(base: Any, exponent: Any) -> None:
    if not (_is_int(base) and _is_int(exponent) and abs(base) > 1 and exponent > 0):
        return
    if abs(base).bit_length() * exponent > _MAX_POWER_BITS:
        raise SecurityError(
            f"a power (**) too large for a template (the base's bits times the exponent may be {_MAX_POWER_BITS:,} at "
            "most)"
        )


def _lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
    """Jinja's `lipsum`, refusing more than `_MAX_LIPSUM_WORDS` words (its time and size grow with n x max)."""
    if n * max > _MAX_LIPSUM_WORDS:
        raise SecurityError(f"lipsum too large for a template (at most {_MAX_LIPSUM_WORDS:,} words)")
    return str(generate_lorem_ipsum(n=n, html=html, min=min, max=max))


_VCS_REFUSED = "templates are never read from .git, .hg or .svn, where a checkout may keep credentials"


class _FolderLoader(jinja2.FileSystemLoader):
    """The user's templates: regular files inside the folder only, UTF-8, at most MAX_TEMPLATE_BYTES.

    A symbolic link whose target leaves the folder is refused (rather than skipped for the bundled
    template of that name: the user meant something by it), as is any name inside version control's folders, which
    `list_templates` does not walk (`files.VCS_FOLDERS`); nor does it follow symbolic links to folders (Jinja's
    default)."""

    def __init__(self, folder: Path, listed: list[str] | None = None) -> None:
        super().__init__(str(folder))
        self.folder = str(folder)
        self._listed = listed  # the caller's own walk of the folder (`template_listing`), or None: walked when asked

    def list_templates(self) -> list[str]:
        """The listing (`_listing`), made once for the loader's life (one build, or one `folder_reads`): the build
        asks for it for its template names, for its warnings of unused files, and for every file of the folder."""
        if self._listed is None:
            self._listed = self._listing()
        return list(self._listed)

    def _listing(self) -> list[str]:
        """Jinja's listing (every file below the folder, links to folders not followed, by its path in the folder),
        refused for a folder of more than MAX_TEMPLATE_FILES files (`files.TooManyTemplates`: say `paths.templates:
        /`), which it would otherwise walk to the end. Walked without recursion (`files.walk`): Jinja's own walk is
        Python 3.11's `os.walk`, which fails with a RecursionError in a folder nested some 1,000 deep."""
        return template_listing(self.folder)

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        """The template's text, refused (`TemplateFailure`, which stops the build) when it is, or its link leads,
        out of the folder or into version control's folder (`files.version_control_part`): with `paths.templates: .`
        a pull request's `{% include ".git/config" %}` put the token a CI checkout keeps there into the build, which
        listing the templates without `.git` did not stop (a name given literally is read, not listed)."""
        pieces = split_template_path(template)
        filename = posixpath.join(self.folder, *pieces)
        if part := version_control_part(pieces):
            raise TemplateFailure(
                f"{shown(filename)}: refused: inside {part}, version control's folder ({_VCS_REFUSED})"
            )
        if not os.path.lexists(filename):
            raise jinja2.TemplateNotFound(template)
        real_folder, real = real_path(self.folder), real_path(filename)
        if os.path.commonpath([real_folder, real]) != real_folder:
            raise TemplateFailure(
                f"{shown(filename)}: refused: a symbolic link to {real}, outside the templates folder "
                f"{shown(self.folder)} (templates are read only from inside their folder)"
            )
        if part := version_control_part(Path(os.path.relpath(real, real_folder)).parts):
            raise TemplateFailure(
                f"{shown(filename)}: refused: a symbolic link to {real}, inside {part}, version control's folder "
                f"({_VCS_REFUSED})"
            )
        if not os.path.isfile(filename):
            raise TemplateFailure(f"{shown(filename)}: not a regular file (a template must be a file of UTF-8 text)")
        return _read_template(filename), os.path.normpath(filename), lambda: False


def template_listing(top: str | Path, refused: Callable[[FolderUnreadable], object] | None = None) -> list[str]:
    """Every file below a templates folder, by its path in the folder (`files.walk_templates`): the loader's listing,
    and validate's one walk of the folder, which says what would stop the build and hands the listing on."""
    found: set[str] = set()
    for folder, files in walk_templates(top, refused):
        inside = os.path.relpath(folder, top)
        found.update(posixpath.normpath(f"{inside.replace(os.sep, '/')}/{name}") for name in files)
    return sorted(found)


def _read_template(filename: str) -> str:
    try:
        data = read_at_most(filename, MAX_TEMPLATE_BYTES)
    except OSError as exc:
        raise TemplateFailure(f"{shown(filename)}: cannot read the template: {exc.strerror or exc}") from None
    if data is None:
        raise TemplateFailure(f"{shown(filename)}: template larger than {MAX_TEMPLATE_BYTES:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column, message = not_utf8(data, exc)  # worded as a capability document's (UTF-16 named as such)
        raise TemplateFailure(f"{shown(filename)}:{line}:{column}: {said(message, UTF8_HINT)}") from None


def make_environment(
    user_templates: Path | None, cached: bool = True, listed: list[str] | None = None
) -> jinja2.Environment:
    """The build's environment, over the user's templates folder and the bundled ones; `cached`: with compiled code
    kept in capidx's cache folder (validate, which renders nothing, writes none); `listed`: the folder's listing, when
    the caller has walked it already (`template_listing`)."""
    loaders: list[jinja2.BaseLoader] = []
    user_loader = _FolderLoader(user_templates, listed) if user_templates is not None else None
    if user_loader is not None:
        loaders.append(user_loader)
    loaders.append(jinja2.PackageLoader(BUNDLED_PACKAGE, "."))
    env = _Sandbox(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=_Undefined,
        auto_reload=False,
        bytecode_cache=_bytecode_cache() if cached else None,
        **_CODE_OPTIONS,
    )
    env.user_loader = user_loader
    _use_sync_filters(env)
    env.context_class = _Context
    env.filters["commas"] = lambda value: f"{value:,}"
    env.filters["counted"] = plural  # 1 capability, 2 capabilities
    env.filters["phrases"] = join_phrases  # list items as one line of prose
    env.filters.update(mdtext.FILTERS)  # inline, line, cell, block, code: data stays in its Markdown structure
    env.globals.update(
        mark=views.mark,
        marks=views.marks,
        any_deprecated=views.any_deprecated,
        deprecated_legend=views.DEPRECATED_LEGEND,
        agent_records=views.agent_records,
        group_by_category=views.group_by_category,
        record_traits=views.record_traits,
        snippet_limits=views.snippet_limits,
        snippet_caveats=views.snippet_caveats,
        source_traits=views.source_traits,
        lipsum=_lipsum,
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
    The sandbox is not bypassed: templates compiled by `_Sandbox` call `SandboxedEnvironment.call`, which
    refuses unsafe callables and only then hands the call to this method.
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
    """Jinja's own cache of compiled templates, kept between runs, for the bundled templates, in capidx's cache
    folder for this user (`compiler/usercache.py`), beside the compiled schema checks.

    Compiling them takes about 75 ms of CPU, a twentieth of a build that renders the bundled catalog (a build that
    is up to date renders nothing). An entry is keyed by template name and file and checked against the source's
    checksum, so an edited template is compiled afresh; file names carry the Jinja version, `_CODE_OPTIONS` and the
    filter set, which shape the compiled code. An entry that is not this user's file is never loaded (it is code).
    User templates are not cached (one entry per file, ever: temporary folders would pile up).
    A cache that cannot be read or written only means compiling again: it never fails a build.
    """

    def __init__(self, directory: Path, pattern: str) -> None:
        super().__init__(directory=str(directory), pattern=pattern)
        self.bundled = os.path.dirname(os.path.abspath(importlib.import_module(BUNDLED_PACKAGE).__file__ or ""))

    def get_bucket(self, environment: jinja2.Environment, name: str, filename: str | None, source: str) -> Any:
        if filename is None or os.path.dirname(os.path.abspath(filename)) != self.bundled:
            return _Uncached(environment, self.get_cache_key(name, filename), self.get_source_checksum(source))
        return super().get_bucket(environment, name, filename, source)

    def load_bytecode(self, bucket: Any) -> None:
        try:
            with open(os.path.join(self.directory, self.pattern % (bucket.key,)), "rb") as entry:
                if owned(entry.fileno()):
                    bucket.load_bytecode(entry)
        except Exception:  # no entry, a damaged one, one that cannot be read
            bucket.reset()

    def dump_bytecode(self, bucket: Any) -> None:
        if not isinstance(bucket, _Uncached):
            with contextlib.suppress(OSError):
                super().dump_bytecode(bucket)


class _Uncached(Bucket):
    """A user template's bucket: compiled every time, never stored."""


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """In capidx's cache folder for this user (never Jinja's default, a folder in the shared temp directory); none
    where that folder cannot be used."""
    folder = private_cache_dir()
    if folder is None:
        return None
    version = getattr(jinja2, "__version__", "")
    # The compiled code also depends on how each filter takes its arguments (Jinja decides at compile time
    # whether to pass a context): `_use_sync_filters` changes that for some, hence "sync-filters".
    # The sandbox compiles every call and intercepted operator differently, hence "sandbox".
    key = hashlib.sha256(f"{version} {sorted(_CODE_OPTIONS.items())} sync-filters sandbox".encode()).hexdigest()[:16]
    try:
        return _BytecodeCache(folder, f"templates-{key}-%s.cache")
    except ImportError:
        return None


BUILD_TEMPLATE_SUFFIX = ".md.j2"  # what the build renders (the report's HTML template is not a build input)


@functools.cache
def bundled_names() -> tuple[str, ...]:
    """The bundled build templates' names: what the build renders, whatever a user's folder overrides (read once)."""
    return tuple(template_names(jinja2.Environment(loader=jinja2.PackageLoader(BUNDLED_PACKAGE, "."))))


def template_names(env: jinja2.Environment) -> list[str]:
    return sorted(name for name in env.list_templates() if name.endswith(BUILD_TEMPLATE_SUFFIX))


def templates_digest(env: jinja2.Environment, out: Path | None = None) -> list[tuple[str, bytes]]:
    """(name, source bytes) of every build template the loader resolves (overrides win) and of every file the user's
    templates include, import or extend, in turn, for the input digest: an edited partial ('footer.txt') is an input
    as the template naming it is (a bundled template names only bundled ones, all listed). A name computed at render
    time could be any file of the user's folder: then every one listed (version control's are not), but for the build
    directory `out` (with `paths.templates: .` the build's own output would change the next build's digest)."""
    sources, _ = _followed(env, template_names(env), out)
    return [(name, sources[name].encode("utf-8")) for name in sorted(sources)]


def syntax_failures(env: jinja2.Environment) -> list[tuple[str, int | None, str]]:
    """(file, line, message) of each template of the user's folder the build would parse that does not parse: a build
    template or a file one of them includes, imports or extends (`templates_digest`'s walk). What stops the build,
    said by `capidx validate` before one runs (a pre-commit hook runs validate, not the build). A template of the
    folder that replaces none the build renders and that none of those names is not parsed: the build leaves it be."""
    return sorted(_followed(env, bundled_names(), None)[1])


def _followed(
    env: jinja2.Environment, built: Sequence[str], out: Path | None
) -> tuple[dict[str, str], list[tuple[str, int | None, str]]]:
    """The sources of the templates `built` and of every file of the user's they include, import or extend, in turn
    (`templates_digest`), and the user's templates among them that do not parse."""
    assert env.loader is not None
    user = getattr(env, "user_loader", None)
    pending, sources, failures = list(built), {}, []
    every, parsed = False, 0  # whether every file of the user's folder is read; characters parsed
    while pending:
        name = pending.pop()
        if name in sources:
            continue
        try:
            sources[name], filename, _ = env.loader.get_source(env, name)
        except jinja2.TemplateNotFound:  # named but missing: rendering says so
            continue
        except TemplateFailure:  # refused by the loader: a build template fails the build; another, when rendered
            if name in built:
                raise
            continue
        if user is None or not Path(filename).is_relative_to(os.path.normpath(user.folder)):
            continue  # a bundled template names only bundled ones, all listed
        parsed += len(sources[name])
        if parsed > MAX_CHARS_PARSED:  # past it, every file of the folder counts as read, and none more is parsed
            every = True
            continue
        try:
            referenced = set(jinja2.meta.find_referenced_templates(env.parse(sources[name])))
        except jinja2.TemplateSyntaxError as exc:  # rendering says what is wrong with it; validate, before
            failures.append(
                (shown(filename) or name, exc.lineno, f"template syntax error: {clipped(str(exc.message))}")
            )
            continue
        except RecursionError:
            failures.append((shown(filename) or name, None, "template nested too deeply to be read"))
            continue
        except jinja2.TemplateError as exc:
            failures.append((shown(filename) or name, None, f"template error: {clipped(str(exc))}"))
            continue
        if len(sources) + len(referenced) > MAX_NAMES_FOLLOWED:
            every = True
            continue
        every = every or None in referenced
        pending += sorted(str(reference) for reference in referenced - {None} - sources.keys())
    # A name computed at render time may be any file of the folder: each is read, for the digest, and none parsed. The
    # build parses only the one it renders, and a README.md beside the templates is no template: validate said its
    # braces were a syntax error the build never met. Parsing them all cost 1.7 s per MiB, too (20 of 1 MiB: 35 s).
    for name in _every_user_file(user, out) if every else ():
        if name not in sources:
            try:
                sources[name] = env.loader.get_source(env, name)[0]
            except (jinja2.TemplateNotFound, TemplateFailure):  # gone, or refused: rendering says so if it is used
                continue
    return sources, failures


def _every_user_file(user: Any, out: Path | None) -> list[str]:
    """The user folder's files, as template names (version control's are not listed), less the build directory's (by
    where it really is: a link may name it)."""
    folder = real_path(user.folder)
    try:
        inside = os.path.relpath(real_path(out), folder) if out is not None else ".."
    except ValueError:  # another drive
        inside = ".."
    skipped = None if inside == "." or inside.split(os.sep)[0] == ".." else Path(inside).as_posix() + "/"
    return [name for name in user.list_templates() if not (skipped and name.startswith(skipped))]


def get_renderer(env: jinja2.Environment, name: str) -> Callable[..., str]:
    """A function rendering template `name`; load, syntax and render errors become TemplateFailure."""
    try:
        template = env.get_template(name)
    except jinja2.TemplateSyntaxError as exc:
        where = f"{_shown(exc.filename) or exc.name or name}:{exc.lineno}"
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
    make_context, globals_ = environment.context_class, dict(template.globals)
    where = _shown(template.filename) or template.name or name

    def render(**context: Any) -> str:
        parent = {**globals_, **context}
        rendering = _RENDERING.set(parent)
        try:
            try:
                return _bounded_concat(root(make_context(environment, parent, template.name, blocks, globals=globals_)))
            except Exception:
                environment.handle_exception()
        except _OutputTooLarge:
            raise TemplateFailure(
                f"{where}: the output is larger than {MAX_OUTPUT_CHARS:,} characters (a loop that never ends?)"
            ) from None
        except TemplateFailure:  # an {% include %} or {% import %} the loader refused
            raise
        except jinja2.TemplateSyntaxError as exc:  # an {% include %} or {% import %} of a broken template
            raise TemplateFailure(
                f"{_shown(exc.filename) or exc.name}:{exc.lineno}: template syntax error: {exc.message}"
            ) from None
        except RecursionError as exc:
            raise TemplateFailure(
                f"{_template_location(exc, template)}: RecursionError: templates nested too deeply "
                "(a macro, include or import that calls itself without end?)"
            ) from None
        except MemoryError:
            raise TemplateFailure(
                f"{where}: out of memory while rendering (a template that makes a huge value?)"
            ) from None
        except Exception as exc:
            raise TemplateFailure(f"{_template_location(exc, template)}: {type(exc).__name__}: {exc}") from None
        finally:
            _RENDERING.reset(rendering)

    return render


class _OutputTooLarge(Exception):
    """An artifact's text grew past MAX_OUTPUT_CHARS."""


def _bounded_concat(pieces: Iterable[str]) -> str:
    """`"".join(pieces)`, stopping with _OutputTooLarge once the text passes MAX_OUTPUT_CHARS.

    Pieces are joined a batch at a time (a check per piece would cost more than the join), so the text
    may pass the cap by one batch before it stops; a single piece is bounded by what `_Sandbox` allows."""
    iterator = iter(pieces)
    chunks, size = [], 0
    while batch := list(itertools.islice(iterator, _PIECES_PER_CHECK)):
        chunk = "".join(batch)
        size += len(chunk)
        if size > MAX_OUTPUT_CHARS:
            raise _OutputTooLarge
        chunks.append(chunk)
    return "".join(chunks)


def _template_location(exc: BaseException, template: jinja2.Template) -> str:
    """The innermost template frame of the error (Jinja rewrites tracebacks to template lines)."""
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if frame.filename.endswith(".j2") or frame.filename == "<template>"
    ]
    if frames:
        return f"{shown(frames[-1].filename)}:{frames[-1].lineno}"
    return _shown(template.filename) or template.name or "<template>"


def template_file(env: jinja2.Environment, name: str) -> str:
    """The file template `name` is loaded from (the user's override, else the bundled one), as errors name it."""
    try:
        template = env.get_template(name)
    except jinja2.TemplateError:
        return name
    return _shown(template.filename) or name


def _shown(filename: str | None) -> str | None:
    """A template's file as validate names a file (`files.shown`: relative to the working folder when below it), in
    the build's template errors and warnings; Jinja holds the loader's whole path."""
    return shown(filename) if filename else filename


# Templates rendered from the bundled package only, whatever a user's folder holds: HTML whose escaping keeps data
# from becoming script (compiler/render/site_page.py, compiler/report/html.py).
BUNDLED_ONLY: Mapping[str, str] = MappingProxyType(
    {"site/index.html.j2": "the site's page", "report.html.j2": "the HTML report's template"}
)


def override_warnings(env: jinja2.Environment) -> list[str]:
    """Warnings for user template files that change nothing: named like no bundled build template
    (a typo such as `agnet.md.j2`) and included or imported by no user template, with a did-you-mean.

    A file another user template refers to (a macro library, a partial) is used, so it is not warned
    about; when a user template names a template computed at render time, nothing can be told apart
    and nothing is warned about."""
    user = getattr(env, "user_loader", None)
    if user is None:
        return []
    bundled = bundled_names()
    names = [name for name in user.list_templates() if name.endswith(".j2")]
    referenced: set[str] = set()
    parsed = 0
    for name in names:
        try:
            source = user.get_source(env, name)[0]
            parsed += len(source)
            if parsed > MAX_CHARS_PARSED:  # more than any project's templates: what is used cannot be told cheaply
                return []
            found = jinja2.meta.find_referenced_templates(env.parse(source))
            referenced.update(found)  # type: ignore[arg-type]
        except (TemplateFailure, jinja2.TemplateError, RecursionError):
            continue  # reported when the template is used; an unused one is warned about below
    if None in referenced:
        return []
    warnings = []
    for name in names:
        if name in BUNDLED_ONLY:
            warnings.append(
                f"{shown(posixpath.join(user.folder, name))}: {BUNDLED_ONLY[name]} is bundled only and cannot be "
                "overridden (what it escapes is a security property: docs/security.md), so this file is not used"
            )
            continue
        if name in bundled or name in referenced:
            continue
        stems = {template.removesuffix(BUILD_TEMPLATE_SUFFIX): template for template in bundled}
        close = difflib.get_close_matches(name.removesuffix(BUILD_TEMPLATE_SUFFIX), list(stems), n=1, cutoff=0.6)
        hint = f"did you mean '{stems[close[0]]}'?" if close else f"bundled templates: {', '.join(bundled)}"
        warnings.append(
            f"{shown(posixpath.join(user.folder, name))}: overrides no bundled template and no template includes or "
            f"imports it, so it is not used ({hint})"
        )
    return warnings


# `folder_reads` follows at most this many template names; past it, the folder counts as read whole (hostile
# templates of 1 MiB each can name hundreds of thousands, and inject would spend longer than the build).
MAX_NAMES_FOLLOWED = 10_000
# Characters of the user's templates parsed to find what they name (`_followed`, `override_warnings`, `folder_reads`),
# at most: Jinja parses some 1.7 s per MiB, and a folder may hold 10,000 files of 1 MiB (a pull request's identical
# files are one blob in git); past it, every file counts as read and no warning of an unused one is given.
MAX_CHARS_PARSED = 4 * 1024 * 1024


def _unencodable(name: str) -> bool:
    try:
        os.fsencode(name)
    except UnicodeError:  # a lone surrogate, from a Jinja string escape
        return True
    return False


def folder_reads(folder: Path) -> list[Path] | None:
    """The files of the user's templates folder a build may read, existing or not: every template (`*.j2`, the
    bundled names included, as a file of that name would override one) and every name a template includes,
    imports or extends, followed through what those files name in turn; None when that cannot be told (a name
    computed at render time, a template that cannot be read or parsed, a folder too large to list).

    For `capidx inject`, which must not append its block to a file the build reads: a template may include any
    file of its folder (`{% include "notes.md" %}`), so a Markdown name there is not enough to say it is unread,
    nor is a file's sitting in that folder enough to say it is read (the folder may be the project's own)."""
    env = make_environment(folder)
    assert env.loader is not None
    try:
        pending = [name for name in env.list_templates() if name.endswith(".j2")]
    except TooManyTemplates:
        return None
    seen: set[str] = set()
    queued: set[str] = set(pending)  # distinct names waiting in `pending`
    reads: list[Path] = []
    parsed = 0
    while pending:
        name = pending.pop()
        queued.discard(name)
        if name in seen:
            continue
        seen.add(name)
        if "\0" in name or _unencodable(name):  # no file has such a name: the loader finds nothing
            continue
        try:
            reads.append(Path(folder, *split_template_path(name)))  # read if there: refused before it is made
        except jinja2.TemplateNotFound:  # a name going up (`../x`): the loader never reads it
            continue
        try:
            source = env.loader.get_source(env, name)[0]
        except jinja2.TemplateNotFound:  # in neither folder yet: nothing it would include
            continue
        except TemplateFailure:  # a link out of the folder, not a file, too large, not UTF-8: the build stops there
            return None
        parsed += len(source)
        if parsed > MAX_CHARS_PARSED:
            return None
        try:
            referenced = list(jinja2.meta.find_referenced_templates(env.parse(source)))
        except (jinja2.TemplateError, RecursionError):
            return None
        fresh = {reference for reference in referenced if reference is not None} - seen - queued
        if None in referenced or len(seen) + len(queued) + len(fresh) > MAX_NAMES_FOLLOWED:
            return None  # computed at render time, or more names than any project's templates use: read whole
        queued |= fresh
        pending += sorted(fresh)
    return sorted(set(reads))
