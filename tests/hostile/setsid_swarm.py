#!/usr/bin/env python3
"""A hostile MCP stdio server for tests/hostile.rs (#40 item 11): before serving, it starts
1,100 children that each call setsid() (out of the server's process group, more than one
walk of the process tree used to take), then serves normally (`server.py correct`, same
pid). Each child is a `sleep 60`: bounded, so a failing test leaves nothing for long."""

import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CHILDREN = 1100

SLEEP = shutil.which("sleep") or "/bin/sleep"
quiet = os.open(os.devnull, os.O_RDWR)
stdio = [(os.POSIX_SPAWN_DUP2, quiet, fd) for fd in (0, 1, 2)]
for _ in range(CHILDREN):
    os.posix_spawn(SLEEP, ["sleep", "60"], os.environ, file_actions=stdio, setsid=True)
os.close(quiet)
os.execvp(sys.executable, [sys.executable, os.path.join(HERE, "server.py"), "correct"])
