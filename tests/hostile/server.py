#!/usr/bin/env python3
"""A hostile MCP stdio server for tests/hostile.rs: a real process over real pipes that
misbehaves in one way, chosen by its first argument. Speaks just enough legacy MCP
(initialize, ping, tools/list, tools/call echo) to get past the handshake.

Modes:
  correct           serves normally
  hang-after-init   answers initialize, then reads everything and answers nothing
  garbage-reply     writes a non-JSON line instead of each reply after initialize
  partial-line      writes half a reply without a newline, then stays silent
  flood             on the first request after initialize, streams notifications forever
                    without answering
  burst             writes 200000 notifications before each reply after initialize
  no-read           answers initialize, then never reads its stdin again
  setsid-child      starts a grandchild that calls setsid() and sleeps, then serves
  close-stdout      closes its stdout right after the handshake, stays alive
  request-flood     after the handshake, never reads again and sends server requests
                    (roots/list) without end
  hang-after-one    answers initialize and one request, then reads everything and
                    answers nothing
  immortal          ignores SIGTERM, answers initialize and then nothing, and keeps
                    running after its stdin ends (only SIGKILL stops it)
  unicode-handles   serves a read-only tool `mint` whose handles (structuredContent.id)
                    are short non-ASCII strings: "xé", then "a中", …
  pattern-schemas   serves a read-only tool `shape` whose outputSchema (and inputSchema)
                    holds 1,000 patterns of 900 bytes

After the reply to each `tools/call`, and before reading the next line (so all of it is in
the pipe before the reply to whatever comes next), otherwise serving normally:
  garbage-after-call    writes a non-JSON line
  duplicate-call-reply  writes the reply a second time
  exit-after-call       exits
  log-after-call        sends a log notification (notifications/message)
And:
  ignore-ping       serves normally, but never answers `ping`
  duplicate-every-reply  writes every reply twice (`initialize` and `ping` too)
"""

import json
import os
import signal
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "correct"
out = sys.stdout.buffer


def send(msg):
    line = json.dumps(msg).encode() + b"\n"
    if MODE == "duplicate-every-reply" and "id" in msg and "method" not in msg:
        line += line
    out.write(line)
    out.flush()


def result(req, res):
    send({"jsonrpc": "2.0", "id": req["id"], "result": res})


NOTE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": "x" * 100},
        }
    ).encode()
    + b"\n"
)


# Handles whose characters differ in UTF-8 length: an affix measured in one is no
# character boundary in the next.
HANDLES = ["xé", "a中", "🦀b", "中é", "ü", "bé中"]
MINTED = 0


def pattern_tools():
    props = {
        "p%d" % i: {"type": "string", "pattern": "^%03d" % i + "\\w" * 448}
        for i in range(1000)
    }
    schema = {"type": "object", "properties": props}
    tool = {
        "name": "shape",
        "inputSchema": schema,
        "outputSchema": schema,
        "annotations": {"readOnlyHint": True},
    }
    return json.dumps({"tools": [tool]}).encode()


PATTERN_TOOLS = pattern_tools() if MODE == "pattern-schemas" else b""


def serve_normally(req):
    method = req.get("method")
    if method == "initialize":
        result(
            req,
            {
                "protocolVersion": req["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1.0.0"},
            },
        )
    elif method == "ping":
        result(req, {})
    elif method == "tools/list" and MODE == "pattern-schemas":
        # Written as bytes made once: a 2 MB reply is slow to serialize in Python.
        out.write(b'{"jsonrpc": "2.0", "id": %s, "result": %s}\n' % (json.dumps(req["id"]).encode(), PATTERN_TOOLS))
        out.flush()
    elif method == "tools/call" and MODE == "pattern-schemas":
        result(
            req,
            {"content": [{"type": "text", "text": "{}"}], "structuredContent": {"p0": "000"}},
        )
    elif method == "tools/list" and MODE == "unicode-handles":
        tool = {
            "name": "mint",
            "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": True},
        }
        result(req, {"tools": [tool]})
    elif method == "tools/call" and MODE == "unicode-handles":
        global MINTED
        handle = HANDLES[MINTED % len(HANDLES)]
        MINTED += 1
        result(
            req,
            {"content": [{"type": "text", "text": handle}], "structuredContent": {"id": handle}},
        )
    elif method == "tools/list":
        tool = {
            "name": "echo",
            "description": "echoes",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        }
        result(req, {"tools": [tool]})
    elif method == "tools/call":
        text = req.get("params", {}).get("arguments", {}).get("text", "")
        result(req, {"content": [{"type": "text", "text": str(text)[:100]}]})
    else:
        send(
            {
                "jsonrpc": "2.0",
                "id": req["id"],
                "error": {"code": -32601, "message": "method not found"},
            }
        )


AFTER_CALL = ("garbage-after-call", "duplicate-call-reply", "exit-after-call", "log-after-call")


def after_call(req):
    if MODE == "garbage-after-call":
        out.write(b"garbage after the reply\n")
        out.flush()
    elif MODE == "duplicate-call-reply":
        serve_normally(req)
    elif MODE == "exit-after-call":
        sys.exit(0)
    elif MODE == "log-after-call":
        note = {"level": "info", "data": "sent just after the reply"}
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": note})


def main():
    if MODE == "immortal":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if MODE == "setsid-child":
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                # The grandchild's grandchild: also out of the group, parent gone soon.
                os.execvp("sleep", ["sleep", "300"])
            os.execvp("sleep", ["sleep", "301"])
    initialized = False
    answered_one = False
    for line in sys.stdin.buffer:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        if "id" not in req:
            if req.get("method") == "notifications/initialized":
                initialized = True
                if MODE == "close-stdout":
                    out.close()
                    os.close(1)
                if MODE == "request-flood":
                    n = 0
                    while True:
                        n += 1
                        send({"jsonrpc": "2.0", "id": "s%d" % n, "method": "roots/list"})
            continue
        if req.get("method") == "initialize" or MODE in (
            "correct",
            "duplicate-every-reply",
            "setsid-child",
            "unicode-handles",
            "pattern-schemas",
        ):
            serve_normally(req)
            if MODE == "no-read":
                time.sleep(600)
            continue
        if MODE == "ignore-ping" and req.get("method") == "ping":
            continue
        if MODE in AFTER_CALL + ("ignore-ping",):
            serve_normally(req)
            if req.get("method") == "tools/call":
                after_call(req)
            continue
        if MODE in ("hang-after-init", "immortal"):
            continue
        if MODE == "hang-after-one":
            if answered_one:
                continue
            answered_one = True
        if MODE == "garbage-reply":
            out.write(b"garbage instead of a reply: " + b"#" * 2000 + b"\n")
            out.flush()
        elif MODE == "partial-line":
            out.write(b'{"jsonrpc":"2.0","id":' + json.dumps(req["id"]).encode() + b',"res')
            out.flush()
        elif MODE == "flood":
            chunk = NOTE * 1000
            while True:
                out.write(chunk)
        elif MODE == "burst":
            out.write(NOTE * 200000)
            serve_normally(req)
        else:
            serve_normally(req)


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, ValueError, OSError):
        pass
    if MODE == "immortal":
        # The end of stdin is no reason to exit; the test's own limit.
        time.sleep(120)
