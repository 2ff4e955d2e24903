"""The cache of compiled bundled templates never changes an output and never fails a build."""

from __future__ import annotations

from pathlib import Path

import jinja2.bccache
import jinja2.exceptions
import pytest

from capidx.compiler.render import environment as render


def test_template_cache_holds_bundled_templates_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # the cache is capidx's folder for this user
    user = tmp_path / "templates"
    user.mkdir()
    (user / "agent.md.j2").write_text("user {{ 1 + 1 }}\n", "utf-8")
    for _ in range(2):  # the second time from the cache
        env = render.make_environment(user)
        assert env.get_template("agent.md.j2").render() == "user 2\n"
        assert env.get_template("summary.md.j2") is not None
    cached = list((tmp_path / "capidx").glob("templates-*.cache"))
    assert cached and len(cached) < len(render.template_names(env))  # bundled ones, not the user's agent.md.j2


def test_a_broken_template_cache_does_not_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setattr(render, "_bytecode_cache", lambda: render._BytecodeCache(cache, "test-%s.cache"))
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


def test_an_entry_that_is_not_this_user_s_file_is_never_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry is compiled code: one written in the cache folder by another user (as if: the owner check answers no)
    is compiled afresh, whatever it holds; here it holds another template's code, which would be rendered."""
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setattr(render, "_bytecode_cache", lambda: render._BytecodeCache(cache, "test-%s.cache"))
    env = render.make_environment(None)
    cache_of = env.bytecode_cache
    assert cache_of is not None
    source, filename, _ = env.loader.get_source(env, "summary.md.j2")
    bucket = cache_of.get_bucket(env, "summary.md.j2", filename, source)
    bucket.code = env.compile("foreign", "summary.md.j2", filename)
    cache_of.set_bucket(bucket)
    assert render.make_environment(None).get_template("summary.md.j2").render() == "foreign"  # this user's: used
    monkeypatch.setattr(render, "owned", lambda descriptor: False)
    with pytest.raises(jinja2.exceptions.UndefinedError):  # the bundled template, compiled afresh, wants a catalog
        render.make_environment(None).get_template("summary.md.j2").render()
