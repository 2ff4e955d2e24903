"""The smallest MCP server the SDK makes: one static resource over stdio, for start-up comparisons.

    python benchmarks/minimal_server.py

`serve_bench.py --baseline` spawns it exactly as it spawns `capidx serve` and times spawn -> `initialize`
answered, so the ratio of the two is what `capidx` adds on top of the interpreter and the SDK
(issue 13 asks for at most 1.15x on the bundled build). Nothing here is capidx's.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("minimal")


@server.resource("minimal://hello", name="hello", mime_type="text/plain")
def hello() -> str:
    """One fixed text resource."""
    return "hello"


if __name__ == "__main__":
    server.run("stdio")
