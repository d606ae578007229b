"""Authorization for MCP servers over HTTP: static headers, bearer tokens and OAuth.

Owns `OAuth` (how to obtain tokens from a server's authorization server), `CLIENT_METADATA_URL`,
`http_auth` (the ``httpx2.Auth`` a connection sends its requests through) and `refusal` (what
a 401 or 403 means, in words, with what to do). The OAuth itself is the MCP SDK's
(``mcp.client.auth``): its ``OAuthClientProvider`` discovers the protected resource's metadata
(RFC 9728, from ``WWW-Authenticate`` or the well-known URLs) and the authorization server's
(RFC 8414 or OpenID discovery), registers the client in the specification's order (a client
ID given here, then toolwire's client ID metadata document when the server takes those, then
dynamic registration), runs the authorization code grant with PKCE (S256) and the ``resource``
parameter (RFC 8707), picks scopes, steps up on ``insufficient_scope`` and refreshes tokens
before they expire; its extensions give the client credentials grant (with a secret or a
signed JWT) and the identity assertion grant (RFC 7523) of cross-app access, whose first leg,
the token exchange (RFC 8693) at the enterprise identity provider, is `_exchange`'s. The
browser and the loopback redirect are `toolwire.mcp._login`'s; the token files are
`toolwire.mcp._tokens`'s (`token_path`, `stored` and `forget` are theirs). Must not import
the loop, codecs or the transport.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import re
import time
import warnings
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.auth.utils import (
    build_protected_resource_metadata_discovery_urls,
    create_oauth_metadata_request,
    handle_protected_resource_response,
    union_scopes,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

from toolwire.errors import ConfigError
from toolwire.mcp._login import Authorize, Loopback
from toolwire.mcp._tokens import MemoryTokens, TokenFile, forget, stored, token_path
from toolwire.secrets import remember

__all__ = ["CLIENT_METADATA_URL", "OAuth", "Refused", "forget", "http_auth", "over_http",
           "refusal", "stored", "token_path"]

CLIENT_METADATA_URL = "https://toolwire.dev/oauth/client-metadata.json"
"""Where toolwire's client ID metadata document is published (its ``client_id`` is this URL;
``docs/oauth-client-metadata.json`` is its content). An organisation that hosts its own gives
``OAuth(client_metadata_url=...)`` or ``client_metadata_url`` in the config section."""

Grant = Literal["authorization_code", "client_credentials", "cross_app"]

_TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
_ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
_ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


@dataclass(frozen=True)
class OAuth:
    """How toolwire gets tokens for an MCP server that asks for OAuth (see the module).

    ``grant``: ``authorization_code`` (a person signs in through the browser, the default),
    ``client_credentials`` (a machine: ``client_id`` with ``client_secret``, or with
    ``private_key``, a PEM key that signs a JWT assertion with ``signing_algorithm``), or
    ``cross_app`` (an enterprise identity provider's ``id_token`` exchanged at
    ``idp_token_endpoint`` for an identity assertion, then for a token with ``client_id`` and
    ``client_secret``). ``client_id`` (and ``client_secret``) name a client registered
    beforehand; ``client_metadata_url`` is the client ID metadata document used when the server
    takes those (None: never); ``scope`` the scopes asked for (None: as the server says);
    ``issuer`` the authorization server the credentials belong to. ``browser=False`` prints the
    address instead of opening it and reads the address the browser ended on from standard
    input; ``opener`` opens an address in the browser (default: `webbrowser.open`);
    ``authorize`` replaces browser and terminal (given the authorization URL, it returns the
    redirected one). Tokens are kept per server in the state directory (``keep=False``: in
    this process only; ``folder``: elsewhere), mode 0600.
    """

    grant: Grant = "authorization_code"
    client_id: str | None = None
    client_secret: str | None = None
    token_endpoint_auth_method: str | None = None
    scope: str | None = None
    issuer: str | None = None
    client_metadata_url: str | None = CLIENT_METADATA_URL
    private_key: str | None = None
    signing_algorithm: str = "RS256"
    browser: bool = True
    redirect_port: int = 0
    authorize: Authorize | None = None
    opener: Callable[[str], object] | None = None
    keep: bool = True
    folder: str | None = None
    id_token: str | None = None
    idp_token_endpoint: str | None = None
    idp_client_id: str | None = None
    idp_client_secret: str | None = None

    def __post_init__(self) -> None:
        for value, name in ((self.client_secret, "MCP client secret"),
                            (self.private_key, "MCP client key"),
                            (self.id_token, "identity token"),
                            (self.idp_client_secret, "identity provider client secret")):
            remember(value, name)
        cimd = self.client_metadata_url
        if cimd is not None and (not cimd.startswith("https://") or
                                 urlsplit(cimd).path in ("", "/")):
            raise ConfigError(f"client_metadata_url {cimd} is not an https:// address with a "
                              "path; a client ID metadata document is served over HTTPS")
        if self.grant not in ("authorization_code", "client_credentials", "cross_app"):
            raise ConfigError(f"unknown OAuth grant {self.grant!r}; use authorization_code, "
                              "client_credentials or cross_app")
        if self.grant == "client_credentials" and not (
                self.client_id and (self.client_secret or self.private_key)):
            raise ConfigError("the client_credentials grant needs client_id, and client_secret "
                              "or private_key")
        if self.grant == "cross_app" and not (self.client_id and self.client_secret
                                              and self.id_token and self.idp_token_endpoint):
            raise ConfigError("the cross_app grant needs client_id, client_secret, id_token and "
                              "idp_token_endpoint")


class _Provider(OAuthClientProvider):
    """The SDK's provider, keeping what discovery found with the tokens, so that a later
    process refreshes an expiring token at the right token endpoint."""

    def __init__(self, *args: Any, file: TokenFile | None, loopback: Loopback | None,
                 wanted: str | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._file = file
        self._wanted = wanted
        self.loopback = loopback

    async def _perform_authorization(self) -> httpx2.Request:
        """Ask for the scopes the user gave as well as those the server named."""
        self.context.client_metadata.scope = union_scopes(self.context.client_metadata.scope,
                                                          self._wanted)
        return await super()._perform_authorization()

    async def _initialize(self) -> None:
        await super()._initialize()
        if self._file is None:
            return
        expires = self._file.expires_at()
        if self.context.current_tokens is not None and expires is not None:
            self.context.token_expiry_time = expires
        resource, server = self._file.discovery()
        if self.context.oauth_metadata is None and server is not None:
            self.context.oauth_metadata = server
            self.context.protected_resource_metadata = resource
            if resource is not None and resource.authorization_servers:
                self.context.auth_server_url = str(resource.authorization_servers[0])

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        await super()._handle_token_response(response)
        if self._file is not None:
            self._file.keep_discovery(self.context.protected_resource_metadata,
                                      self.context.oauth_metadata)


def _storage(url: str, oauth: OAuth) -> tuple[TokenStorage, TokenFile | None]:
    if not oauth.keep:
        return MemoryTokens(), None
    file = TokenFile(url, oauth.folder)
    return file, file


def _port_used_before(file: TokenFile | None) -> int:
    """The loopback port of the kept registration, which the server knows as the client's."""
    if file is None:
        return 0
    client = file.read().get("client") or {}
    for uri in client.get("redirect_uris") or ():
        parts = urlsplit(str(uri))
        if parts.hostname == "127.0.0.1" and parts.port:
            return parts.port
    return 0


