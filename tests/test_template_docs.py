"""docs/templates.md tells template authors the truth: every variable each bundled template receives (recorded from a
real build, not listed here), every attribute of the objects they receive, every filter and global the environment
registers and its whitespace settings are named there, and its example override builds."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
import jinja2.defaults
import pytest
from catalog_factory import run_cli, write_catalog

from capidx.compiler.render import environment, plan

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "templates.md").read_text("utf-8")


def _section(heading: str) -> str:
    """The text under `### heading`, up to the next heading."""
    match = re.search(rf"^### {re.escape(heading)}\n(.*?)(?=^#)", DOC + "\n#", re.MULTILINE | re.DOTALL)
    assert match, f"docs/templates.md has no section '### {heading}'"
    return match.group(1)


def _named(name: str, text: str) -> bool:
    return f"`{name}`" in text or f"`{name}(" in text or f"`{name}|" in text or f"`{name}\\|" in text


@pytest.fixture(scope="module")
def received(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    """Template name -> the names of every variable the build passed it, over a whole build of the test catalog."""
    root = tmp_path_factory.mktemp("received")
    write_catalog(root)
    seen: dict[str, set[str]] = {}
    real = plan.get_renderer

    def recording(env: jinja2.Environment, name: str) -> Callable[..., str]:
        render = real(env, name)

        def wrapped(**context: Any) -> str:
            seen.setdefault(name, set()).update(context)
            return render(**context)

        return wrapped

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(plan, "get_renderer", recording)
        result = run_cli(["build", "--out", str(root / "build"), "-q"], cwd=root)
    assert result.exit_code == 0, result.output
    return seen


def test_every_bundled_build_template_is_rendered_and_has_its_section(received: dict[str, set[str]]) -> None:
    bundled = environment.template_names(environment.make_environment(None))
    assert sorted(received) == [name for name in bundled if not name.startswith("_")]
    for name in bundled:
        _section(name)


def test_every_variable_a_template_receives_is_named_in_its_section(received: dict[str, set[str]]) -> None:
    """Named in the template's section, or in the shared table when the section says it gets the shared ones; what
    the shared table says a template is not given, and "No shared variables", are true too."""
    shared = DOC[DOC.index("## The templates and their variables") : DOC.index("### summary.md.j2")]
    rows = [line.split("`")[1] for line in shared.splitlines() if line.startswith("| `")]
    assert rows
    for name, variables in received.items():
        section = _section(name)
        gets_shared = "the shared ones" in section
        for variable in sorted(variables):
            assert _named(variable, section) or (gets_shared and variable in rows), (
                f"docs/templates.md: {name} receives '{variable}', which its section does not name"
            )
        if "No shared variables" in section:
            assert not variables & set(rows), name
        for line in shared.splitlines():
            if f"not given to `{name}`" in line:
                assert line.split("`")[1] not in variables, (name, line)


def _public(record_type: type) -> set[str]:
    """What a template may read from a record: its fields, properties and methods, not the constructors."""
    names = (
        {field.name for field in dataclasses.fields(record_type)} if dataclasses.is_dataclass(record_type) else set()
    )
    for klass in record_type.__mro__[:-1]:
        for name, value in vars(klass).items():
            if not name.startswith("_") and not isinstance(value, classmethod | staticmethod):
                names.add(name)
    return names


@pytest.mark.parametrize("record_type", sorted(environment.RECORD_TYPES, key=lambda kind: kind.__name__))
def test_every_attribute_of_every_record_a_template_receives_is_named(record_type: type) -> None:
    section = _section(record_type.__name__)
    missing = sorted(name for name in _public(record_type) if not _named(name, section))
    assert not missing, f"docs/templates.md, ### {record_type.__name__}: not named: {missing}"


def test_every_filter_and_global_the_environment_registers_is_named() -> None:
    env = environment.make_environment(None)
    ours = sorted(env.filters.keys() - jinja2.defaults.DEFAULT_FILTERS.keys())
    assert {"inline", "line", "cell", "block", "code"} <= set(ours)
    filters = DOC[DOC.index("## Filters and globals") : DOC.index("## Whitespace")]
    assert [name for name in ours if not _named(name, filters)] == []
    assert [name for name in sorted(env.globals) if not _named(name, filters)] == []


def test_the_whitespace_settings_are_the_environments() -> None:
    env = environment.make_environment(None)
    whitespace = DOC[DOC.index("## Whitespace") : DOC.index("## Escaping")]
    for option in ("trim_blocks", "lstrip_blocks", "keep_trailing_newline"):
        value = str(getattr(env, option)).lower()
        assert f"`{option}: {value}`" in whitespace, option
    assert f"`autoescape` is {'on' if env.autoescape else 'off'}" in DOC


def test_the_example_override_builds(tmp_path: Path) -> None:
    example = DOC[DOC.index("## An example override") :]
    source = re.search(r"```jinja\n(.*?)```", example, re.DOTALL)
    assert source
    write_catalog(tmp_path)
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "summary.md.j2").write_text(source.group(1), "utf-8")
    result = run_cli(["build", "--out", str(tmp_path / "build"), "-q"], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    summary = (tmp_path / "build" / "summary.md").read_text("utf-8")
    assert summary.startswith("# ") and "\n- " in summary and "tokens in all" in summary


def test_the_whitespace_example_gives_one_item_per_line() -> None:
    whitespace = DOC[DOC.index("## Whitespace") : DOC.index("## Escaping")]
    source = re.search(r"```jinja\n(.*?)```", whitespace, re.DOTALL)
    assert source
    env = environment.make_environment(None)
    catalog = type("C", (), {"agents": [type("A", (), {"name": "One"})(), type("A", (), {"name": "Two"})()]})()
    assert env.from_string(source.group(1)).render(catalog=catalog) == "- One\n- Two\n"
