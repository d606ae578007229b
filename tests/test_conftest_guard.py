"""The test suite cannot reach the network: only loopback connects are allowed."""

from __future__ import annotations

import socket

import pytest


def test_non_loopback_connect_is_refused() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s, \
            pytest.raises(ConnectionRefusedError, match="only connect to loopback"):
        s.connect(("192.0.2.1", 80))  # TEST-NET-1: never routed


def test_loopback_connect_is_allowed() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname(), timeout=5) as client:
            assert client.getpeername()[0] == "127.0.0.1"
