"""Meaning beside words, for what is offered when nothing resolves: the cosine, in WordLlama's static embeddings
(shipped in its package, never downloaded), between the query and a capability's name and descriptions. A question
often shares few words with the right record (it asks about mistakes, the record speaks of bugs). Nothing resolves
or says "no" by meaning; without the model the ranking model's order stands.
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
    """The model, loaded once per process, or None; once settled read without the lock, which the event loop never
    waits for."""
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
    # Per catalog: a reload embeds the new build's while lookups on the one served go on.
    _embedding: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @classmethod
    def of(cls, rows: Iterable[Mapping[str, Any]]) -> Meanings:
        return cls({r["slug"]: " . ".join([r["name"], *r["descriptions"]]) for r in rows if "descriptions" in r})

    @property
    def pending(self) -> bool:
        """Whether a lookup may still load the model or embed the catalog (0.4 s): lock-free, a stale answer is True."""
        return bool(self.texts) and not self._matrix and _LOADED != [None]

    def prepare(self) -> None:
        """Load and embed before any lookup needs it: off the event loop, at start and before a reload's swap."""
        if self.closeness(next(iter(self.texts.values()), "")) is not None:
            logger.info("suggestions ordered by meaning: %d capabilities embedded", len(self.texts))

    def closeness(self, query: str) -> dict[str, float] | None:
        """Slug -> cosine with the query; None without the model, the texts or a working embedding."""
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
