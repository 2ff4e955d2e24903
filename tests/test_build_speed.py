"""The shortcuts that make large builds fast must give exactly the answers of the slow ways.

- token counts of texts tokenized together in one call (joined by a special token) equal
  `encode_ordinary` text by text, whatever the texts contain;
- (positions found on demand equal those of the full scan: tests/test_validate_positions.py);
- the cache of compiled templates never changes an output and never fails a build;
- files written by the helper process are those written without it, and a failure leaves nothing.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import jinja2.bccache
import pytest

from capidx.compiler.emit.tokens import TokenCounter, load_encoding
from capidx.compiler.emit.write import TreeWriter
from capidx.compiler.render import environment as render

REPO = Path(__file__).resolve().parent.parent
PIECES = [
    "a",
    "bc",
    " ",
    "  ",
    "\n",
    "\n\n",
    "\r\n",
    "\t",
    ".",
    ",",
    '"',
    "'s",
    "1",
    "234",
    "é",
    "字",
    "🙂",
    "\u00a0",
    "\x1c",
    "<|endoftext|>",
    "<|fim_prefix|>",
    "<|endofprompt|>",
    "<|",
    "|>",
    "endoftext",
    "{",
    '"key":',
]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_batched_token_counts_equal_encode_ordinary() -> None:
    rng = random.Random(7)
    texts = ["", " ", "\n", "<|endoftext|>", "x<|endoftext|>y", "<|fim_prefix|>"]
    texts += ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 60))) for _ in range(1500)]
    texts += [path.read_text("utf-8") for path in sorted((REPO / "docs").glob("*.md"))]
    encoding = load_encoding("cl100k_base")
    counter = TokenCounter(["cl100k_base"], threads=2)
    try:
        counts = counter.count([(_sha(text), text) for text in texts])
    finally:
        counter.close()
    assert [row["cl100k_base"] for row in counts] == [len(encoding.encode_ordinary(text)) for text in texts]


def test_submitted_texts_are_counted_once_and_known_ones_never() -> None:
    known = {_sha("known"): {"cl100k_base": 99}}
    counter = TokenCounter(["cl100k_base"], known)
    try:
        for text in ("known", "fresh", "fresh", "other"):
            counter.submit(_sha(text), text)
        counter.wait()
    finally:
        counter.close()
    assert counter.counts(_sha("known")) == {"cl100k_base": 99}
    assert counter.counts(_sha("fresh")) == {"cl100k_base": 1}
    assert counter.encoded_texts == 2


def test_nothing_to_count_loads_nothing() -> None:
    def refuse(name: str) -> None:
        raise AssertionError("loaded")

    counter = TokenCounter(["cl100k_base"], {_sha("a"): {"cl100k_base": 1}}, loader=refuse)
    assert counter.count([(_sha("a"), "a")]) == [{"cl100k_base": 1}]
    assert counter.loaded == ()
    counter.close()


def test_template_cache_holds_bundled_templates_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render, "_bytecode_cache", lambda: render._BytecodeCache(pattern="test-%s.cache"))
    monkeypatch.setattr(render._BytecodeCache, "_get_default_cache_dir", lambda self: str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    user = tmp_path / "templates"
    user.mkdir()
    (user / "agent.md.j2").write_text("user {{ 1 + 1 }}\n", "utf-8")
    for _ in range(2):  # the second time from the cache
        env = render.make_environment(user)
        assert env.get_template("agent.md.j2").render() == "user 2\n"
        assert env.get_template("summary.md.j2") is not None
    cached = list((tmp_path / "cache").iterdir())
    assert cached and len(cached) < len(render.template_names(env))  # bundled ones, not the user's agent.md.j2


def test_a_broken_template_cache_does_not_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setattr(render, "_bytecode_cache", lambda: render._BytecodeCache(pattern="test-%s.cache"))
    monkeypatch.setattr(render._BytecodeCache, "_get_default_cache_dir", lambda self: str(cache))
    render.make_environment(None).get_template("summary.md.j2")
    for entry in cache.iterdir():
        entry.write_bytes(jinja2.bccache.bc_magic + b"\x00garbage")  # damaged entries are compiled afresh
    assert render.make_environment(None).get_template("summary.md.j2") is not None
    for entry in cache.iterdir():
        entry.unlink()

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(jinja2.bccache.tempfile, "NamedTemporaryFile", full_disk)  # unwritable: not stored
    assert render.make_environment(None).get_template("summary.md.j2") is not None
    assert not list(cache.iterdir())


def _tree(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


@pytest.mark.parametrize("helper_after", [1, 10**9])  # with the helper process from the first file; without
def test_tree_writer_writes_links_and_swaps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helper_after: int) -> None:
    monkeypatch.setattr(TreeWriter, "HELPER_AFTER", helper_after)
    out = tmp_path / "build"
    first = {"manifest.json": b"{}", "a/x.md": b"x" * 10, "a/b/y.json": b"{}", "z.md": b""}
    writer = TreeWriter(out)
    for path, data in first.items():
        writer.add(path, data, _sha(data.decode()))
    assert writer.finish() == 0
    assert _tree(out) == first
    second = {**first, "a/x.md": b"changed", "new.md": "é".encode()}
    previous = {path: _sha(data.decode()) for path, data in first.items()}
    writer = TreeWriter(out, previous)
    for path, data in second.items():
        writer.add(path, data, _sha(data.decode()))
    assert writer.finish() == 3  # manifest.json, a/b/y.json and z.md are unchanged: linked
    assert _tree(out) == second
    assert [p.name for p in tmp_path.iterdir()] == ["build"]  # no temporary directory left


def test_tree_writer_failure_leaves_the_current_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TreeWriter, "HELPER_AFTER", 1)
    out = tmp_path / "build"
    writer = TreeWriter(out)
    writer.add("manifest.json", b"{}")
    writer.finish()
    writer = TreeWriter(out)
    writer.add("a", b"a file")
    writer.add("a/b.md", b"below a file: cannot be created")
    with pytest.raises(OSError, match="failed"):
        for index in range(2000):  # the helper has stopped: sending more fails, or finishing does
            writer.add(f"more/{index}.md", b"x" * 1000)
        writer.finish()
    writer.abort()
    assert _tree(out) == {"manifest.json": b"{}"}
    assert [p.name for p in tmp_path.iterdir()] == ["build"]


def test_tree_writer_abort_removes_everything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TreeWriter, "HELPER_AFTER", 1)
    writer = TreeWriter(tmp_path / "build")
    writer.add("a.md", b"a")
    writer.abort()
    assert list(tmp_path.iterdir()) == []
