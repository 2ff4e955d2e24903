"""Templates are untrusted input (issue #14, finding 2 and part of 9): a fork's pull request can bring a
`templates/` folder that CI builds. They run in Jinja's sandbox, are read only from inside their folder,
and what they can make is bounded; every refusal is a build error (exit 1) naming the template file and line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import built_project, documents, run_cli, snapshot, write_catalog
from jinja2.sandbox import unsafe

from capidx.compiler.render import views
from capidx.compiler.render.environment import TemplateFailure, get_renderer, make_environment, override_warnings

# Each escape runs `os.system("touch MARKER")` when templates are not sandboxed (`{marker}` is filled in).
_SYSTEM = "['__builtins__']['__import__']('os').system('touch {marker}')"
ESCAPES = {
    "a global function (mark)": "{{{{ mark.__globals__" + _SYSTEM + " }}}}",
    "a view helper (refs.cites)": "{{{{ refs.cites.__func__.__globals__" + _SYSTEM + " }}}}",
    "a catalog object": "{{{{ record.__class__.__init__.__globals__" + _SYSTEM + " }}}}",
    "a macro": "{{% macro m() %}}{{% endmacro %}}{{{{ m._func.__globals__" + _SYSTEM + " }}}}",
    "an imported macro module": (
        "{{% import '_macros.md.j2' as lib %}}{{{{ lib.__dict__.values()|first }}}}"
        "{{{{ lib.details._func.__globals__" + _SYSTEM + " }}}}"
    ),
    "self": "{{{{ self.__init__.__globals__" + _SYSTEM + " }}}}",
    "cycler": "{{{{ cycler.__init__.__globals__.os.system('touch {marker}') }}}}",
    "joiner": "{{{{ joiner.__init__.__globals__.os.system('touch {marker}') }}}}",
    "namespace": "{{{{ namespace.__init__.__globals__.os.system('touch {marker}') }}}}",
    "lipsum": "{{{{ lipsum.__globals__" + _SYSTEM + " }}}}",
    "range": "{{{{ range.__globals__" + _SYSTEM + " }}}}",
    "a filter (attr)": "{{{{ (mark|attr('__globals__'))" + _SYSTEM + " }}}}",
    "str.format": "{{{{ '{{0.__globals__[__builtins__]}}'.format(mark) }}}}{{{{ 'x'.__class__ }}}}",
    "a string's class": "{{{{ ''.__class__.__mro__[1].__subclasses__() }}}}",
    "mutating a list": "{{% set found = [] %}}{{{{ found.append(1) }}}}{{{{ found }}}}",
}


def _render(tmp_path: Path, source: str, **variables: Any) -> str:
    folder = tmp_path / "templates"
    folder.mkdir(exist_ok=True)
    (folder / "t.md.j2").write_text(source, "utf-8")
    return get_renderer(make_environment(folder), "t.md.j2")(**variables)


def _views() -> dict[str, Any]:
    from capidx.compiler.catalog import Capability

    record = Capability("a", "Name", "name", "testing", "A description.", True)
    return {"refs": views.References([record]), "record": record}


@pytest.mark.parametrize("source", ESCAPES.values(), ids=list(ESCAPES))
def test_a_template_cannot_reach_python(tmp_path: Path, source: str) -> None:
    marker = tmp_path / "escaped"
    with pytest.raises(TemplateFailure, match=r"t\.md\.j2:1: SecurityError"):
        _render(tmp_path, source.format(marker=marker), **_views())
    assert not marker.exists()


def test_the_renderer_s_fast_calls_stay_behind_the_sandbox(tmp_path: Path) -> None:
    """`_Context.call` (the renderer's shortcut) is reached only through the sandbox's own call check."""
    called: list[str] = []
    danger = unsafe(lambda: called.append("ran"))
    with pytest.raises(TemplateFailure, match=r"t\.md\.j2:2: SecurityError: .* is not safely callable"):
        _render(tmp_path, "{{ fine() }}\n{{ danger() }}", fine=lambda: "ok", danger=danger)
    assert called == []


def test_the_issue_s_escape_fails_the_build_naming_the_template(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    (tmp_path / "templates").mkdir()
    summary = tmp_path / "templates" / "summary.md.j2"  # beside the catalog: picked up without a flag
    summary.write_text("# Summary\n{{ mark.__globals__['__builtins__']['__import__']('os').popen('id').read() }}\n")
    result = run_cli(["build", "-q"], cwd=tmp_path)
    assert result.exit_code == 1
    named = Path("templates", "summary.md.j2")  # relative to the working folder, as validate names a file
    assert f"error: template error: {named}:2: SecurityError" in result.stderr and "__globals__" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "build").exists()


def test_a_template_error_quoting_a_huge_name_is_clipped(tmp_path: Path) -> None:
    """Jinja's message quotes the name it did not find whole: a key of 20 million characters made one line of 20
    million on stderr. A template error is said in 2,000 characters at most, and says how long it was."""
    write_catalog(tmp_path)
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "summary.md.j2").write_text("{{ catalog.agents[0]['a' * 50000] }}\n")
    result = run_cli(["build", "-q"], cwd=tmp_path)
    assert result.exit_code == 1
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error: template error:")]
    assert len(line) < 2_200 and "characters long)" in line, line[:300]


def test_a_template_syntax_error_quoting_a_huge_name_is_clipped_by_validate(tmp_path: Path) -> None:
    """validate says a template's syntax error before a build parses it, in Jinja's words, which quote an unknown
    tag whole: clipped to 2,000 characters and how long it was, as the build's."""
    write_catalog(tmp_path)
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "summary.md.j2").write_text("{% " + "a" * 50_000 + " %}\n")
    result = run_cli(["validate"], cwd=tmp_path)
    assert result.exit_code == 1
    (line,) = [line for line in result.output.splitlines() if "template syntax error" in line]
    assert len(line) < 2_300 and "characters long)" in line, line[:300]


