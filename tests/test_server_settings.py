"""`capidx serve` settings: flags > environment > capidx.yaml > defaults, and every way to get one wrong."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from capidx.cli import cli
from capidx.server.settings import DEFAULT_EXPOSE, MAX_IDLE_TIMEOUT, NAMES, SettingsError, resolve_settings


def settings(flags: dict | None = None, env: dict | None = None, cwd: Path = Path("/work"), config: Path | None = None):
    return resolve_settings(flags or {}, env or {}, cwd, config)


def problems(**kwargs) -> tuple[str, ...]:
    with pytest.raises(SettingsError) as caught:
        settings(**kwargs)
    return caught.value.problems


def test_defaults(tmp_path: Path) -> None:
    s = settings(cwd=tmp_path)
    assert s.build == tmp_path / "build"
    assert (s.resources, s.expose, s.index_tool, s.reload) == (True, DEFAULT_EXPOSE, False, True)
    assert "full" not in s.expose
    assert (s.transport, s.host, s.port) == ("stdio", "127.0.0.1", 8000)
    assert set(s.sources.values()) == {"default"}


def test_flags_beat_environment_beat_file_beat_defaults(tmp_path: Path) -> None:
    (tmp_path / "capidx.yaml").write_text(
        "paths:\n  out: site/build\nserve:\n  expose: [summary]\n  port: 9000\n  transport: http\n  reload: false\n",
        encoding="utf-8",
    )
    env = {"CAPIDX_EXPOSE": "stats, full", "CAPIDX_PORT": "9100"}
    s = settings({"expose": "agents"}, env, tmp_path)
    assert s.expose == ("agents",) and s.sources["expose"] == "flag --expose"
    assert s.port == 9100 and s.sources["port"] == "env CAPIDX_PORT"
    assert s.transport == "http" and s.sources["transport"].endswith("(serve.transport)")
    assert s.reload is False
    assert s.build == tmp_path / "site" / "build" and s.sources["build"].endswith("(paths.out)")
    assert settings(env=env, cwd=tmp_path).expose == ("stats", "full")
    assert settings(cwd=tmp_path).expose == ("summary",)


def test_serve_build_beats_paths_out_and_is_relative_to_the_file(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    config = project / "capidx.yaml"
    config.write_text("paths: {out: out}\nserve: {build: served}\n", encoding="utf-8")
    s = settings(cwd=tmp_path, config=config)
    assert s.build == project / "served"
    assert settings({"build": "x"}, cwd=tmp_path, config=config).build == tmp_path / "x"
    assert settings(env={"CAPIDX_BUILD": "/abs"}, cwd=tmp_path, config=config).build == Path("/abs")


def test_a_config_without_paths_out_serves_the_build_beside_it(tmp_path: Path) -> None:
    """`capidx build --config tools/capidx/capidx.yaml` writes tools/capidx/build when the file names no paths.out:
    serve given that file serves that build, not ./build of the folder it runs in (a monorepo's top)."""
    project = tmp_path / "tools" / "capidx"
    project.mkdir(parents=True)
    config = project / "capidx.yaml"
    config.write_text("title: Ours\n", encoding="utf-8")
    s = settings(cwd=tmp_path, config=config)
    assert s.build == project / "build" and s.sources["build"] == "default"
    assert settings({"build": "x"}, cwd=tmp_path, config=config).build == tmp_path / "x"  # a flag: from the cwd


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("CAPIDX_EXPOSE", "summary,fulll", "CAPIDX_EXPOSE: unknown resource 'fulll' (did you mean 'full'?)"),
        ("CAPIDX_EXPOSE", "summry", "did you mean 'summary'?"),
        ("CAPIDX_RESOURCES", "maybe", "CAPIDX_RESOURCES: expected true/false, 1/0 or yes/no, got 'maybe'"),
        ("CAPIDX_INDEX_TOOL", "2", "CAPIDX_INDEX_TOOL: expected true/false"),
        ("CAPIDX_RELOAD", "nope", "CAPIDX_RELOAD: expected true/false"),
        ("CAPIDX_TRANSPORT", "htp", "CAPIDX_TRANSPORT: unknown transport 'htp' (did you mean 'http'?)"),
        ("CAPIDX_PORT", "80a", "CAPIDX_PORT: expected a port number 0-65535, got '80a'"),
        ("CAPIDX_PORT", "70000", "CAPIDX_PORT: expected a port number 0-65535, got 70000"),
        ("CAPIDX_HOST", "a b", "CAPIDX_HOST: expected a host name or IP address"),
        # a timer of 10**400 seconds failed every connection with OverflowError
        ("CAPIDX_IDLE_TIMEOUT", "1" + "0" * 400, "CAPIDX_IDLE_TIMEOUT: expected at most 86,400 seconds"),
    ],
)
def test_invalid_environment_values_name_the_variable(variable: str, value: str, message: str) -> None:
    (problem,) = problems(env={variable: value})
    assert message in problem


