"""An orders service on FastMCP that answers JSON as text content, as many servers do: the
FastMCP server of the QA trial of issue #38 (run with the pinned FastMCP of
../fastmcp/requirements.txt). Its tools return `json.dumps(...)` with no output schema, so a
client sees one text block holding JSON and no `structuredContent`.

    ../fastmcp/.venv/bin/python orders.py    # stdio
"""

from __future__ import annotations

import json
import sys

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from mcp.types import ToolAnnotations

ORDERS = [
    {"id": 101, "status": "open", "total": 12.5, "items": ["pen", "ink"]},
    {"id": 102, "status": "shipped", "total": 40.0, "items": ["lamp"]},
    {"id": 103, "status": "open", "total": 7.25, "items": ["paper"]},
]

READ_ONLY = ToolAnnotations(readOnlyHint=True, openWorldHint=False)

mcp = FastMCP("mcpspec-interop-orders", version="1.0.0")


@mcp.tool(output_schema=None, annotations=READ_ONLY)
def list_orders(status: str = "any") -> str:
    """The orders with this status (`any`: all), as JSON text: {"orders": [...], "count": N}."""
    orders = [o for o in ORDERS if status in ("any", o["status"])]
    return json.dumps({"orders": orders, "count": len(orders)})


@mcp.tool(output_schema=None, annotations=READ_ONLY)
def get_order(id: int) -> str:
    """One order by its id, as JSON text."""
    for order in ORDERS:
        if order["id"] == id:
            return json.dumps(order)
    raise ToolError(f"no order {id}")


@mcp.tool(output_schema=None, annotations=READ_ONLY)
def order_stats() -> str:
    """Counts by status and the total value, as JSON text."""
    by_status: dict[str, int] = {}
    for order in ORDERS:
        by_status[order["status"]] = by_status.get(order["status"], 0) + 1
    return json.dumps({"byStatus": by_status, "value": sum(o["total"] for o in ORDERS)})


if __name__ == "__main__":
    mcp.run("stdio", show_banner=False)
    sys.exit(0)
