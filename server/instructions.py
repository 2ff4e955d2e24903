"""What the server sends as `InitializeResult.instructions`: a short pointer, or the build's overview.

Clients such as Claude Code put the server's instructions into the first turn of every session (and cut
them at 2,048 characters); most never read a resource. `summary` sends the build's `instructions.md`
verbatim (fitted to its character budget at build time, so nothing is cut); `pointer` sends a short text
naming the tools and the summary resource. Imports nothing of the MCP SDK: `capidx serve` checks the
choice before importing it.
"""

from __future__ import annotations

import logging

from capidx.server.settings import Settings
from capidx.server.snapshot import BuildError, Snapshot

logger = logging.getLogger("capidx.server")

CHOICES = ("pointer", "summary")
POINTER = (
    "What AI coding agents can do, per agent and capability. Use lookup_capability for one agent and one "
    "capability, compare_capability across agents, list_capabilities to browse."
)


class MissingInstructions(BuildError):
    """`--instructions summary` was asked for, and the build has no instructions.md (an older build)."""


def server_instructions(
    snapshot: Snapshot, settings: Settings, kinds: frozenset[str], *, fallback: bool = False
) -> str:
    """The instructions for `settings.instructions`; `kinds`: the resource kinds exposed (the pointer names
    the summary resource only when it is exposed).

    A build without instructions.md (made by an older capidx): an explicit `summary` (flag, environment,
    capidx.yaml) is refused with `MissingInstructions` (unless `fallback`: a build swapped in while serving);
    otherwise the pointer is sent, with a warning."""
    if settings.instructions == "summary":
        overview = snapshot.variant("instructions")
        if overview is not None:
            return overview.text
        why = f"{snapshot.directory} has no instructions.md (built by an older capidx)"
        source = settings.sources.get("instructions", "default")
        if source != "default" and not fallback:
            raise MissingInstructions(
                f"{why}, so there is nothing to send for instructions=summary ({source}): run `capidx build`, "
                "or choose --instructions pointer"
            )
        logger.warning("%s: sending the pointer as the server instructions; run `capidx build`", why)
    return pointer(snapshot, kinds)


def pointer(snapshot: Snapshot, kinds: frozenset[str]) -> str:
    """The short pointer: what the server is for, its tools, and the summary resource when it is exposed."""
    summary = snapshot.variant("summary")
    if summary is not None and "summary" in kinds:
        described = summary.description.rstrip(".")
        return f"{POINTER} The resource {summary.uri} is a compact overview: {described}."
    return POINTER
