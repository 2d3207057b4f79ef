#!/usr/bin/env python3
"""A hostile MCP stdio server for tests/hostile.rs (#40 item 11): before serving, it starts
3 fork chains — each a process that calls setsid(), waits ~2 ms, forks its successor and
exits, again and again — so the live processes change under any walk of the process tree
(3 at once: one that escapes a single walk is likelier), and a crowd of 600 children
that call setsid() and sleep, so that one walk of the tree takes a while. Then it serves
as `server.py MODE` (same pid; MODE is the first argument).

Kill switch: a chain ends by itself after 20 s or 10,000 links, the crowd after 60 s, so
a failing test leaves nothing for long."""

import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CHAINS = 3
CROWD = 600
LINKS = 10000
SECONDS = 20


def chain():
    quiet = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(quiet, fd)
    started = time.monotonic()
    for _ in range(LINKS):
        os.setsid()
        time.sleep(0.002)
        if time.monotonic() - started > SECONDS or os.fork() != 0:
            os._exit(0)
    os._exit(0)


SLEEP = shutil.which("sleep") or "/bin/sleep"
quiet = os.open(os.devnull, os.O_RDWR)
stdio = [(os.POSIX_SPAWN_DUP2, quiet, fd) for fd in (0, 1, 2)]
for _ in range(CROWD):
    os.posix_spawn(SLEEP, ["sleep", "60"], os.environ, file_actions=stdio, setsid=True)
os.close(quiet)
for _ in range(CHAINS):
    if os.fork() == 0:
        chain()
mode = sys.argv[1] if len(sys.argv) > 1 else "correct"
os.execvp(sys.executable, [sys.executable, os.path.join(HERE, "server.py"), mode])