@pytest.mark.parametrize("value", ["true", "1", "yes", "YES", "on"])
def test_true_spellings(value: str) -> None:
    assert settings(env={"CAPIDX_INDEX_TOOL": value}).index_tool is True


@pytest.mark.parametrize("value", ["false", "0", "no", "Off"])
def test_false_spellings(value: str) -> None:
    assert settings(env={"CAPIDX_RESOURCES": value}).resources is False


def test_empty_variables_count_as_unset() -> None:
    assert settings(env={"CAPIDX_EXPOSE": "", "CAPIDX_PORT": " "}).sources["expose"] == "default"


def test_a_misspelled_capidx_variable_is_a_problem_not_ignored() -> None:
    """CAPIDX_RELOD=0 left reload on without a word; a CAPIDX_ variable far from every setting (another tool's, a
    test switch) is none of capidx serve's business."""
    assert problems(env={"CAPIDX_RELOD": "0"}) == ("CAPIDX_RELOD: not a capidx setting (did you mean CAPIDX_RELOAD?)",)
    assert settings(env={"CAPIDX_REQUIRE_BROWSER": "1", "CAPIDX_RELOD": ""}).reload is True  # unset when empty


def test_every_problem_is_reported_at_once() -> None:
    found = problems(env={"CAPIDX_PORT": "x", "CAPIDX_RESOURCES": "y"}, flags={"expose": "nope"})
    assert len(found) == 3
    assert any(p.startswith("--expose: unknown resource 'nope'") for p in found)


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        (
            "serve:\n  expose: [summary, fulll]\n",
            ":2:21: $.serve.expose[1]: 'fulll' is not a valid expose (did you mean 'full'?)",
        ),
        (
            "serve:\n  exposee: [summary]\n",
            ":2:3: $.serve.exposee: 'exposee' is not a known key: did you mean 'expose'?",
        ),
        ("serve:\n  port: high\n", ":2:9: $.serve.port: expected integer, received string"),
        ("serve:\n  resources: maybe\n", ":2:14: $.serve.resources: expected boolean"),
        ("serve:\n  idle_timeout: 100000000\n", ":2:17: $.serve.idle_timeout: 100000000 is greater than the maximum"),
        ("serve:\n  expose: [summary, summary]\n", "$.serve.expose: items must be unique ('summary' appears more"),
        ("serve: [\n", "invalid YAML"),
        # a line break quoted is written as every command writes it (`visible`), not as repr's \n
        ('serve:\n  expose: ["a\\nb"]\n', ":2:12: $.serve.expose[0]: 'a\\x0ab' is not a valid expose"),
    ],
)
def test_invalid_file_values_name_file_line_and_column(tmp_path: Path, yaml_text: str, message: str) -> None:
    (tmp_path / "capidx.yaml").write_text(yaml_text, encoding="utf-8")
    (problem,) = problems(cwd=tmp_path)
    assert problem.startswith("capidx.yaml:")  # named as validate names it: relative to the working folder
    assert message in problem


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        (
            "serve:\n  transport: http\n  host: 0.0.0.0\n",
            ":3:9: $.serve.host: 0.0.0.0 is not a loopback address",
        ),
        (
            "serve:\n  expose: [agents]\n  index_tool: true\n",
            ":3:15: $.serve.index_tool: get_capability_index would have nothing to return",
        ),
    ],
)
def test_combinations_found_after_merging_name_the_file_line_and_column(
    tmp_path: Path, yaml_text: str, message: str
) -> None:
    (tmp_path / "capidx.yaml").write_text(yaml_text, encoding="utf-8")
    (problem,) = problems(cwd=tmp_path)
    assert problem.startswith("capidx.yaml" + message), problem


