"""Which sources a catalog cites, and what each one claims, read from the loaded documents.

Read leniently: a capability or source of the wrong shape is skipped (`capidx validate` reports it),
so that one broken record never hides the others from verification.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag

from capidx.compiler.validate.positions import Parts


@dataclass(frozen=True)
class Source:
    """One source of one capability: where it is written (`parts` is the JSON path of the source object)."""

    path: Path
    agent: str
    capability: str
    parts: Parts
    url: str
    granularity: str
    excerpt: str | None
    names: tuple[str, ...]  # the capability's name, aliases and terminology: what the page should mention
    status: str | None
    verified_date: str | None
    line: int | None = None
    col: int | None = None

    @property
    def page_url(self) -> str:
        """The URL without its fragment: what is fetched (a fragment is never sent to the server)."""
        return urldefrag(self.url).url

    @property
    def fragment(self) -> str:
        return urldefrag(self.url).fragment


def document_sources(path: Path, agent: str, data: Any) -> list[Source]:
    """Every source of every capability in one document, in document order."""
    capabilities = data.get("capabilities") if isinstance(data, dict) else None
    found: list[Source] = []
    for index, capability in enumerate(capabilities if isinstance(capabilities, list) else []):
        if not isinstance(capability, dict) or not isinstance(capability.get("sources"), list):
            continue
        names = _names(capability)
        for number, source in enumerate(capability["sources"]):
            if not isinstance(source, dict) or not isinstance(source.get("url"), str):
                continue
            found.append(
                Source(
                    path=path,
                    agent=agent,
                    capability=str(capability.get("name", "?")),
                    parts=("capabilities", index, "sources", number),
                    url=source["url"],
                    granularity=str(source.get("sourceGranularity", "")),
                    excerpt=source["excerpt"] if isinstance(source.get("excerpt"), str) else None,
                    names=names,
                    status=source["status"] if isinstance(source.get("status"), str) else None,
                    verified_date=source["verifiedDate"] if isinstance(source.get("verifiedDate"), str) else None,
                )
            )
    return found


def _names(capability: dict[str, Any]) -> tuple[str, ...]:
    names = [capability.get("name"), capability.get("terminology")]
    aliases = capability.get("aliases")
    names += aliases if isinstance(aliases, list) else []
    return tuple(name for name in names if isinstance(name, str) and name.strip())
