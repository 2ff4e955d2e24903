"""The cache of compiled bundled templates never changes an output and never fails a build."""

from __future__ import annotations

from pathlib import Path

import jinja2.bccache
import pytest

from capidx.compiler.render import environment as render


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