@pytest.mark.parametrize("depth", [100, 900, 2_000])  # 2,000: libyaml's scanner refuses it first
def test_nesting_in_the_file_is_placed_however_deep(tmp_path: Path, depth: int) -> None:
    """900 levels were past the YAML composer's recursion and refused with the file's name only ('not valid YAML:
    nested too deeply'); they are refused where they pass 64 levels, as 100 levels are, by `capidx serve` as by
    `capidx validate`."""
    (tmp_path / "capidx.yaml").write_text("serve:\n  build: " + "[" * depth + "]" * depth + "\n", encoding="utf-8")
    (problem,) = problems(cwd=tmp_path)
    where = f"capidx.yaml:2:{10 + 63}: $.serve.build" + "[0]" * 63
    assert problem == f"{where}: nested more than 64 levels deep"


def test_missing_explicit_config_is_an_error(tmp_path: Path) -> None:
    (problem,) = problems(cwd=tmp_path, config=tmp_path / "nope.yaml")
    assert "--config" in problem and "does not exist" in problem


def test_non_loopback_http_requires_allowed_hosts() -> None:
    (problem,) = problems(flags={"transport": "http", "host": "0.0.0.0"})
    assert "0.0.0.0 is not a loopback address" in problem and "--allowed-host" in problem
    s = settings({"transport": "http", "host": "0.0.0.0", "allowed_hosts": ("example.org:8000",)})
    assert s.security_hosts() == (
        ("127.0.0.1:*", "localhost:*", "[::1]:*", "example.org:8000"),
        ("http://example.org:8000", "https://example.org:8000"),
    )
    bound = settings({"transport": "http", "host": "10.0.0.5", "allowed_hosts": ("capidx.test",)}).security_hosts()
    assert bound[0][3:] == ("10.0.0.5:*", "capidx.test") and bound[1][:2] == ("http://10.0.0.5:*", "https://10.0.0.5:*")
    assert "fd00::5" in str(
        settings({"transport": "http", "host": "fd00::5", "allowed_hosts": ("a",)}).security_hosts()
    )
    for every in ("0.0.0.0", "::", "::0", "0:0:0:0:0:0:0:0", "[::]", "0", "0.0", "0x0"):  # every address
        assert settings({"transport": "http", "host": every, "allowed_hosts": ("a",)}).bound_host is None, every
    for loopback in ("127.0.0.1", "::1", "localhost", "127.0.0.2"):
        assert settings({"transport": "http", "host": loopback}).loopback
    # stdio ignores the host, but an invalid combination is still only checked for http
    assert settings({"host": "0.0.0.0"}).transport == "stdio"


def test_index_tool_needs_an_exposed_variant() -> None:
    (problem,) = problems(flags={"index_tool": True, "expose": "agents"})
    assert "get_capability_index would have nothing to return" in problem


# --- through the CLI ------------------------------------------------------------------------------------


def run(args: list[str], env: dict | None = None, cwd: Path | None = None):
    """Run `capidx serve` in an empty directory (inside `cwd` when given), so no capidx.yaml leaks in."""
    with tempfile.TemporaryDirectory(dir=cwd) as empty, contextlib.chdir(empty):
        return CliRunner().invoke(cli, ["serve", *args], env={"CAPIDX_EXPOSE": None, **(env or {})})


