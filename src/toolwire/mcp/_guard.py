"""The door of ``toolwire mcp-serve --transport http``: a bearer token every request must carry.

Owns `need_token`, `bearer_only` (an ASGI wrapper answering 401, with a ``WWW-Authenticate: Bearer``
challenge, to any HTTP request whose ``Authorization`` header is not ``Bearer TOKEN``, the
token compared in constant time) and `is_loopback` (whether a host is reachable from this
machine only, the one case where a server may go without a token). Must not import the loop,
codecs or the transport.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from toolwire.errors import ConfigError

__all__ = ["bearer_only", "is_loopback", "need_token"]

Asgi = Callable[[MutableMapping[str, Any], Callable[[], Awaitable[Any]],
                 Callable[[MutableMapping[str, Any]], Awaitable[None]]], Awaitable[None]]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or address to listen on) is this machine's loopback only."""
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def need_token(host: str, token: object) -> None:
    """A `ConfigError` when a server on ``host`` would go without a token though it can be
    reached from other machines."""
    if not token and not is_loopback(host):
        raise ConfigError(f"serving on {host} opens the tools to anyone who can reach it: give "
                          "a bearer token with --token or TOOLWIRE_MCP_TOKEN (clients send "
                          "Authorization: Bearer TOKEN) or an --authorization-server, or "
                          "serve on 127.0.0.1")


def bearer_only(app: Asgi, token: str, *, resource_metadata: str | None = None) -> Asgi:
    """``app`` open only to requests that carry ``Authorization: Bearer TOKEN``."""
    expected = f"Bearer {token}".encode()
    challenge = 'Bearer realm="toolwire"'
    if resource_metadata:
        challenge += f', resource_metadata="{resource_metadata}"'

    async def guarded(scope: MutableMapping[str, Any], receive: Callable[[], Awaitable[Any]],
                      send: Callable[[MutableMapping[str, Any]], Awaitable[None]]) -> None:
        if scope["type"] != "http" or str(scope.get("path", "")).startswith("/.well-known/"):
            await app(scope, receive, send)
            return
        given = next((bytes(v) for k, v in scope.get("headers", ())
                      if bytes(k).lower() == b"authorization"), b"")
        if hmac.compare_digest(given, expected):
            await app(scope, receive, send)
            return
        error = "invalid_token" if given else "invalid_request"
        said = "the bearer token is not this server's" if given else (
            "this server needs a bearer token: send Authorization: Bearer TOKEN")
        body = json.dumps({"error": error, "error_description": said}).encode()
        await send({"type": "http.response.start", "status": 401, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"www-authenticate", f'{challenge}, error="{error}", error_description="{said}"'
             .encode())]})
        await send({"type": "http.response.body", "body": body})

    return guarded
