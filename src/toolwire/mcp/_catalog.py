"""The parts of a served MCP server besides tools: resources, prompts, completion, logging
levels and resource subscriptions, as handlers for the SDK's low-level ``Server``.

Owns `Catalog`: it lists and reads `toolwire.mcp.offers.Resource`s (static ones and templates,
matched by the SDK's ``ResourceManager``), lists and renders `toolwire.mcp.offers.Prompt`s,
answers ``completion/complete`` for prompt arguments and template parts, keeps the log level
each client connection set (``logging/setLevel``, 2025-11-25 and older) and the URIs it
subscribed to (``resources/subscribe``), and publishes resource updates both to those
subscribers and to ``subscriptions/listen`` streams (2026-07-28) through the SDK's subscription
bus. It is also the `toolwire.mcp.context.Context`'s hooks. Must not import the loop, codecs
or the transport.
"""

from __future__ import annotations

import base64
import weakref
from collections.abc import Sequence
from typing import Any

from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver.context import Context as SdkContext
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.server.mcpserver.prompts.base import Message
from mcp.server.mcpserver.resources import Resource as SdkResource
from mcp.server.mcpserver.resources import ResourceManager, ResourceTemplate
from mcp.server.mcpserver.resources.templates import ResourceSecurityError
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    BlobResourceContents,
    CompleteRequestParams,
    CompleteResult,
    Completion,
    EmptyResult,
    GetPromptRequestParams,
    GetPromptResult,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    PaginatedRequestParams,
    PromptArgument,
    PromptMessage,
    PromptReference,
    ReadResourceRequestParams,
    ReadResourceResult,
    ResourceTemplateReference,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextResourceContents,
    UnsubscribeRequestParams,
)
from mcp_types import Prompt as McpPrompt
from mcp_types import Resource as McpResource
from mcp_types import ResourceTemplate as McpResourceTemplate

from toolwire.errors import ConfigError
from toolwire.mcp.context import Level, _Hooks
from toolwire.mcp.offers import Completer, Prompt, Resource, complete_value

__all__ = ["Catalog"]

Ctx = ServerRequestContext[Any]


