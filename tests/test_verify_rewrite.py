"""`capidx verify --write` edits: only the intended values change, every other byte stays (JSON and YAML)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from capidx.compiler.validate.load import load_file
from capidx.compiler.verify.rewrite import Change, RewriteError, edit_file, write_file

SOURCE = ("capabilities", 0, "sources", 0)
SECOND = ("capabilities", 0, "sources", 1)


def _edit(path: Path, text: str | bytes, changes: list[Change]) -> str:
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    source, problems = load_file(path)
    assert source is not None and not problems, problems
    edit = edit_file(source, changes)
    write_file(source, edit)
    return path.read_bytes().decode("utf-8")


JSON_TEXT = """{
  "agent": {"name": "A", "vendor": "V", "version": "1", "lastUpdated": "2026-01-01T00:00:00Z"},
  "capabilities": [
    {
      "name": "Hooks",
      "sources": [
        {
          "url": "https://example.com/old",
          "description": "d\\u00e9j\\u00e0 vu",
          "sourceGranularity": "section",
          "status": "unknown"
        },
        {"url": "https://example.com/b", "sourceGranularity" : "dedicated"}
      ]
    }
  ]
}
"""


def test_json_replace_and_insert_keep_everything_else(tmp_path: Path) -> None:
    changes = [
        Change(SOURCE, "verifiedDate", "2026-11-24"),
        Change(SOURCE, "status", "active"),
        Change(SOURCE, "url", "https://example.com/new"),
        Change(SECOND, "status", "modified"),
    ]
    new = _edit(tmp_path / "current.json", JSON_TEXT, changes)
    expected = (
        JSON_TEXT.replace('"https://example.com/old"', '"https://example.com/new"')
        .replace('"status": "unknown"', '"status": "active",\n          "verifiedDate": "2026-11-24"')
        .replace('"sourceGranularity" : "dedicated"}', '"sourceGranularity" : "dedicated", "status" : "modified"}')
    )
    assert new == expected


def test_json_single_member_object_and_tabs(tmp_path: Path) -> None:
    text = (
        '{\n\t"capabilities": [\n\t\t{"sources": [\n\t\t\t{\n\t\t\t\t"url": "https://x.test/"\n\t\t\t}\n\t\t]}\n\t]\n}'
    )
    new = _edit(tmp_path / "current.json", text, [Change(SOURCE, "verifiedDate", "2026-11-24")])
    assert new == text.replace('"https://x.test/"', '"https://x.test/",\n\t\t\t\t"verifiedDate": "2026-11-24"')


def test_json_crlf_and_byte_order_mark_survive(tmp_path: Path) -> None:
    text = JSON_TEXT.replace("\n", "\r\n")
    path = tmp_path / "current.json"
    _edit(path, b"\xef\xbb\xbf" + text.encode(), [Change(SOURCE, "verifiedDate", "2026-11-24")])
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    expected = text.replace('"status": "unknown"', '"status": "unknown",\r\n          "verifiedDate": "2026-11-24"')
    assert raw[3:].decode() == expected


YAML_TEXT = """# A catalog in YAML, with comments that must survive
agent:
  name: Test Agent
  lastUpdated: 2026-01-01T00:00:00Z
capabilities:
  - name: Hooks   # trailing comment
    sources:
      - url: https://example.com/good  # the reference page
        description: What the page says
        sourceGranularity: excerpt
        excerpt: >-
          Hooks run shell commands at fixed points of a session,
          such as before a tool runs.

      - url: 'https://example.com/changed'
        sourceGranularity: section
        status: unknown     # never checked
        verifiedDate: '2025-01-01'
      - {url: "https://example.com/moved", sourceGranularity: dedicated}
      -   url: https://example.com/last
          sourceGranularity: section
