"""The input digest covers every piece of code that shapes build output, so a no-op rebuild is never stale."""

from __future__ import annotations

import importlib.util
from importlib import resources

from capidx.compiler.emit import digest


def test_the_fingerprint_covers_the_compiler_and_the_contract_and_not_the_server() -> None:
    assert digest.FINGERPRINTED_PACKAGES == ("capidx.compiler", "capidx.schema")


def test_a_module_deep_in_a_stage_changes_the_fingerprint(monkeypatch) -> None:
    """Every .py file of the fingerprinted packages counts, however deep: a stage's module changing must make
    the next build a full one."""
    spec = importlib.util.find_spec("capidx.compiler.derive.relations")
    assert spec is not None and spec.origin is not None
    before = digest.compiler_fingerprint()
    real_read_bytes = type(resources.files("capidx.compiler")).read_bytes

    def edited(self):  # the same file with one byte more, as an edit would leave it
        data = real_read_bytes(self)
        return data + b"#" if str(self) == spec.origin else data

    digest.compiler_fingerprint.cache_clear()
    monkeypatch.setattr(type(resources.files("capidx.compiler")), "read_bytes", edited)
    try:
        assert digest.compiler_fingerprint() != before
    finally:
        digest.compiler_fingerprint.cache_clear()
