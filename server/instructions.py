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

POINTER = (
    "What AI coding agents can do, per agent and capability. Use lookup_capability for one agent and one "
    "capability, compare_capability across agents, list_capabilities to browse, get_sources for the documentation "
    "behind an answer."
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
        if not fallback:
            refuse_missing_instructions(snapshot, settings)
        logger.warning("%s: sending the pointer as the server instructions; run `capidx build`", _missing(snapshot))
    text = pointer(snapshot, kinds)
    if (variants := settings.tool_variants) and "summary" in variants:  # where resources are not read
        text += " get_capability_index returns the overview (variant summary)."
    return text


def refuse_missing_instructions(snapshot: Snapshot, settings: Settings) -> None:
    """Raise `MissingInstructions` when `summary` was asked for explicitly and the build has no instructions.md.

    Why apart: `capidx serve` checks this before importing the SDK, and the warning of the default's
    fallback is left to the one `server_instructions` call that builds the server, so it is logged once."""
    source = settings.sources.get("instructions", "default")
    if settings.instructions == "summary" and source != "default" and snapshot.variant("instructions") is None:
        raise MissingInstructions(
            f"{_missing(snapshot)}, so there is nothing to send for instructions=summary ({source}): "
            "run `capidx build`, or choose --instructions pointer"
        )


def _missing(snapshot: Snapshot) -> str:
    return f"{snapshot.directory} has no instructions.md (built by an older capidx)"


def pointer(snapshot: Snapshot, kinds: frozenset[str]) -> str:
    """The short pointer: what the server is for, its tools, and the summary resource when it is exposed."""
    summary = snapshot.variant("summary")
    if summary is not None and "summary" in kinds:
        described = summary.description.rstrip(".")
        return f"{POINTER} For an overview, read the resource {summary.uri}: {described}."
    return POINTER