def test_print_config_names_every_source(tmp_path: Path) -> None:
    result = run(["--print-config", "--port", "9001", "--no-reload"], env={"CAPIDX_EXPOSE": "summary,full"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[2] == "serve:"
    assert any(line.startswith("  port: 9001") and line.endswith("# flag --port") for line in lines)
    assert any(line.startswith("  reload: false") and line.endswith("# flag --reload") for line in lines)
    assert any(line.startswith("  expose: [summary, full]") and line.endswith("# env CAPIDX_EXPOSE") for line in lines)
    assert any(line.startswith("  transport: stdio") and line.endswith("# default") for line in lines)
    import yaml

    assert yaml.safe_load(result.output)["serve"]["expose"] == ["summary", "full"]  # valid YAML to paste


def test_an_integer_setting_with_a_fraction_of_zero_is_a_whole_number(tmp_path: Path) -> None:
    """capidx.yaml's schema accepts `port: 8001.0` (JSON Schema counts it an integer): serve reads 8001, as the
    compiler reads such a setting, and --print-config shows what the file means."""
    config = tmp_path / "capidx.yaml"
    config.write_text("serve:\n  port: 8001.0\n  max_connections: 50.0\n  idle_timeout: 7.0\n", encoding="utf-8")

    resolved = settings(cwd=tmp_path, config=config)
    shown = run(["--print-config", "--config", str(config)])

    assert (resolved.port, resolved.max_connections, resolved.idle_timeout) == (8001, 50, 7)
    assert {type(resolved.port), type(resolved.max_connections), type(resolved.idle_timeout)} == {int}
    assert shown.exit_code == 0, shown.output
    assert "  port: 8001 " in shown.output and "  max_connections: 50 " in shown.output and ".0 " not in shown.output


def test_a_float_past_the_exact_integers_is_refused_not_read_as_a_huge_integer(tmp_path: Path) -> None:
    """`max_connections: 1.0e+300` has no fraction, so the schema took it for an integer and serve read an int of
    301 digits. Past 2**53 - 1 a float stands for no one integer: refused at its key, as validate refuses it; up to
    it, a whole float is still the integer it means."""
    config = tmp_path / "capidx.yaml"
    config.write_text("serve:\n  max_connections: 1.0e+300\n", encoding="utf-8")
    (problem,) = problems(cwd=tmp_path, config=config)
    assert problem.startswith("capidx.yaml:2:20: $.serve.max_connections: ") and str(2**53 - 1) in problem

    config.write_text(f"serve:\n  max_connections: {2**53 - 1}.0\n", encoding="utf-8")
    shown = run(["--print-config", "--config", str(config)])
    assert shown.exit_code == 0, shown.output
    assert f"  max_connections: {2**53 - 1} " in shown.output


def test_print_config_does_not_need_a_build() -> None:
    assert run(["--print-config", "--build", "/nonexistent"]).exit_code == 0


def test_invalid_value_stops_with_exit_2() -> None:
    result = run(["--print-config"], env={"CAPIDX_EXPOSE": "fulll"})
    assert result.exit_code == 2
    assert "CAPIDX_EXPOSE: unknown resource 'fulll' (did you mean 'full'?)" in result.output


def test_bad_flag_value_stops_with_exit_2() -> None:
    result = run(["--expose", "summary,nope"])
    assert result.exit_code == 2
    assert "--expose: unknown resource 'nope'" in result.output
    assert run(["--port", "99999"]).exit_code == 2
    assert run(["--idle-timeout", str(MAX_IDLE_TIMEOUT + 1)]).exit_code == 2
    assert run(["--idle-timeout", str(MAX_IDLE_TIMEOUT), "--print-config"]).exit_code == 0
    exposed = run(["--transport", "http", "--host", "0.0.0.0"])
    assert exposed.exit_code == 2 and "--allowed-host" in exposed.output


def test_no_build_suggests_capidx_build(tmp_path: Path) -> None:
    """Run where no build is named, the advice is `capidx build`; a folder named with --build (or as BUILD) is not
    to be passed again: the build that writes there is said, as report and inject say it (a newcomer was told to
    pass --build, which they had just done, and a plain `capidx build` writes elsewhere)."""
    missing = tmp_path / "missing"
    for args in (["--build", str(missing)], [str(missing)]):
        result = run(args)
        assert result.exit_code == 2
        assert f"--build needs an existing build (`capidx build --out {missing}` makes one)" in result.output
        assert "or pass --build" not in result.output
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("x", "utf-8")
    other = run(["--build", str(tmp_path / "notes")])
    assert other.exit_code == 2 and "it holds no capidx build: give --build the folder" in other.output
    unnamed = run([])  # in an empty folder: its build/ is looked for
    assert unnamed.exit_code == 2 and "run `capidx build` first" in unnamed.output


# --- capidx.yaml is checked whole, as validate and build check it ---------------------------------------

# The file of the bug report: a misspelled `Serve:`, and two mistakes in sections serve does not use.
MISSPELLED = 'Serve:\n  transport: http\npaths:\n  ot: dist\nbudgets:\n  summary: "oops"\n'
NO_CAPIDX_ENV = {variable: None for variable, _flag in NAMES.values()}


def in_project(project: Path, args: list[str], env: dict | None = None):
    """`capidx serve ARGS` run in `project`, so that its capidx.yaml is the one in force."""
    with contextlib.chdir(project):
        return CliRunner().invoke(cli, ["serve", *args], env={**NO_CAPIDX_ENV, **(env or {})})


def error_lines(output: str) -> list[str]:
    """The problems of an exit-2 output, with the project's path cut to the file name."""
    return [line.removeprefix("Error: ").split("/")[-1] for line in output.splitlines() if "capidx.yaml" in line]


def test_a_misspelled_top_level_key_stops_serve_with_every_problem_placed(tmp_path: Path) -> None:
    (tmp_path / "capidx.yaml").write_text(MISSPELLED, encoding="utf-8")
    printed = in_project(tmp_path, ["--print-config"])
    assert printed.exit_code == 2, printed.output
    assert error_lines(printed.output) == [
        "capidx.yaml:1:1: $.Serve: 'Serve' is not a known key: did you mean 'serve'?",
        "capidx.yaml:4:3: $.paths.ot: 'ot' is not a known key: did you mean 'out'?",
        "capidx.yaml:6:12: $.budgets.summary: expected integer, received string (write a whole number without quotes,"
        " such as 30)",
    ]
    assert "transport:" not in printed.output  # no settings shown as if they were in force
    served = in_project(tmp_path, [])  # refused before any build is looked for
    assert served.exit_code == 2 and "$.Serve: 'Serve' is not a known key" in served.output
    assert "capidx build" not in served.output


def test_a_mistake_outside_the_serve_section_stops_serve_too(tmp_path: Path) -> None:
    (tmp_path / "capidx.yaml").write_text(
        "paths:\n  ot: dist\nserve:\n  transport: http\nstaleness:\n  warn_days: 0\n", encoding="utf-8"
    )
    result = in_project(tmp_path, ["--print-config"])
    assert result.exit_code == 2, result.output
    problems = error_lines(result.output)
    assert problems[0] == "capidx.yaml:2:3: $.paths.ot: 'ot' is not a known key: did you mean 'out'?"
    assert [problem.split(": ", 2)[:2] for problem in problems[1:]] == [["capidx.yaml:6:14", "$.staleness.warn_days"]]


def test_a_duplicate_serve_key_is_refused_not_silently_collapsed(tmp_path: Path) -> None:
    (tmp_path / "capidx.yaml").write_text("serve:\n  transport: http\nserve:\n  port: 9000\n", encoding="utf-8")
    result = in_project(tmp_path, ["--print-config"])
    assert result.exit_code == 2, result.output
    assert error_lines(result.output) == [
        "capidx.yaml:3:1: $.serve: duplicate key 'serve' (first at line 1, column 1; parsers keep only the last value)"
    ]


def test_a_duplicate_key_inside_serve_is_refused(tmp_path: Path) -> None:
    (tmp_path / "capidx.yaml").write_text("serve:\n  port: 9000\n  port: 9001\n", encoding="utf-8")
    (problem,) = problems(cwd=tmp_path)
    assert problem.endswith("capidx.yaml:3:3: $.serve.port: duplicate key 'port' (first at line 2, column 3; "
                            "parsers keep only the last value)")  # fmt: skip


def test_every_yaml_value_json_cannot_hold_is_refused_in_one_run(tmp_path: Path) -> None:
    """Serve stopped at the first; each is said now, at its place, as validate says them."""
    (tmp_path / "capidx.yaml").write_text("serve:\n  port: .nan\n  host: !!binary aGk=\n", encoding="utf-8")
    result = in_project(tmp_path, ["--print-config"])
    assert result.exit_code == 2, result.output
    assert error_lines(result.output) == [
        "capidx.yaml:2:9: $.serve.port: unusable YAML: '.nan' is not a number JSON can hold: write a finite number",
        "capidx.yaml:3:9: $.serve.host: unusable YAML: a value tagged !!binary has no JSON form: write a string, "
        "number, list or object",
    ]


def test_a_key_json_cannot_hold_is_said_once(tmp_path: Path) -> None:
    """A key that is such a value (`? !!set {a}`) was said twice at its place, once as "key '?' is not a string"."""
    (tmp_path / "capidx.yaml").write_text("serve: {}\n? !!set {a}\n: 1\n", encoding="utf-8")
    result = in_project(tmp_path, ["--print-config"])
    assert result.exit_code == 2, result.output
    assert error_lines(result.output) == [
        "capidx.yaml:2:3: unusable YAML: a value tagged !!set has no JSON form: write a string, number, list or object"
    ]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize("explicit", [False, True], ids=["found", "--config"])
def test_a_capidx_yaml_that_is_a_pipe_is_refused_without_waiting_for_a_writer(tmp_path: Path, explicit: bool) -> None:
    """Opened, a FIFO with no writer would block start-up for ever; it was also taken for 'config file: none'.
    Run as a process (with run_capidx's time limit) so that a regression fails instead of hanging the suite."""
    from server_support import run_capidx

    os.mkfifo(tmp_path / "capidx.yaml")
    args = ["--config", "capidx.yaml"] if explicit else []
    result = run_capidx("serve", *args, "--print-config", cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert result.returncode == 2, result.stdout
    assert "capidx.yaml: is not a regular file (a device, socket or pipe?)" in result.stderr
    assert "config file: none" not in result.stdout


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda path: path.mkdir(), "capidx.yaml: is a directory, expected a file"),
        (lambda path: path.symlink_to("gone.yaml"), "capidx.yaml: broken symbolic link (target 'gone.yaml'"),
        (
            lambda path: path.write_bytes(b"title: caf\xe9\n"),
            "capidx.yaml:1:11: not valid UTF-8: byte 0xe9 at offset 10",
        ),
    ],
    ids=["directory", "broken-link", "not-utf-8"],
)
def test_a_capidx_yaml_that_cannot_be_read_is_refused_not_taken_for_none(
    tmp_path: Path, make: Callable[[Path], object], message: str
) -> None:
    make(tmp_path / "capidx.yaml")
    result = in_project(tmp_path, ["--print-config"])
    assert result.exit_code == 2, result.output
    assert message in result.output


