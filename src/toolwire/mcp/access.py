"""How to reach MCP servers that want credentials, from settings: flags, config, environment.

Owns `server_access` (one server's section of the config file, and the headers given on the
command line, as `toolwire.mcp.connect`'s ``headers``, ``token`` and ``oauth``), `access_map`
(every section at once) and `parse_header` (``"Name: value"``). The config file's own reading
is the command line's (`toolwire.cli.settings`); this module only reads the values, so a
program may use it with settings of its own. A section looks like::

    [mcp]
    client_metadata_url = "https://tools.example.org/toolwire-client.json"   # optional

    [mcp.servers."https://mcp.example.com/mcp"]
    headers = { "X-Team" = "blue" }
    token_env = "EXAMPLE_MCP_TOKEN"        # or token = "...", read from the file
    oauth = { client_id = "...", scope = "files:read", browser = false }

Any key it does not know, or a value of the wrong kind, is a `ConfigError` naming the server and
the key. Must not import the loop, codecs or the transport.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from toolwire.errors import ConfigError
from toolwire.mcp.auth import CLIENT_METADATA_URL, OAuth, stored

__all__ = ["access_map", "parse_header", "server_access"]

_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_SERVER_KEYS = ("headers", "token", "token_env", "oauth")
_OAUTH_KEYS = {**{f.name: str(f.type) for f in fields(OAuth) if f.name not in ("authorize",
                                                                               "opener", "folder")},
               "client_secret_env": "str"}


def parse_header(text: str, where: str = "--mcp-header") -> tuple[str, str]:
    """``"Name: value"`` as (name, value); a `ConfigError` naming ``where`` otherwise."""
    name, colon, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not colon or not _HEADER_NAME.fullmatch(name):
        raise ConfigError(f"{where} {text.split(':')[0][:40]!r}... is not a header: write it as "
                          "'Name: value', such as 'Authorization: Bearer TOKEN'")
    if not value or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ConfigError(f"{where} {name}: the value is empty or holds a control character")
    return name, value


def _text(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where} must be a non-empty string")
    return value


def _oauth(raw: object, where: str, cimd: str | None) -> OAuth:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} must be a table of OAuth settings (client_id, scope...)")
    given: dict[str, Any] = {}
    for key, value in raw.items():
        kind = _OAUTH_KEYS.get(key)
        if kind is None:
            raise ConfigError(f"{where} has an unknown key {key!r}; the keys are "
                              + ", ".join(_OAUTH_KEYS))
        if "bool" in kind:
            if not isinstance(value, bool):
                raise ConfigError(f"{where}.{key} must be true or false")
        elif "int" in kind:
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 65535:
                raise ConfigError(f"{where}.{key} must be a port number")
        else:
            value = _text(value, f"{where}.{key}")
        given[key] = value
    if key_env := given.pop("client_secret_env", None):
        given["client_secret"] = os.environ.get(key_env)
    if "client_metadata_url" not in given and cimd:
        given["client_metadata_url"] = cimd
    if given.get("client_metadata_url") == "none":
        given["client_metadata_url"] = None
    try:
        return OAuth(**given)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def server_access(url: str, section: Mapping[str, Any] | None = None,
                  headers: list[str] | tuple[str, ...] = (),
                  env: Mapping[str, str] | None = None,
                  client_metadata_url: str | None = None) -> dict[str, Any]:
    """`connect`'s ``headers``, ``token`` and ``oauth`` for ``url``: its config ``section``
    first, then ``headers`` from the command line (``"Name: value"``) over it; a server
    signed in to with ``toolwire mcp login`` and given no other credentials gets OAuth, which
    uses (and refreshes) the tokens kept for it."""
    env = os.environ if env is None else env
    where = f"the config section mcp.servers.{url!r}"
    found: dict[str, Any] = {}
    section = section or {}
    for key in section:
        if key not in _SERVER_KEYS:
            raise ConfigError(f"{where} has an unknown key {key!r}; the keys are "
                              + ", ".join(_SERVER_KEYS))
    sent: dict[str, str] = {}
    raw = section.get("headers", {})
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: headers must be a table of names and values")
    for name, value in raw.items():
        sent.update([parse_header(f"{name}: {_text(value, f'{where}: headers.{name}')}",
                                  f"{where}: headers")])
    if "token" in section and "token_env" in section:
        raise ConfigError(f"{where} has both token and token_env; keep one")
    if "token" in section:
        found["token"] = _text(section["token"], f"{where}: token")
    if "token_env" in section:
        name = _text(section["token_env"], f"{where}: token_env")
        if not env.get(name):
            raise ConfigError(f"{where}: token_env names {name}, which is not set; export it "
                              "or remove the key")
        found["token"] = env[name]
    if "oauth" in section:
        found["oauth"] = _oauth(section["oauth"], f"{where}: oauth", client_metadata_url)
    for text in headers:
        name, value = parse_header(text)
        sent = {k: v for k, v in sent.items() if k.lower() != name.lower()}
        sent[name] = value
    if sent:
        found["headers"] = sent
    signed_in = stored(url).get("tokens")
    if signed_in and not ({"token", "oauth"} & set(found) or "authorization" in map(
            str.lower, sent)):
        found["oauth"] = _oauth({}, f"{where}: oauth", client_metadata_url)  # mcp login's
    return found


def access_map(urls: list[str], config: Mapping[str, Any] | None,
               headers: list[str] | tuple[str, ...] = (),
               env: Mapping[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """`server_access` for each of ``urls`` that is an HTTP server, from the config file's
    ``mcp`` table (``config``) and the command line's ``headers`` (given to every one)."""
    config = config or {}
    if not isinstance(config, Mapping):
        raise ConfigError("the config file's mcp key must be a table ([mcp])")
    unknown = set(config) - {"servers", "client_metadata_url"}
    if unknown:
        raise ConfigError(f"the config file's [mcp] table has an unknown key "
                          f"{sorted(unknown)[0]!r}; the keys are servers, client_metadata_url")
    servers = config.get("servers", {})
    if not isinstance(servers, Mapping):
        raise ConfigError("the config file's mcp.servers must be tables named by URL")
    cimd = config.get("client_metadata_url", CLIENT_METADATA_URL)
    if cimd is not None:
        cimd = _text(cimd, "the config file's mcp.client_metadata_url")
    found: dict[str, dict[str, Any]] = {}
    for url in urls:
        if not url.strip().startswith(("http://", "https://")):
            continue
        key = url.strip()
        section = servers.get(key) or servers.get(key.rstrip("/"))
        if section is not None and not isinstance(section, Mapping):
            raise ConfigError(f"the config section mcp.servers.{key!r} must be a table")
        found[key] = server_access(key, section, headers, env, cimd)
    return found