@pytest.mark.parametrize(
    "source",
    ["{{ 'x' * 10**8 }}", "{{ [0] * 10**8 }}", "{{ 10**8 * 'x' }}", "{{ 7 ** 100000 }}", "{{ lipsum(10**6) }}"],
)
def test_values_too_large_for_a_template_are_refused_before_they_are_made(tmp_path: Path, source: str) -> None:
    with pytest.raises(TemplateFailure, match=r"t\.md\.j2:1: SecurityError: .*too large"):
        _render(tmp_path, source)


def test_bounded_values_still_work(tmp_path: Path) -> None:
    assert _render(tmp_path, "{{ '#' * 3 }} {{ 2 ** 10 }} {{ [1] * 2 }} {{ 3 * 4 }} {{ 'ab' * 0 }}|") == (
        "### 1024 [1, 1] 12 |"
    )


def test_range_is_capped_by_the_sandbox(tmp_path: Path) -> None:
    with pytest.raises(TemplateFailure, match=r"t\.md\.j2:2: OverflowError: .*MAX_RANGE"):
        _render(tmp_path, "ok\n{% for i in range(10**9) %}x{% endfor %}")


def test_an_artifact_s_output_is_capped(tmp_path: Path) -> None:
    # 100 x 1,000 pieces of 1,000 characters: 100 MB, more than the cap (nested loops within MAX_RANGE).
    source = "{% for i in range(100) %}{% for j in range(1000) %}{{ piece }}{% endfor %}{% endfor %}"
    with pytest.raises(TemplateFailure, match=r"t\.md\.j2: the output is larger than [\d,]+ characters"):
        _render(tmp_path, source, piece="y" * 1000)


def test_empty_pieces_do_not_end_the_output_early(tmp_path: Path) -> None:
    assert _render(tmp_path, "{% for i in range(5000) %}{{ '' }}{% endfor %}end") == "end"


