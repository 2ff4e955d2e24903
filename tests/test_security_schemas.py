"""Schemas never reach the network (issue #14, finding 3): a `$ref` resolves against local schema files only,
and one that is not local is an error naming the schema file, line and reference (exit 2).

The "server" is a listening socket nobody accepts on: a client's connection completes in the kernel's
backlog and its request is never answered. The default socket timeout is short during these tests, so
code that does try to fetch fails after a moment instead of hanging, and the backlog shows it tried.
"""

from __future__ import annotations

import copy
import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import referencing
from catalog_factory import documents, run_cli, write_catalog

from capidx.compiler.validate import fastschema, schemacost, schemas
from capidx.compiler.validate.schemas import bundled_schema, load_schema_file

Silent = tuple[str, Callable[[], int]]


@pytest.fixture
def silent_server() -> Iterator[Silent]:
    """(base URL of a server that never answers, a function counting the connections made to it)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(2.0)
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", lambda: _connections(listener)
    finally:
        socket.setdefaulttimeout(previous)
        listener.close()


def _connections(listener: socket.socket) -> int:
    listener.setblocking(False)
    count = 0
    while True:
        try:
            connection, _ = listener.accept()
        except BlockingIOError:
            return count
        connection.close()
        count += 1


def _schema(agent: Any) -> dict[str, Any]:
    """The bundled capability schema (without its `$id`) with `agent` as the schema of `agent`."""
    schema = copy.deepcopy(bundled_schema("capability-schema.json"))
    schema.pop("$id")
    schema["properties"]["agent"] = agent
    return schema


def _write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def _line_of(path: Path, text: str) -> int:
    return next(number for number, line in enumerate(path.read_text("utf-8").splitlines(), 1) if text in line)


def _accepted_and_applied(tmp_path: Path, schema: Path) -> None:
    """The schema is valid (the catalog in `tmp_path` passes it) and applied: an agent name that is no string fails."""
    result = run_cli(["validate", "-q", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    docs = documents()
    docs["claude-code"]["agent"]["name"] = 5
    write_catalog(tmp_path, docs)
    result = run_cli(["validate", "-q", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 1 and "$.agent.name: expected string, received integer" in result.output


def test_validate_refuses_a_remote_ref_without_connecting(tmp_path: Path, silent_server: Silent) -> None:
    url, connections = silent_server
    write_catalog(tmp_path)
    schema = _write(tmp_path / "remote.schema.json", _schema({"$ref": f"{url}/agent.json"}))
    result = run_cli(["validate", "--schema", str(schema)], cwd=tmp_path)
    assert connections() == 0
    assert result.exit_code == 2
    where = f"remote.schema.json:{_line_of(schema, '$ref')}:"
    assert where in result.output and "$.properties.agent.$ref" in result.output
    assert f'"{url}/agent.json" is not a local schema file' in result.output
    assert "Traceback" not in result.output


def test_a_schema_named_in_capidx_yaml_is_not_fetched_either(tmp_path: Path, silent_server: Silent) -> None:
    url, connections = silent_server
    write_catalog(tmp_path)
    _write(tmp_path / "schemas" / "capability.json", _schema({"$ref": f"{url}/agent.json#/x"}))
    (tmp_path / "capidx.yaml").write_text("paths:\n  schema: schemas/capability.json\n", encoding="utf-8")
    result = run_cli(["validate"], cwd=tmp_path)
    assert connections() == 0
    assert result.exit_code == 2
    assert "capability.json:" in result.output and f"{url}/agent.json#/x" in result.output


def test_build_refuses_a_remote_ref_without_connecting(tmp_path: Path, silent_server: Silent) -> None:
    url, connections = silent_server
    write_catalog(tmp_path)
    schema = _write(tmp_path / "remote.schema.json", _schema({"$ref": f"{url}/agent.json"}))
    result = run_cli(["build", "-q", "--schema", str(schema)], cwd=tmp_path)
    assert connections() == 0
    assert result.exit_code == 2  # a usage problem, as validate says
    assert f'"{url}/agent.json" is not a local schema file' in result.stderr
    assert not (tmp_path / "build").exists()


def test_a_local_schema_file_referring_to_a_remote_one_is_refused(tmp_path: Path, silent_server: Silent) -> None:
    url, connections = silent_server
    write_catalog(tmp_path)
    defs = _write(tmp_path / "schemas" / "parts" / "defs.json", {"$defs": {"agent": {"$ref": f"{url}/a.json"}}})
    schema = _write(tmp_path / "schemas" / "main.json", _schema({"$ref": "parts/defs.json#/$defs/agent"}))
    result = run_cli(["validate", "--schema", str(schema)], cwd=tmp_path)
    assert connections() == 0
    assert result.exit_code == 2
    assert f"defs.json:{_line_of(defs, '$ref')}:" in result.output and f"{url}/a.json" in result.output


@pytest.mark.parametrize("reference", ["../outside.json#/$defs/agent", "missing.json", "/etc/hostname"])
def test_a_ref_to_a_file_outside_the_schema_folder_or_missing_is_refused(tmp_path: Path, reference: str) -> None:
    write_catalog(tmp_path)
    _write(tmp_path / "outside.json", {"$defs": {"agent": {"type": "object"}}})
    schema = _write(tmp_path / "schemas" / "main.json", _schema({"$ref": reference}))
    result = run_cli(["validate", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 2
    assert f"main.json:{_line_of(schema, '$ref')}:" in result.output
    assert "no such schema file inside" in result.output


def _agent_schema() -> dict[str, Any]:
    return copy.deepcopy(bundled_schema("capability-schema.json")["$defs"]["agent"])


@pytest.mark.parametrize(
    "layout",
    ["relative path", "file URI", "under the schema's $id", "declared $id", "bundled schema", "meta-schema"],
)
def test_local_references_resolve_and_still_check_documents(tmp_path: Path, layout: str) -> None:
    folder = tmp_path / "schemas"
    _write(folder / "defs.json", {"$defs": {"agent": _agent_schema()}})
    declared = "https://example.org/elsewhere/other.json"
    _write(folder / "other.json", {"$id": declared, "$defs": {"agent": _agent_schema()}})
    reference = {
        "relative path": "defs.json#/$defs/agent",
        "file URI": (folder / "defs.json").as_uri() + "#/$defs/agent",
        "under the schema's $id": "defs.json#/$defs/agent",
        "declared $id": f"{declared}#/$defs/agent",
        "bundled schema": "https://capidx.dev/schema/capability-schema.json#/$defs/agent",
        "meta-schema": "https://json-schema.org/draft/2020-12/schema",
    }[layout]
    schema = _schema({"$ref": reference})
    if layout == "under the schema's $id":
        schema["$id"] = "https://example.org/schemas/main.json"
    path = _write(folder / "main.json", schema)
    write_catalog(tmp_path)
    assert run_cli(["validate", "-q", "--schema", str(path)], cwd=tmp_path).exit_code == 0
    if layout == "meta-schema":
        return  # any schema-shaped agent is valid: nothing more to check
    docs = documents()
    docs["claude-code"]["agent"]["name"] = 5
    write_catalog(tmp_path, docs)
    result = run_cli(["validate", "-q", "--schema", str(path)], cwd=tmp_path)
    assert result.exit_code == 1
    assert "$.agent.name: expected string, received integer" in result.output


def test_the_fast_check_never_fetches(silent_server: Silent) -> None:
    """fastjsonschema fetches a remote `$ref` with urllib unless told otherwise; only capidx's own schemas (no
    remote references) reach it, and should one have one, it must not fetch either."""
    url, connections = silent_server
    schema = {"type": "object", "properties": {"a": {"$ref": f"{url}/a.json"}}}
    assert fastschema.compile_check(schema) is None
    assert connections() == 0


def test_editing_a_referenced_schema_file_makes_the_next_build_check_again(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    defs = _write(tmp_path / "schemas" / "defs.json", {"$defs": {"agent": _agent_schema()}})
    schema = _write(tmp_path / "schemas" / "main.json", _schema({"$ref": "defs.json#/$defs/agent"}))
    assert run_cli(["build", "-q", "--schema", str(schema)], cwd=tmp_path).exit_code == 0
    stricter = _agent_schema()
    stricter["properties"]["name"]["maxLength"] = 3
    _write(defs, {"$defs": {"agent": stricter}})
    result = run_cli(["build", "-q", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 1
    assert "$.agent.name: is too long" in result.stderr


@pytest.mark.parametrize(
    ("where", "pattern"),
    [
        ("pattern", "^(a+)+$"),
        ("patternProperties", "^(x|xx)*$"),
        ("pattern", "^(a?a?)+$"),  # each turn takes none, one or two letters
        ("pattern", "^(?:a?){26}a{26}$"),  # 2**26 ways to choose which turns take a letter
    ],
)
def test_a_user_schema_regex_that_backtracks_is_refused_before_any_document(
    tmp_path: Path, where: str, pattern: str
) -> None:
    """jsonschema runs a schema's `pattern`s with Python's `re`, without a time limit, on every string:
    `^(a+)+$` against a long run of 'a's followed by '!' would hang validate in CI for hours."""
    name = {"type": "string", "pattern": pattern} if where == "pattern" else {"patternProperties": {pattern: {}}}
    write_catalog(tmp_path)
    schema = _write(tmp_path / "evil.schema.json", _schema({"type": "object", "properties": {"name": name}}))
    result = run_cli(["validate", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 2
    assert f"evil.schema.json:{_line_of(schema, pattern)}:" in result.output
    assert "a repeated group" in result.output or "optional parts decided in sequence" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("name", ["default", "enum", "const", "examples", "pattern"])
def test_a_regex_in_a_subschema_named_like_a_keyword_is_checked_too(tmp_path: Path, name: str) -> None:
    """A property or `$defs` entry may be named 'default' or 'examples': it is a schema there, not a keyword's
    value, and its patterns run like any other (the check skipped it, and validate hung)."""
    write_catalog(tmp_path)
    schema_data = _schema({"type": "object", "properties": {"name": {"$ref": f"#/$defs/{name}"}}})
    schema_data["$defs"][name] = {"type": "string", "pattern": "^(a+)+$"}
    schema_data["properties"]["agent"]["properties"][name] = {"type": "string", "pattern": "^(x|xx)*$"}
    schema_data["dependencies"] = {name: {"properties": {name: {"pattern": "^(a|a)+$"}}}}  # draft-07's name map
    schema = _write(tmp_path / "evil.schema.json", schema_data)
    result = run_cli(["validate", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 2
    assert (
        f"$.$defs.{name}.pattern" in result.output and f"$.properties.agent.properties.{name}.pattern" in result.output
    )
    assert f"$.dependencies.{name}.properties.{name}.pattern" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("keyword", ["examples", "default", "enum", "const"])
def test_a_regex_in_a_value_keyword_reached_by_ref_is_checked_too(tmp_path: Path, keyword: str) -> None:
    """jsonschema follows `{"$ref": "#/examples/0"}` into a keyword's value and runs the pattern it finds there."""
    write_catalog(tmp_path)
    schema_data = _schema({"type": "object", "properties": {"name": {"$ref": f"#/{keyword}/0"}}})
    schema_data[keyword] = [{"type": "string", "pattern": "^(a+)+$"}]
    schema = _write(tmp_path / "evil.schema.json", schema_data)
    result = run_cli(["validate", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 2 and f"$.{keyword}[0].pattern" in result.output and "a repeated group" in result.output


def test_a_map_of_names_used_as_a_schema_has_its_regexes_checked_too(tmp_path: Path) -> None:
    """`{"$ref": "#/$defs"}` makes jsonschema read `$defs` itself as a schema: a `patternProperties` key there runs
    on every key of the data."""
    write_catalog(tmp_path)
    schema_data = _schema({"allOf": [_agent_schema(), {"$ref": "#/$defs"}]})
    schema_data["$defs"]["patternProperties"] = {"^(a+)+$": True}
    schema = _write(tmp_path / "evil.schema.json", schema_data)
    result = run_cli(["validate", "--schema", str(schema)], cwd=tmp_path)
    assert (
        result.exit_code == 2 and "$.$defs.patternProperties" in result.output and "a repeated group" in result.output
    )
    bundled = _write(tmp_path / "plain.schema.json", _schema(_agent_schema()))  # an ordinary schema: no finding
    assert run_cli(["validate", "-q", "--schema", str(bundled)], cwd=tmp_path).exit_code == 0


def test_a_regex_in_a_schema_file_reached_by_ref_is_checked_too(tmp_path: Path) -> None:
    """A local schema file the user schema refers to holds patterns jsonschema runs the same way."""
    write_catalog(tmp_path)
    _write(tmp_path / "defs" / "name.json", {"type": "string", "pattern": "^(x|xx)*$"})
    schema = _write(
        tmp_path / "evil.schema.json",
        _schema({"type": "object", "properties": {"name": {"$ref": "defs/name.json"}}}),
    )
    schema_data = json.loads(schema.read_text("utf-8"))
    schema_data["$defs"]["again"] = {"$ref": "./defs/name.json"}  # the same file by another reference: said once
    schema.write_text(json.dumps(schema_data), "utf-8")
    result = run_cli(["validate", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 2
    assert "name.json:" in result.output and "a repeated group" in result.output and "1 error," in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("declared", [5, ["https://json-schema.org/draft/2020-12/schema"], None])
@pytest.mark.parametrize("where", ["schema", "referenced file"])
def test_a_schema_draft_that_is_no_string_is_said_at_its_place(tmp_path: Path, where: str, declared: Any) -> None:
    """jsonschema and referencing read `$schema` as a string: 5 in a file the schema refers to (which no meta-schema
    checks) or in the schema itself ended in an AttributeError or a TypeError."""
    write_catalog(tmp_path)
    agent = _write(tmp_path / "schemas" / "agent.json", {"$schema": declared, **_agent_schema()})
    schema = _write(tmp_path / "schemas" / "main.json", _schema({"$ref": "agent.json"}))
    if where == "schema":
        _write(schema, json.loads(schema.read_text("utf-8")) | {"$schema": declared})
        _write(agent, _agent_schema())
    result = run_cli(["validate", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 2
    named = schema if where == "schema" else agent
    assert f"{named.name}:{_line_of(named, '$schema')}:" in result.output
    assert "$.$schema: not a valid schema: $schema must be a draft's URI, a string; received " in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("where", ["schema", "referenced file"])
def test_a_schema_draft_jsonschema_does_not_know_is_a_warning_saying_how_it_is_checked(
    tmp_path: Path, where: str
) -> None:
    write_catalog(tmp_path)
    unknown = "https://example.com/drafts/next"
    agent = _write(tmp_path / "schemas" / "agent.json", {"$schema": unknown, **_agent_schema()})
    schema_data = _schema({"$ref": "agent.json"})
    schema_data["$defs"]["again"] = {"$ref": "./agent.json"}  # the same file by another reference: said once
    schema = _write(tmp_path / "schemas" / "main.json", schema_data)
    if where == "schema":
        _write(schema, schema_data | {"$schema": unknown})
        _write(agent, _agent_schema())
    result = run_cli(["validate", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    named, how = (schema, "draft 2020-12") if where == "schema" else (agent, "the draft of the schema referring to it")
    said = f"{named.name}:{_line_of(named, unknown)}:14: $.$schema: warning: unknown $schema '{unknown}' (checked as"
    assert result.output.count(said) == 1 and how in result.output


@pytest.mark.parametrize("where", ["referenced file", "schema"])
def test_a_schema_file_referencing_cannot_read_is_said_with_its_place(tmp_path: Path, where: str) -> None:
    """referencing reads every subschema of a file (its `$schema`, its `$id`, the schemas under `properties`) to
    resolve an anchor: one it could not read ended in a traceback. In a referenced file, which no meta-schema had
    checked, the meta-schema says where; the schema itself passed its meta-schema, as a subschema in another draft."""
    write_catalog(tmp_path)
    folder = tmp_path / "schemas"
    agent = _agent_schema() | {"$anchor": "agent"}
    if where == "referenced file":
        broken = {"properties": ["x-name"]}
        defs = _write(folder / "defs.json", {"$defs": {"agent": agent, "broken": broken}})
        schema = _write(folder / "main.json", _schema({"$ref": "defs.json#agent"}))
        line = _line_of(defs, '"properties": [')
        said = f"defs.json:{line}:21: $.$defs.broken.properties: not a valid schema"
    else:
        schema_data = _schema({"$ref": "#agent"})
        schema_data["$defs"] |= {
            "agent": agent,
            "older": {"$schema": "http://json-schema.org/draft-04/schema#", "id": 5},
        }
        schema = _write(folder / "main.json", schema_data)  # `id` is no keyword in 2020-12, a string in draft-04
        said = "main.json:1:1: $: not a schema jsonschema can read"
    result = run_cli(["validate", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 2
    assert said in result.output
    assert "Traceback" not in result.output


def _work_to_load(
    monkeypatch: pytest.MonkeyPatch, owner: type, method: str, *paths: Path
) -> list[tuple[int, list[Any]]]:
    """For each schema file: how many times loading it called `owner.method` (of referencing's, whose calls measure
    the work done instead of timing it), and the problems said."""
    load_schema_file(paths[0])  # what is read once per process (the meta-schemas) is not counted
    calls = 0
    counted = getattr(owner, method)

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        return counted(*args, **kwargs)

    monkeypatch.setattr(owner, method, counting)
    found = []
    for path in paths:
        calls = 0
        problems = load_schema_file(path)[1]
        found.append((calls, problems))
    return found


def test_a_schema_is_read_once_however_many_anchors_it_and_its_files_have(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each anchor the load check looked up (`#a12`, `defs.json#a12`) crawled every resource again, on a registry it
    never kept crawled: 300 anchored definitions took seconds to load, 600 more than three times as long. The crawls
    must not grow with the number of anchors."""

    def anchored(count: int) -> Path:
        defs = {f"d{i}": {"$anchor": f"a{i}", "type": "string"} for i in range(count)}
        _write(tmp_path / str(count) / "defs.json", {"$defs": defs})
        schema = _schema(_agent_schema())
        schema["$defs"] |= {f"d{i}": {"$anchor": f"a{i}", "type": "string"} for i in range(count)}
        named = schema["properties"]["agent"]["properties"]
        named |= {f"x-{i}": {"$ref": f"#a{i}"} for i in range(count)}
        named |= {f"x-file-{i}": {"$ref": f"defs.json#a{i}"} for i in range(count)}
        return _write(tmp_path / str(count) / "main.json", schema)

    loads = _work_to_load(monkeypatch, referencing.Registry, "crawl", anchored(10), anchored(60))
    (few, said_of_few), (many, said_of_many) = loads
    assert said_of_few == said_of_many == []
    assert many == few


@pytest.mark.parametrize("declared", ["#named", "named.json", "https://example.org/elsewhere/named.json"])
def test_a_draft_07_id_beside_a_ref_leaves_the_ref_where_it_is(tmp_path: Path, declared: str) -> None:
    """Draft-07 ignores the keywords beside a `$ref`, its `$id` too: jsonschema resolves `#/definitions/agent` below
    against the schema itself. capidx read it against the `$id` and refused it as not a local schema file."""
    write_catalog(tmp_path)
    schema_data = _schema({"$ref": "#/definitions/named"})
    schema_data["$schema"] = "http://json-schema.org/draft-07/schema#"
    schema_data["definitions"] = {"named": {"$id": declared, "$ref": "#/definitions/agent"}, "agent": _agent_schema()}
    schema = _write(tmp_path / "main.json", schema_data)
    _accepted_and_applied(tmp_path, schema)

    schema_data["definitions"]["named"]["$ref"] = "https://example.org/elsewhere/agent.json"  # would be fetched
    result = run_cli(["validate", "-q", "--schema", str(_write(schema, schema_data))], cwd=tmp_path)
    assert result.exit_code == 2 and "is not a local schema file (capidx never fetches schemas)" in result.output


@pytest.mark.parametrize("name", ["default", "enum", "const", "examples"])
def test_a_remote_ref_in_a_subschema_named_like_a_value_keyword_is_refused(
    tmp_path: Path, silent_server: Silent, name: str
) -> None:
    """A property or definition may be named 'default': it is a schema there, not the keyword's value, and a remote
    `$ref` in it was not reported when the schema was loaded (it was never fetched either)."""
    url, connections = silent_server
    write_catalog(tmp_path)
    schema_data = _schema({"type": "object", "properties": {name: {"$ref": f"{url}/a.json"}}})
    schema_data["$defs"][name] = {"$ref": f"{url}/b.json"}
    schema = _write(tmp_path / "remote.schema.json", schema_data)
    result = run_cli(["validate", "--schema", str(schema)], cwd=tmp_path)
    assert connections() == 0
    assert result.exit_code == 2
    assert f'$.properties.agent.properties.{name}.$ref: $ref "{url}/a.json" is not a local schema file' in (
        result.output
    )
    assert f'$.$defs.{name}.$ref: $ref "{url}/b.json" is not a local schema file' in result.output


def test_a_ref_in_the_value_of_a_value_keyword_is_no_reference(tmp_path: Path, silent_server: Silent) -> None:
    """Under the keywords `default`, `examples`, `enum` and `const` an object is a value: a `$ref` key there is data."""
    url, connections = silent_server
    write_catalog(tmp_path)
    agent = _agent_schema()
    looks_like = {"$ref": f"{url}/a.json"}
    agent["properties"]["x-unused"] = {
        "default": looks_like,
        "examples": [looks_like],
        "enum": [looks_like],
        "const": looks_like,
        "properties": {"default": {"default": looks_like}},
    }
    schema = _write(tmp_path / "values.schema.json", _schema(agent))
    result = run_cli(["validate", "-q", "--schema", str(schema)], cwd=tmp_path)
    assert connections() == 0
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("command", ["validate", "build"])
@pytest.mark.parametrize("where", ["the whole schema", "a property"])
def test_a_schema_whose_references_loop_is_said_once_as_its_own_error(tmp_path: Path, command: str, where: str) -> None:
    """jsonschema applied `a` -> `b` -> `a` to the same value without end: its RecursionError was reported as every
    document nested too deeply (exit 1), blaming the data for the schema."""
    write_catalog(tmp_path)
    loop = {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}
    schema_data = {"$defs": loop, "$ref": "#/$defs/a"}
    if where == "a property":  # the loop is met only where a document has the property
        schema_data = _schema({"$ref": "#/$defs/a"})
        schema_data["$defs"] |= loop
    schema = _write(tmp_path / "loop.schema.json", schema_data)
    result = run_cli([command, "--schema", str(schema)], cwd=tmp_path)
    output = result.output if command == "validate" else result.stderr
    assert result.exit_code == 2, output
    said = "loop.schema.json: checking a document does not end: the schema's references loop without going into"
    assert output.count(said) == 1
    assert "nested too deeply" not in output and "Traceback" not in output
    assert not (tmp_path / "build").exists()


def test_a_document_too_deep_for_a_schema_that_ends_is_still_said_of_the_document(tmp_path: Path) -> None:
    """A schema that goes into the data at each level, through ten references, ends; a document 60 levels deep takes
    it past Python's recursion limit, and the document is to blame (the same document cut short passes)."""
    docs = documents()
    deep: list[Any] = []
    for _ in range(60):
        deep = [deep]
    docs["claude-code"]["x-deep"] = deep
    write_catalog(tmp_path, docs)
    hops = {f"h{index}": {"$ref": f"#/$defs/h{index + 1}"} for index in range(10)}
    hops["h10"] = {"items": {"$ref": "#/$defs/h0"}, "additionalProperties": {"$ref": "#/$defs/h0"}}
    schema = _write(tmp_path / "deep.schema.json", {"$defs": hops, "$ref": "#/$defs/h0"})
    result = run_cli(["validate", "-q", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 1, result.output
    assert "claude-code/capabilities/current.json: nested too deeply to check" in result.output
    assert "loop" not in result.output


def test_a_schema_file_that_cannot_be_used_is_read_once_however_many_references_name_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lookup that fails leaves the registry as it was: each reference to a file that cannot be used read it again,
    crawled it and checked it against its meta-schema. Two schemas of the same size, one with 10 references to such a
    file, one with 60, must take as many subschemas read."""

    def referring(count: int) -> Path:
        broken = {"properties": ["x-name"]}
        _write(tmp_path / str(count) / "defs.json", {"$defs": {"agent": _agent_schema(), "broken": broken}})
        schema = _schema({"$ref": "defs.json#/$defs/agent"})
        targets = ["defs.json#/$defs/agent"] * count + ["#/$defs/agent"] * (60 - count)
        schema["$defs"] |= {f"d{index}": {"$ref": target} for index, target in enumerate(targets)}
        return _write(tmp_path / str(count) / "main.json", schema)

    loads = _work_to_load(monkeypatch, referencing.Resource, "subresources", referring(10), referring(60))
    (few, said_of_few), (many, said_of_many) = loads
    assert [problem.pointer for problem in said_of_many] == ["$.$defs.broken.properties"]
    assert len(said_of_few) == 1
    assert many == few


@pytest.mark.parametrize("where", ["schema", "referenced file"])
def test_draft_07_dependencies_mixing_a_schema_and_key_names_is_a_valid_schema(tmp_path: Path, where: str) -> None:
    """Drafts 3 to 7 let `dependencies` map a key to a schema and another key to a list of key names. referencing
    reads every value after a first schema as a schema, and a list ended its reading: the schema was refused as one
    jsonschema cannot read, though jsonschema applies it."""
    draft = "http://json-schema.org/draft-07/schema#"
    agent = _agent_schema() | {"dependencies": {"x-team": {"required": ["version"]}, "x-lead": ["x-team"]}}
    schema_data = _schema(agent) | {"$schema": draft}
    if where == "referenced file":
        _write(tmp_path / "schemas" / "agent.json", agent | {"$schema": draft})
        schema_data = _schema({"$ref": "agent.json"}) | {"$schema": draft}
    schema = _write(tmp_path / "schemas" / "main.json", schema_data)
    write_catalog(tmp_path)
    result = run_cli(["validate", "-q", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    docs = documents()
    docs["claude-code"]["agent"]["x-lead"] = "someone"  # without the x-team it depends on
    write_catalog(tmp_path, docs)
    result = run_cli(["validate", "-q", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 1, result.output
    assert "claude-code/capabilities/current.json:" in result.output and "$.agent:" in result.output


def test_a_referenced_file_naming_no_draft_is_read_in_the_draft_of_the_schema(tmp_path: Path) -> None:
    """A file naming no draft is applied with the draft of the schema referring to it, where an `$id` beside a `$ref`
    is ignored (draft 7): the load check read it so and let it through, but referencing read the file as 2020-12,
    resolved the `$ref` against that `$id`, and every document failed with "the schema cannot be applied"."""
    write_catalog(tmp_path)
    named = {"$id": "named.json", "$ref": "#/definitions/agent"}
    _write(tmp_path / "schemas" / "defs.json", {"definitions": {"named": named, "agent": _agent_schema()}})
    schema_data = _schema({"$ref": "defs.json#/definitions/named"}) | {
        "$schema": "http://json-schema.org/draft-07/schema#"
    }
    schema = _write(tmp_path / "schemas" / "main.json", schema_data)
    _accepted_and_applied(tmp_path, schema)


@pytest.mark.parametrize("kind", ["anchors", "dynamic anchors"])
def test_checking_a_document_reads_the_schema_once_however_many_anchors_it_meets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """The registry jsonschema validated with was not crawled, and jsonschema adds the schema to it uncrawled: each
    `$ref` to an anchor a document meets, and each `$dynamicRef` (an anchor looked for in every schema of the dynamic
    scope), crawled the whole schema again (and the files it refers to), so checking a document cost the size of the
    schema times the anchors it meets (400 anchors: seconds per document). The crawls must not grow with them."""

    def meeting(count: int) -> tuple[Path, Path]:
        root = tmp_path / str(count)
        docs = documents()
        schema = _schema(_agent_schema())
        named = schema["properties"]["agent"]["properties"]
        if kind == "anchors":  # the same schema, whose anchors a document meets `count` of
            _write(root / "schemas" / "defs.json", {"$defs": {f"d{i}": {"$anchor": f"a{i}"} for i in range(60)}})
            schema["$defs"] |= {f"d{i}": {"$anchor": f"a{i}", "type": "string"} for i in range(60)}
            named |= {f"x-{i}": {"$ref": f"#a{i}"} for i in range(60)}
            named |= {f"x-file-{i}": {"$ref": f"defs.json#a{i}"} for i in range(60)}
            docs["claude-code"]["agent"] |= {f"x-{i}": "v" for i in range(count)}
            docs["claude-code"]["agent"] |= {f"x-file-{i}": 1 for i in range(count)}
        else:
            schema["$id"] = "https://example.org/schemas/main.json"
            children = {"type": "array", "items": {"$dynamicRef": "#node"}}
            tree = {"$dynamicAnchor": "node", "type": "object", "properties": {"children": children}}
            schema["$defs"]["tree"] = {"$id": "tree.json"} | tree
            named["x-tree"] = {"$ref": "tree.json"}
            docs["claude-code"]["agent"]["x-tree"] = {"children": [{"children": []}] * count}
        write_catalog(root, docs)
        return root, _write(root / "schemas" / "main.json", schema)

    few, many = meeting(10), meeting(60)
    calls = 0
    subresources = referencing.Resource.subresources

    def counting(resource: referencing.Resource) -> Any:  # called for each resource a crawl reads
        nonlocal calls
        calls += 1
        return subresources(resource)

    monkeypatch.setattr(referencing.Resource, "subresources", counting)
    counts = []
    for root, schema in (few, few, many):  # the first run reads what is read once per process
        calls = 0
        result = run_cli(["validate", "-q", "--schema", str(schema)], cwd=root)
        assert result.exit_code == 0, result.output
        counts.append(calls)
    assert counts[2] == counts[1]


def test_a_draft_04_schema_names_its_base_by_id_not_by_dollar_id(tmp_path: Path) -> None:
    """Drafts 3 and 4 name a schema's URI by `id`; `$id` is no keyword there. The check of references read `$id`
    and not `id`: a draft-04 schema whose `id` names its folder, referring to a file of that folder by a relative
    path (resolved against the `id`, as jsonschema does), was refused as "not a local schema file"."""
    write_catalog(tmp_path)
    agent = {"type": "object", "properties": {"name": {"type": "string"}}}
    _write(tmp_path / "schemas" / "agent.json", agent)
    schema = _write(
        tmp_path / "schemas" / "main.json",
        {
            "$schema": "http://json-schema.org/draft-04/schema#",
            "id": "https://example.org/schemas/main.json",
            "type": "object",
            "properties": {"agent": {"$ref": "#/definitions/agent"}},
            "definitions": {"agent": {"$id": "https://example.org/elsewhere/", "allOf": [{"$ref": "agent.json"}]}},
        },
    )
    _accepted_and_applied(tmp_path, schema)


DRAFT_04 = "http://json-schema.org/draft-04/schema#"
OPEN_IPV6 = "http://[::1/s.json"  # a host that opens its bracket and never closes it: urllib's ValueError


@pytest.mark.parametrize(
    "where",
    ["the schema's own id", "a reference", "the id of a file it refers to", "the id of a subschema it refers to"],
)
@pytest.mark.parametrize("command", ["validate", "build"])
def test_a_uri_urllib_cannot_read_is_said_at_its_place(tmp_path: Path, where: str, command: str) -> None:
    """`"id": "http://[::1/s.json"` in a draft-04 schema (whose meta-schema checks no format of `id` or `$ref`)
    ended validate and build in a traceback (`urlsplit`: `ValueError: Invalid IPv6 URL`). It is an error of the
    schema file at the value's line and column, as the schema's other problems are (exit 2), and the build writes
    nothing."""
    write_catalog(tmp_path)
    schema_data: dict[str, Any] = {"$schema": DRAFT_04, "type": "object"}
    named = tmp_path / "schemas" / "main.json"
    if where == "the schema's own id":
        schema_data["id"] = OPEN_IPV6
    elif where == "a reference":
        schema_data["properties"] = {"agent": {"$ref": OPEN_IPV6}}
    elif where == "the id of a file it refers to":
        schema_data["properties"] = {"agent": {"$ref": "agent.json"}}
        named = _write(tmp_path / "schemas" / "agent.json", {"$schema": DRAFT_04, "id": OPEN_IPV6})
    else:
        schema_data["properties"] = {"agent": {"$ref": "#/definitions/agent"}}
        schema_data["definitions"] = {"agent": {"id": OPEN_IPV6, "type": "object"}}
    schema = _write(tmp_path / "schemas" / "main.json", schema_data)
    result = run_cli([command, "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, ValueError)
    [line] = [line for line in result.output.splitlines() if OPEN_IPV6 in line]
    assert line.startswith(f"{named.relative_to(tmp_path)}:{_line_of(named, OPEN_IPV6)}:")
    assert f'"{OPEN_IPV6}" is not a URI' in line
    assert not (tmp_path / "build").exists()


@pytest.mark.parametrize("name", ["id", "$ref"])
def test_a_draft_03_dependency_on_a_key_named_like_a_keyword_is_no_keyword(tmp_path: Path, name: str) -> None:
    """Draft 3's `dependencies` maps a key to a schema or to the one key it needs, a string. The check of references
    read that map as a schema: a key named `id` moved the base of the `$ref`s beside it (`#/definitions/x` was looked
    for in a file named by the key's dependency), and a key named `$ref` was a reference, so a valid schema was
    refused as "not a local schema file"."""
    write_catalog(tmp_path)
    agent = {"type": "object", "dependencies": {name: "vendor", "name": {"$ref": "#/definitions/named"}}}
    schema_data = {
        "$schema": "http://json-schema.org/draft-03/schema#",
        "type": "object",
        "properties": {"agent": agent},
        "definitions": {"named": {"properties": {"name": {"type": "string"}}}},
    }
    schema = _write(tmp_path / "schemas" / "main.json", schema_data)
    _accepted_and_applied(tmp_path, schema)


@pytest.mark.parametrize("command", ["validate", "build"])
def test_a_schema_that_takes_too_long_to_apply_is_stopped_and_said_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """`anyOf` nested in `anyOf` doubles the work at each level (14 levels: minutes; 30: never done), from a schema a
    pull request may change: checking a document stops after `MAX_SECONDS`, one error of the schema file, and no
    other document is checked with it. The clock is set here so that the first reading is past the deadline; the
    checks that read it are in a subschema naming another draft, which jsonschema applies with that draft's own
    class: they must be counted too."""
    write_catalog(tmp_path)
    monkeypatch.setattr(schemacost, "MAX_SECONDS", -1.0)  # any reading of the clock is too late
    monkeypatch.setattr(schemacost, "CLOCK_EVERY", 3)  # the root spends on its `$ref` and the validator it makes
    agent = _agent_schema() | {"$schema": "http://json-schema.org/draft-07/schema#"}
    whole = _schema(agent)  # its `$ref`s name the root's `$defs`: they are the root's here too
    costly = {"$defs": {**whole["$defs"], "whole": whole}, "$ref": "#/$defs/whole"}
    schema = _write(tmp_path / "costly.schema.json", costly)
    result = run_cli([command, "--schema", str(schema)], cwd=tmp_path)
    output = result.output if command == "validate" else result.stderr
    assert result.exit_code == 2, output
    assert output.count("costly.schema.json: checking a document takes too much work") == 1, output
    assert "Traceback" not in output and not (tmp_path / "build").exists()


def test_a_schema_applied_in_time_is_not_stopped(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    schema = _write(tmp_path / "main.json", _schema(_agent_schema()))
    _accepted_and_applied(tmp_path, schema)


def test_following_references_for_unevaluated_properties_is_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`unevaluatedProperties` finds the keys a subschema evaluated by following its `$ref` and `$dynamicRef` in
    jsonschema's own functions, which make a validator at each step but call no keyword check: a chain whose every
    level refers to the next by both doubles the work per level (40 levels: never done) before the next keyword
    check. The validators made count too, so the check stops within a few of them. Here the validators the check
    makes are counted apart, and too many of them end it as a failure of another kind."""
    write_catalog(tmp_path)
    monkeypatch.setattr(schemacost, "MAX_SECONDS", -1.0)  # any reading of the clock is too late
    monkeypatch.setattr(schemacost, "CLOCK_EVERY", 2)  # unevaluatedProperties is the first check
    made = 0

    class RanAway(Exception):
        pass

    def counted(cls: Any, budget: schemacost.Budget) -> Any:
        counting = schemacost.counted(cls, budget)
        evolve = counting.evolve

        def evolve_watched(self: Any, **changes: Any) -> Any:
            nonlocal made
            made += 1
            if made > 10_000:
                raise RanAway
            return evolve(self, **changes)

        counting.evolve = evolve_watched
        return counting

    monkeypatch.setattr(schemas, "counted", counted)
    levels = 40
    chain = {f"l{n}": {"$ref": f"#/$defs/l{n + 1}", "$dynamicRef": f"#/$defs/l{n + 1}"} for n in range(levels)}
    schema_data = {"unevaluatedProperties": True, "$ref": "#/$defs/l0", "$defs": {**chain, f"l{levels}": {}}}
    schema = _write(tmp_path / "costly.schema.json", schema_data)
    result = run_cli(["validate", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 2, result.output
    assert result.output.count("costly.schema.json: checking a document takes too much work") == 1, result.output
    assert made < 10, made


UNIQUE_CASES = [
    [1, 1.0],
    [1, True],
    [0, False],
    [None, 0],
    [{"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1.0}],
    [{"a": [True]}, {"a": [1]}],
    [[1, [2]], [1, [2.0]]],
    [[1, 2], [2, 1]],
    ["1", 1],
    [{"a": None}, {"a": False}, {}],
]


@pytest.mark.parametrize("items", UNIQUE_CASES, ids=json.dumps)
def test_unique_items_are_told_apart_as_jsonschema_tells_them(items: list[Any]) -> None:
    """A user schema's `uniqueItems` is checked in linear time: the same equality as jsonschema's own check."""
    import jsonschema

    from capidx.compiler.validate.schemas import make_validator

    schema = {"type": "array", "uniqueItems": True}
    budget = schemacost.Budget()
    budget.start()
    ours = make_validator(schema, budget=budget)
    assert ours.is_valid(items) == jsonschema.Draft202012Validator(schema).is_valid(items)


def test_unique_items_of_a_large_array_are_not_compared_pairwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """jsonschema compares every pair of items it cannot sort (objects): 8,000 small objects took 93 s, in one keyword
    check, so the time bound never read its clock. Counted here by jsonschema's equality function, which the pairwise
    search calls for each pair."""
    import jsonschema._utils

    compared = []
    equal = jsonschema._utils.equal
    monkeypatch.setattr(jsonschema._utils, "equal", lambda one, two: compared.append(1) or equal(one, two))
    docs = documents()
    docs["claude-code"]["x-items"] = [{"n": index} for index in range(400)]
    write_catalog(tmp_path, docs)
    schema_data = _schema(_agent_schema())
    schema_data["properties"]["x-items"] = {"type": "array", "uniqueItems": True}
    schema = _write(tmp_path / "unique.json", schema_data)
    result = run_cli(["validate", "-q", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert len(compared) < 400  # pairwise: 79,800
    docs["claude-code"]["x-items"].append({"n": 7})
    write_catalog(tmp_path, docs)
    result = run_cli(["validate", "-q", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 1 and "$.x-items" in result.output, result.output


def test_the_hint_of_non_unique_items_names_an_item_that_appears_twice(tmp_path: Path) -> None:
    """The hint names the repeated item by JSON Schema's equality: Python's `in` took `true` for 1 (and `[true]` for
    `[1]`), naming an item that appears once, and compared every pair of items."""
    docs = documents()
    docs["claude-code"]["x-items"] = [1, True, [1], [True], [1]]
    write_catalog(tmp_path, docs)
    schema_data = _schema(_agent_schema())
    schema_data["properties"]["x-items"] = {"type": "array", "uniqueItems": True}
    schema = _write(tmp_path / "unique.json", schema_data)
    result = run_cli(["validate", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 1, result.output
    assert "[1] appears more than once" in result.output, result.output
    assert "true appears" not in result.output and "[true] appears" not in result.output, result.output


def test_a_looping_schema_that_also_takes_too_long_is_said_too_costly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a RecursionError the document is checked again, cut short, to tell a schema that loops from data too
    deep: when that check runs out of time, the schema is to blame (it was taken for the document's depth, exit 1).
    The clock is set in the past just before that second check."""
    write_catalog(tmp_path)
    loop = {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}
    schema = _write(tmp_path / "loop.schema.json", {"$defs": loop, "$ref": "#/$defs/a"})
    cut = schemas._cut

    def cut_late(value: Any, levels: int) -> Any:
        monkeypatch.setattr(schemacost, "MAX_SECONDS", -1.0)
        return cut(value, levels)

    monkeypatch.setattr(schemas, "_cut", cut_late)
    result = run_cli(["validate", "--schema", str(schema)], cwd=tmp_path)
    assert result.exit_code == 2, result.output
    assert result.output.count("loop.schema.json: checking a document takes too much work") == 1, result.output
    assert "nested too deeply" not in result.output and "Traceback" not in result.output
