"""`capidx build` when things go wrong: every failure leaves the previous build untouched.

Also: template overrides, budgets, encodings, the no-op rebuild, another repository's layout.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from catalog_factory import deny_search, documents, run_cli, snapshot, write_catalog

from capidx.compiler.config import default_config
from capidx.compiler.emit import pipeline as build
from capidx.compiler.emit.madehere import remember
from capidx.compiler.emit.pipeline import run_build
from capidx.compiler.validate import run as validate

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def first_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with a good build; tests copy it so that each starts from the same state."""
    root = tmp_path_factory.mktemp("good")
    write_catalog(root)
    result = run_cli(["build", "--out", str(root / "build"), "-q"], cwd=root)
    assert result.exit_code == 0, result.output
    return root


@pytest.fixture
def project(first_build: Path, tmp_path: Path) -> Path:
    target = tmp_path / "project"
    shutil.copytree(first_build, target)
    remember(target / "build")  # a copy is no build capidx wrote there: taken as the one it wrote
    return target


def _build(project: Path, *args: str) -> object:
    return run_cli(["build", "--out", str(project / "build"), *args], cwd=project)


def test_an_alias_table_this_user_may_not_read_is_reported_over_a_previous_build(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a previous build, the build first compares its inputs with that build's, and asked the alias table
    Path.is_file: for a table this user may not look at (a link into a folder it may not search) that raised the
    PermissionError, and the build ended in a traceback. Validation says why (exit 2); the build is kept.
    Simulated (as if `private` had mode 000): root searches any folder."""
    before = snapshot(project / "build")
    private = project / "agents" / "private"
    private.mkdir()
    (project / "agents" / "aliases.json").rename(private / "aliases.json")
    (project / "agents" / "aliases.json").symlink_to("private/aliases.json")
    deny_search(monkeypatch, private, project / "agents" / "aliases.json")

    result = _build(project, "-q")

    assert result.exit_code == 2, result.output
    assert "aliases.json: permission denied" in result.stderr
    monkeypatch.undo()
    assert snapshot(project / "build") == before


def test_invalid_data_exits_1_and_keeps_the_previous_build(project: Path) -> None:
    before = snapshot(project / "build")
    docs = documents()
    del docs["claude-code"]["capabilities"][0]["available"]
    write_catalog(project, docs)
    result = _build(project)
    assert result.exit_code == 1
    assert "available" in result.stderr
    assert "validation error" in result.stderr
    assert snapshot(project / "build") == before


def test_a_misspelled_optional_key_stops_the_build_instead_of_dropping_its_value(project: Path) -> None:
    before = snapshot(project / "build")
    docs = documents()
    capability = docs["claude-code"]["capabilities"][0]
    capability["terminolgy"] = capability.pop("terminology")
    capability["x-owner"] = "docs team"  # an extension key is let through
    write_catalog(project, docs)
    result = _build(project)
    assert result.exit_code == 1, result.output
    assert "'terminolgy' is not a known key: did you mean 'terminology'?" in result.stderr
    assert "x-owner" not in result.stderr
    assert snapshot(project / "build") == before


def test_a_documents_comment_is_accepted_and_build_only(project: Path) -> None:
    docs = documents()
    docs["claude-code"]["$comment"] = "Editors: keep capabilities in category order"
    write_catalog(project, docs)
    result = _build(project, "-q")
    assert result.exit_code == 0, result.output
    assert "keep capabilities in category order" not in (project / "build" / "full.md").read_text("utf-8")


def test_a_template_typo_fails_naming_file_and_line(project: Path) -> None:
    before = snapshot(project / "build")
    templates = project / "templates"
    templates.mkdir()
    (templates / "summary.md.j2").write_text("# Summary\n\n{{ catalog.agentz }}\n", encoding="utf-8")
    result = _build(project, "--templates", str(templates))
    assert result.exit_code == 1
    assert f"error: template error: {Path('templates', 'summary.md.j2')}:3:" in result.stderr  # as validate names it
    assert "agentz" in result.stderr
    assert snapshot(project / "build") == before


@pytest.mark.parametrize(
    ("template", "name", "hint"),
    [
        ("{% for a in catalog.agnets %}- {{ a.name }}\n{% endfor %}", "agnets", ": did you mean 'agents'?"),
        ("{{ catalog.agents[0].nmae }}", "nmae", ": did you mean 'name'?"),
        (
            "{% for r in catalog.agents[0].capabilities %}{% for s in r.sources %}{{ s.urll }}{% endfor %}{% endfor %}",
            "urll",
            ": did you mean 'url'?",
        ),
        ("{{ catlog.agents }}", "catlog", ": did you mean 'catalog'?"),  # a variable
        ("{{ titel|inline }}", "titel", ": did you mean 'title'?"),
        ("{{ mrak(none) }}", "mrak", ": did you mean 'mark'?"),  # a global
        (  # nothing close: a record's attributes are listed
            "{{ catalog.agents[0].zzzz }}",
            "zzzz",
            "; attributes: aliases, capabilities, documentation, extra, id, integrations, last_updated, models, name, "
            "vendor, version",
        ),
    ],
)
def test_a_misspelt_name_in_a_template_gets_a_did_you_mean(project: Path, template: str, name: str, hint: str) -> None:
    """Jinja says the name is undefined (in its own words, not pinned here); capidx adds, right after, the closest
    name it could be."""
    templates = project / "templates"
    templates.mkdir()
    (templates / "summary.md.j2").write_text(f"# Summary\n{template}\n", encoding="utf-8")
    result = _build(project, "--templates", str(templates), "-q")
    assert result.exit_code == 1, result.output
    assert f"error: template error: {Path('templates', 'summary.md.j2')}:2: UndefinedError: " in result.stderr
    assert f"'{name}'" in result.stderr and result.stderr.count(hint) == 1, result.stderr


def test_a_misspelt_attribute_is_not_told_one_the_sandbox_refuses(project: Path) -> None:
    """`apend` of a list is not told 'did you mean 'append'?': the immutable sandbox refuses `append`, so the hint
    would lead to a SecurityError."""
    templates = project / "templates"
    templates.mkdir()
    (templates / "summary.md.j2").write_text("{{ (catalog.agents|list).apend }}\n", encoding="utf-8")
    result = _build(project, "--templates", str(templates), "-q")
    assert result.exit_code == 1
    assert "'apend'" in result.stderr and "did you mean" not in result.stderr, result.stderr


def test_a_variable_a_macro_cannot_see_is_not_suggested_as_itself(project: Path) -> None:
    """An imported macro sees the globals, not the importing template's variables: `title` undefined there was told
    "did you mean 'title'?", the very name, from the caller's variables."""
    templates = project / "templates"
    templates.mkdir()
    (templates / "mine.md.j2").write_text("{% macro x() %}{{ title }}{% endmacro %}\n", encoding="utf-8")
    (templates / "summary.md.j2").write_text('{% import "mine.md.j2" as m %}{{ m.x() }}\n', encoding="utf-8")
    result = _build(project, "--templates", str(templates), "-q")
    assert result.exit_code == 1, result.output
    assert "'title'" in result.stderr and "did you mean 'title'" not in result.stderr, result.stderr


def test_nothing_close_to_a_misspelt_name_adds_no_guess(project: Path) -> None:
    templates = project / "templates"
    templates.mkdir()
    (templates / "summary.md.j2").write_text("{{ zzqq }}{{ prefix.x }}\n", encoding="utf-8")
    result = _build(project, "--templates", str(templates), "-q")
    assert result.exit_code == 1
    first = result.stderr.rstrip().splitlines()[0]
    assert "UndefinedError: " in first and "'zzqq'" in first
    assert "did you mean" not in result.stderr and "attributes:" not in result.stderr


def test_a_template_syntax_error_names_file_and_line(project: Path) -> None:
    templates = project / "templates"
    templates.mkdir()
    (templates / "category.md.j2").write_text("line one\n{% if %}\n", encoding="utf-8")
    result = _build(project, "--templates", str(templates))
    assert result.exit_code == 1
    assert "category.md.j2:2: template syntax error" in result.stderr


def test_validate_says_the_template_syntax_errors_the_build_would_stop_at(project: Path) -> None:
    """A pre-commit hook runs validate, not the build: a template left with an open tag passed validate and failed the
    build (a blind test). Validate parses what the build parses (an override and what it includes), in the build's
    words, and leaves a broken template nothing renders alone, as the build does."""
    templates = project / "templates"  # beside the project: picked up without a flag
    (templates / "parts").mkdir(parents=True)
    (templates / "category.md.j2").write_text("line one\n{% if %}\n", encoding="utf-8")
    (templates / "summary.md.j2").write_text('# {{ title }}\n{% include "parts/foot.md" %}\n', encoding="utf-8")
    (templates / "parts" / "foot.md").write_text("{{ oops }\n", encoding="utf-8")
    (templates / "unused.md.j2").write_text("{% for x in y %}\n", encoding="utf-8")  # renders nothing
    checked = run_cli(["validate"], cwd=project)
    assert checked.exit_code == 1, checked.output
    said = [line for line in checked.output.splitlines() if "template syntax error" in line]
    assert [line.split(":")[:2] for line in said] == [
        [str(Path("templates", "category.md.j2")), "2"],
        [str(Path("templates", "parts", "foot.md")), "1"],
    ], checked.output
    built = _build(project)
    assert built.exit_code == 1 and "template syntax error" in built.stderr  # what the build stops at, too
    (templates / "category.md.j2").unlink()
    (templates / "parts" / "foot.md").write_text("a footer\n", encoding="utf-8")
    assert run_cli(["validate"], cwd=project).exit_code == 0  # the unused one is left be, as the build leaves it
    assert _build(project).exit_code == 0


def test_a_name_computed_at_render_time_makes_no_file_of_the_folder_a_syntax_error(project: Path) -> None:
    """With `{% include name %}` any file of the folder may be rendered, and the build parses the one it renders:
    validate parsed every file, and a README.md beside the templates failed it (exit 1) while the build passed. A
    file only a computed name may reach is read (an input of the build), not parsed; one named as it is still is."""
    templates = project / "templates"
    templates.mkdir()
    (templates / "summary.md.j2").write_text('{% set n = "foot.md" %}{% include n %}\n', encoding="utf-8")
    (templates / "foot.md").write_text("a footer\n", encoding="utf-8")
    (templates / "README.md").write_text("Overrides: {% like this %}\n", encoding="utf-8")
    checked = run_cli(["validate"], cwd=project)
    assert checked.exit_code == 0, checked.output
    assert "README.md" not in checked.output
    assert _build(project).exit_code == 0
    (templates / "category.md.j2").write_text('{% include "parts/bad.md" %}\n', encoding="utf-8")
    (templates / "parts").mkdir()
    (templates / "parts" / "bad.md").write_text("{{ oops }\n", encoding="utf-8")
    checked = run_cli(["validate"], cwd=project)
    assert checked.exit_code == 1, checked.output
    said = [line.split(":")[:2] for line in checked.output.splitlines() if "template syntax error" in line]
    assert said == [[str(Path("templates", "parts", "bad.md")), "1"]], checked.output


def test_the_templates_parsed_to_find_what_they_name_are_bounded(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Jinja parses some 1.7 s per MiB, and a folder may hold 10,000 templates of 1 MiB (identical files are one blob
    in git): 20 unused ones took the build 35 s, parsed to warn that they are unused, and as many behind a computed
    include as long again, in validate too. Past `MAX_CHARS_PARSED` characters, nothing more is parsed: no file is
    warned about as unused, and every file counts as read."""
    from capidx.compiler.render import environment

    monkeypatch.setattr(environment, "MAX_CHARS_PARSED", 10_000)
    parsed: list[int] = []
    real = environment._Sandbox.parse

    def counted(self: object, source: str, *args: object, **kwargs: object) -> object:
        parsed.append(len(source))
        return real(self, source, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(environment._Sandbox, "parse", counted)
    templates = project / "templates"
    templates.mkdir()
    for number in range(20):
        (templates / f"unused{number}.md.j2").write_text("{{ a }}" * 1_000, encoding="utf-8")
    env = environment.make_environment(templates, cached=False)
    assert environment.override_warnings(env) == []
    assert sum(parsed) <= 10_000 + 7_000, parsed
    parsed.clear()
    (templates / "summary.md.j2").write_text('{% set n = "unused1.md.j2" %}{% include n %}\n', encoding="utf-8")
    env = environment.make_environment(templates, cached=False)
    names = [name for name, _ in environment.templates_digest(env)]
    assert {f"unused{number}.md.j2" for number in range(20)} <= set(names)  # every file an input of the build
    assert sum(parsed) <= 10_000 + 7_000, parsed
    parsed.clear()
    assert environment.syntax_failures(environment.make_environment(templates, cached=False)) == []
    assert 7_000 not in parsed, parsed  # a file only the computed name reaches is not parsed


def test_a_user_template_overrides_the_bundled_one(project: Path) -> None:
    templates = project / "templates"  # beside the project: picked up without a flag
    templates.mkdir()
    (templates / "summary.md.j2").write_text(
        "Custom: {% for a in catalog.agents %}{{ a.id }} {% endfor %}\n", encoding="utf-8"
    )
    result = _build(project)
    assert result.exit_code == 0, result.stderr
    assert (project / "build" / "summary.md").read_text("utf-8") == "Custom: claude-code copilot-cli vscode-copilot\n"
    assert (project / "build" / "full.md").read_text("utf-8").startswith("# Capability index")  # others bundled


def test_an_unknown_encoding_is_a_usage_error(project: Path) -> None:
    before = snapshot(project / "build")
    result = _build(project, "--encoding", "cl100k_base", "--encoding", "no_such_base")
    assert result.exit_code == 2
    assert "unknown tiktoken encoding 'no_such_base'" in result.stderr
    assert snapshot(project / "build") == before
    misspelled = _build(project, "--encoding", "p50k_bse")
    assert misspelled.exit_code == 2
    assert "unknown tiktoken encoding 'p50k_bse' (did you mean 'p50k_base'? known: " in misspelled.stderr
    shortened = _build(project, "--encoding", "p50k")  # as close to p50k_edit: the base one is meant
    assert "unknown tiktoken encoding 'p50k' (did you mean 'p50k_base'? known: " in shortened.stderr


def test_an_encoding_that_cannot_be_downloaded_fails_clearly(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """capidx never downloads: an encoding missing from an empty tiktoken cache stops the build (exit 2) with
    how to provide the file. The proxy (port 9, discard) is a safety net should anything try the network;
    tests/test_adoption_offline.py proves that nothing does."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    before = snapshot(project / "build")
    result = _build(project, "--encoding", "cl100k_base", "--encoding", "o200k_base")
    assert result.exit_code == 2
    assert "tiktoken encoding 'o200k_base' is not in tiktoken's cache" in result.stderr
    assert str(tmp_path / "empty-cache") in result.stderr and "TIKTOKEN_CACHE_DIR=" in result.stderr
    assert snapshot(project / "build") == before


@pytest.mark.parametrize("how", ["folder", "file"])
def test_an_encodings_cache_file_this_user_may_not_read_is_said_to_be_unreadable(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """TIKTOKEN_CACHE_DIR inside a folder this user may not search: Python 3.11's Path.is_file of the encoding's
    file raised the PermissionError, and the build ended in a traceback; a cache file this user may not read did so
    when it was read for its sha256. Said to be unreadable, with the permission needed (exit 2), not "not in the
    cache", which would send the user downloading a file they have. Simulated: root reads any file."""
    import os

    from capidx.compiler.emit.tokens import cached_file, first_blob

    hidden = tmp_path / "hidden"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(hidden / "cache"))
    blob = first_blob("o200k_base")
    assert blob is not None
    cached = cached_file(blob[0])
    assert cached is not None
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"not the encoding")
    if how == "folder":
        deny_search(monkeypatch, hidden)
    else:
        real_open = os.open  # the file is opened by descriptor, without blocking

        def refused(file: object, *args: object, **kwargs: object) -> object:
            if str(file) == str(cached):
                raise PermissionError(13, "Permission denied", str(file))
            return real_open(file, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "open", refused)
    before = snapshot(project / "build")

    result = _build(project, "--encoding", "cl100k_base", "--encoding", "o200k_base")

    assert result.exit_code == 2, result.output
    needed = (
        "the user running capidx needs read permission on the file, and search permission on the folders above it"
        " and, for a link, the folders it leads through"
    )
    said = f"tiktoken encoding 'o200k_base': its file in tiktoken's cache, {cached}, cannot be read: permission denied"
    assert f"error: {said} ({needed})" in result.stderr.splitlines(), result.stderr
    assert "not in tiktoken's cache" not in result.stderr
    monkeypatch.undo()
    assert snapshot(project / "build") == before


def test_a_budget_breach_exits_1_and_still_writes(project: Path) -> None:
    config = project / "capidx.yaml"
    config.write_text("budgets:\n  summary: 10\n  agent: 100\n  full: 100000\n", encoding="utf-8")
    (project / "build").rename(project / "old")  # the breaching build is written anyway
    result = _build(project)
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    summary_tokens = json.loads((project / "build" / "manifest.json").read_text("utf-8"))["budgets"]
    rows = {row["kind"]: row for row in summary_tokens}
    assert not rows["summary"]["ok"] and rows["full"]["ok"]
    tokens = rows["summary"]["tokens"]
    assert f"summary: {tokens:,} tokens > budget 10 (+{100 * (tokens - 10) / 10:.1f}%)" in lines
    agent = rows["agent"]
    largest = agent["uri"].removeprefix("capability-index://")  # as `capidx report` names it
    head, tail = f"agent: {agent['tokens']:,} tokens > budget 100 (+", f"(largest: {largest})"
    assert any(line.startswith(head) and line.endswith(tail) for line in lines)
    assert f"over budget: build written to {project / 'build'} for inspection" in lines
    assert (project / "build" / "summary.md").is_file()
    assert "BREACH" in result.stdout  # as `capidx report` says it

    again = _build(project)  # the same inputs: nothing is written, and the last line must not say it was
    assert again.exit_code == 1
    assert f"over budget: build written to {project / 'build'} for inspection" not in again.stderr
    said = f"over budget: the build in {project / 'build'} is up to date, not written again (kept for inspection)"
    assert said in again.stderr.splitlines(), again.stderr


def test_no_op_rebuild_is_up_to_date_and_writes_nothing(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("the tokenizer must not load on a no-op rebuild")

    def no_validation(*args: object, **kwargs: object) -> None:
        raise AssertionError("unchanged inputs that passed validation need no validation")

    monkeypatch.setattr(build, "TokenCounter", refuse)  # not even a counter is made
    monkeypatch.setattr(validate, "validate_project", no_validation)
    manifest = project / "build" / "manifest.json"
    inode = manifest.stat().st_ino
    result = _build(project)
    assert result.exit_code == 0, result.stderr
    assert "up to date" in result.stdout
    assert "not validated again: see `capidx validate`" in result.stdout  # its warnings are not printed: say where
    assert manifest.stat().st_ino == inode


@pytest.mark.parametrize(
    "change",
    ["misplaced document", "second alias table", "document that is a broken link", "document that is a folder"],
)
def test_an_unchanged_catalog_with_a_new_problem_beside_it_is_not_up_to_date(project: Path, change: str) -> None:
    """What validation finds around the documents it reads (a new agent's document in a misspelled folder, a second
    alias table, a document that cannot be read) changes none of the bytes the quick check digests: the build must
    still fail as `capidx validate` does, not answer "up to date"."""
    agents = project / "agents"
    if change == "misplaced document":
        stray = agents / "gemini-cli" / "capabilites" / "current.json"
        stray.parent.mkdir(parents=True)
        shutil.copyfile(agents / "claude-code" / "capabilities" / "current.json", stray)
    elif change == "second alias table":
        (agents / "aliases.yaml").write_text("aliases:\n  tdd: Hooks\n", encoding="utf-8")
    elif change == "document that is a broken link":
        (agents / "gemini-cli" / "capabilities").mkdir(parents=True)
        (agents / "gemini-cli" / "capabilities" / "current.json").symlink_to("nowhere.json")
    else:
        (agents / "gemini-cli" / "capabilities" / "current.json").mkdir(parents=True)
    before = snapshot(project / "build")
    validated = run_cli(["validate", "-q"], cwd=project)
    assert validated.exit_code in (1, 2), validated.output
    result = _build(project)
    assert (result.exit_code, "up to date" in result.stdout) == (validated.exit_code, False), result.output
    said = "configuration or input error" if result.exit_code == 2 else "validation error"
    assert said in result.stderr
    assert snapshot(project / "build") == before


def test_an_output_folder_that_cannot_be_made_fails_clearly(project: Path) -> None:
    (project / "afile").write_text("not a folder", encoding="utf-8")
    result = run_cli(["build", "--out", str(project / "afile" / "build")], cwd=project)
    assert result.exit_code == 2  # an output that cannot be written is an I/O error, as an unreadable input
    # the file on the way is named: not `File exists` with advice about permissions and free space
    assert f"error: {project / 'afile' / 'build'}: {project / 'afile'} is a file, not a folder." in result.stderr
    assert "writable" not in result.stderr and "Traceback" not in result.stderr


def test_strict_always_validates(project: Path) -> None:
    """The factory data has unverified and stale sources: warnings, which --strict makes errors."""
    result = _build(project, "--strict")
    assert result.exit_code == 1
    assert "never verified" in result.stderr or "unverified" in result.stderr


def test_changed_inputs_with_unchanged_artifacts_reuse_token_counts(project: Path) -> None:
    """A config change that alters no artifact's bytes re-renders but tokenizes nothing."""
    before = snapshot(project / "build")

    def refuse(name: str) -> None:
        raise AssertionError("no artifact changed: nothing to tokenize")

    (project / "capidx.yaml").write_text("budgets:\n  summary: 5000\n", encoding="utf-8")
    config = default_config(project)
    config = config.with_overrides(budgets={"summary": 5000})
    from capidx.compiler.emit.tokens import TokenCounter

    result = run_build(config)
    assert result.exit_code == 0 and not result.up_to_date
    # site/api/index.json states the build's input digest (issue 17): it changes. Nothing else is tokenized again.
    after = snapshot(project / "build")
    changed = {path for path in after if after[path] != before.get(path)}
    assert changed == {"manifest.json", "site/api/index.json"}
    assert result.tokenized == 1

    # Without the site, nothing is tokenized at all: no encoding is even loaded.
    run_build(config.with_overrides(site=False))
    before = snapshot(project / "build")
    config = config.with_overrides(site=False, budgets={"summary": 6000})
    result = run_build(config, counter_factory=lambda enc, known: TokenCounter(enc, known, loader=refuse))
    assert result.exit_code == 0 and not result.up_to_date
    assert result.tokenized == 0 and result.encoders_loaded == ()
    after = snapshot(project / "build")
    assert {path for path in after if after[path] != before.get(path)} == {"manifest.json"}


def test_one_changed_capability_tokenizes_only_changed_artifacts(project: Path) -> None:
    docs = documents()
    docs["copilot-cli"]["capabilities"][3]["description"] = "Reviews staged changes when asked to."
    write_catalog(project, docs)
    result = run_build(default_config(project))
    assert result.exit_code == 0
    total = len(result.manifest["artifacts"])
    assert 0 < result.tokenized < total / 2


def test_out_that_is_not_a_build_directory_is_refused(project: Path) -> None:
    precious = project / "precious"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me", encoding="utf-8")
    result = run_cli(["build", "--out", str(precious)], cwd=project)
    assert result.exit_code == 2
    assert "refusing to replace" in result.stderr
    assert "If it is an earlier capidx build, move out what was added to it (or delete the folder)" in result.stderr
    assert (precious / "notes.txt").read_text("utf-8") == "keep me"


def test_builds_another_repositorys_layout_without_touching_it(tmp_path: Path) -> None:
    other = tmp_path / "other-repo"
    agents = write_catalog(other, agents_dir="data/catalog")
    schema = other / "spec" / "capabilities.schema.json"
    schema.parent.mkdir(parents=True)
    shutil.copy(REPO / "schema" / "capability-schema.json", schema)
    (other / "capidx.yaml").write_text("paths:\n  out: nowhere\n", encoding="utf-8")  # not used: cwd differs
    before = snapshot(other)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "site" / "index"
    result = run_cli(["build", "--agents", str(agents), "--schema", str(schema), "--out", str(out), "-q"], elsewhere)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert snapshot(other) == before
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    assert manifest["catalog"]["agents"] == ["claude-code", "copilot-cli", "vscode-copilot"]
    index = json.loads((out / "index" / "match.json").read_text("utf-8"))
    assert index["aliases"]["memory file"] == "custom-instructions"  # the alias table moved with --agents
    assert list(elsewhere.iterdir()) == []
    nothing = run_cli(["build", "--agents", str(agents), "--no-aliases", "--out", str(tmp_path / "b"), "-q"], elsewhere)
    assert nothing.exit_code == 0
    index = json.loads((tmp_path / "b" / "index" / "match.json").read_text("utf-8"))
    assert "memory file" not in index["aliases"]


def test_fingerprints_of_builds_are_bounded_least_recently_used_first(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One fingerprint is kept per build folder, and a folder that is gone (every temporary build) left its entry for
    ever. Past `MAX_RECORDS` the least recently written or trusted go; nothing but such entries is touched, and a
    build whose entry went is built whole again, not taken as up to date."""
    import os

    from capidx.compiler.emit import madehere

    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setattr(madehere, "MAX_RECORDS", 3)
    assert _build(project, "-q").exit_code == 0  # a whole build: no fingerprint yet in this cache
    folder = cache / "capidx"
    (ours,) = folder.glob("build-*")
    stale = [folder / f"build-{n:064x}" for n in range(4)]
    for age, entry in enumerate(stale):
        entry.write_bytes(b"0" * 64)
        os.utime(entry, (1_000_000 + age, 1_000_000 + age))
    others = [folder / "build-short", folder / "notes.txt", folder / f"build-{9:064x}"]
    others[0].write_text("x")
    others[1].write_text("x")
    others[2].symlink_to(others[1])  # a link with an entry's name is not an entry of ours
    os.utime(ours, (900_000, 900_000))

    assert "up to date" in _build(project).stdout  # trusted: now the most recently used
    assert run_cli(["build", "--out", str(tmp_path / "other"), "-q"], cwd=project).exit_code == 0  # one more: pruned

    kept = sorted(p.name for p in folder.glob("build-*") if not p.is_symlink() and len(p.name) == 70)
    assert len(kept) == 3 and ours.name in kept
    assert [p.exists() for p in stale] == [False, False, False, True]  # the newest stale one, ours and the new one
    assert all(os.path.lexists(p) for p in others)
    os.utime(ours, (1, 1))
    run_cli(["build", "--out", str(tmp_path / "third"), "-q"], cwd=project)
    assert not ours.exists()  # the least recently used went: the build there is no longer taken as up to date
    assert "up to date" not in _build(project).stdout


def test_a_fingerprint_gone_while_the_cache_is_pruned_is_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry listed, then pruned by another build before it was looked at, ended the pruning: the cache was left
    past its bound. It is passed over, and the least recently used of the others still go."""
    import contextlib
    import os
    from collections.abc import Iterator

    from capidx.compiler.emit import madehere

    monkeypatch.setattr(madehere, "MAX_RECORDS", 2)
    entries = [tmp_path / f"build-{n:064x}" for n in range(5)]
    for age, entry in enumerate(entries):
        entry.write_bytes(b"0" * 64)
        os.utime(entry, (1_000_000 + age, 1_000_000 + age))
    listed = os.scandir

    @contextlib.contextmanager
    def then_one_gone(path: Path) -> Iterator[Iterator[os.DirEntry[str]]]:
        with listed(path) as found:
            listing = list(found)
        entries[-1].unlink()  # another build pruned it meanwhile
        yield iter(listing)

    monkeypatch.setattr(madehere.os, "scandir", then_one_gone)
    madehere._prune(tmp_path)

    assert [entry.exists() for entry in entries] == [False, False, True, True, False]
