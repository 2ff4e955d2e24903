"""The Python helpers templates call instead of doing lookups per cell or per citation, and overriding the
hot `capability` macro.

The helpers exist for speed (a Jinja call or attribute lookup costs microseconds, and documents make
hundreds of thousands of them at scale), so they must say exactly what the template code they replace said.
"""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest
from catalog_factory import run_cli, write_catalog

from capidx.compiler.catalog import Agent, CanonicalCapability, Capability, Source
from capidx.compiler.render.environment import TemplateFailure, get_renderer, make_environment
from capidx.compiler.render.views import References, agent_records, mark, marks

REPO = Path(__file__).resolve().parent.parent


def _agent(agent_id: str) -> Agent:
    return Agent(agent_id, agent_id.title(), "Vendor", "1", "2026-01-01", ())


def _record(agent_id: str, available: bool = True, tier: str | None = None, *sources: Source) -> Capability:
    return Capability(agent_id, "Hooks", "hooks", "automation", "Runs commands.", available, tier=tier, sources=sources)


def test_agent_records_and_marks_follow_the_agents_order_with_gaps() -> None:
    agents = [_agent("a"), _agent("b"), _agent("c")]
    records = (_record("a", tier="pro"), _record("c", available=False))
    capability = CanonicalCapability("hooks", "Hooks", "automation", records)
    pairs = agent_records(capability, agents)
    assert [(agent.id, record) for agent, record in pairs] == [("a", records[0]), ("b", None), ("c", records[1])]
    assert marks(capability, agents) == [mark(capability.record(agent.id)) for agent in agents] == ["✓p", "-", "✗"]


def test_cites_is_the_concatenation_of_cite() -> None:
    first = Source("https://x.example/a", "A", "section", "2026-01-01")
    variant = Source("https://x.example/a", "A", "section", "2026-02-01")
    other = Source("https://x.example/b", "B", "dedicated")
    refs = References([_record("a", True, None, first, other), _record("b", True, None, variant)])
    assert refs.cites((first, other)) == f"[{refs.cite(first)}][{refs.cite(other)}]" == "[1a][2]"
    assert refs.cites((variant,)) == "[1b]"
    assert refs.cites(()) == ""


def test_single_is_the_only_variant_or_none() -> None:
    first = Source("https://x.example/a", "A", "section", "2026-01-01")
    variant = Source("https://x.example/a", "A", "section", "2026-02-01")
    other = Source("https://x.example/b", "B", "dedicated")
    refs = References([_record("a", True, None, first, other), _record("b", True, None, variant)])
    shared, alone = refs.entries
    assert shared.single is None and [source for _, source in shared.variants] == [first, variant]
    assert alone.single is other


def test_the_helpers_are_template_globals() -> None:
    env = make_environment(None)
    capability = CanonicalCapability("hooks", "Hooks", "automation", (_record("b"),))
    template = env.from_string(
        "{% for agent, record in agent_records(capability, agents) %}{{ agent.id }}={{ mark(record) }} {% endfor %}"
        "{{ marks(capability, agents)|join(',') }}"
    )
    assert template.render(capability=capability, agents=[_agent("a"), _agent("b")]) == "a=- b=✓ -,✓"


