"""`capidx inject`: keep one marked block in a Markdown memory file (AGENTS.md, CLAUDE.md, …) equal to the
build's `memory` artifact, changing no byte outside the block.

- `block`: pure text work: find the markers, say whether a block is current, splice the new one in;
- `target`: the files named on the command line: inside the project, regular, UTF-8, bounded; atomic writes;
- `inputs`: what the project's build reads (capability documents, the alias table, templates, …): never written;
- `run.execute`: the command end to end (read the build, check every file, then write or report).
"""
