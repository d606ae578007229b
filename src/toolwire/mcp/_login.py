"""The user's part of an OAuth authorization code grant: the browser and the loopback redirect.

Owns `Loopback` (a listening socket on 127.0.0.1 whose URL is the redirect URI, RFC 8252
section 7.3), `code_from` (the code, state and issuer in a redirected URL, or the
authorization server's error) and `Authorize` (what the grant needs from the user: given the
authorization URL, the URL the server sent the browser back to). The SDK's
``OAuthClientProvider`` calls `Loopback.redirect` with the URL and `Loopback.callback` for the
answer. The URL is always written to the terminal; with a browser it is opened too and the
answer comes to the loopback address; without one (``browser=False``), the user opens it
anywhere and pastes back the address the browser ended on, which is read from standard input
(the loopback address is still listening, should the browser be on this machine after all).
Must not import the loop, codecs or the transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
import webbrowser
from collections.abc import Awaitable, Callable
from typing import TextIO
from urllib.parse import parse_qs, urlsplit

import anyio
from mcp.shared.auth import AuthorizationCodeResult

from toolwire.errors import ConfigError

__all__ = ["Authorize", "Loopback", "code_from"]

Authorize = Callable[[str], Awaitable[str]]
"""Given the authorization URL, the URL the authorization server redirected to."""

PATH = "/callback"

_DONE = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nConnection: close\r\n\r\n"
         b"<!doctype html><title>toolwire</title><p>Signed in: you may close this page and "
         b"go back to the terminal.</p>")
_NOT_HERE = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


def code_from(url: str) -> AuthorizationCodeResult:
    """The authorization code (and state, issuer) in the URL the server redirected to; a
    `ConfigError` with the server's own reason when it refused, or when there is no code."""
    query = parse_qs(urlsplit(url.strip()).query)
    first = {key: values[0] for key, values in query.items() if values}
    if "error" in first:
        why = first.get("error_description") or first["error"]
        raise ConfigError(f"the authorization server refused: {why}")
    if not first.get("code"):
        raise ConfigError("the address given holds no authorization code (no ?code=...); "
                          "paste the whole address the browser ended on")
    return AuthorizationCodeResult(code=first["code"], state=first.get("state"),
                                   iss=first.get("iss"))


class Loopback:
    """The redirect URI on 127.0.0.1 and what comes back to it (see the module docstring).

    ``port`` 0 takes a free port; ``opener`` opens the address in a browser (default:
    `webbrowser.open`); ``authorize`` replaces the browser and the terminal (for programs that
    drive the authorization themselves)."""

    def __init__(self, port: int = 0, *, browser: bool = True, authorize: Authorize | None = None,
                 opener: Callable[[str], object] | None = None,
                 tell: TextIO | None = None) -> None:
        self.browser = browser
        self.opener = opener or webbrowser.open
        self.authorize = authorize
        self.tell = tell if tell is not None else sys.stderr
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._sock.bind(("127.0.0.1", port))
        except OSError:
            if not port:
                raise
            self._sock.bind(("127.0.0.1", 0))  # the port used before is taken now
        self._sock.listen(8)  # a browser quicker than the wait below is kept waiting, not refused
        self.port: int = self._sock.getsockname()[1]
        self.redirect_uri = f"http://127.0.0.1:{self.port}{PATH}"
        self._answer: str | None = None

    def close(self) -> None:
        self._sock.close()

    def _listener(self) -> socket.socket:
        """The socket to listen on: the one bound first, or (once it served and was closed,
        as for a second grant when the server asks for more scopes) a new one on its port."""
        if self._sock.fileno() == -1:
            self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._sock.bind(("127.0.0.1", self.port))
        self._sock.listen(8)
        return self._sock

    async def redirect(self, url: str) -> None:
        """Send the user to the authorization URL (the SDK's ``redirect_handler``)."""
        if self.authorize is not None:
            self._answer = await self.authorize(url)
            return
        self.tell.write(f"toolwire: to sign in to the MCP server, open this address:\n  {url}\n")
        if not self.browser:
            self.tell.write("then paste here the address your browser ends on, and press "
                            "Enter:\n")
        self.tell.flush()
        if self.browser:
            with contextlib.suppress(Exception):
                self.opener(url)

    async def callback(self) -> AuthorizationCodeResult:
        """The code the user's browser brought back (the SDK's ``callback_handler``)."""
        if self._answer is None:
            self._answer = await self._wait()
        answer, self._answer = self._answer, None
        return code_from(answer)

    async def _wait(self) -> str:
        got: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                line = (await reader.readline()).decode("latin-1")
                while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass
                parts = line.split()
                target = parts[1] if len(parts) > 1 else ""
                if urlsplit(target).path != PATH:
                    writer.write(_NOT_HERE)
                else:
                    writer.write(_DONE)
                    if not got.done():
                        got.set_result(f"{self.redirect_uri}?{urlsplit(target).query}")
                await writer.drain()
            finally:
                writer.close()

        server = await asyncio.start_server(serve, sock=self._listener())
        pasted = None
        if not self.browser:
            pasted = asyncio.ensure_future(anyio.to_thread.run_sync(
                sys.stdin.readline, abandon_on_cancel=True))

            def given(f: asyncio.Future[str]) -> None:
                if not (f.cancelled() or f.exception() or got.done()):
                    got.set_result(f.result())

            pasted.add_done_callback(given)
        try:
            answer = await got
        finally:
            server.close()
            if pasted is not None:
                pasted.cancel()
        if not answer.strip():
            raise ConfigError("no address was pasted; sign in again and paste the address "
                              "the browser ends on")
        return answer
