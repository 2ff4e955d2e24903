"""A request before `initialize` is told that the session is not initialized (issue #31 item 4).

The SDK (mcp 2.3, `ServerRunner._on_request`) refuses a request that comes before `initialize` with
-32602 "Invalid request parameters", kept for compatibility with its older validation, although the
parameters are fine. This middleware leaves every decision to the SDK (only `ping` is answered before
`initialize`, an unknown method is still -32601, bad parameters still -32602) and only rewords that
refusal: -32600 Invalid Request, the JSON-RPC code for a request that is not valid as sent, saying what
to send first. MCP defines no code of its own for this; -32002, which other protocols use, was MCP's
"resource not found".
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, INVALID_REQUEST

NOT_INITIALIZED = "Invalid Request: the session is not initialized: send initialize first (only ping comes before it)"


async def explain_uninitialized(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Server middleware: the SDK's refusal of a request before `initialize`, reworded."""
    try:
        return await call_next(ctx)
    except MCPError as error:
        if error.error.code != INVALID_PARAMS or ctx.method == "initialize" or _initialized(ctx.session):
            raise
        raise MCPError(INVALID_REQUEST, NOT_INITIALIZED) from None


def _initialized(session: Any) -> bool:
    """Whether the connection has passed the SDK's initialize gate. mcp 2.x keeps that state on the
    session's private connection; should it move, the gate counts as passed (nothing is reworded) and
    tests/test_security_stdio.py fails."""
    return bool(getattr(getattr(session, "_connection", None), "initialize_accepted", True))
