"""Meaning beside words, for what is offered when nothing resolves: the ranking model's confidence plus `WEIGHT`
times the cosine, in WordLlama's static word embeddings, between the query and a capability's name and records'
descriptions (match.json `descriptions`). A question often shares few words with the right record and some with
another (it asks about mistakes, the record speaks of bugs). Meaning orders what the words found and, for a sentence
they found nothing for, picks the closest capabilities to suggest; nothing resolves or says "no" by meaning. The model
ships in the `wordllama` package and is read from it, never downloaded, once per process, as a server starts
(`prepare`); without it, or once an embedding has failed, the order stays the ranking model's and the names closest in
spelling are suggested.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capidx.server.model_calls import ModelCalls

WEIGHT = 0.5  # fitted on the blind query sets (benchmarks/resolution/RESULTS.md)
_LOCK = threading.Lock()  # loading the model, or giving it up; never held while a catalog is embedded
_LOADED: list[Any] = []  # [] not tried yet, [None] unavailable, [model]
logger = logging.getLogger(__name__)
_CALLS = ModelCalls.at_exit()  # a stop lets a call into the model's Rust code end first


def model() -> Any | None:
    """The embedding model, loaded once per process from the files its package ships; None if unavailable.

    Once loaded (or given up), answered without the lock: a lookup on the event loop must never wait for a thread
    that holds it."""
    if _LOADED:
        return _LOADED[0]
    with _LOCK:
        if not _LOADED:
            try:
                import wordllama

                here = Path(wordllama.__file__).parent
                with _CALLS.call():
                    _LOADED.append(wordllama.WordLlama.load(cache_dir=here, disable_download=True))
            except Exception as error:  # not installed, or its files are missing: words alone order the offer
                logger.warning("suggestions ordered by words only: no embedding model (%s)", error)
                _LOADED.append(None)
        return _LOADED[0]


@dataclass(frozen=True)
class Meanings:
    """Each capability's text, embedded once per build (`prepare`, or the first lookup that needs it)."""

    texts: Mapping[str, str]  # slug -> name and descriptions
    _matrix: list[Any] = field(default_factory=list, repr=False, compare=False)  # [one row per text, in order]
    # This catalog's own: a reload embeds the new build's (seconds, for a large one) while lookups on the build
    # served, on the event loop, go on using its matrix; one lock for every catalog made them wait for it.
    _embedding: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @classmethod
    def of(cls, rows: Iterable[Mapping[str, Any]]) -> Meanings:
        """From match.json's capability rows (a build made before `descriptions`: none, and no reordering)."""
        return cls({r["slug"]: " . ".join([r["name"], *r["descriptions"]]) for r in rows if "descriptions" in r})

    @property
    def pending(self) -> bool:
        """Whether a lookup may still have to load the model or embed the catalog (0.4 s; seconds for a large one).

        Read without a lock: the matrix is appended whole, once embedded, and the model is set once, so a stale
        answer can only be True (the lookup then runs in a thread, needlessly); False stays False."""
        return bool(self.texts) and not self._matrix and _LOADED != [None]

    def prepare(self) -> None:
        """Load the model and embed the catalog before any lookup needs them: a server does so off the event loop
        when it starts (server/serve.py) and before it swaps a new build in (server/reload.py), so that no lookup
        waits 0.4 s for them or leaves the event loop (`pending`) for a name."""
        if self.closeness(next(iter(self.texts.values()), "")) is not None:
            logger.info("suggestions ordered by meaning: %d capabilities embedded", len(self.texts))

    def closeness(self, query: str) -> dict[str, float] | None:
        """Slug -> cosine of meaning with the query; None without the model, the texts or a working embedding."""
        found = model() if self.texts else None
        if found is None:
            return None
        try:
            if not self._matrix:
                with self._embedding:  # one embedding, whichever of `prepare` and the lookups comes first
                    if not self._matrix:
                        with _CALLS.call():
                            self._matrix.append(found.embed(list(self.texts.values()), norm=True))
            text = query.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate fails only this query
            with _CALLS.call():
                asked = found.embed([text], norm=True)[0]
            cosines = (self._matrix[0] @ asked).tolist()
        except Exception as error:  # a failing model must not fail the lookup: words alone order the offer, from now on
            logger.warning("suggestions ordered by words only: embedding failed (%s)", error)
            with _LOCK:
                _LOADED[:] = [None]
            return None
        return {slug: c for slug, c in zip(self.texts, cosines, strict=True) if c == c}  # NaN (an empty query): none
