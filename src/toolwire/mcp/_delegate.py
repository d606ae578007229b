"""``mcp-serve`` as an OAuth protected resource: tokens come from an authorization server.

Owns `Delegation` (the authorization server, where its tokens are checked, this server's public
address and the scopes it needs) and `delegated_app`. The MCP SDK does the protocol's part: it
publishes the protected resource metadata (RFC 9728) at
``/.well-known/oauth-protected-resource/<path>`` naming the authorization server, answers a
request without a valid token with 401 and a ``WWW-Authenticate`` challenge pointing there,
and one without the scopes needed with 403 ``insufficient_scope``. Whether a token is valid is
asked of the authorization server's introspection endpoint (RFC 7662, `Introspection`),
authenticated as this resource server when ``client_id`` is given; a token must be active, not
expired, and, when the answer names an audience, meant for this server. Must not import the
loop, codecs or the transport.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import httpx2
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings

from toolwire.errors import ConfigError
from toolwire.secrets import remember

__all__ = ["Delegation", "Introspection", "delegated_app"]


@dataclass(frozen=True)
class Delegation:
    """Tokens from ``issuer``, checked at ``introspection``; ``resource`` is this server's
    public address (its MCP URL), ``scopes`` those every request needs."""

    issuer: str
    introspection: str
    resource: str
    scopes: tuple[str, ...] = ()
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        remember(self.client_secret, "introspection client secret")
        for name, url in (("--authorization-server", self.issuer),
                          ("--introspection-url", self.introspection),
                          ("--resource-url", self.resource)):
            if not url.startswith(("http://", "https://")):
                raise ConfigError(f"{name} {url!r} is not an http(s) URL")


class Introspection:
    """The SDK's ``TokenVerifier``, asking the authorization server (RFC 7662)."""

    def __init__(self, delegation: Delegation) -> None:
        self.delegation = delegation

    async def verify_token(self, token: str) -> AccessToken | None:
        d = self.delegation
        auth = (d.client_id, d.client_secret or "") if d.client_id else None
        try:
            async with httpx2.AsyncClient(timeout=30) as http:
                answer = await http.post(d.introspection, data={"token": token},
                                         auth=auth)  # type: ignore[arg-type]
            found: Any = answer.json() if answer.status_code == 200 else {}
        except (httpx2.HTTPError, ValueError):
            return None
        if not isinstance(found, dict) or found.get("active") is not True:
            return None
        expires = found.get("exp")
        if isinstance(expires, int | float) and expires < time.time():
            return None
        audience = found.get("aud")
        audiences = audience if isinstance(audience, list) else [audience] if audience else []
        if audiences and d.resource not in audiences and d.resource.rstrip("/") not in audiences:
            return None
        scope = found.get("scope")
        return AccessToken(token=token, client_id=str(found.get("client_id") or ""),
                           scopes=scope.split() if isinstance(scope, str) else [],
                           expires_at=int(expires) if isinstance(expires, int | float) else None,
                           resource=d.resource, subject=found.get("sub"))


def delegated_app(server: Any, delegation: Delegation, **options: Any) -> Any:
    """``server``'s streamable HTTP app (with ``options``) behind the SDK's bearer checks,
    tokens checked by `Introspection`, with its protected resource metadata."""
    settings = AuthSettings(issuer_url=delegation.issuer,  # type: ignore[arg-type]
                            resource_server_url=delegation.resource,  # type: ignore[arg-type]
                            required_scopes=list(delegation.scopes) or None,
                            validate_token_resource=True)
    return server.streamable_http_app(auth=settings, token_verifier=Introspection(delegation),
                                       **options)