def test_endless_recursion_is_a_template_error(tmp_path: Path) -> None:
    source = "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}\n{{ f(0) }}"
    with pytest.raises(TemplateFailure, match=r"t\.md\.j2:\d+: RecursionError: templates nested too deeply"):
        _render(tmp_path, source)


def test_running_out_of_memory_is_a_template_error(tmp_path: Path) -> None:
    def exhausted() -> str:
        raise MemoryError

    with pytest.raises(TemplateFailure, match=r"t\.md\.j2: out of memory while rendering"):
        _render(tmp_path, "{{ exhausted() }}", exhausted=exhausted)


def _link_or_skip(link: Path, target: Path) -> None:
    try:
        link.symlink_to(target)
    except OSError:  # pragma: no cover - a file system without symbolic links
        pytest.skip("symbolic links are not available here")


def test_a_template_linked_out_of_its_folder_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0:secret\n")
    write_catalog(tmp_path)
    (tmp_path / "templates").mkdir()
    _link_or_skip(tmp_path / "templates" / "summary.md.j2", secret)
    result = run_cli(["build", "-q"], cwd=tmp_path)
    assert result.exit_code == 1
    assert f"{Path('templates', 'summary.md.j2')}: refused: a symbolic link to {secret}" in result.stderr
    assert "secret" not in result.stdout and "Traceback" not in result.stderr
    assert not (tmp_path / "build").exists()


def test_an_include_through_a_folder_linked_out_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "p.md.j2").write_text("secret")
    folder = tmp_path / "templates"
    folder.mkdir()
    _link_or_skip(folder / "sub", outside)
    with pytest.raises(TemplateFailure, match=r"sub/p\.md\.j2: refused: a symbolic link to .*outside the templates"):
        _render(tmp_path, "{% include 'sub/p.md.j2' %}")
    for name in ("../outside/p.md.j2", str(outside / "p.md.j2"), "/etc/passwd"):  # no `..`, no absolute name
        with pytest.raises(TemplateFailure, match="TemplateNotFound"):
            _render(tmp_path, f"{{% include '{name}' %}}")


_TOKEN = "AUTHORIZATION: basic c2VjcmV0LXRva2Vu"  # what actions/checkout keeps in .git/config


def _checkout(tmp_path: Path) -> None:
    """A project built with `paths.templates: .`, as a CI checkout has it: `.git/config` holding the job's token,
    `.hg` and `.svn` as other version control keeps them."""
    write_catalog(tmp_path)
    (tmp_path / "capidx.yaml").write_text("paths:\n  templates: .\n", encoding="utf-8")
    for folder, name in ((".git", "config"), (".hg", "hgrc"), (".svn", "entries"), ("sub/.git", "config")):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / name).write_text(f'[http]\n\textraheader = "{_TOKEN}"\n', encoding="utf-8")


@pytest.mark.parametrize(
    ("named", "part"),
    [
        ('".git/config"', ".git"),
        ('"./.git/config"', ".git"),
        ('".GIT/config"', ".GIT"),  # the same file where case is ignored (macOS, Windows)
        ('"sub/.git/config"', ".git"),
        ('".hg/hgrc"', ".hg"),
        ('".svn/entries"', ".svn"),
        ('".g" ~ "it/config"', ".git"),  # a name computed at render time
    ],
)
def test_a_template_may_not_read_a_file_of_version_control_s_folder(tmp_path: Path, named: str, part: str) -> None:
    """With `paths.templates: .` a fork's pull request could `{% include ".git/config" %}`: the walk of the templates
    folder passes over `.git`, but a name given is read, not listed, so the token a CI checkout keeps there went into
    summary.md. Any name with a `.git`, `.hg` or `.svn` part is refused: a template error (exit 1) naming the file,
    nothing built, the token nowhere."""
    _checkout(tmp_path)
    (tmp_path / "summary.md.j2").write_text(f"# {{{{ title }}}}\n{{% include {named} %}}\n", encoding="utf-8")

    result = run_cli(["build", "-q"], cwd=tmp_path)

    assert result.exit_code == 1, result.output
    assert f"refused: inside {part}, version control's folder" in result.stderr
    assert "c2VjcmV0LXRva2Vu" not in result.output + result.stderr
    assert not (tmp_path / "build").exists()


