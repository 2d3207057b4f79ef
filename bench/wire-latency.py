#!/usr/bin/env python3
"""An independent latency measurement: the loopback wire's own timestamps.

Sniffs 127.0.0.1 TCP traffic to and from PORT (Linux, root: an AF_PACKET socket on `lo`
with kernel timestamps, SO_TIMESTAMPNS) until SIGTERM/SIGINT, then prints
"count p50_ms p99_ms" of the requests whose body names METHOD_TEXT (default
`"tools/call"`): from the kernel timestamp of the request's first segment to that of the
first server segment after it carrying a JSON-RPC message (`"jsonrpc"`), on the same
connection. HTTP/1.1 sends one request at a time on a connection, so a connection's
request is the client bytes between two server replies.

Used by bench/load-ceiling.sh to check that `mcpspec load`'s p99 is the server's, not
the generator's: the generator measures the same exchanges from user space.

Usage: wire-latency.py PORT [METHOD_TEXT]
"""

import signal
import socket
import struct
import sys

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SO_TIMESTAMPNS = 35


def percentile(values, q):
    """Nearest-rank percentile (as HDR histograms report), in the values' unit."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


def main():
    port = int(sys.argv[1])
    needle = (sys.argv[2] if len(sys.argv) > 2 else '"tools/call"').encode()
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sock.bind(("lo", 0))
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    sock.settimeout(0.2)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    # connection (client port) -> [request start ns, request bytes, answered]
    open_requests = {}
    latencies = []
    print("sniffing", flush=True)
    while not stop:
        try:
            data, ancdata, _, address = sock.recvmsg(65536, 64)
        except socket.timeout:
            continue
        except InterruptedError:
            continue
        if address[2] == PACKET_OUTGOING:
            continue  # loopback shows each packet twice: once going out, once coming in
        stamp = None
        for level, kind, value in ancdata:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                seconds, nanos = struct.unpack("qq", value[:16])
                stamp = seconds * 1_000_000_000 + nanos
        if stamp is None or len(data) < 14 + 20:
            continue
        ip = data[14:]
        if ip[0] >> 4 != 4 or ip[9] != 6:
            continue
        header = (ip[0] & 0x0F) * 4
        total = struct.unpack("!H", ip[2:4])[0]
        tcp = ip[header:total]
        source, destination = struct.unpack("!HH", tcp[:4])
        payload = tcp[(tcp[12] >> 4) * 4:]
        if not payload:
            continue
        if destination == port:
            entry = open_requests.get(source)
            if entry is None or entry[2]:
                open_requests[source] = [stamp, bytearray(payload), False]
            else:
                entry[1].extend(payload)
        elif source == port:
            entry = open_requests.get(destination)
            if entry and not entry[2] and b'"jsonrpc"' in payload:
                entry[2] = True
                if needle in entry[1]:
                    latencies.append((stamp - entry[0]) / 1e6)
    if not latencies:
        print("0 0 0")
        return
    print(f"{len(latencies)} {percentile(latencies, 50):.2f} {percentile(latencies, 99):.2f}")


if __name__ == "__main__":
    main()
