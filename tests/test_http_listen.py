"""The listening socket toolwire's servers (the proxy, ``mcp-serve`` over HTTP) are served
from: asyncio turns Nagle's algorithm off on each connection it accepts there, which it does
only on a socket made as TCP; with it on, a reply written in two pieces waits for the client's
delayed acknowledgement of the first."""

from __future__ import annotations

import asyncio
import socket

import pytest

from toolwire.http.listen import listening_socket


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_each_accepted_connection_sends_without_waiting(host: str) -> None:
    if host == "::1" and not socket.has_ipv6:
        pytest.skip("this machine has no IPv6")
    seen: list[int] = []

    async def main() -> None:
        try:
            sock = listening_socket(host, 0)
        except OSError as exc:  # an IPv6 address the machine does not have
            pytest.skip(f"cannot listen on {host}: {exc}")

        async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            conn = writer.get_extra_info("socket")
            seen.append(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(accepted, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection(host, sock.getsockname()[1])
            for _ in range(200):
                if seen:
                    break
                await asyncio.sleep(0.01)
            writer.close()

    asyncio.run(main())
    assert len(seen) == 1 and seen[0] != 0


def test_the_socket_is_listening_and_inheritable_and_a_taken_port_is_an_oserror() -> None:
    first = listening_socket("127.0.0.1", 0)
    try:
        assert first.get_inheritable()
        with socket.create_connection(first.getsockname()[:2], timeout=5):
            pass  # accepted into the backlog: it listens before any server runs
        with pytest.raises(OSError):
            taken = socket.socket()
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            try:
                listening_socket("127.0.0.1", taken.getsockname()[1])
            finally:
                taken.close()
    finally:
        first.close()