class Catalog(_Hooks):
    """Resources, prompts and the per-connection state a server keeps for them."""

    def __init__(self, resources: Sequence[Resource] = (), prompts: Sequence[Prompt] = ()) -> None:
        self.resources = list(resources)
        self.prompts = {p.name: p for p in prompts}
        if len(self.prompts) != len(prompts):
            raise ConfigError("two prompts have the same name; names must be unique")
        self._manager = ResourceManager(warn_on_duplicate_resources=False)
        self._templates: dict[str, Resource] = {}
        seen: set[str] = set()
        for item in self.resources:
            if item.uri in seen:
                raise ConfigError(f"two resources have the URI {item.uri!r}; URIs must be unique")
            seen.add(item.uri)
            if isinstance(item.definition, ResourceTemplate):
                self._templates[item.uri] = item
            else:
                self._manager.add_resource(item.definition)  # type: ignore[arg-type]
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self._levels: weakref.WeakKeyDictionary[Connection, Level] = weakref.WeakKeyDictionary()
        self._watching: weakref.WeakKeyDictionary[Connection, set[str]] = (
            weakref.WeakKeyDictionary())

    # -- resources --------------------------------------------------------------------------

    async def list_resources(self, ctx: Ctx, params: PaginatedRequestParams | None
                             ) -> ListResourcesResult:
        listed = [McpResource(uri=str(r.uri), name=r.name or str(r.uri), title=r.title,
                              description=r.description, mime_type=r.mime_type)
                  for r in self._manager.list_resources()]
        return ListResourcesResult(resources=listed)

    async def list_templates(self, ctx: Ctx, params: PaginatedRequestParams | None
                             ) -> ListResourceTemplatesResult:
        made = [t.definition for t in self._templates.values()
                if isinstance(t.definition, ResourceTemplate)]
        listed = [McpResourceTemplate(uri_template=t.uri_template, name=t.name, title=t.title,
                                      description=t.description, mime_type=t.mime_type)
                  for t in made]
        return ListResourceTemplatesResult(resource_templates=listed)

    async def read_resource(self, ctx: Ctx, params: ReadResourceRequestParams
                            ) -> ReadResourceResult | InputRequiredResult:
        uri = str(params.uri)
        try:
            found = await self._find(uri, SdkContext(request_context=ctx))
            if isinstance(found, InputRequiredResult):
                return found
            content = await found.read()
        except ResourceNotFoundError:
            raise MCPError(code=INVALID_PARAMS, message=f"Resource not found: {uri}",
                           data={"uri": uri}) from None
        except (ResourceError, ValueError) as exc:
            raise MCPError(code=INTERNAL_ERROR, message=f"reading {uri} failed: {exc}",
                           data={"uri": uri}) from None
        if isinstance(content, bytes):
            blob = BlobResourceContents(uri=uri, blob=base64.b64encode(content).decode(),
                                        mime_type=found.mime_type or "application/octet-stream")
            return ReadResourceResult(contents=[blob])
        text = TextResourceContents(uri=uri, text=str(content),
                                    mime_type=found.mime_type or "text/plain")
        return ReadResourceResult(contents=[text])

    async def _find(self, uri: str, context: SdkContext[Any, Any]
                    ) -> SdkResource | InputRequiredResult:
        """The static resource at ``uri``, else one made by the first template it fits."""
        for resource in self._manager.list_resources():
            if str(resource.uri) == uri:
                return resource
        for item in self._templates.values():
            template = item.definition
            assert isinstance(template, ResourceTemplate)
            try:
                parts = template.matches(uri)
            except ResourceSecurityError:
                break
            if parts is not None:
                return await template.create_resource(uri, parts, context=context)
        raise ResourceNotFoundError(f"Unknown resource: {uri}")

    async def subscribe(self, ctx: Ctx, params: SubscribeRequestParams) -> EmptyResult:
        self._watching.setdefault(_connection(ctx), set()).add(str(params.uri))
        return EmptyResult()

    async def unsubscribe(self, ctx: Ctx, params: UnsubscribeRequestParams) -> EmptyResult:
        self._watching.get(_connection(ctx), set()).discard(str(params.uri))
        return EmptyResult()

    async def resource_updated(self, uri: str) -> None:
        for connection, uris in list(self._watching.items()):
            if uri in uris:
                try:
                    await connection.send_resource_updated(uri)
                except Exception:  # a client that went away misses the news
                    uris.discard(uri)
        await self.bus.publish(ResourceUpdated(uri=uri))

    # -- prompts ----------------------------------------------------------------------------

    async def list_prompts(self, ctx: Ctx, params: PaginatedRequestParams | None
                           ) -> ListPromptsResult:
        listed = [McpPrompt(name=p.definition.name, title=p.definition.title,
                            description=p.definition.description or None,
                            arguments=[PromptArgument(name=a.name, description=a.description,
                                                      required=a.required)
                                       for a in p.definition.arguments or ()])
                  for p in self.prompts.values()]
        return ListPromptsResult(prompts=listed)

    async def get_prompt(self, ctx: Ctx, params: GetPromptRequestParams
                         ) -> GetPromptResult | InputRequiredResult:
        found = self.prompts.get(params.name)
        if found is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown prompt: {params.name}; the "
                           f"prompts are: {', '.join(self.prompts) or 'none'}")
        try:
            rendered = await found.definition.render(params.arguments,
                                                     SdkContext(request_context=ctx))
        except ValueError as exc:
            cause = f": {exc.__cause__}" if exc.__cause__ else ""
            raise MCPError(code=INVALID_PARAMS, message=f"{exc}{cause}") from None
        if isinstance(rendered, InputRequiredResult):
            return rendered
        messages = [PromptMessage(role=m.role, content=m.content) for m in rendered
                    if isinstance(m, Message)]
        return GetPromptResult(description=found.definition.description or None,
                               messages=messages)

    # -- completion -------------------------------------------------------------------------

    async def complete(self, ctx: Ctx, params: CompleteRequestParams) -> CompleteResult:
        ref = params.ref
        completer: Completer | None = None
        if isinstance(ref, PromptReference):
            prompt = self.prompts.get(ref.name)
            completer = prompt.complete.get(params.argument.name) if prompt else None
        elif isinstance(ref, ResourceTemplateReference):
            template = self._templates.get(ref.uri)
            completer = template.complete.get(params.argument.name) if template else None
        values: list[str] = []
        if completer is not None:
            others = dict(params.context.arguments or {}) if params.context else {}
            values = await complete_value(completer, params.argument.value, others)
        return CompleteResult(completion=Completion(values=values, total=len(values),
                                                    has_more=False))

    # -- logging ----------------------------------------------------------------------------

    async def set_level(self, ctx: Ctx, params: SetLevelRequestParams) -> EmptyResult:
        self._levels[_connection(ctx)] = params.level
        return EmptyResult()

    def min_level(self, ctx: Ctx) -> Level | None:
        return self._levels.get(_connection(ctx))


def _connection(ctx: Ctx) -> Connection:
    """The client connection a request came on (its session object lasts one request)."""
    found: Connection = ctx.session._connection
    return found
