#!/usr/bin/env python3
"""A hostile MCP stdio server for tests/hostile.rs (#22 item 9): before serving, it starts a
grandchild-to-be that leaves every trace mcpspec could follow — it calls setsid() (out of
the server's process group) and runs with an empty environment (no marker) — and stays
under the server, which then serves normally (`server.py correct`, same pid). When the
server exits on shutdown the grandchild is re-parented away: only the tree taken before
stdin was closed still reaches it."""

import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

if os.fork() == 0:
    os.setsid()
    os.execve(shutil.which("sleep") or "/bin/sleep", ["sleep", "303"], {})
os.execvp(sys.executable, [sys.executable, os.path.join(HERE, "server.py"), "correct"])
