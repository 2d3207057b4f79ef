"""A small but realistic MCP server on FastMCP (pinned in requirements.txt).

mcpspec's interop tests run the built-in conformance packs against it in both eras
(legacy 2025-11-25 with `initialize`, and 2026-07-28), over stdio and Streamable HTTP. The
corpus (tests/interop/corpus.tsv) also runs this same file with FastMCP 2.14.7's venv
(../fastmcp-2.14.7), which speaks the legacy era only.
It uses only FastMCP's decorators and its own stdio / HTTP app, the way a user's server
would.

    .venv/bin/python server.py                # stdio
    .venv/bin/python server.py --http PORT    # Streamable HTTP on 127.0.0.1:PORT/mcp;
                                              # PORT 0 picks a free port. The first line
                                              # on stdout is `listening on <URL>`.
"""

from __future__ import annotations

import argparse
import socket
import sys
from typing import Literal

from fastmcp import FastMCP
from fastmcp.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

NOTES: dict[str, str] = {
    "welcome": "Welcome to the FastMCP interop server.",
    "todo": "- pin every dependency\n- run the conformance packs in both eras",
}

mcp = FastMCP(
    "mcpspec-interop-fastmcp",
    version="1.0.0",
    instructions="Weather lookups, arithmetic and a small read-only notes store.",
)


class WeatherReport(BaseModel):
    """Current conditions for a city."""

    city: str
    temperature: float = Field(description="Temperature in the requested units")
    units: Literal["celsius", "fahrenheit"]
    conditions: str


_CONDITIONS = {"boston": (4.0, "snow"), "lisbon": (19.5, "sunny"), "oslo": (-3.0, "cloudy")}


@mcp.tool(
    title="Current weather",
    annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False),
)
def get_weather(city: str, units: Literal["celsius", "fahrenheit"] = "celsius") -> WeatherReport:
    """Current weather for a city (structured output)."""
    known = _CONDITIONS.get(city.lower())
    if known is None:
        raise ToolError(f"no weather data for {city!r}")
    celsius, conditions = known
    temperature = celsius if units == "celsius" else round(celsius * 9 / 5 + 32, 1)
    return WeatherReport(city=city, temperature=temperature, units=units, conditions=conditions)


@mcp.tool(title="Add", annotations=ToolAnnotations(readOnlyHint=True))
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool(output_schema=None)
def echo(text: str) -> str:
    """Echo the text back (unstructured output)."""
    return text


@mcp.resource("notes://welcome", name="welcome", title="Welcome note", mime_type="text/plain")
def welcome_note() -> str:
    """The welcome note."""
    return NOTES["welcome"]


@mcp.resource("notes://{name}", name="note", title="A note by name", mime_type="text/plain")
def note(name: str) -> str:
    """Any note by name."""
    if name not in NOTES:
        raise ResourceError(f"no note named {name!r}")
    return NOTES[name]


@mcp.prompt(title="Summarize")
def summarize(text: str, style: str = "brief") -> str:
    """Ask the model to summarize a text."""
    return f"Summarize the following text in a {style} style:\n\n{text}"


def serve_http(port: int) -> None:
    import anyio
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    sock.set_inheritable(True)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    # FastMCP's defaults, as `mcp.run("http")` would serve them.
    app = mcp.http_app(path="/mcp")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)

    async def main() -> None:
        # The socket is already listening: a client connecting now waits in the backlog.
        print(f"listening on {url}", flush=True)
        await server.serve(sockets=[sock])

    anyio.run(main)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--http", metavar="PORT", type=int, help="serve Streamable HTTP on 127.0.0.1:PORT (0: any)")
    args = parser.parse_args()
    if args.http is None:
        mcp.run("stdio", show_banner=False)
    else:
        serve_http(args.http)


if __name__ == "__main__":
    sys.exit(main())
