#!/usr/bin/env python3
"""A hostile MCP stdio server for tests/hostile.rs (#27 §4): it serves as `server.py correct`
until it is asked for its tools, then dies of SIGKILL — a signal mcpspec did not send (as
from the OOM killer or a watchdog). The report must say so."""

import json
import os
import signal
import sys

sys.argv = [sys.argv[0], "correct"]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import server  # noqa: E402

for line in sys.stdin.buffer:
    req = json.loads(line)
    if req.get("method") == "tools/list":
        os.kill(os.getpid(), signal.SIGKILL)
    if "id" in req:
        server.serve_normally(req)
