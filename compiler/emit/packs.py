"""Which artifacts are packed, and where: the tool answers, one pack file per tool.

A build has a few tool answers per capability (lookup and sources per agent, compare, snippets, lists):
one file each would make a build of 1,000 capabilities write thousands of files, and creating files is
the largest cost of a cold build. Each tool's answers are instead written back to back into one file
(`tools/<tool>.pack`); the manifest gives each answer's `path` (the pack), `offset` and `bytes`, and its
own sha256 and token counts, and the server serves exactly those bytes (docs/build-directory.md, "Packs").
Resources (summary, full, stats, agents, capabilities, categories) and the index stay one file each:
they are what a static host or a person opens directly.
"""

from __future__ import annotations

PACKS = {
    "lookup": "tools/lookup.pack",
    "compare": "tools/compare.pack",
    "list": "tools/list.pack",
    "sources": "tools/sources.pack",
    "snippet": "tools/snippets.pack",
}


def pack_path(kind: str) -> str | None:
    """The pack holding answers of `kind`, or None when each artifact of that kind is a file of its own."""
    return PACKS.get(kind)
