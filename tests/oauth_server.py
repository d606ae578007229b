"""An OAuth authorization server of the tests' own, and an MCP server it protects, on 127.0.0.1.

`OAuthWorld` serves, on one port: protected resource metadata (RFC 9728) at
``/.well-known/oauth-protected-resource/mcp``; an authorization server whose issuer is
``BASE/as`` with its metadata at ``/.well-known/oauth-authorization-server/as`` (RFC 8414),
dynamic registration, an authorization endpoint that approves at once (checking PKCE S256 and
the ``resource`` parameter), a token endpoint for the authorization code and refresh token
grants and an introspection endpoint (RFC 7662, for resource servers of their own); and the
MCP server at ``/mcp`` (toolwire's own, built with `build_server`), open only to its access
tokens. ``whoami`` answers with the token the server was last sent (so a test sees a
token come back through a tool); ``admin`` needs the ``admin`` scope, and without it the server
answers 403 ``insufficient_scope``. Every request to the authorization server is kept in
``seen`` for the tests to check.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
import socket
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from toolwire import tool
from toolwire.mcp import build_server


@dataclass
class Grant:
    scopes: set[str]
    client_id: str
    resource: str | None


@dataclass
class OAuthWorld:
    expires_in: int = 3600
    issuer_said: str | None = None
    """The issuer the metadata names, when it is not its own (a server to be refused)."""
    base: str = ""
    seen: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    clients: dict[str, list[str]] = field(default_factory=dict)
    codes: dict[str, tuple[str, Grant, str]] = field(default_factory=dict)
    access: dict[str, Grant] = field(default_factory=dict)
    refresh: dict[str, Grant] = field(default_factory=dict)
    last_token: str = ""
    _server: uvicorn.Server | None = None

    @property
    def mcp_url(self) -> str:
        return f"{self.base}/mcp"

    @property
    def issuer(self) -> str:
        return f"{self.base}/as"

    def grants(self, kind: str) -> list[dict[str, str]]:
        return [form for path, form in self.seen
                if path == "/as/token" and form.get("grant_type") == kind]

    # ------------------------------------------------------------ authorization server

    async def resource_metadata(self, request: Request) -> Response:
        return JSONResponse({"resource": self.mcp_url, "authorization_servers": [self.issuer],
                             "scopes_supported": ["files", "admin"]})

    async def server_metadata(self, request: Request) -> Response:
        return JSONResponse({
            "issuer": self.issuer_said or self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "registration_endpoint": f"{self.issuer}/register",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": ["files", "admin"]})

    async def register(self, request: Request) -> Response:
        body = await request.json()
        self.seen.append(("/as/register", {"client_name": str(body.get("client_name"))}))
        client_id = f"client-{secrets.token_hex(4)}"
        self.clients[client_id] = list(body.get("redirect_uris") or [])
        return JSONResponse({"client_id": client_id, "redirect_uris": self.clients[client_id],
                             "token_endpoint_auth_method": "none",
                             "grant_types": ["authorization_code", "refresh_token"]},
                            status_code=201)

    async def authorize(self, request: Request) -> Response:
        query = dict(request.query_params)
        self.seen.append(("/as/authorize", query))
        redirect = query.get("redirect_uri", "")
        if (query.get("client_id") not in self.clients
                or redirect not in self.clients[query["client_id"]]
                or query.get("code_challenge_method") != "S256"
                or not query.get("code_challenge")):
            return JSONResponse({"error": "invalid_request"}, status_code=400)
        code = secrets.token_urlsafe(16)
        grant = Grant(set(query.get("scope", "").split()), query["client_id"],
                      query.get("resource"))
        self.codes[code] = (query["code_challenge"], grant, redirect)
        back = {"code": code, "state": query.get("state", ""), "iss": self.issuer}
        return RedirectResponse(f"{redirect}?{urlencode(back)}", status_code=302)

    async def token(self, request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        self.seen.append(("/as/token", form))
        kind = form.get("grant_type")
        if kind == "authorization_code":
            found = self.codes.pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "")
            digest = base64.urlsafe_b64encode(
                hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
            if found is None or digest != found[0] or form.get("redirect_uri") != found[2]:
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            grant = found[1]
        elif kind == "refresh_token":
            old = self.refresh.pop(form.get("refresh_token", ""), None)
            if old is None:
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            grant = old
        else:
            return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)
        access, refresh = f"at-{secrets.token_urlsafe(24)}", f"rt-{secrets.token_urlsafe(24)}"
        self.access[access] = self.refresh[refresh] = grant
        return JSONResponse({"access_token": access, "token_type": "Bearer",
                             "expires_in": self.expires_in, "refresh_token": refresh,
                             "scope": " ".join(sorted(grant.scopes))})

    async def introspect(self, request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        self.seen.append(("/as/introspect", {"token": form.get("token", "")[:3]}))
        grant = self.access.get(form.get("token", ""))
        if grant is None:
            return JSONResponse({"active": False})
        return JSONResponse({"active": True, "scope": " ".join(sorted(grant.scopes)),
                             "client_id": grant.client_id, "aud": grant.resource,
                             "exp": int(time.time()) + self.expires_in})

    # ------------------------------------------------------------ the MCP server

    def guarded(self, app: Any) -> Callable[..., Awaitable[None]]:
        metadata = f'resource_metadata="{self.base}/.well-known/oauth-protected-resource/mcp"'

        async def guard(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            header = dict(scope["headers"]).get(b"authorization", b"").decode()
            token = header.removeprefix("Bearer ")
            grant = self.access.get(token)
            if grant is None:
                await JSONResponse({"error": "invalid_token"}, status_code=401, headers={
                    "WWW-Authenticate": f'Bearer error="invalid_token", {metadata}, '
                                        'scope="files"'})(scope, receive, send)
                return
            self.last_token = token
            chunks = []
            while True:
                message = await receive()
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    break
            body = b"".join(chunks)
            try:
                parsed = json.loads(body) if body else {}
            except ValueError:
                parsed = {}
            wanted = (isinstance(parsed, dict) and parsed.get("method") == "tools/call"
                      and parsed.get("params", {}).get("name") == "admin")
            if wanted and "admin" not in grant.scopes:
                await JSONResponse({"error": "insufficient_scope"}, status_code=403, headers={
                    "WWW-Authenticate": f'Bearer error="insufficient_scope", {metadata}, '
                                        'scope="files admin"'})(scope, receive, send)
                return
            sent = False

            async def replay() -> dict[str, Any]:
                nonlocal sent
                if not sent:
                    sent = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            await app(scope, replay, send)

        return guard

    def app(self) -> Any:
        @tool
        def whoami() -> str:
            """The token the server was sent."""
            return f"you came with {self.last_token}"

        @tool
        def admin() -> str:
            """Something only for the admin scope."""
            return "admin work done"

        mcp_app = build_server([whoami, admin], name="guarded").streamable_http_app(
            streamable_http_path="/mcp", host="127.0.0.1")
        auth = Starlette(routes=[
            Route("/.well-known/oauth-protected-resource/mcp", self.resource_metadata),
            Route("/.well-known/oauth-authorization-server/as", self.server_metadata),
            Route("/as/register", self.register, methods=["POST"]),
            Route("/as/authorize", self.authorize),
            Route("/as/token", self.token, methods=["POST"]),
            Route("/as/introspect", self.introspect, methods=["POST"]),
        ])
        guarded = self.guarded(mcp_app)

        async def both(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
            path = scope.get("path", "")
            if scope["type"] == "lifespan" or path.startswith("/mcp"):
                await (mcp_app if scope["type"] == "lifespan" else guarded)(scope, receive, send)
            else:
                await auth(scope, receive, send)

        return both

    def start(self) -> OAuthWorld:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.base = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self._server = uvicorn.Server(uvicorn.Config(self.app(), log_level="warning",
                                                     lifespan="on"))
        server = self._server
        threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])),
                         daemon=True).start()
        for _ in range(500):
            if server.started:
                return self
            time.sleep(0.01)
        raise AssertionError("the OAuth test server did not start")

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True


def browser(url: str) -> None:
    """What a person's browser does with the authorization URL: follow it to the redirect,
    which lands on toolwire's loopback address (in a thread, as a browser is apart)."""
    import httpx2

    def visit() -> None:
        target = url
        with httpx2.Client(timeout=30) as http:
            for _ in range(5):
                answer = http.get(target)
                if answer.status_code not in (301, 302, 303, 307, 308):
                    return
                target = answer.headers["location"]

    threading.Thread(target=visit, daemon=True).start()


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
