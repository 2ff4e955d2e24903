"""The renderer's shortcuts around Jinja's per-call work: `_Context.call` (the template's calls) and the
context made once per render from plain dicts. Both must behave as Jinja's own `Context.call` and
`Template.render`: same output, same arguments passed in, same errors naming the template file and line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
import pytest

from capidx.compiler.catalog import Capability
from capidx.compiler.render.environment import TemplateFailure, get_renderer, make_environment

SOURCE = (
    "{% macro twice(x, sep='-') %}{{ x }}{{ sep }}{{ x }}{% endmacro %}"
    "{{ plain(1, 2) }}|{{ named(a=1) }}|{{ with_context() }}|{{ with_eval() }}|{{ with_env() }}"
    "|{{ callable_object() }}|{{ method(3) }}|{{ twice('m') }}|{{ twice('m', sep='+') }}"
    "|{% for i in [1, 2] %}{{ twice(i) }}{{ with_context() }}{% endfor %}"
    "|{% set local = 'L' %}{{ with_context_local() }}|{{ value }}"
)


class _Callable:
    @jinja2.pass_context
    def __call__(self, context: Any) -> str:
        return f"callable:{context['value']}"


class _Holder:
    def method(self, x: int) -> str:
        return f"method:{x}"


def _variables() -> dict[str, Any]:
    return {
        "plain": lambda a, b: a + b,
        "named": lambda a: f"named:{a}",
        "with_context": jinja2.pass_context(lambda context: f"ctx:{context['value']}"),
        "with_context_local": jinja2.pass_context(lambda context: f"local:{context.get('local')}"),
        "with_eval": jinja2.pass_eval_context(lambda eval_ctx: f"eval:{eval_ctx.autoescape}"),
        "with_env": jinja2.pass_environment(lambda env: f"env:{issubclass(env.undefined, jinja2.StrictUndefined)}"),
        "callable_object": _Callable(),
        "method": _Holder().method,
        "value": "V",
    }


def _stock(source: str, **variables: Any) -> str:
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.from_string(source).render(**variables)


def _ours(tmp_path: Path, source: str, **variables: Any) -> str:
    (tmp_path / "t.md.j2").write_text(source, "utf-8")
    return get_renderer(make_environment(tmp_path), "t.md.j2")(**variables)


def test_calls_pass_what_jinja_passes(tmp_path: Path) -> None:
    assert _ours(tmp_path, SOURCE, **_variables()) == _stock(SOURCE, **_variables())


def test_variables_override_globals_and_each_render_starts_afresh(tmp_path: Path) -> None:
    source = "{{ mark }}{% set mark = 'set' %}{{ mark }}"
    (tmp_path / "t.md.j2").write_text(source, "utf-8")
    render = get_renderer(make_environment(tmp_path), "t.md.j2")
    assert render(mark="given") == "givenset"
    assert render(mark="again") == "againset"
    env = make_environment(tmp_path)
    assert get_renderer(env, "t.md.j2")() == env.get_template("t.md.j2").render()  # the global `mark` function


def test_calling_an_undefined_name_fails_with_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(TemplateFailure, match=r"t\.md\.j2:2: UndefinedError: 'nothing' is undefined"):
        _ours(tmp_path, "line one\n{{ nothing(1) }}\n")


def test_an_error_inside_a_called_helper_names_the_template_line(tmp_path: Path) -> None:
    def broken(_: Any) -> str:
        raise ValueError("broken helper")

    with pytest.raises(TemplateFailure, match=r"t\.md\.j2:3: ValueError: broken helper"):
        _ours(tmp_path, "a\nb\n{{ broken(1) }}\n", broken=broken)


def test_a_callable_raising_stop_iteration_gives_undefined(tmp_path: Path) -> None:
    def empty() -> str:
        raise StopIteration

    source = "{{ (empty() is undefined)|string }}"
    assert _ours(tmp_path, source, empty=empty) == _stock(source, empty=empty) == "True"


def test_group_by_category_is_jinja_s_groupby() -> None:
    records = [
        Capability("a", name, name.lower(), category, "d", True)
        for name, category in [("B", "zeta"), ("A", "alpha"), ("C", "zeta"), ("D", "alpha"), ("E", "mid")]
    ]
    body = "{{ category }}:{{ rs|map(attribute='name')|join }};{% endfor %}"
    source = '{% for category, rs in records|groupby("category") %}' + body
    ours = "{% for category, rs in group_by_category(records) %}" + body
    env = make_environment(None)
    expected = env.from_string(source).render(records=records)
    assert env.from_string(ours).render(records=records) == expected == "alpha:AD;mid:E;zeta:BC;"
