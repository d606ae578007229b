"""MCP resources and resource templates, read through one ``read_resource`` tool.

Owns `list_resources` (what each server offers, listed once when the tool is made) and
`resource_tool` (the ``read_resource`` tool: its description lists every resource and template
with its server, so the model knows what it may read; a call reads one URI from the server that
lists it, or whose template it fits, or the one named). Text contents come back as text, binary
ones as media parts (images, audio, documents). Must not import the loop, codecs or the
transport.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp import Client
from mcp_types import BlobResourceContents, EmbeddedResource, TextResourceContents

from toolwire.errors import ToolError
from toolwire.mcp._results import block_media
from toolwire.mcp._session import describe
from toolwire.schema.tool import Tool

if TYPE_CHECKING:
    from toolwire.mcp.client import McpConnection

__all__ = ["READ_RESOURCE", "Offer", "list_resources", "resource_tool"]

READ_RESOURCE = "read_resource"
_PAGES = 100


@dataclass(frozen=True)
class Offer:
    """One resource (``uri``) or template (``template``) a server offers."""

    server: McpConnection
    uri: str
    name: str
    description: str
    mime_type: str | None
    template: bool = False

    def fits(self, uri: str) -> bool:
        if not self.template:
            return uri == self.uri
        pattern = "".join("[^/]+" if part.startswith("{") else re.escape(part)
                          for part in re.split(r"(\{[^}]*\})", self.uri))
        return re.fullmatch(pattern, uri) is not None


async def _listed(client: Client) -> list[tuple[str, str, str, str | None, bool]]:
    found: list[tuple[str, str, str, str | None, bool]] = []
    cursor: str | None = None
    for _ in range(_PAGES):
        page = await client.list_resources(cursor=cursor)
        found.extend((str(r.uri), r.name, r.description or r.title or "", r.mime_type, False)
                     for r in page.resources)
        cursor = page.next_cursor
        if not cursor:
            break
    cursor = None
    for _ in range(_PAGES):
        templates = await client.list_resource_templates(cursor=cursor)
        found.extend((t.uri_template, t.name, t.description or t.title or "", t.mime_type, True)
                     for t in templates.resource_templates)
        cursor = templates.next_cursor
        if not cursor:
            break
    return found


def list_resources(servers: Sequence[McpConnection]) -> tuple[list[Offer], list[str]]:
    """What ``servers`` offer (blocking), and notes on the servers that could not list it."""
    offers: list[Offer] = []
    notes: list[str] = []
    for server in servers:
        caps = server.capabilities
        if caps is None or caps.resources is None:
            continue
        try:
            listed = server.session.wait(_listed, server.timeout)
        except Exception as exc:
            notes.append(f"MCP server {server.name!r} could not list its resources: "
                         f"{describe(exc)}")
            continue
        offers.extend(Offer(server, *item) for item in listed)
    return offers, notes


def _line(offer: Offer, many: bool) -> str:
    about = f": {offer.description}" if offer.description else ""
    kind = f" ({offer.mime_type})" if offer.mime_type else ""
    where = f" [server {offer.server.name}]" if many else ""
    return f"- {offer.uri}{kind} {offer.name}{about}{where}"


def resource_tool(servers: Sequence[McpConnection], *, name: str = READ_RESOURCE
                  ) -> tuple[Tool | None, list[str]]:
    """The ``read_resource`` tool over what ``servers`` offer (None when none offers any),
    and notes on servers that could not list their resources."""
    offers, notes = list_resources(servers)
    if not offers:
        return None, notes
    many = len({id(o.server) for o in offers}) > 1
    fixed = [_line(o, many) for o in offers if not o.template]
    templates = [_line(o, many) for o in offers if o.template]
    text = ["Read a resource an MCP server offers, by its URI."]
    if fixed:
        text += ["Resources:", *fixed]
    if templates:
        text += ["URI templates (fill in the {parts}):", *templates]
    by_name = {s.name: s for s in servers}

    async def read_resource(uri: str, server: str | None = None) -> Any:
        if server is not None and server not in by_name:
            raise ToolError(f"no MCP server is called {server!r}; the servers are "
                            f"{', '.join(sorted(by_name))}")
        owners = [by_name[server]] if server else list(dict.fromkeys(
            o.server for o in sorted(offers, key=lambda o: o.template) if o.fits(uri)))
        if not owners:
            raise ToolError(f"no MCP server offers {uri!r}: give a URI listed in this tool's "
                            "description, or one that fits a template there")
        return await _read(owners[0], uri)

    schema = {"type": "object", "properties": {
        "uri": {"type": "string", "description": "The resource's URI"},
        "server": {"type": "string", "enum": sorted(by_name),
                   "description": "The server to read it from (only needed when two offer it)"}},
        "required": ["uri"]}
    tool = Tool(name=name, description="\n".join(text), input_schema=schema, fn=read_resource,
                read_only=True, idempotent=True)
    return tool, notes


async def _read(server: McpConnection, uri: str) -> Any:
    try:
        result = await server.session.request(lambda client: client.read_resource(uri))
    except Exception as exc:
        raise ToolError(f"The MCP server {server.name!r} could not read {uri!r}: "
                        f"{describe(exc)}") from None
    items: list[Any] = []
    for contents in result.contents:
        if isinstance(contents, TextResourceContents):
            items.append(contents.text)
        elif isinstance(contents, BlobResourceContents):
            part = block_media(EmbeddedResource(resource=contents))
            items.append(part if part is not None else
                         f"[{contents.uri}: {contents.mime_type or 'binary data'} that could not "
                         "be read]")
    if all(isinstance(i, str) for i in items):
        return "\n".join(items)
    return items