@pytest.mark.parametrize(
    "text",
    [
        MISSPELLED,
        "serve:\n  transport: http\nserve:\n  transport: stdio\n",
        "1: one\nserve: {port: 9000}\n",
        "title: ''\nencodings: []\nserve:\n  port: 70000\n  expose: [summary, summary]\n",
        "relationships: {similarity_threshold: 2}\ninjection:\n  labels:\n    - {label: x}\n",
        "serve:\n  port: 1\n  build: [a]\nsite: maybe\n",
        "- a list\n",
        "paths: [\n",
        "title: x\nlint: " + "[" * 70 + "]" * 70 + "\n",  # nesting no data needs
    ],
)
def test_serve_refuses_what_validate_refuses_at_the_same_places(tmp_path: Path, text: str) -> None:
    (tmp_path / "capidx.yaml").write_text(text, encoding="utf-8")
    served = in_project(tmp_path, ["--print-config"])
    validated = in_project_validate(tmp_path)
    assert (served.exit_code, validated.exit_code) == (2, 2), (served.output, validated.output)
    assert places(served.output) == places(validated.output) != set(), (served.output, validated.output)


def test_a_capidx_yaml_over_the_size_limit_is_refused_as_validate_refuses_it(tmp_path: Path) -> None:
    (tmp_path / "capidx.yaml").write_text("# padding\n" * 1_100_000, encoding="utf-8")  # 11 MB of comments
    served = in_project(tmp_path, ["--print-config"])
    validated = in_project_validate(tmp_path)
    assert (served.exit_code, validated.exit_code) == (2, 2), (served.output, validated.output)
    assert "over the 10 MB limit" in served.output and "over the 10 MB limit" in validated.output


