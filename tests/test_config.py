"""capidx.yaml: defaults, paths, precedence of flags, and problems reported with line:col."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from capidx.cli import cli
from capidx.compiler.config import (
    Config,
    Staleness,
    check_config_mapping,
    config_from_mapping,
    default_config,
    load_config,
)
from capidx.compiler.validate.run import ValidateArgs, effective_config


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_no_file_means_defaults(tmp_path: Path) -> None:
    config, problems = load_config(None, tmp_path)

    assert problems == []
    assert config.config_file is None
    assert config.agents == tmp_path / "agents"
    assert config.aliases is None  # there is no alias table
    assert config.out == tmp_path / "build"
    assert config.staleness == Staleness(30, 90, None)
    assert config.encodings == ("cl100k_base",)


def test_alias_table_found_in_any_supported_format(tmp_path: Path) -> None:
    write(tmp_path / "agents" / "aliases.yaml", "aliases: {}\n")
    assert default_config(tmp_path).aliases == tmp_path / "agents" / "aliases.yaml"


def test_paths_are_relative_to_the_config_file(tmp_path: Path) -> None:
    config_file = write(tmp_path / "project" / "capidx.yaml", "paths:\n  agents: data\n  out: site\n")
    write(tmp_path / "project" / "data" / "aliases.json", "{}")

    config, problems = load_config(config_file, tmp_path)  # run from elsewhere

    assert problems == []
    assert config.root == tmp_path / "project"
    assert config.agents == tmp_path / "project" / "data"
    assert config.aliases == tmp_path / "project" / "data" / "aliases.json"  # follows the catalog
    assert config.out == tmp_path / "project" / "site"


def test_every_section_is_read(tmp_path: Path) -> None:
    data = {
        "paths": {"aliases": None, "schema": "s.json"},
        "staleness": {"warn_days": 10, "old_days": 20, "error_days": 40},
        "lint": {"min_description_entropy": 1.5},
        "uri_prefix": "caps://",
        "encodings": ["o200k_base", "cl100k_base"],
        "budgets": {"summary": 2000},
        "relationships": {"max_similar": 2},
        "injection": {"max_tokens": 300, "labels": [{"label": "yes", "min_confidence": 0.7}]},
        "serve": {"transport": "http"},
    }
    assert check_config_mapping(data, "capidx.yaml") == []
    config = config_from_mapping(data, tmp_path, tmp_path / "capidx.yaml")
    assert config.aliases is None
    assert config.schema == tmp_path / "s.json"
    assert config.staleness == Staleness(10, 20, 40)
    assert config.min_description_entropy == 1.5
    assert (config.uri_prefix, config.primary_encoding, config.budgets) == ("caps://", "o200k_base", {"summary": 2000})
    assert config.relationships.max_similar == 2
    assert config.injection.max_tokens == 300 and config.injection.labels[0].label == "yes"
    assert config.serve == {"transport": "http"}


def test_an_integer_setting_with_a_fraction_of_zero_is_read_as_an_int(tmp_path: Path) -> None:
    """The schema accepts 500.0 where it says integer (JSON Schema does): read as 500, so no setting is shown
    `500.0`. A setting that is a number keeps what is written."""
    text = (
        "staleness: {warn_days: 10.0, error_days: 40.0}\nbudgets: {summary: 500.0}\n"
        "character_budgets: {memory: 1024.0}\nrelationships: {max_similar: 2.0, similarity_threshold: 1.0}\n"
        "injection: {max_tokens: 300.0, max_snippets: 2.0}\nlint: {min_description_entropy: 2.0}\n"
    )
    config, problems = load_config(write(tmp_path / "capidx.yaml", text), tmp_path)

    assert problems == []
    integers = [config.staleness.warn_days, config.staleness.error_days, config.budgets["summary"]]
    integers += [config.character_budgets["memory"], config.relationships.max_similar]
    integers += [config.injection.max_tokens, config.injection.max_snippets]
    assert integers == [10, 40, 500, 1024, 2, 300, 2] and {type(value) for value in integers} == {int}
    assert type(config.relationships.similarity_threshold) is float and type(config.min_description_entropy) is float


def test_a_float_past_the_exact_integers_is_refused_as_out_of_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`full: 1.0e+300` has no fraction, so JSON Schema counted it an integer, and it was read as an int of 301 digits
    that the manifest and `capidx report` then showed. Past 2**53 - 1, the largest integer every JSON reader holds
    exactly, a float stands for no one integer: refused at its key, with the error an integer out of range gets."""
    monkeypatch.chdir(tmp_path)

    def problem(value: str) -> str:
        write(tmp_path / "capidx.yaml", f"title: x\nbudgets:\n  full: {value}\n")
        result = CliRunner().invoke(cli, ["validate", "-q"])
        assert result.exit_code == 2, result.output
        return next(line for line in result.output.splitlines() if "$.budgets" in line).replace(value, "VALUE")

    written = problem("1.0e+300")
    assert written.startswith("capidx.yaml:3:9: $.budgets.full: ") and str(2**53 - 1) in written
    assert written.replace("1e+300", "VALUE") == problem(str(10**20))