@pytest.mark.parametrize("link", ["notes.txt", "parts/config"])
def test_a_link_into_version_control_s_folder_is_refused(tmp_path: Path, link: str) -> None:
    """A link inside the templates folder that leads into `.git` (itself, or through a linked folder `parts`) stays
    inside the folder, so it was read: it is refused as a name in `.git` is."""
    _checkout(tmp_path)
    _link_or_skip(tmp_path / "notes.txt", Path(".git", "config"))
    _link_or_skip(tmp_path / "parts", Path(".git"))
    (tmp_path / "summary.md.j2").write_text(f'# {{{{ title }}}}\n{{% include "{link}" %}}\n', encoding="utf-8")

    result = run_cli(["build", "-q"], cwd=tmp_path)

    assert result.exit_code == 1, result.output
    target = tmp_path / ".git" / "config"
    assert f"error: template error: {Path(link)}: refused: a symbolic link to {target}, inside .git" in result.stderr
    assert "c2VjcmV0LXRva2Vu" not in result.output + result.stderr
    assert not (tmp_path / "build").exists()


def test_version_control_s_folder_in_another_case_is_not_listed_either(tmp_path: Path) -> None:
    """The build reads every `.md.j2` the templates folder lists; one in `.GIT/` (which a file system that ignores
    case opens as `.git/`), listed, was then refused, failing the build over a file it never needed. The walk passes
    over version control's folders in any case, as the loader refuses them."""
    _checkout(tmp_path)
    (tmp_path / ".GIT").mkdir()
    (tmp_path / ".GIT" / "notes.md.j2").write_text("not a template of ours\n", encoding="utf-8")

    result = run_cli(["build", "-q"], cwd=tmp_path)

    assert result.exit_code == 0, result.stderr


def test_a_hidden_name_that_is_not_version_control_s_folder_is_read(tmp_path: Path) -> None:
    """Only a part that is `.git`, `.hg` or `.svn` is refused: `.github/`, `.gitkeep`, `.git-parts/` are read."""
    _checkout(tmp_path)
    for name in (".github/head.md", ".gitkeep", ".git-parts/foot.md"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(f"[{name}]", encoding="utf-8")
    includes = "".join(f'{{% include "{name}" %}}' for name in (".github/head.md", ".gitkeep", ".git-parts/foot.md"))
    (tmp_path / "summary.md.j2").write_text(f"# {{{{ title }}}}\n{includes}\n", encoding="utf-8")

    result = run_cli(["build", "-q"], cwd=tmp_path)

    assert result.exit_code == 0, result.stderr
    summary = (tmp_path / "build" / "summary.md").read_text("utf-8")
    assert "[.github/head.md][.gitkeep][.git-parts/foot.md]" in summary


def test_a_link_inside_the_folder_is_followed(tmp_path: Path) -> None:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "real.md.j2").write_text("inside")
    _link_or_skip(folder / "alias.md.j2", Path("real.md.j2"))
    assert _render(tmp_path, "{% include 'alias.md.j2' %}") == "inside"


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (
            "# Agent\nCaf\xe9 {{ agent.id }}\n".encode("latin-1"),
            "2:4: not valid UTF-8: byte 0xe9 at offset 11 (save the file as UTF-8)",
        ),
        # a Windows editor's "Unicode" is UTF-16 with a byte order mark: said as for a capability document
        ("# Agent {{ agent.id }}\n".encode("utf-16"), "1:1: not valid UTF-8: the file is UTF-16 or UTF-32"),
    ],
    ids=["latin-1", "utf-16"],
)
def test_a_template_that_is_not_utf8_is_a_clear_error(tmp_path: Path, data: bytes, said: str) -> None:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "agent.md.j2").write_bytes(data)
    write_catalog(tmp_path)
    result = run_cli(["build", "-q"], cwd=tmp_path)
    assert result.exit_code == 1
    assert f"error: template error: {Path('templates', 'agent.md.j2')}:{said}" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("template", "artifact", "source"),
    [
        ("summary.md.j2", "summary.md", '{{ "\\ud800" }}\n'),
        ("agent.md.j2", "agents/claude-code.md", '# {{ agent.id }}\n{% include "part.md.j2" %}\n'),
    ],
)
def test_a_lone_surrogate_in_a_template_s_output_is_a_template_error(
    tmp_path: Path, template: str, artifact: str, source: str
) -> None:
    """A Jinja string escape makes a lone surrogate, which UTF-8 cannot encode: the build ended in a
    UnicodeEncodeError's traceback. It is a template error naming the template, the artifact and the line of its
    text (exit 1), also when the surrogate comes from a file the template includes, and the previous build stays."""
    project = built_project(tmp_path)
    before = snapshot(project / "build")
    folder = project / "templates"
    folder.mkdir()
    (folder / template).write_text(source, "utf-8")
    (folder / "part.md.j2").write_text('text {{ "\\udfff" }}\n', "utf-8")
    result = run_cli(["build", "-q"], cwd=project)
    assert result.exit_code == 1
    [error] = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    line = 1 if template == "summary.md.j2" else 2
    assert error.startswith(f"error: template error: {Path('templates', template)}: {artifact}, line {line}, ")
    assert "lone surrogate" in error and "Traceback" not in result.output
    assert snapshot(project / "build") == before


