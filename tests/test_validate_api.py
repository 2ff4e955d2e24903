"""`validate_project` as the build uses it, the bundled catalog, and the cost of `capidx validate`."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from capidx.cli import cli
from capidx.compiler.config import default_config, load_config
from capidx.compiler.diagnostics import Diagnostic, ExitCode, exit_code_for
from capidx.compiler.validate import run
from capidx.compiler.validate.run import LoadedDocument, ValidationResult, validate_project

REPO = Path(__file__).resolve().parent.parent
CASES = Path(__file__).parent / "cases" / "validate"
TODAY = date(2026, 1, 15)


def copy_case(case: str, tmp_path: Path) -> Path:
    target = tmp_path / "project"
    shutil.copytree(CASES / case, target, ignore=shutil.ignore_patterns("expected.txt"))
    return target


def test_result_holds_parsed_documents_for_the_build(tmp_path: Path) -> None:
    project = copy_case("valid/full", tmp_path)

    result = validate_project(default_config(project), today=TODAY)

    assert isinstance(result, ValidationResult)
    assert result.ok and result.errors == () and result.warnings == ()
    assert [doc.agent_id for doc in result.documents] == ["alpha", "beta-2"]
    alpha = result.documents[0]
    assert isinstance(alpha, LoadedDocument)
    assert alpha.raw == alpha.path.read_bytes()
    assert alpha.data == json.loads(alpha.raw)
    beta = result.documents[1]
    assert beta.data["agent"]["lastUpdated"] == "2026-01-10T00:00:00Z"  # YAML dates stay strings
    assert result.aliases is not None and result.aliases.agent_id is None
    assert result.aliases.data["aliases"]["tdd"] == "Test Generation"


def test_strict_promotes_warnings(tmp_path: Path) -> None:
    project = copy_case("valid/warnings-grouped", tmp_path)
    config = default_config(project)

    relaxed = validate_project(config, today=TODAY)
    strict = validate_project(config, strict=True, today=TODAY)

    assert relaxed.ok and len(relaxed.warnings) == 7
    assert not strict.ok and len(strict.errors) == 7 and strict.warnings == ()


def test_today_decides_freshness_and_time_alone_never_fails(tmp_path: Path) -> None:
    project = copy_case("valid/full", tmp_path)
    config = default_config(project)

    years_later = validate_project(config, today=date(2031, 1, 1))

    assert years_later.ok  # without error_days, age only warns: a hook cannot break on unchanged data
    assert {d.code for d in years_later.warnings} == {"stale"}


def test_paths_limit_what_is_validated(tmp_path: Path) -> None:
    project = copy_case("valid/full", tmp_path)
    only = project / "agents" / "alpha" / "capabilities" / "current.json"

    result = validate_project(default_config(project), [only], today=TODAY)

    assert [doc.path for doc in result.documents] == [only]
    assert result.aliases is None and result.checked == (only,)


def test_a_named_document_that_renames_an_alias_target_fails_on_the_alias_table(tmp_path: Path) -> None:
    """pre-commit passes only the changed files: renaming a capability in one document must still report
    the alias that pointed at the old name, in the (unnamed) alias table, and nothing else about that table."""
    project = copy_case("valid/full", tmp_path)
    alpha = project / "agents" / "alpha" / "capabilities" / "current.json"
    alpha.write_text(alpha.read_text("utf-8").replace('"name": "Test Generation"', '"name": "Test Writing"'), "utf-8")

    result = validate_project(default_config(project), [alpha], today=TODAY)

    assert [(e.path.endswith("aliases.json"), e.code, bool(e.line)) for e in result.errors] == [
        (True, "alias-target", True)
    ] * 2  # "unit tests" -> "test-generation" and "tdd" -> "Test Generation"
    assert {e.message for e in result.errors} == {
        "alias target 'test-generation' is not the name of any capability",
        "alias target 'Test Generation' is not the name of any capability",
    }
    assert result.checked == (alpha,)  # the table is consulted, not validated as a named file

    untouched = copy_case("valid/full", tmp_path / "again")
    named = untouched / "agents" / "alpha" / "capabilities" / "current.json"
    assert validate_project(default_config(untouched), [named], today=TODAY).ok


def test_an_unnamed_yaml_alias_table_with_a_value_json_cannot_hold_still_has_its_targets_checked(
    tmp_path: Path,
) -> None:
    """The whole catalog's run reads the table with null for that value and checks its other targets: a named
    document alone is told the same of the table, not nothing (the table was not read at all)."""
    project = copy_case("valid/full", tmp_path)
    (project / "agents" / "aliases.json").unlink()
    (project / "agents" / "aliases.yaml").write_text(
        "aliases:\n  pr review: Code Review\n  unit tests: .nan\n  tdd: Test Generation\n", "utf-8"
    )
    alpha = project / "agents" / "alpha" / "capabilities" / "current.json"
    alpha.write_text(alpha.read_text("utf-8").replace('"name": "Test Generation"', '"name": "Test Writing"'), "utf-8")

    result = validate_project(default_config(project), [alpha], today=TODAY)

    assert [(e.code, e.message) for e in result.errors] == [
        ("alias-target", "alias target 'Test Generation' is not the name of any capability")
    ]


def test_an_alias_that_is_an_agents_wording_for_another_capability_warns(tmp_path: Path) -> None:
    """The server reads the alias table before agents' wordings: an alias leading elsewhere than an agent's own
    wording with the same words answers that agent with the alias's capability, so the table's line is warned."""
    project = copy_case("valid/full", tmp_path)
    alpha = project / "agents" / "alpha" / "capabilities" / "current.json"
    data = json.loads(alpha.read_text("utf-8"))
    (tests,) = [c for c in data["capabilities"] if c["name"] == "Test Generation"]
    tests["terminology"] = "PR Review, test drafts"  # 'pr review' is the alias table's phrase for Code Review
    alpha.write_text(json.dumps(data, indent=2), "utf-8")

    result = validate_project(default_config(project), today=TODAY)

    (warning,) = [w for w in result.warnings if w.code == "alias-wording"]
    assert warning.path.endswith("aliases.json") and warning.line == 3
    assert warning.message == (
        "alias 'pr review' leads to 'Code Review', but alpha's wording 'PR Review, test drafts' uses it for "
        "'Test Generation'"
    )
    (review,) = [c for c in data["capabilities"] if c["name"] == "Code Review"]
    review["terminology"], tests["terminology"] = tests["terminology"], "test drafts"  # the wording the alias means
    alpha.write_text(json.dumps(data, indent=2), "utf-8")
    assert not [w for w in validate_project(default_config(project), today=TODAY).warnings if w.code == "alias-wording"]


def test_an_upper_case_alias_is_told_to_be_lower_case_and_a_markdown_file_is_no_document(tmp_path: Path) -> None:
    project = copy_case("valid/full", tmp_path)
    table = project / "agents" / "aliases.json"
    data = json.loads(table.read_text("utf-8"))
    data["aliases"]["Yolo Mode"] = "Code Review"
    table.write_text(json.dumps(data, indent=2), "utf-8")
    (project / "README.md").write_text("# Notes\n\n*not* YAML: *a\n", "utf-8")

    table_errors = validate_project(default_config(project), today=TODAY).errors
    named = validate_project(default_config(project), [project / "README.md"], today=TODAY).errors

    (error,) = table_errors
    assert error.message.startswith("key 'Yolo Mode' does not match the pattern") and error.hint == (
        "use lower case: 'yolo mode'"
    )
    (problem,) = named
    assert problem.message == "not a capability document: capidx reads .json, .yaml and .yml"


@pytest.mark.parametrize(
    ("phrase", "hint"),
    [("Hooks!", "write 'hooks' instead"), ("@Workspace files", "write 'workspace files' instead"), ("!!!", None)],
)
def test_an_alias_with_punctuation_is_told_the_phrase_that_fits(tmp_path: Path, phrase: str, hint: str | None) -> None:
    """'Hooks!' got the pattern alone, while 'Sub-Agents' got 'use lower case': the phrase without its punctuation is
    said when it fits; nothing when nothing is left."""
    project = copy_case("valid/full", tmp_path)
    table = project / "agents" / "aliases.json"
    data = json.loads(table.read_text("utf-8"))
    data["aliases"][phrase] = "Code Review"
    table.write_text(json.dumps(data, indent=2), "utf-8")
    (error,) = validate_project(default_config(project), today=TODAY).errors
    assert error.message.startswith(f"key '{phrase}' does not match the pattern") and error.hint == hint


def test_exit_codes() -> None:
    def make(severity: str, code: str) -> Diagnostic:
        return Diagnostic("f", None, None, "", severity, "m", None, code)  # type: ignore[arg-type]

    assert exit_code_for([]) is ExitCode.OK
    assert exit_code_for([make("warning", "stale")]) is ExitCode.OK
    assert exit_code_for([make("error", "schema"), make("warning", "io")]) is ExitCode.INVALID
    assert exit_code_for([make("error", "schema"), make("error", "io")]) is ExitCode.USAGE


def test_bundled_catalog_is_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    if not any((REPO / "agents").glob("*/capabilities/current.*")):
        pytest.skip("the bundled catalog is not there yet")
    monkeypatch.chdir(REPO)

    result = CliRunner().invoke(cli, ["validate", "-q"])

    assert result.exit_code == 0, result.output
    config, problems = load_config(None, REPO)
    assert not problems
    assert validate_project(config).documents  # and the build gets documents from it


def _validate_in_a_child(project: Path, args: list[str], label: str, watched: set[str]) -> str:
    """Run `capidx validate ARGS` in a fresh interpreter in `project`; print LABEL, which of the `watched`
    top-level packages it imported, and its exit code."""
    script = (
        "import sys\n"
        "from capidx.cli import cli\n"
        "try:\n"
        f"    cli(['validate', *{args!r}])\n"
        "except SystemExit as exit:\n"
        "    code = exit.code\n"
        f"loaded = sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(watched)!r}))\n"
        f"print({label!r}, loaded, code)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", script], cwd=project, capture_output=True, text=True, check=True, timeout=60
    ).stdout


def test_validate_does_not_import_heavy_packages(tmp_path: Path) -> None:
    """mcp costs most of a second, tiktoken and jinja2 are build-only, rfc3987_syntax builds a grammar (~1.3 s)."""
    project = copy_case("invalid/many-errors", tmp_path)
    output = _validate_in_a_child(project, [], "HEAVY", {"mcp", "tiktoken", "jinja2", "rfc3987_syntax"})
    assert "HEAVY [] 1" in output, output


def test_a_valid_catalog_is_validated_without_jsonschema_or_regex(tmp_path: Path) -> None:
    """A valid document is proved valid by the fast check alone (formats included) and useWhen patterns are
    compiled by `re` alone: jsonschema (with `referencing`, ~0.1 s) is imported only to describe errors."""
    project = copy_case("valid/full", tmp_path)
    watched = {"jsonschema", "referencing", "regex"}
    output = _validate_in_a_child(project, ["-q", "--today", "2026-01-20"], "LOADED", watched)
    assert "LOADED [] 0" in output, output


SMALL_SCHEMA_2020 = """\
$schema: https://json-schema.org/draft/2020-12/schema
type: object
required: [agent, capabilities]
properties:
  capabilities:
    type: array
    items:
      type: object
      required: [name]
      properties:
        name: {type: string, minLength: 3}
        homepage: {type: string, format: uri}