def test_every_integer_setting_has_a_maximum_a_float_holds_exactly() -> None:
    """An integer setting added without a maximum would let `1.0e+300` through again, as a 301-digit integer."""
    from capidx.compiler.validate.schemas import CONFIG_SCHEMA, bundled_schema
    from capidx.schema.yamldata import MAX_EXACT_INTEGER

    found, pending = [], [((), bundled_schema(CONFIG_SCHEMA))]
    while pending:
        parts, node = pending.pop()
        if isinstance(node, dict):
            if "integer" in (node.get("type") if isinstance(node.get("type"), list) else [node.get("type")]):
                found.append((parts, node.get("maximum")))
            pending += [((*parts, key), value) for key, value in node.items()]
    assert len(found) > 30
    assert [parts for parts, maximum in found if maximum is None or maximum > MAX_EXACT_INTEGER] == []


def test_empty_file_means_defaults(tmp_path: Path) -> None:
    config, problems = load_config(write(tmp_path / "capidx.yaml", "# nothing yet\n"), tmp_path)
    assert problems == []
    assert config.staleness == Staleness()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "stalenes:\n  warn_days: 3\n",
            ["capidx.yaml:1:1: $.stalenes: 'stalenes' is not a known key: did you mean 'staleness'?"],
        ),
        (
            "staleness:\n  warn_days: 30\nstalenes:\n  warn_days: 3\n",
            [
                "capidx.yaml:3:1: $.stalenes: 'stalenes' is not a known key: did you mean 'staleness'? (also given) "
                "(keep one of the two)"
            ],
        ),
        (
            "encodings: [cl100k_base, o200k]\n",
            ["capidx.yaml:1:26: $.encodings[1]: unknown tiktoken encoding 'o200k' (did you mean 'o200k_base'? known: "],
        ),
        (
            "paths:\n  agents: a\n  outt: b\n",
            ["capidx.yaml:3:3: $.paths.outt: 'outt' is not a known key: did you mean 'out'?"],
        ),
        ("zzz: 1\n", ["capidx.yaml:1:1: $.zzz: 'zzz' is not a known key (known keys: paths, staleness, lint,"]),
        (  # past a date's range the build failed with a traceback
            "staleness:\n  warn_days: 30\n  old_days: 800000\n",
            ["capidx.yaml:3:13: $.staleness.old_days: 800000 is greater than the maximum of 36500"],
        ),
        (
            "staleness:\n  warn_days: '30'\nencodings: cl100k_base\n",
            [
                "capidx.yaml:2:14: $.staleness.warn_days: expected integer, received string (write 30, without quotes)",
                "capidx.yaml:3:12: $.encodings: expected array, received string",
            ],
        ),
        (
            "budgets:\n  summary: 1,000\n  full: '20,000'\n",  # a thousands separator makes it text
            [
                "capidx.yaml:2:12: $.budgets.summary: expected integer, received string (write 1000, without quotes or "
                "a thousands separator)",
                "capidx.yaml:3:9: $.budgets.full: expected integer, received string (write 20000, without quotes or a "
                "thousands separator)",
            ],
        ),
        (
            "budgets:\n  summary: 1,5\n  full: 1,2,3\n",  # a decimal comma, a list: no thousands ('write 15')
            [
                "capidx.yaml:2:12: $.budgets.summary: expected integer, received string (write a whole number without "
                "quotes, such as 30)",
                "capidx.yaml:3:9: $.budgets.full: expected integer, received string (write a whole number without "
                "quotes, such as 30)",
            ],
        ),
        (
            "budgets:\n  summary: 1e3\nlint:\n  min_description_entropy: 25e-1\n",  # YAML 1.1: text, not numbers
            [
                "capidx.yaml:2:12: $.budgets.summary: expected integer, received string (write 1000, without quotes; "
                "in YAML an exponent such as 1e3 is read as text)",
                "capidx.yaml:4:28: $.lint.min_description_entropy: expected number, received string (write 2.5, "
                "without quotes; in YAML an exponent such as 25e-1 is read as text)",
            ],
        ),
        (
            "budgets:\n  summary: 1e30\nlint:\n  min_description_entropy: 5e-7\n",  # exact digits, never rounded
            [
                "capidx.yaml:2:12: $.budgets.summary: expected integer, received string (write "
                f"1{'0' * 30}, without quotes;",
                "capidx.yaml:4:28: $.lint.min_description_entropy: expected number, received string (write "
                "0.0000005, without quotes;",
            ],
        ),
        *(
            (
                f"lint:\n  min_description_entropy: {huge}\n",  # no number to write (1e-999999999: a gigabyte)
                [
                    "capidx.yaml:2:28: $.lint.min_description_entropy: expected number, received string "
                    "(write a number without quotes, such as 0.5)"
                ],
            )
            for huge in ("1e400", "1e-999999999", "1e-99999999999999999999")
        ),
        *(
            (
                f"lint:\n  min_description_entropy: '{constant}'\n",
                [
                    "capidx.yaml:2:28: $.lint.min_description_entropy: expected number, received string "
                    "(write a number without quotes, such as 0.5)"
                ],
            )
            for constant in ("NaN", "Infinity", "-Infinity")
        ),
        (
            "serve:\n  transport: sse\n",
            ["capidx.yaml:2:14: $.serve.transport: 'sse' is not a valid transport (allowed values: stdio, http)"],
        ),
        ("uri_prefix: Caps\n", ["capidx.yaml:1:13: $.uri_prefix: 'Caps' does not match the pattern"]),
        (
            'title: "two\\nlines"\n',  # the pattern alone does not say what is wrong with the value
            ["capidx.yaml:1:8: $.title: 'two\\x0alines' does not match the pattern"],
        ),
        ("- a\n- b\n", ["capidx.yaml:1:1: $: capidx.yaml must be a mapping of settings"]),
        ("paths: [\n", ["capidx.yaml:2:1: invalid YAML: while parsing a flow"]),
        ("a: 1\na: 2\n", ["capidx.yaml:2:1: $.a: duplicate key 'a'"]),
        (
            "title: A\ntitle: B\nbudgts: {summary: 5}\nencodings: [o200k]\n",  # all in one run, not the first alone
            [
                "capidx.yaml:2:1: $.title: duplicate key 'title'",
                "capidx.yaml:3:1: $.budgts: 'budgts' is not a known key: did you mean 'budgets'?",
                "capidx.yaml:4:13: $.encodings[0]: unknown tiktoken encoding 'o200k' (did you mean 'o200k_base'?",
            ],
        ),
        (
            "injection:\n  labels:\n    - {label: low, min_confidence: 0.1}\n"
            "    - {label: high, min_confidence: 0.9}\n",
            ["capidx.yaml:3:5: $.injection.labels: labels are not ordered by min_confidence"],
        ),
        (
            "title: x\nstaleness:\n\twarn_days: 30\n",  # the parser says 'a character', not which
            [
                "capidx.yaml:3:1: invalid YAML: while scanning for the next token, found character that cannot start "
                "any token (a tab: YAML indents with spaces only)"
            ],
        ),
        (
            "staleness:\n  warn_days: 60\n  old_days: 30\n",
            [
                "capidx.yaml:3:13: $.staleness.old_days: old_days (30) is less than warn_days (60) (old_days is the "
                "stronger warning"
            ],
        ),
    ],
    ids=[
        "unknown-top",
        "unknown-top-beside-the-right-key",
        "unknown-encoding",
        "unknown-nested",
        "unknown-unlike",
        "days-past-a-date",
        "wrong-types",
        "thousands-separator",
        "comma-not-in-thousands",
        "exponent-as-text",
        "exponent-written-exactly",
        "exponent-too-large",
        "exponent-too-small",
        "exponent-beyond-decimal",
        "nan-as-text",
        "infinity-as-text",
        "minus-infinity-as-text",
        "enum",
        "pattern",
        "pattern-line-break",
        "not-mapping",
        "bad-yaml",
        "duplicate-key",
        "duplicate-key-and-the-rest",
        "labels-order",
        "tab",
        "warn-vs-old",
    ],
)
def test_problems_have_positions(tmp_path: Path, text: str, expected: list[str]) -> None:
    config_file = write(tmp_path / "capidx.yaml", text)

    config, problems = load_config(config_file, tmp_path)

    rendered = [f"{Path(p.path).name}{p.as_text()[len(p.path) :]}" for p in problems]
    for line in expected:
        assert any(text.startswith(line) for text in rendered), (line, rendered)
    assert all(problem.code in ("config", "io") for problem in problems)
    assert config == default_config(tmp_path)  # defaults on problems, so callers can report and stop


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('title: ""\n', "1:8: $.title"),
        ("injection:\n  labels:\n    - {label: '', min_confidence: 0}\n", "3:15: $.injection.labels[0].label"),
    ],
    ids=["title", "label"],
)
def test_an_empty_one_line_text_is_one_problem(valid_project: Path, text: str, where: str) -> None:
    """Said once, as "must not be empty": not a second time as a pattern (a regex of control characters) it fails."""
    write(valid_project / "capidx.yaml", text)

    result = CliRunner().invoke(cli, ["validate", "-q"])

    assert result.exit_code == 2, result.output
    assert result.output.splitlines() == [f"capidx.yaml:{where}: must not be empty"]


