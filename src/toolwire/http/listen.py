"""A listening TCP socket for toolwire's own servers (`toolwire proxy`, ``mcp-serve`` over
HTTP): `listening_socket`.

The socket is made with its protocol named (``IPPROTO_TCP``). asyncio turns Nagle's algorithm
off on every connection it accepts, but only on a socket that says it is TCP; one made with
protocol 0 keeps Nagle on, and a server that writes a reply's head and body apart (uvicorn
does) then holds the body until the client acknowledges the head, which most clients delay by
up to 40 ms: every reply was that much slower. Imports nothing from toolwire.
"""

from __future__ import annotations

import socket


def listening_socket(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A TCP socket bound to ``host`` and ``port`` (0: any free port) and listening, that
    child processes may inherit; the ``OSError`` of a failed bind is raised as it is."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(backlog)  # connections wait from now on, before the server is up
    sock.set_inheritable(True)
    return sock


__all__ = ["listening_socket"]
