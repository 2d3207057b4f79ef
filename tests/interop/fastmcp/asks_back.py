"""A FastMCP server whose tools ask the client back (run with the pinned FastMCP 4.2.3 of
requirements.txt, or FastMCP 2.14.7 of ../fastmcp-2.14.7, like server.py).

`confirm` asks the user to confirm an action, the way FastMCP documents it for each era:
legacy (2025-11-25), `ctx.elicit()` — a server-to-client `elicitation/create` while the call
is in flight; 2026-07-28, the guard pattern — an `InputRequiredResult` whose input request the
client answers in the retry (`ctx.input_responses`, the `requestState` echoed).

`summarize` (`ctx.sample()`) and `roots` (`ctx.list_roots()`) are served where FastMCP has
them — 2.14.7, legacy only; 4.2.3 has neither (sampling and roots are deprecated in
2026-07-28). Over Streamable HTTP mcp 1.30's `list_roots()` is tied to no call: the request
goes on the session's GET stream.

    .venv/bin/python asks_back.py              # stdio
    .venv/bin/python asks_back.py --http PORT  # Streamable HTTP, as server.py --http
"""

from __future__ import annotations

import sys

import mcp.types as mcp_types
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.elicitation import AcceptedElicitation
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

mcp = FastMCP("mcpspec-interop-fastmcp-asks-back", version="1.0.0")


class Confirmation(BaseModel):
    confirm: bool = Field(default=True, description="Go ahead")
    note: str = Field(default="", description="Why")


def _answer(action: str, content: dict | None) -> str:
    if content is None:
        return f"{action}: not confirmed"
    return f"{action}: confirm={content.get('confirm')} note={content.get('note', '')}"


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def confirm(action: str, ctx: Context) -> str:
    """Ask the user to confirm an action."""
    message = f"Confirm {action}?"
    responses = getattr(ctx, "input_responses", None)
    if responses is None and getattr(ctx, "request_state", None) is None:
        try:
            asked = await ctx.elicit(message, response_type=Confirmation)
        except ToolError:
            # 2026-07-28: no server-initiated requests; ask with an input_required result.
            return mcp_types.InputRequiredResult(
                input_requests={
                    "confirm": mcp_types.ElicitRequest(
                        params=mcp_types.ElicitRequestFormParams(
                            message=message,
                            requested_schema=Confirmation.model_json_schema(),
                        )
                    )
                },
                request_state=f"confirm:{action}",
            )
        if isinstance(asked, AcceptedElicitation):
            return _answer(action, asked.data.model_dump())
        return f"{action}: {asked.action}"
    response = (responses or {}).get("confirm")
    answer = response.model_dump() if hasattr(response, "model_dump") else response or {}
    if answer.get("action") != "accept":
        return f"{action}: {answer.get('action')}"
    return _answer(action, answer.get("content"))


if hasattr(Context, "sample"):

    @mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))
    async def summarize(text: str, ctx: Context) -> str:
        """Ask the client's model to summarize a text."""
        sampled = await ctx.sample(f"Summarize: {text}", max_tokens=60)
        return f"summary: {sampled.text}"


if hasattr(Context, "list_roots"):

    @mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))
    async def roots(ctx: Context) -> str:
        """List the client's roots."""
        return "roots: " + ", ".join(str(root.uri) for root in await ctx.list_roots())


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        import server

        server.mcp = mcp
        server.serve_http(int(sys.argv[2]))
    else:
        mcp.run("stdio", show_banner=False)
    sys.exit(0)