"""


def _run_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, schema_text: str | None, beside: str = ""
) -> tuple[int, str]:
    """`validate --schema s.yaml` on a copy of valid/full with one bad homepage; `beside`: d.yaml's text."""
    project = copy_case("valid/full", tmp_path)
    monkeypatch.chdir(project)
    if schema_text is not None:
        (project / "s.yaml").write_text(schema_text)
    if beside:
        (project / "d.yaml").write_text(beside)
    doc = project / "agents" / "alpha" / "capabilities" / "current.json"
    data = json.loads(doc.read_text())
    data["capabilities"][0]["homepage"] = "not a uri"
    doc.write_text(json.dumps(data, indent=2))
    result = CliRunner().invoke(cli, ["validate", "--today", "2026-01-15", "--schema", "s.yaml"])
    return result.exit_code, result.output


def test_user_schema_in_yaml_draft_2020_12(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, output = _run_schema(tmp_path, monkeypatch, SMALL_SCHEMA_2020)

    assert code == 1
    assert "current.json:22:19: $.capabilities[0].homepage: 'not a uri' is not a valid uri" in output
    assert "1 error" in output  # the bundled schema (where category etc. live) is not applied


def test_user_schema_with_unknown_draft_is_checked_as_2020_12(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = SMALL_SCHEMA_2020.replace("https://json-schema.org/draft/2020-12/schema", "https://example.com/my-draft")

    code, output = _run_schema(tmp_path, monkeypatch, text)

    assert code == 1
    assert "s.yaml:1:10: $.$schema: warning: unknown $schema 'https://example.com/my-draft'" in output


def test_missing_user_schema_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, output = _run_schema(tmp_path, monkeypatch, None)

    assert code == 2
    assert "s.yaml: does not exist" in output


@pytest.mark.parametrize(
    ("reference", "missing"),
    [
        ("#/$defs/nope", "'/$defs/nope'"),
        ("#nope", "anchor 'nope'"),
        ("d.yaml#/x", "'/x'"),
        ("#/type/x", "'/type/x'"),  # into a string by no index: referencing's ValueError was a traceback
    ],
)
def test_a_user_schema_ref_to_a_place_that_is_not_there_is_said_once_at_the_ref(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: str, missing: str
) -> None:
    """A `$ref` to a key or an anchor its document lacks was said once per document checked, by jsonschema's private
    wrapper ("the schema cannot be applied: _WrappedReferencingError: PointerToNowhere: ... does not exist within"
    and the whole schema): it is an error of the schema, said once at the `$ref`, before any document is checked."""
    schema = f"type: object\nproperties:\n  agent: {{$ref: '{reference}'}}\n"

    code, output = _run_schema(tmp_path, monkeypatch, schema, beside="$defs: {y: {}}\n")

    assert code == 2
    assert f's.yaml:3:17: $.properties.agent.$ref: $ref "{reference}" points to nothing' in output
    assert f"the schema it names has no {missing}" in output
    assert output.count("points to nothing") == 1 and "current.json" not in output, output


@pytest.mark.parametrize(
    ("keyword", "reference", "kind"),
    [("$ref", "#/required/0", "string"), ("$ref", "#/required", "array"), ("$dynamicRef", "#/required/0", "string")],
)
def test_a_user_schema_ref_to_a_value_that_is_no_schema_is_said_once_at_the_ref(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keyword: str, reference: str, kind: str
) -> None:
    """A `$ref` to a value that is no schema (an item of `required`) failed every document with "the schema cannot be
    applied: AttributeError …": one error at the `$ref`, before any document is checked. So did a `$dynamicRef` whose
    fragment is a JSON pointer, which resolves as a `$ref` does (only an anchor is found at run time)."""
    schema = f"type: object\nrequired: [agent]\nproperties:\n  agent: {{{keyword}: '{reference}'}}\n"

    code, output = _run_schema(tmp_path, monkeypatch, schema)

    assert code == 2
    said = f'$.properties.agent.{keyword}: {keyword} "{reference}" points to a value of type {kind}, which is no schema'
    assert said in output, output
    assert "cannot be applied" not in output and "current.json" not in output, output


def test_a_shared_alias_is_warned_when_only_one_document_is_named(tmp_path: Path) -> None:
    """A pre-commit hook names only the changed document: the other agents' records and the catalog's alias table
    are still compared with, so the alias the index drops is warned where it is written."""
    project = copy_case("valid/alias-shared", tmp_path)
    forge = project / "agents" / "forge-cli" / "capabilities" / "current.json"

    result = validate_project(default_config(project), [forge], today=TODAY)

    shared = [(w.path == str(forge), w.pointer) for w in result.warnings if w.code == "alias-shared"]
    assert shared == [(True, "$.capabilities[0].aliases[0]"), (True, "$.capabilities[0].aliases[1]")]
    assert "the alias table's phrase for 'Doc Writer'" in result.warnings[-1].message


def test_many_claims_of_one_alias_are_warned_each_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A phrase claimed thousands of times (a hostile pull request's file) is compared once per capability, not
    once per pair of claims: every claim of the losing capability gets its warning, naming the kept one. (Each is
    made; a file's warnings past the first 1,000 are only counted, a bound lifted here to see them all.)"""
    monkeypatch.setattr(run, "MAX_SAID_WARNINGS", 100_000)
    project = copy_case("valid/alias-shared", tmp_path)
    forge = project / "agents" / "forge-cli" / "capabilities" / "current.json"
    data = json.loads(forge.read_text("utf-8"))
    data["capabilities"][0]["aliases"] = ["scribe"] * 2000
    forge.write_text(json.dumps(data), encoding="utf-8")

    result = validate_project(default_config(project), [forge], today=TODAY)

    shared = [w for w in result.warnings if w.code == "alias-shared"]
    assert len(shared) == 2000 and all("the index keeps 'Doc Writer'" in w.message for w in shared)


def test_a_configured_alias_table_outside_the_catalog_has_no_rivals(tmp_path: Path) -> None:
    """Two tables side by side are an error in the catalog's top, where capidx looks; a table that paths.aliases names
    elsewhere is read alone, and an unrelated file beside it is not its rival."""
    project = copy_case("valid/alias-shared", tmp_path)
    shared = project / "shared"
    shared.mkdir()
    (project / "agents" / "aliases.json").rename(shared / "aliases.json")
    (shared / "aliases.yaml").write_text("notes: not an alias table capidx reads\n", encoding="utf-8")
    (project / "capidx.yaml").write_text("paths:\n  aliases: shared/aliases.json\n", encoding="utf-8")

    with contextlib.chdir(project):
        result = CliRunner().invoke(cli, ["validate", "-q"])

    assert result.exit_code == 0, result.output
    assert "second alias table" not in result.output


def test_blank_values_are_found_in_the_order_of_the_file(tmp_path: Path) -> None:
    """Each blank string's position is found on one pass through the text: the values come in document order (in
    reverse, each lookup started over, and 100,000 blank items took 45 s)."""
    from capidx.compiler.validate.load import load_file
    from capidx.compiler.validate.textrules import check_blank

    path = tmp_path / "current.json"
    path.write_text(json.dumps({"capabilities": [{"name": "X", "limitations": [" "] * 300, "notes": ""}]}, indent=1))
    source, _ = load_file(path)
    found = check_blank(source)
    lines = [problem.line for problem in found]
    assert len(found) == 301 and lines == sorted(lines)


def test_capidx_yaml_named_as_the_hook_names_it_is_checked_as_the_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pre-commit hook passes capidx.yaml when a commit changes it: it is the configuration in force, checked as
    such (a misspelled key fails), never read as a capability document; another capidx.yaml is said to be one."""
    import re

    import yaml

    project = copy_case("valid/full", tmp_path)
    monkeypatch.chdir(project)
    (project / "capidx.yaml").write_text("budgets:\n  summary: 50000\n", "utf-8")
    checked = CliRunner().invoke(cli, ["validate", "capidx.yaml"])
    assert checked.exit_code == 0, checked.output
    assert "missing required key" not in checked.output and "not a known key" not in checked.output
    assert checked.output.splitlines()[-1] == "1 file valid"  # it said "0 files valid" of the file it checked

    (project / "capidx.yaml").write_text("budgts:\n  summary: 50000\n", "utf-8")
    misspelled = CliRunner().invoke(cli, ["validate", "capidx.yaml"])
    assert misspelled.exit_code == 2 and "did you mean 'budgets'?" in misspelled.output

    (project / "capidx.yaml").write_text("budgets:\n  summary: 50000\n", "utf-8")
    (project / "other").mkdir()
    (project / "other" / "capidx.yaml").write_text("budgets: {}\n", "utf-8")
    other = CliRunner().invoke(cli, ["validate", "other/capidx.yaml"])
    assert other.exit_code == 2
    assert "a capidx configuration, not a capability document" in other.output
    assert "--config other/capidx.yaml" in other.output

    (hook,) = [h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text("utf-8")) if "files" in h]
    files = re.compile(hook["files"])
    assert hook["require_serial"] is True  # one run: checks across files, one summary (not one per process)
    assert files.search("capidx.yaml") and files.search("agents/a/capabilities/current.json")
    assert not files.search("docs/examples/capidx.yml") and not files.search("tools/capidx.yaml")
