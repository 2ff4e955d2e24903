"""Token counts are exact, reused by sha256, and cost nothing when nothing changed.

- `TokenCounter` (tiktoken's batch API) gives exactly `len(encode_ordinary(text))` for any text,
  special-token strings included, across batches;
- a text is counted once, a known count never, and an encoding loads only when a text needs it;
- a cold build's manifest holds, for every artifact (packed answers included), exactly
  `len(encode_ordinary(its text))`;
- manifest rows assembled before the counts are known are canonical JSON, packed or not.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest
from catalog_factory import write_catalog
from manifest_factory import artifact_bytes

from capidx.compiler.config import default_config
from capidx.compiler.emit.pipeline import run_build
from capidx.compiler.emit.tokens import TokenCounter, load_encoding

REPO = Path(__file__).resolve().parent.parent
ENCODING = load_encoding("cl100k_base")
PIECES = [
    "a", "bc", " ", "  ", "\n", "\n\n", "\r\n", "\t", ".", ",", '"', "'s", "1", "234", "é", "字", "🙂", "\u00a0",
    "\x1c", "<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>", "<|", "|>", "endoftext", "{", '"key":',
]  # fmt: skip


def _tokens(text: str) -> int:
    return len(ENCODING.encode_ordinary(text))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_batched_counts_equal_encode_ordinary_across_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TokenCounter, "BATCH_CHARS", 5_000)  # many batches, some texts alone in one
    rng = random.Random(7)
    texts = ["", " ", "\n", "<|endoftext|>", "x<|endoftext|>y", "<|fim_prefix|>"]
    texts += ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 60))) for _ in range(1500)]
    texts += [path.read_text("utf-8") for path in sorted((REPO / "docs").glob("*.md"))]
    counter = TokenCounter(["cl100k_base"])
    counts = counter.count([(_sha(text), text) for text in texts])
    assert [row["cl100k_base"] for row in counts] == [_tokens(text) for text in texts]


def test_submitted_texts_are_counted_once_and_known_ones_never() -> None:
    known = {_sha("known"): {"cl100k_base": 99}}
    counter = TokenCounter(["cl100k_base"], known)
    for text in ("known", "fresh", "fresh", "other"):
        counter.submit(_sha(text), text)
    counter.wait()
    assert counter.counts(_sha("known")) == {"cl100k_base": 99}
    assert counter.counts(_sha("fresh")) == {"cl100k_base": 1}
    assert counter.encoded_texts == 2


def test_nothing_to_count_loads_nothing() -> None:
    def refuse(name: str) -> None:
        raise AssertionError("loaded")

    counter = TokenCounter(["cl100k_base"], {_sha("a"): {"cl100k_base": 1}}, loader=refuse)
    assert counter.count([(_sha("a"), "a")]) == [{"cl100k_base": 1}]
    assert counter.loaded == () and counter.encoded_texts == 0


def test_a_count_known_in_one_encoding_is_asked_only_in_the_other() -> None:
    class Characters:
        """Counts characters, and records what it was asked to encode."""

        def __init__(self) -> None:
            self.seen: list[str] = []

        def encode_ordinary_batch(self, texts: list[str], num_threads: int = 8) -> list[list[int]]:
            self.seen.extend(texts)
            return [[0] * len(text) for text in texts]

    fakes = {"one": Characters(), "two": Characters()}
    counter = TokenCounter(["one", "two"], {_sha("abc"): {"one": 7}}, loader=fakes.__getitem__)
    assert counter.count([(_sha("abc"), "abc")]) == [{"one": 7, "two": 3}]
    assert (fakes["one"].seen, fakes["two"].seen) == ([], ["abc"])
    assert counter.loaded == ("two",)


def test_a_cold_build_measures_every_artifact_exactly(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    result = run_build(default_config(tmp_path).with_overrides(out=tmp_path / "build"), verbosity=-1)
    assert result.exit_code == 0 and result.encoders_loaded == ("cl100k_base",)
    manifest = json.loads((tmp_path / "build" / "manifest.json").read_text("utf-8"))
    assert any("offset" in row for row in manifest["artifacts"])  # packed answers are measured as themselves
    for row in manifest["artifacts"]:
        text = artifact_bytes(tmp_path / "build", row).decode("utf-8")
        assert row["tokens"]["cl100k_base"] == _tokens(text), row["uri"]


@pytest.mark.parametrize("offset", [None, 0, 123456])
@pytest.mark.parametrize("encodings", [("cl100k_base",), ("o200k_base", "cl100k_base")])
def test_manifest_rows_made_before_the_counts_are_canonical_json(
    encodings: tuple[str, ...], offset: int | None
) -> None:
    """`PendingRow` assembles an entry's JSON from pieces made before the counts are known: it must be
    `canonical_json` of the entry, whatever the text holds (quotes, backslashes, controls, non-ASCII)."""
    from capidx.compiler.artifacts import Measured, make_artifact
    from capidx.schema.text import canonical_json

    odd = 'say "hi" \\ back\tslash\n\u2028 é 字 🙂 \x01'
    artifact = make_artifact(
        "lookup", f"tools/lookup/a/{odd}.json", "capability-index://", f"Title {odd}", f"Blurb {odd}", "{}",
        agent=odd, capability="x",
    )  # fmt: skip
    tokens = {name: 1234567 + index for index, name in enumerate(encodings)}
    measured = Measured(artifact.without_text(), 42, "ab" * 32, tokens, 7, 1, offset=offset)
    primary = encodings[0]
    entry, text = measured.manifest_entry(primary)
    assert text == canonical_json(entry)
    placed = {"path": artifact.path} if offset is None else {"path": "tools/lookup.pack", "offset": offset}
    assert entry == {
        "kind": "lookup",
        "uri": artifact.uri,
        **placed,
        "mimeType": "application/json",
        "title": artifact.title,
        "description": f"{artifact.blurb} {tokens[primary]:,} tokens ({primary}).",
        "bytes": 42,
        "sha256": "ab" * 32,
        "tokens": dict(sorted(tokens.items())),
        "words": 7,
        "lines": 1,
        "params": {"agent": odd, "capability": "x"},
    }