def test_a_template_file_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "templates"
    (folder / "x.md.j2").mkdir(parents=True)
    with pytest.raises(TemplateFailure, match=r"x\.md\.j2: not a regular file"):
        _render(tmp_path, "{% include 'x.md.j2' %}")


def test_a_huge_template_file_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "big.md.j2").write_text("x" * (2 * 1024 * 1024))
    with pytest.raises(TemplateFailure, match=r"big\.md\.j2: template larger than"):
        _render(tmp_path, "{% include 'big.md.j2' %}")


def test_a_misspelled_override_is_warned_about_with_did_you_mean(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "sumary.md.j2").write_text("never used\n")
    result = run_cli(["build"], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert f"warning: {Path('templates', 'sumary.md.j2')}: overrides no bundled template" in result.stderr
    assert "did you mean 'summary.md.j2'?" in result.stderr
    assert run_cli(["build", "-q"], cwd=tmp_path).stderr == ""  # -q: errors only


@pytest.mark.parametrize("configured", [False, True])
def test_a_folder_holding_only_the_sites_page_is_told_the_page_is_not_overridable(
    tmp_path: Path, configured: bool
) -> None:
    """The site's page is bundled only (what it escapes is a security property): a templates folder holding just
    `site/index.html.j2` is a templates folder all the same, and the build says the file is not used, instead of
    passing the folder over in silence."""
    write_catalog(tmp_path)
    folder = tmp_path / ("mine" if configured else "templates")
    (folder / "site").mkdir(parents=True)
    (folder / "site" / "index.html.j2").write_text("<p>OVERRIDDEN {{ 1 }}</p>\n")
    if configured:
        (tmp_path / "capidx.yaml").write_text("paths:\n  templates: mine\n")
    result = run_cli(["build"], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    page = Path(folder.name, "site", "index.html.j2")
    assert f"warning: {page}: the site's page is bundled only and cannot be overridden" in result.stderr
    assert "OVERRIDDEN" not in (tmp_path / "build" / "site" / "index.html").read_text("utf-8")


def test_user_files_that_are_used_are_not_warned_about(tmp_path: Path) -> None:
    folder = tmp_path / "templates"
    (folder / "parts").mkdir(parents=True)
    (folder / "agent.md.j2").write_text("{% import '_mine.md.j2' as mine %}{% include 'parts/head.md.j2' %}")
    (folder / "_mine.md.j2").write_text("{% macro hello() %}hi{% endmacro %}")
    (folder / "parts" / "head.md.j2").write_text("head")
    (folder / "_macros.md.j2").write_text("{% macro details() %}{% endmacro %}")  # a bundled name
    (folder / "README.md").write_text("not a template")
    (folder / "zzz.md.j2").write_text("unused")
    warnings = override_warnings(make_environment(folder))
    assert len(warnings) == 1 and "zzz.md.j2" in warnings[0]
    assert "did you mean" not in warnings[0] and "bundled templates: _macros.md.j2, agent.md.j2" in warnings[0]
    assert override_warnings(make_environment(None)) == []


def test_a_template_named_at_render_time_silences_the_warnings(tmp_path: Path) -> None:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "agent.md.j2").write_text("{% include agent.id ~ '.md.j2' %}")
    (folder / "claude-code.md.j2").write_text("used, for one agent")
    assert override_warnings(make_environment(folder)) == []


def test_bundled_templates_still_render_in_the_sandbox(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    result = run_cli(["build", "-q"], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "build" / "full.md").read_text("utf-8").startswith("# Capability index")
    assert os.listdir(tmp_path / "build" / "agents")


def test_a_templates_folder_too_large_to_be_one_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from capidx.compiler import files
    from capidx.compiler.render import environment as render

    monkeypatch.setattr(files, "MAX_TEMPLATE_FILES", 3)  # instead of making 10,000 files (`paths.templates: /`)
    folder = tmp_path / "templates"
    (folder / "deep" / "er").mkdir(parents=True)
    for index in range(4):
        (folder / "deep" / "er" / f"f{index}.txt").write_text("x")
    with pytest.raises(files.TooManyTemplates, match=r"templates: more than 3 files: not a templates folder"):
        render.templates_digest(render.make_environment(folder))


def test_the_sandbox_s_shortcut_for_capidx_records_gives_the_sandbox_s_own_answers() -> None:
    """`_Sandbox` answers attribute checks for capidx's records at once (speed); the answers must be
    exactly those of Jinja's immutable sandbox, for every attribute of every kind of record."""
    from collections import deque
    from collections.abc import MutableMapping, MutableSequence, MutableSet

    from catalog_factory import ALIASES
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from capidx.compiler.catalog import build_catalog
    from capidx.compiler.render.environment import RECORD_TYPES

    catalog = build_catalog(list(documents().items()), ALIASES)
    records = [catalog, *catalog.agents, *catalog.capabilities]
    records += [item for agent in catalog.agents for item in agent.capabilities]
    records += [source for record in records[len(catalog.agents) + 1 :] for source in getattr(record, "sources", ())]
    records += [views.References([record for agent in catalog.agents for record in agent.capabilities])]
    records += list(records[-1].entries)
    found: dict[type, Any] = {}
    pending = list(records)
    while pending:  # one instance of each record type reachable from the catalog
        record = pending.pop()
        if type(record) in RECORD_TYPES and type(record) not in found:
            found[type(record)] = record
            for name in dir(record):
                value = getattr(record, name)
                pending += value if isinstance(value, tuple | list) else [value]
    assert len(found) >= 10, sorted(kind.__name__ for kind in found)
    ours, jinja = make_environment(None), ImmutableSandboxedEnvironment()
    for kind, record in found.items():
        assert not issubclass(kind, str | bytes | type | MutableMapping | MutableSequence | MutableSet | deque)
        for name in dir(record):
            value = getattr(record, name)
            assert ours.is_safe_attribute(record, name, value) == jinja.is_safe_attribute(record, name, value), name
            if not name.startswith("_"):
                assert ours.getattr(record, name) == jinja.getattr(record, name), name
