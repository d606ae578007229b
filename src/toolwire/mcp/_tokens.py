"""OAuth tokens for MCP servers, kept per server in the user's state directory.

Owns `TokenFile` (the MCP SDK's ``TokenStorage`` over one file), `token_path`, `forget` and
`stored`. A server's file is ``mcp-auth/<hash of its URL>.json`` in
`toolwire.records.state_dir` (the folder run records use), written whole and mode 0600 in a
folder of mode 0700; it holds the tokens, when they expire, the client's registration and what
discovery found (the authorization server's metadata), so a later process refreshes a token
before it expires at the right token endpoint instead of starting over. Every token and client
secret read or written is handed to `toolwire.secrets.remember`, so no record, span, cassette or
message shows it. Must not import the loop, codecs or the transport.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)

from toolwire.records import state_dir
from toolwire.secrets import remember

__all__ = ["TokenFile", "forget", "stored", "token_path"]

FOLDER = "mcp-auth"


def token_path(url: str, folder: str | os.PathLike[str] | None = None, *,
               create: bool = False) -> Path:
    """The file that keeps the tokens of the MCP server at ``url`` (``create``: make the
    state directory, mode 0700, when it is missing)."""
    base = Path(folder) if folder is not None else state_dir(create=create) / FOLDER
    digest = hashlib.sha256(url.strip().rstrip("/").encode()).hexdigest()[:24]
    return base / f"{digest}.json"


def forget(url: str, folder: str | os.PathLike[str] | None = None) -> bool:
    """Delete what is kept for ``url``; whether there was anything."""
    path = token_path(url, folder)
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def stored(url: str, folder: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """What is kept for ``url`` ({} when nothing is)."""
    path = token_path(url, folder)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _keep_secret(tokens: OAuthToken | None, client: OAuthClientInformationFull | None) -> None:
    if tokens is not None:
        remember(tokens.access_token, "MCP access token")
        remember(tokens.refresh_token, "MCP refresh token")
    if client is not None:
        remember(client.client_secret, "MCP client secret")


class TokenFile:
    """The SDK's ``TokenStorage`` for one server, in one file (see the module docstring)."""

    def __init__(self, url: str, folder: str | os.PathLike[str] | None = None) -> None:
        self.url = url
        self._folder = folder
        self.path = token_path(url, folder)

    def read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, **changes: Any) -> None:
        data = {**self.read(), "server": self.url, **changes}
        if self._folder is None:
            token_path(self.url, create=True)
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        partial = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        handle = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(data, out, indent=1)
            os.chmod(partial, 0o600)
            os.replace(partial, self.path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(partial)

    async def get_tokens(self) -> OAuthToken | None:
        raw = self.read().get("tokens")
        if not isinstance(raw, dict):
            return None
        try:
            tokens = OAuthToken.model_validate(raw)
        except ValueError:
            return None
        _keep_secret(tokens, None)
        return tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        _keep_secret(tokens, None)
        expires = time.time() + tokens.expires_in if tokens.expires_in else None
        self._write(tokens=tokens.model_dump(mode="json", exclude_none=True),
                    expires_at=expires)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        raw = self.read().get("client")
        if not isinstance(raw, dict):
            return None
        try:
            client = OAuthClientInformationFull.model_validate(raw)
        except ValueError:
            return None
        _keep_secret(None, client)
        return client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        _keep_secret(None, client_info)
        self._write(client=client_info.model_dump(mode="json", exclude_none=True))

    def expires_at(self) -> float | None:
        """When the kept access token expires (seconds since the epoch), if it said."""
        value = self.read().get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    def discovery(self) -> tuple[ProtectedResourceMetadata | None, OAuthMetadata | None]:
        """The metadata discovery found last time (resource, authorization server)."""
        data = self.read()
        resource = server = None
        with contextlib.suppress(ValueError, TypeError):
            if isinstance(data.get("resource_metadata"), dict):
                resource = ProtectedResourceMetadata.model_validate(data["resource_metadata"])
        with contextlib.suppress(ValueError, TypeError):
            if isinstance(data.get("server_metadata"), dict):
                server = OAuthMetadata.model_validate(data["server_metadata"])
        return resource, server

    def keep_discovery(self, resource: ProtectedResourceMetadata | None,
                       server: OAuthMetadata | None) -> None:
        changes: dict[str, Any] = {}
        if resource is not None:
            changes["resource_metadata"] = resource.model_dump(mode="json", exclude_none=True)
        if server is not None:
            changes["server_metadata"] = server.model_dump(mode="json", exclude_none=True)
        if changes and self.path.exists():
            self._write(**changes)


class MemoryTokens:
    """A ``TokenStorage`` that keeps nothing beyond the process (``OAuth(keep=False)``)."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        _keep_secret(tokens, None)
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        _keep_secret(None, client_info)
        self.client = client_info
