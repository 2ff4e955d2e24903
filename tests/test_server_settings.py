"""`capidx serve` settings: flags > environment > capidx.yaml > defaults, and every way to get one wrong."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from capidx.cli import cli
from capidx.server.settings import DEFAULT_EXPOSE, SettingsError, resolve_settings


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


def test_every_problem_is_reported_at_once() -> None:
    found = problems(env={"CAPIDX_PORT": "x", "CAPIDX_RESOURCES": "y"}, flags={"expose": "nope"})
    assert len(found) == 3
    assert any(p.startswith("--expose: unknown resource 'nope'") for p in found)


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        (
            "serve:\n  expose: [summary, fulll]\n",
            ":2:21: serve.expose[1]: unknown value 'fulll' (did you mean 'full'?)",
        ),
        ("serve:\n  exposee: [summary]\n", ":2:3: serve: unknown key 'exposee' (did you mean 'expose'?)"),
        ("serve:\n  port: high\n", ':2:9: serve.port: expected integer, got "high"'),
        ("serve:\n  resources: maybe\n", ":2:14: serve.resources: expected boolean"),
        ("serve:\n  expose: [summary, summary]\n", "serve.expose: has non-unique elements"),
        ("serve: [\n", "not valid YAML"),
    ],
)
def test_invalid_file_values_name_file_line_and_column(tmp_path: Path, yaml_text: str, message: str) -> None:
    (tmp_path / "capidx.yaml").write_text(yaml_text, encoding="utf-8")
    (problem,) = problems(cwd=tmp_path)
    assert problem.startswith(str(tmp_path / "capidx.yaml"))
    assert message in problem


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        (
            "serve:\n  transport: http\n  host: 0.0.0.0\n",
            ":3:9: serve.host: 0.0.0.0 is not a loopback address",
        ),
        (
            "serve:\n  expose: [agents]\n  index_tool: true\n",
            ":3:15: serve.index_tool: get_capability_index would have nothing to return",
        ),
    ],
)
def test_combinations_found_after_merging_name_the_file_line_and_column(
    tmp_path: Path, yaml_text: str, message: str
) -> None:
    (tmp_path / "capidx.yaml").write_text(yaml_text, encoding="utf-8")
    (problem,) = problems(cwd=tmp_path)
    assert problem.startswith(str(tmp_path / "capidx.yaml") + message), problem


def test_missing_explicit_config_is_an_error(tmp_path: Path) -> None:
    (problem,) = problems(cwd=tmp_path, config=tmp_path / "nope.yaml")
    assert "--config" in problem and "does not exist" in problem


def test_non_loopback_http_requires_allowed_hosts() -> None:
    (problem,) = problems(flags={"transport": "http", "host": "0.0.0.0"})
    assert "0.0.0.0 is not a loopback address" in problem and "--allowed-host" in problem
    s = settings({"transport": "http", "host": "0.0.0.0", "allowed_hosts": ("example.org:8000",)})
    assert s.security_hosts() == (("example.org:8000",), ("http://example.org:8000", "https://example.org:8000"))
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
    exposed = run(["--transport", "http", "--host", "0.0.0.0"])
    assert exposed.exit_code == 2 and "--allowed-host" in exposed.output


def test_no_build_suggests_capidx_build(tmp_path: Path) -> None:
    result = run(["--build", str(tmp_path / "missing")])
    assert result.exit_code == 2
    assert "run `capidx build`" in result.output