def test_problems_come_in_the_order_of_the_file(tmp_path: Path) -> None:
    """The schema reports a file's problems in its own order (here: the top level's before a nested one's)."""
    config_file = write(tmp_path / "capidx.yaml", "paths:\n  outt: b\nbudgets:\n  zzz: 3\nSERVE: 1\n")

    _, problems = load_config(config_file, tmp_path)

    assert [(p.line, p.pointer) for p in problems] == [(2, "$.paths.outt"), (4, "$.budgets.zzz"), (5, "$.SERVE")]


def test_with_overrides_ignores_flags_not_given(tmp_path: Path) -> None:
    config = default_config(tmp_path)
    assert config.with_overrides(agents=None, out=None) == config
    assert config.with_overrides(out=tmp_path / "o").out == tmp_path / "o"
    with pytest.raises(TypeError, match="unknown override"):
        config.with_overrides(nope=1)


def _effective(tmp_path: Path, **flags: object) -> Config:
    config, problems = effective_config(ValidateArgs(cwd=tmp_path, **flags))  # type: ignore[arg-type]
    assert problems == []
    return config


def test_flags_beat_the_file_which_beats_defaults(tmp_path: Path) -> None:
    write(
        tmp_path / "capidx.yaml",
        "paths:\n  agents: from-file\n  schema: file-schema.json\nstaleness:\n  error_days: 100\n  warn_days: 5\n",
    )
    write(tmp_path / "from-flag" / "aliases.yml", "aliases: {}\n")

    from_file = _effective(tmp_path)
    assert from_file.agents == tmp_path / "from-file"
    assert from_file.staleness == Staleness(5, 90, 100)

    flagged = _effective(tmp_path, agents=Path("from-flag"), schema=Path("flag.json"), max_age_days=7)
    assert flagged.agents == tmp_path / "from-flag"
    assert flagged.aliases == tmp_path / "from-flag" / "aliases.yml"  # the table follows --agents
    assert flagged.schema == tmp_path / "flag.json"
    assert flagged.staleness == Staleness(5, 90, 7)  # only the flag's field changes

    assert _effective(tmp_path, aliases=Path("x.json")).aliases == tmp_path / "x.json"
    assert _effective(tmp_path, agents=Path("from-flag"), no_aliases=True).aliases is None