@pytest.mark.parametrize("twice", [False, True], ids=["unknown", "duplicate"])
def test_a_huge_key_is_named_cut_short_by_serve_and_validate(tmp_path: Path, twice: bool) -> None:
    """A key is the data's, of any length: a message names 60 characters of it, the place points at it."""
    key = "k" * 100_000
    (tmp_path / "capidx.yaml").write_text("serve:\n" + f"  ? {key}\n  : 5\n" * (1 + twice), encoding="utf-8")
    served = in_project(tmp_path, ["--print-config"])
    validated = in_project_validate(tmp_path)
    for result in (served, validated):
        assert result.exit_code == 2, result.output
        assert "k" * 59 + "…" in result.output and len(result.output) < 1_000


def in_project_validate(project: Path):
    with contextlib.chdir(project):
        return CliRunner().invoke(cli, ["validate", "-q"])


def places(output: str) -> set[tuple[str, ...]]:
    """line, column and JSON path of each problem in capidx.yaml."""
    return {match.groups("") for match in re.finditer(r"capidx\.yaml:(\d+):(\d+): (\$\S*:)?", output)}


VALID = (
    "title: 2026-01-31\n"  # a date: read as the text validate reads, which the schema allows
    "paths:\n  out: site/out\nbudgets:\n  summary: 1000\nserve:\n  transport: http\n  port: 9000\n"
)