def test_an_override_of_the_capability_macro_reaches_every_document(tmp_path: Path) -> None:
    """The record section is rendered by one macro in full.md, agents/ and capabilities/: a project's
    `_macros.md.j2` replaces it everywhere, and the bundled documents still find every macro they call."""
    write_catalog(tmp_path)
    templates = tmp_path / "templates"
    templates.mkdir()
    bundled = (REPO / "templates" / "_macros.md.j2").read_text("utf-8")
    marker = "{% macro capability(cap, refs, heading, common=none, patterns=true) %}\n"
    assert marker in bundled
    (templates / "_macros.md.j2").write_text(
        bundled.replace(marker, marker + "OVERRIDDEN {{ cap.agent }}/{{ cap.slug }}\n"), "utf-8"
    )
    result = run_cli(["build", "--out", str(tmp_path / "build"), "-q", "--templates", str(templates)], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    build = tmp_path / "build"
    full = (build / "full.md").read_text("utf-8")
    agent = (build / "agents" / "claude-code.md").read_text("utf-8")
    capability_docs = [path.read_text("utf-8") for path in (build / "capabilities").glob("*.md")]
    assert full.count("OVERRIDDEN ") == sum(doc.count("OVERRIDDEN ") for doc in capability_docs) > 0
    assert "OVERRIDDEN claude-code/" in agent


def test_build_directory_md_names_every_argument_the_macros_take() -> None:
    """An override of `_macros.md.j2` must take every argument the bundled document templates pass: the previous
    release's file, which kept every documented name, failed the build once `agent.md.j2` passed `patterns=false`
    (`macro 'agent_capabilities' takes no keyword argument 'patterns'`). The docs name each argument."""
    import re

    macros = (REPO / "templates" / "_macros.md.j2").read_text("utf-8")
    docs = " ".join((REPO / "docs" / "build-directory.md").read_text("utf-8").split())
    for name, arguments in re.findall(r"\{% macro (\w+)\((.*?)\) -?%\}", macros):
        if name != "extras":  # used inside the file only
            names = ", ".join(argument.split("=")[0].strip() for argument in arguments.split(","))
            assert f"`{name}({names})`" in docs, name


def test_a_typo_in_the_capability_macro_is_still_caught(tmp_path: Path) -> None:
    """StrictUndefined inside the flat macro: a misspelt attribute fails instead of rendering blank."""
    templates = tmp_path / "templates"
    templates.mkdir()
    bundled = (REPO / "templates" / "_macros.md.j2").read_text("utf-8")
    typo = bundled.replace("{{ cap.description|block }}", "{{ cap.descripton|block }}")
    (templates / "_macros.md.j2").write_text(typo, "utf-8")
    env = make_environment(templates)
    render = get_renderer(env, "agent.md.j2")
    agent = Agent("a", "A", "Vendor", "1", "2026-01-01", (_record("a"),))
    with pytest.raises(TemplateFailure, match=r"_macros\.md\.j2:\d+: .*descripton"):
        render(agent=agent, refs=References(agent.capabilities), catalog=None, prefix="", related={}, names={})


def test_synchronous_filters_render_as_jinja_s_own() -> None:
    """The build registers the synchronous functions behind Jinja's async-capable filters: every one of
    them must give what the stock environment gives (the compiled-template cache keys on this too)."""
    source = (
        "{{ items|join(', ', attribute='name') }}|{{ items|map(attribute='n')|sum }}"
        "|{{ items|map(attribute='n')|list }}"
        "|{{ items|selectattr('n', 'gt', 1)|map(attribute='name')|join }}|{{ items|rejectattr('n')|list|length }}"
        "|{{ (items|first).name }}|{{ items|map(attribute='n')|unique|list }}|{{ items|slice(2)|list|length }}"
        "|{% for key, group in items|groupby('n') %}{{ key }}:{{ group|length }};{% endfor %}"
        "|{{ items|map(attribute='n')|select('odd')|list }}|{{ items|map(attribute='n')|reject('odd')|list }}"
    )
    items = [{"name": "a", "n": 1}, {"name": "b", "n": 2}, {"name": "c", "n": 2}, {"name": "d", "n": 0}]
    ours = make_environment(None)
    assert ours.filters["join"] is jinja2.filters.sync_do_join
    stock = jinja2.Environment(undefined=jinja2.StrictUndefined)
    assert ours.from_string(source).render(items=items) == stock.from_string(source).render(items=items)


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        ([], ""),
        (["one phrase"], "one phrase"),
        (["no hooks", "no MCP"], "no hooks; no MCP"),
        (["Review it first.", "Exit code 2 blocks."], "Review it first. Exit code 2 blocks."),
        (["Really?", "a phrase", "Stop!", "end"], "Really? a phrase; Stop! end"),
        (["trailing space. ", "next"], "trailing space. next"),
    ],
)
def test_phrases_joins_list_items_without_doubled_punctuation(items: list[str], expected: str) -> None:
    template = make_environment(None).from_string("{{ items|phrases }}")
    assert template.render(items=items) == expected