def test_a_catalog_moved_by_agents_brings_its_own_alias_table_or_none(tmp_path: Path) -> None:
    """`--agents DIR` means DIR's alias table, or none: never the configured one, which names another catalog's
    capabilities. validate and build agree."""
    from catalog_factory import documents, run_cli, write_catalog

    write_catalog(tmp_path)  # agents/aliases.json names "MCP Servers"
    write(tmp_path / "capidx.yaml", "paths:\n  aliases: agents/aliases.json\n")
    docs = documents()
    for document in docs.values():
        document["capabilities"] = [item for item in document["capabilities"] if item["name"] != "MCP Servers"]
    write_catalog(tmp_path, docs, aliases=None, agents_dir="other")

    assert _effective(tmp_path).aliases == tmp_path / "agents" / "aliases.json"
    assert _effective(tmp_path, agents=Path("other")).aliases is None
    validated = run_cli(["validate", "--agents", "other"], tmp_path)
    assert validated.exit_code == 0, validated.output
    assert "MCP Servers" not in validated.output
    built = run_cli(["build", "--agents", "other", "--out", str(tmp_path / "build"), "-q"], tmp_path)
    assert built.exit_code == 0, built.stderr
    index = json.loads((tmp_path / "build" / "index" / "match.json").read_text("utf-8"))
    assert "mcp" not in json.dumps(index["aliases"])
    # the configured table still applies to the configured catalog, where it fits
    assert run_cli(["validate"], tmp_path).exit_code == 0