def test_a_valid_file_is_still_served_from(tmp_path: Path) -> None:
    (tmp_path / "capidx.yaml").write_text(VALID, encoding="utf-8")
    result = in_project(tmp_path, ["--print-config"])
    assert result.exit_code == 0, result.output
    served = yaml_settings(result.output)
    # as capidx.yaml gives it: relative to the file's folder, so that the section pasted back names the same build
    assert (served["transport"], served["port"], served["build"]) == ("http", 9000, "site/out")
    validated = in_project_validate(tmp_path)  # no catalog here: validate stops at that, not at the file
    assert "agents: catalog directory not found" in validated.output and "capidx.yaml" not in validated.output


def test_print_config_pasted_into_the_file_it_came_from_names_the_same_build(tmp_path: Path) -> None:
    """A monorepo's `capidx serve --config tools/capidx/capidx.yaml --print-config`, run at the top, printed `build:
    tools/capidx/build` (relative to the working folder); pasted into that file, whose paths are read against its own
    folder, it named tools/capidx/tools/capidx/build. The build is printed as the file reads it; outside the file's
    folder, absolute."""
    config = tmp_path / "tools" / "capidx" / "capidx.yaml"
    config.parent.mkdir(parents=True)
    config.write_text("paths:\n  out: build\n", encoding="utf-8")
    with contextlib.chdir(tmp_path):
        printed = CliRunner().invoke(cli, ["serve", "--config", "tools/capidx/capidx.yaml", "--print-config"])
        assert printed.exit_code == 0, printed.output
        assert yaml_settings(printed.output)["build"] == "build"
        config.write_text("paths:\n  out: build\n" + printed.output, encoding="utf-8")
        again = CliRunner().invoke(cli, ["serve", "--config", "tools/capidx/capidx.yaml", "--print-config"])
        assert again.exit_code == 0, again.output
        assert yaml_settings(again.output)["build"] == "build" and "(serve.build)" in again.output
        outside = CliRunner().invoke(cli, ["serve", "--config", str(config), "--build", "out", "--print-config"])
    assert yaml_settings(outside.output)["build"] == str(tmp_path / "out")