"""


def test_yaml_insert_after_block_scalar_and_keep_comments(tmp_path: Path) -> None:
    changes = [Change(SOURCE, "verifiedDate", "2026-11-24"), Change(SOURCE, "status", "active")]
    new = _edit(tmp_path / "current.yaml", YAML_TEXT, changes)
    expected = YAML_TEXT.replace(
        "such as before a tool runs.\n\n",
        "such as before a tool runs.\n\n        verifiedDate: 2026-11-24\n        status: active\n",
    )
    assert new == expected


def test_yaml_replace_keeps_quote_style(tmp_path: Path) -> None:
    changes = [Change(SECOND, "verifiedDate", "2026-11-24"), Change(SECOND, "status", "modified")]
    new = _edit(tmp_path / "current.yaml", YAML_TEXT, changes)
    expected = YAML_TEXT.replace("status: unknown     #", "status: modified     #").replace(
        "verifiedDate: '2025-01-01'", "verifiedDate: '2026-11-24'"
    )
    assert new == expected


def test_yaml_flow_mapping_and_odd_indentation(tmp_path: Path) -> None:
    third, fourth = ("capabilities", 0, "sources", 2), ("capabilities", 0, "sources", 3)
    changes = [
        Change(third, "verifiedDate", "2026-11-24"),
        Change(third, "url", "https://example.com/new place: yes"),
        Change(fourth, "verifiedDate", "2026-11-24"),
    ]
    new = _edit(tmp_path / "current.yml", YAML_TEXT, changes)
    # only the last source (the 4th) gets the new line: the first "section" belongs to the 2nd source
    expected = YAML_TEXT.replace(
        '{url: "https://example.com/moved", sourceGranularity: dedicated}',
        '{url: "https://example.com/new place: yes", sourceGranularity: dedicated, verifiedDate: "2026-11-24"}',
    )
    expected = expected[: expected.rindex("section\n") + len("section\n")] + "          verifiedDate: 2026-11-24\n"
    assert new == expected


def test_yaml_plain_url_that_needs_quotes_is_quoted(tmp_path: Path) -> None:
    new = _edit(tmp_path / "current.yaml", YAML_TEXT, [Change(SOURCE, "url", "https://example.com/a #b")])
    assert new == YAML_TEXT.replace("url: https://example.com/good  #", 'url: "https://example.com/a #b"  #')


def test_setting_a_value_to_itself_is_no_edit(tmp_path: Path) -> None:
    path = tmp_path / "current.yaml"
    path.write_text(YAML_TEXT)
    source, _ = load_file(path)
    assert source is not None
    edit = edit_file(source, [Change(SECOND, "status", "unknown")])
    assert not edit.changed and edit.diff("x") == ""


def test_a_file_changed_since_it_was_read_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "current.json"
    path.write_text(JSON_TEXT)
    source, _ = load_file(path)
    assert source is not None
    edit = edit_file(source, [Change(SOURCE, "verifiedDate", date(2026, 11, 24).isoformat())])
    path.write_text(JSON_TEXT.replace("Hooks", "Hooks!"))
    with pytest.raises(RewriteError, match="changed"):
        write_file(source, edit)
    assert "Hooks!" in path.read_text()


def test_json_with_duplicate_keys_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "current.json"
    path.write_text('{"capabilities": [{"sources": [{"url": "a", "url": "b"}]}]}')
    source, _ = load_file(path)
    assert source is not None
    with pytest.raises(RewriteError, match="duplicate"):
        edit_file(source, [Change(SOURCE, "verifiedDate", "2026-11-24")])


def test_every_bundled_source_can_be_dated_without_touching_anything_else(tmp_path: Path) -> None:
    """The bundled catalog's real formatting: a date and `status: active` for every source, nothing else."""
    import json
    import shutil

    from capidx.compiler.validate.discover import catalog_documents

    root = Path(__file__).resolve().parents[1] / "agents"
    documents = catalog_documents(root)
    assert documents
    for original in documents:
        path = tmp_path / original.parent.parent.name / "current.json"
        path.parent.mkdir()
        shutil.copyfile(original, path)
        source, _ = load_file(path)
        assert source is not None
        changes = [
            Change(("capabilities", c, "sources", s), key, value)
            for c, capability in enumerate(source.data["capabilities"])
            for s, _ in enumerate(capability.get("sources", []))
            for key, value in (("verifiedDate", "2026-11-24"), ("status", "active"))
        ]
        edit = edit_file(source, changes)
        lines = edit.diff("x").splitlines()[2:]
        removed = {line[1:].strip().rstrip(",") for line in lines if line.startswith("-")}
        added = {line[1:].strip().rstrip(",") for line in lines if line.startswith("+")}
        new_values = {'"verifiedDate": "2026-11-24"', '"status": "active"'}
        # a line changes only to gain a comma, or because it is a status; new lines are the new values
        assert added - removed <= new_values
        assert all(line in added or line.startswith('"status": ') for line in removed)
        sources = [s for capability in json.loads(edit.new)["capabilities"] for s in capability.get("sources", [])]
        assert all(s["verifiedDate"] == "2026-11-24" and s["status"] == "active" for s in sources)


def test_a_linked_file_is_edited_through_its_link(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_text(JSON_TEXT)
    link = tmp_path / "current.json"
    link.symlink_to(target)
    source, _ = load_file(link)
    assert source is not None
    write_file(source, edit_file(source, [Change(SECOND, "status", "modified")]))
    assert link.is_symlink() and '"status" : "modified"' in target.read_text()