async def http_auth(url: str, oauth: OAuth) -> httpx2.Auth:
    """The ``httpx2.Auth`` that gets and sends tokens for the MCP server at ``url``."""
    quiet = logging.getLogger("mcp.client.auth")
    if not quiet.handlers:  # its failures reach the caller as errors; no traceback on stderr
        quiet.addHandler(logging.NullHandler())
    storage, file = _storage(url, oauth)
    with warnings.catch_warnings():  # no issuer given: the SDK warns of its future default
        warnings.simplefilter("ignore")
        if oauth.grant == "client_credentials":
            return _machine(url, oauth, storage)
        if oauth.grant == "cross_app":
            return await _cross_app(url, oauth, storage)
    loopback = Loopback(oauth.redirect_port or _port_used_before(file), browser=oauth.browser,
                        authorize=oauth.authorize, opener=oauth.opener)
    metadata = OAuthClientMetadata(
        client_name="toolwire", redirect_uris=[loopback.redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"], response_types=["code"],
        token_endpoint_auth_method="none", scope=oauth.scope)
    if oauth.client_id:
        given = OAuthClientInformationFull(
            client_id=oauth.client_id, client_secret=oauth.client_secret,
            redirect_uris=[loopback.redirect_uri],  # type: ignore[list-item]
            token_endpoint_auth_method=oauth.token_endpoint_auth_method or (
                "client_secret_basic" if oauth.client_secret else "none"),
            issuer=oauth.issuer, scope=oauth.scope)
        kept = await storage.get_client_info()
        if kept is None or kept.client_id != oauth.client_id:
            await storage.set_client_info(given)
    return _Provider(url, metadata, storage, redirect_handler=loopback.redirect,
                     callback_handler=loopback.callback,
                     client_metadata_url=oauth.client_metadata_url,
                     file=file, loopback=loopback, wanted=oauth.scope)


def _machine(url: str, oauth: OAuth, storage: TokenStorage) -> httpx2.Auth:
    from mcp.client.auth.extensions.client_credentials import (
        ClientCredentialsOAuthProvider,
        PrivateKeyJWTOAuthProvider,
        SignedJWTParameters,
    )

    assert oauth.client_id is not None
    if oauth.private_key:
        signer = SignedJWTParameters(issuer=oauth.client_id, subject=oauth.client_id,
                                     signing_key=oauth.private_key,
                                     signing_algorithm=oauth.signing_algorithm)
        return PrivateKeyJWTOAuthProvider(url, storage, oauth.client_id,
                                          signer.create_assertion_provider(),
                                          scope=oauth.scope, issuer=oauth.issuer)
    assert oauth.client_secret is not None
    method = oauth.token_endpoint_auth_method or "client_secret_basic"
    if method not in ("client_secret_basic", "client_secret_post"):
        raise ConfigError(f"token_endpoint_auth_method {method!r} does not go with a client "
                          "secret; use client_secret_basic or client_secret_post")
    return ClientCredentialsOAuthProvider(url, storage, oauth.client_id, oauth.client_secret,
                                          token_endpoint_auth_method=method,  # type: ignore[arg-type]
                                          scope=oauth.scope, issuer=oauth.issuer)


async def _cross_app(url: str, oauth: OAuth, storage: TokenStorage) -> httpx2.Auth:
    from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider

    issuer = oauth.issuer or await _authorization_server(url)
    assert oauth.client_id is not None and oauth.client_secret is not None

    async def assertion(audience: str, resource: str) -> str:
        return await _exchange(oauth, audience, resource)

    method = oauth.token_endpoint_auth_method or "client_secret_basic"
    return IdentityAssertionOAuthProvider(url, storage, oauth.client_id, oauth.client_secret,
                                          issuer, assertion, scope=oauth.scope,
                                          token_endpoint_auth_method=method)  # type: ignore[arg-type]


async def _authorization_server(url: str) -> str:
    """The first authorization server the MCP server's protected resource metadata names."""
    async with httpx2.AsyncClient(timeout=30) as http:
        for where in build_protected_resource_metadata_discovery_urls(None, url):
            try:
                response = await http.send(create_oauth_metadata_request(where))
            except httpx2.HTTPError:
                continue
            found = await handle_protected_resource_response(response)
            if found is not None and found.authorization_servers:
                return str(found.authorization_servers[0])
    raise ConfigError(f"the MCP server {url} publishes no protected resource metadata naming "
                      "its authorization server; give issuer for the cross_app grant")


async def _exchange(oauth: OAuth, audience: str, resource: str) -> str:
    """The token exchange (RFC 8693) at the identity provider: the person's ID token for an
    identity assertion grant meant for ``audience`` and ``resource``."""
    assert oauth.idp_token_endpoint is not None and oauth.id_token is not None
    form = {"grant_type": _TOKEN_EXCHANGE, "subject_token": oauth.id_token,
            "subject_token_type": _ID_TOKEN, "requested_token_type": _ID_JAG,
            "audience": audience, "resource": resource}
    if oauth.scope:
        form["scope"] = oauth.scope
    headers: dict[str, str] = {}
    if oauth.idp_client_id and oauth.idp_client_secret:
        pair = f"{oauth.idp_client_id}:{oauth.idp_client_secret}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
    elif oauth.idp_client_id:
        form["client_id"] = oauth.idp_client_id
    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.post(oauth.idp_token_endpoint, data=form, headers=headers)
    try:
        body = response.json()
    except ValueError:
        body = {}
    if response.status_code != 200 or not isinstance(body, dict) or not body.get(
            "access_token"):
        why = body.get("error_description") or body.get("error") if isinstance(body, dict) else ""
        raise ConfigError(f"the identity provider at {oauth.idp_token_endpoint} refused the "
                          f"token exchange (HTTP {response.status_code}{': ' if why else ''}"
                          f"{why or ''})")
    granted = str(body["access_token"])
    remember(granted, "identity assertion")
    return granted


def _challenge(header: str) -> dict[str, str]:
    """The parameters of a ``WWW-Authenticate: Bearer k="v", ...`` challenge."""
    return {key.lower(): value for key, value in
            re.findall(r'([A-Za-z_]+)\s*=\s*"([^"]*)"', header)}


def refusal(url: str, status: int, headers: Mapping[str, str], *, authorized: bool) -> str:
    """Why the MCP server at ``url`` refused (HTTP ``status`` with its ``WWW-Authenticate``) and
    how to give it what it wants; ``authorized``: whether a token or header was sent."""
    found = _challenge(headers.get("www-authenticate", ""))
    wants = []
    if found.get("scope"):
        wants.append(f"the scopes {found['scope']}")
    if found.get("resource_metadata"):
        wants.append(f"OAuth (its metadata: {found['resource_metadata']})")
    said = found.get("error_description") or found.get("error")
    head = (f"the MCP server {url} answered HTTP {status}: "
            + ("it needs authorization" if status == 401 else "it refuses this client"))
    if said:
        head += f" ({said})"
    if wants:
        head += "; it wants " + " and ".join(wants)
    if status == 403 and found.get("error") == "insufficient_scope":
        todo = (f"sign in again with the scopes it names: toolwire mcp login {url} "
                f"--scope '{found.get('scope', '...')}'")
    elif authorized:
        todo = (f"the token or header sent was not accepted; sign in again with toolwire mcp "
                f"login {url}, or give a valid one with --mcp-header 'Authorization: Bearer "
                "...' or the server's section in the config file")
    else:
        todo = (f"sign in with toolwire mcp login {url} (OAuth), or give a token with "
                "--mcp-header 'Authorization: Bearer ...' or the server's section in the "
                "config file (see docs/mcp.md)")
    return f"{head}. To fix: {todo}"


@dataclass
class Refused:
    """The last time the server refused a request for want of authorization (None: it has not,
    or it accepted one since)."""

    status: int | None = None
    headers: dict[str, str] | None = None

    def said(self, url: str, authorized: bool, reason: str) -> str:
        """`refusal`'s words for the last refusal, if there was one, with ``reason`` (what
        failed) when it says more than that the server answered with an error."""
        if self.status is None:
            return reason
        words = refusal(url, self.status, self.headers or {}, authorized=authorized)
        if reason.startswith("Server returned an error"):
            return words
        return f"{words} (signing in failed: {reason})"


@contextlib.asynccontextmanager
async def over_http(url: str, *, headers: Mapping[str, str] | None, token: str | None,
                    oauth: OAuth | None, refused: Refused) -> AsyncIterator[Any]:
    """The SDK's streamable HTTP transport to ``url``, sending ``headers``, ``token`` (as
    ``Authorization: Bearer``) or OAuth tokens; ``refused`` learns of each 401 or 403 the
    server answers, and forgets it once the server accepts a request."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    sent = dict(headers or {})
    if token:
        sent["Authorization"] = f"Bearer {token}"
    auth = await http_auth(url, oauth) if oauth is not None else None
    endpoint = urlsplit(url)._replace(query="", fragment="").geturl()

    async def seen(response: httpx2.Response) -> None:
        if str(response.request.url.copy_with(query=None, fragment=None)) != endpoint:
            return
        if response.status_code in (401, 403):
            refused.status, refused.headers = response.status_code, dict(response.headers)
        elif response.status_code < 400:
            refused.status = refused.headers = None

    try:
        async with create_mcp_http_client(headers=sent or None, auth=auth) as http:
            http.event_hooks["response"].append(seen)
            async with streamable_http_client(url, http_client=http) as streams:
                yield streams
    finally:
        loopback = getattr(auth, "loopback", None)
        if loopback is not None:
            loopback.close()


def secret_headers(headers: Mapping[str, str], token: str | None) -> None:
    """Keep the values of ``headers`` and ``token`` out of every record from now on."""
    for name, value in headers.items():
        remember(value, f"MCP header {name}")
    remember(token, "MCP token")


def expires_in(expires_at: float | None) -> str:
    """How long a kept token has left, in words."""
    if expires_at is None:
        return "no expiry given"
    left = expires_at - time.time()
    return "expired" if left <= 0 else f"expires in {int(left // 60)} min"