def test_the_file_capidx_init_writes_is_served_from(tmp_path: Path) -> None:
    with contextlib.chdir(tmp_path):
        assert CliRunner().invoke(cli, ["init", "."]).exit_code == 0
    result = in_project(tmp_path, ["--print-config"])
    assert result.exit_code == 0, result.output
    assert f"# config file: {tmp_path / 'capidx.yaml'}" in result.output
    assert any(line.startswith("  expose:") and "(serve.expose)" in line for line in result.output.splitlines())


def test_an_empty_file_means_every_default(tmp_path: Path) -> None:
    (tmp_path / "capidx.yaml").write_text("# nothing set yet\n", encoding="utf-8")
    s = settings(cwd=tmp_path)
    assert s.config_file == tmp_path / "capidx.yaml" and set(s.sources.values()) == {"default"}


def test_environment_variables_still_override_a_valid_file_but_never_excuse_a_broken_one(tmp_path: Path) -> None:
    (tmp_path / "capidx.yaml").write_text(VALID, encoding="utf-8")
    env = {"CAPIDX_TRANSPORT": "stdio", "CAPIDX_PORT": "9100", "CAPIDX_BUILD": "elsewhere"}
    result = in_project(tmp_path, ["--print-config"], env=env)
    assert result.exit_code == 0, result.output
    served = yaml_settings(result.output)
    assert (served["transport"], served["port"]) == ("stdio", 9100)
    lines = result.output.splitlines()
    assert any(line.startswith("  transport: stdio") and line.endswith("# env CAPIDX_TRANSPORT") for line in lines)
    assert any(line.startswith("  build: elsewhere ") for line in lines)
    (tmp_path / "capidx.yaml").write_text(MISSPELLED, encoding="utf-8")
    broken = in_project(tmp_path, ["--print-config", "--transport", "http"], env=env)
    assert broken.exit_code == 2 and "$.Serve: 'Serve' is not a known key" in broken.output


def yaml_settings(output: str) -> dict:
    import yaml

    return yaml.safe_load(output)["serve"]


def test_a_leading_tilde_is_the_home_folder_in_the_file_the_environment_and_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As build reads `paths.out: ~/capidx-build`, so does serve: no shell expands `~` in a client's settings."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    (tmp_path / "capidx.yaml").write_text("paths:\n  out: ~/capidx-build\n", encoding="utf-8")
    assert settings(cwd=tmp_path).build == home / "capidx-build"
    (tmp_path / "capidx.yaml").write_text("serve:\n  build: ~/served\n", encoding="utf-8")
    assert settings(cwd=tmp_path).build == home / "served"
    assert settings(env={"CAPIDX_BUILD": "~/from-env"}, cwd=tmp_path).build == home / "from-env"
    assert settings({"build": "~"}, cwd=tmp_path).build == home
    assert settings({"build": "a/~"}, cwd=tmp_path).build == tmp_path / "a" / "~"