def test_an_unknown_encoding_stops_validate_at_its_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "capidx.yaml", "encodings:\n  - cl100k_base\n  - p50k_bse\n")
    monkeypatch.chdir(tmp_path)

    result = CliRunner().invoke(cli, ["validate"])

    assert result.exit_code == 2
    assert result.output.startswith(
        "capidx.yaml:3:5: $.encodings[1]: unknown tiktoken encoding 'p50k_bse' (did you mean 'p50k_base'? known: "
    )


def test_config_errors_stop_validate_with_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "settings" / "capidx.yaml", "staleness:\n  warn_day: 3\n")
    monkeypatch.chdir(tmp_path)

    result = CliRunner().invoke(cli, ["validate", "--config", "settings/capidx.yaml"])

    assert result.exit_code == 2
    assert result.output.splitlines()[0] == (
        "settings/capidx.yaml:2:3: $.staleness.warn_day: 'warn_day' is not a known key: did you mean 'warn_days'?"
    )


@pytest.mark.parametrize("given", ["missing.yaml", "a-folder"])
def test_a_config_that_is_not_a_file_is_one_usage_error_worded_alike_by_every_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    # validate and verify report it in their chosen output format instead (text, JSON, GitHub annotations).
    (tmp_path / "a-folder").mkdir()
    monkeypatch.chdir(tmp_path)
    errors = set()
    for command in (["build"], ["report"], ["inject", "AGENTS.md"], ["serve"]):
        result = CliRunner().invoke(cli, [*command, "--config", given])
        assert result.exit_code == 2, (command, result.output)
        (error,) = [line for line in result.output.splitlines() if given in line]
        errors.add(error)
    assert len(errors) == 1, errors
    assert not (tmp_path / "build").exists() and not (tmp_path / "AGENTS.md").exists()


def _schema_keys(node: dict, prefix: str = "") -> list[str]:
    keys = []
    for name, child in node.get("properties", {}).items():
        keys.append(prefix + name)
        if child.get("type") == "object" and name != "budgets":
            keys += _schema_keys(child, f"{prefix}{name}.")
    return keys


def test_every_key_is_documented() -> None:
    import json

    repo = Path(__file__).resolve().parent.parent
    schema = json.loads((repo / "schema" / "config-schema.json").read_text("utf-8"))
    documentation = (repo / "docs" / "configuration.md").read_text("utf-8")
    missing = [key for key in _schema_keys(schema) if f"`{key}" not in documentation]
    assert missing == []


def test_a_leading_tilde_is_the_home_folder_in_every_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`paths.out: ~/capidx-build` once made a folder named `~` in the project; `a/~` and `~user` stay as written.
    (The home folder is inside the project here: the paths capidx reads must lead there.)"""
    project = tmp_path / "project"
    home = project / "home"
    monkeypatch.setenv("HOME", str(home))
    write(
        project / "capidx.yaml",
        "paths:\n  out: ~/capidx-build\n  agents: ~/catalog\n  aliases: ~/a.json\n  schema: '~'\n  templates: a/~\n",
    )

    config, problems = load_config(None, project)

    assert problems == []
    assert (config.out, config.agents, config.aliases) == (home / "capidx-build", home / "catalog", home / "a.json")
    assert config.schema == home
    assert config.templates == project / "a" / "~"
    assert config.build_label == "home/capidx-build"
    # Flags: the CLI's HomePath expands them (tests/test_home_paths.py).


def test_a_value_with_a_line_break_is_told_to_be_one_line(tmp_path: Path) -> None:
    """A pattern refusing control characters says only 'does not match the pattern ^[^\\u0000-…]+$'."""
    config_file = write(tmp_path / "capidx.yaml", 'title: "two\\nlines"\n')

    _, problems = load_config(config_file, tmp_path)

    assert [problem.hint for problem in problems] == [
        "it holds a line break, a tab or another character that cannot be shown: write it on one line"
    ]


def test_a_huge_encoding_name_is_neither_compared_nor_quoted_in_full(tmp_path: Path) -> None:
    """Any string is allowed where an encoding is named: one of 200,000 characters is reported shortened, with no
    did-you-mean (comparing it with every known name would take seconds)."""
    config_file = write(tmp_path / "capidx.yaml", f"encodings: [{'o200k' * 40_000}]\n")
    _, problems = load_config(config_file, tmp_path)
    [problem] = [p for p in problems if "unknown tiktoken encoding" in p.message]
    assert len(problem.as_text()) < 1_000 and "did you mean" not in problem.as_text()
