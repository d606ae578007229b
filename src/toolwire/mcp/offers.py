"""Resources and prompts served next to the tools: `resource`, `prompt`, `embedded_resource`.

Owns the declarations ``toolwire mcp-serve`` serves besides tools. `resource` makes a static
resource (``resource("docs://readme", "text")``, bytes for binary content) or, as a decorator,
one read by a function; a URI with ``{parts}`` is a resource template whose parts are the
function's arguments. `prompt` makes a prompt from a function whose parameters are its arguments
and whose result is its messages. Both build on the MCP SDK's own resource, template and prompt
types (``mcp.server.mcpserver``), which do the URI matching and argument checking; toolwire adds
media results (`toolwire.Image`, `Audio`, `Document`, `embedded_resource`) and completion of
arguments (``complete={"city": [...]}`` or a function). `embedded_resource` is also what a tool
returns to send a resource of its own URI, text or binary. Must not import the loop, codecs or
the transport.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from mcp.server.mcpserver.prompts.base import Prompt as SdkPrompt
from mcp.server.mcpserver.resources import (
    BinaryResource,
    FunctionResource,
    ResourceTemplate,
    TextResource,
)
from mcp.server.mcpserver.resources import Resource as SdkResource

from toolwire.errors import ConfigError
from toolwire.mcp._results import to_mcp_block
from toolwire.transcript import MediaPart

__all__ = ["Completer", "Prompt", "Resource", "complete_value", "embedded_resource", "prompt",
           "resource"]

Completer: TypeAlias = (Sequence[str]
                        | Callable[[str, Mapping[str, str]], Sequence[str]
                                   | Awaitable[Sequence[str]]])
"""The values an argument may take: a list (those starting with what was typed are offered),
or a function given what was typed and the other arguments so far, returning the values."""

_MISSING: Any = object()


@dataclass(frozen=True)
class Resource:
    """A resource (or, with ``{parts}`` in its URI, a resource template) to serve."""

    definition: SdkResource | ResourceTemplate
    complete: Mapping[str, Completer] = field(default_factory=dict)

    @property
    def templated(self) -> bool:
        return isinstance(self.definition, ResourceTemplate)

    @property
    def uri(self) -> str:
        if isinstance(self.definition, ResourceTemplate):
            return self.definition.uri_template
        return str(self.definition.uri)


@dataclass(frozen=True)
class Prompt:
    """A prompt to serve: its name, arguments, and the function making its messages."""

    definition: SdkPrompt
    complete: Mapping[str, Completer] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.definition.name


def embedded_resource(uri: str, content: str | bytes, mime_type: str | None = None) -> MediaPart:
    """A resource with its own URI, for a tool's result or a prompt's message: text (str,
    ``text/plain`` unless given) or binary (bytes, ``application/octet-stream`` unless
    given). Served as an MCP embedded resource holding that URI."""
    if isinstance(content, str):
        return MediaPart(kind="document", media_type=mime_type or "text/plain",
                         data=content.encode(), name=uri)
    return MediaPart(kind="document", media_type=mime_type or "application/octet-stream",
                     data=bytes(content), name=uri)


def _plain(value: Any) -> Any:
    """A resource function's value as the SDK reads it: media as its bytes."""
    if isinstance(value, MediaPart):
        if value.data is None:
            raise ValueError(f"a {value.kind} known only by URL or file id cannot be read")
        return value.data
    return value


def _reader(fn: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def read_async(*args: Any, **kwargs: Any) -> Any:
            return _plain(await fn(*args, **kwargs))
        return read_async

    @functools.wraps(fn)
    def read(*args: Any, **kwargs: Any) -> Any:
        return _plain(fn(*args, **kwargs))
    return read


def resource(uri: str, content: str | bytes = _MISSING, *, name: str | None = None,
             title: str | None = None, description: str | None = None,
             mime_type: str | None = None,
             complete: Mapping[str, Completer] | None = None) -> Any:
    """A resource to serve at ``uri``.

    With ``content`` (text, or bytes for binary data) it is static. Without, it is a decorator:
    the function's result (text, bytes, a media part, or a value sent as JSON) is read on each
    request; when ``uri`` has ``{parts}`` the resource is a template and each part is passed to
    the function as the argument of that name. ``complete`` offers values for a template's
    parts.
    """
    completions = dict(complete or {})
    if content is not _MISSING:
        if "{" in uri:
            raise ConfigError(f"resource {uri!r}: a template needs a function, not content")
        kind = (TextResource(uri=uri, name=name or uri, title=title, description=description,
                             mime_type=mime_type or "text/plain", text=content)
                if isinstance(content, str) else
                BinaryResource(uri=uri, name=name or uri, title=title, description=description,
                               mime_type=mime_type or "application/octet-stream",
                               data=bytes(content)))
        return Resource(kind, completions)

    def declare(fn: Callable[..., Any]) -> Resource:
        try:
            if "{" in uri:
                made: SdkResource | ResourceTemplate = ResourceTemplate.from_function(
                    _reader(fn), uri, name=name, title=title, description=description,
                    mime_type=mime_type)
            else:
                made = FunctionResource.from_function(
                    _reader(fn), uri, name=name, title=title, description=description,
                    mime_type=mime_type)
        except Exception as exc:
            raise ConfigError(f"resource {uri!r}: {exc}") from None
        unknown = set(completions) - set(_template_parts(made))
        if unknown:
            raise ConfigError(f"resource {uri!r}: complete= names {sorted(unknown)}, which are "
                              "not parts of its URI")
        return Resource(made, completions)

    return declare


def _template_parts(made: SdkResource | ResourceTemplate) -> list[str]:
    if not isinstance(made, ResourceTemplate):
        return []
    return [str(v) for v in made.parsed_template.variable_names]


def _message_item(item: Any) -> Any:
    if isinstance(item, MediaPart):
        return to_mcp_block(item)
    if isinstance(item, tuple) and len(item) == 2 and item[0] in ("user", "assistant"):
        return {"role": item[0], "content": _message_item(item[1])}
    return item


def _messages(value: Any) -> Any:
    if isinstance(value, list | tuple) and not (
            isinstance(value, tuple) and len(value) == 2 and value[0] in ("user", "assistant")):
        return [_message_item(item) for item in value]
    return _message_item(value)


def prompt(fn: Callable[..., Any] | None = None, *, name: str | None = None,
           title: str | None = None, description: str | None = None,
           complete: Mapping[str, Completer] | None = None) -> Any:
    """A prompt made from ``fn`` (use as ``@prompt`` or ``@prompt(name=...)``).

    Its parameters are the prompt's arguments (those without a default are required); its
    docstring the description. It returns the messages: a string, a media part
    (`toolwire.Image`, `embedded_resource`...), an SDK content block or message, a
    ``("assistant", content)`` pair, or a list of these; bare content is a user message.
    """
    completions = dict(complete or {})

    def declare(func: Callable[..., Any]) -> Prompt:
        if inspect.iscoroutinefunction(func):
            @functools.wraps(func)
            async def render_async(*args: Any, **kwargs: Any) -> Any:
                return _messages(await func(*args, **kwargs))
            render: Callable[..., Any] = render_async
        else:
            @functools.wraps(func)
            def render_sync(*args: Any, **kwargs: Any) -> Any:
                return _messages(func(*args, **kwargs))
            render = render_sync
        try:
            made = SdkPrompt.from_function(render, name=name, title=title,
                                           description=description)
        except Exception as exc:
            raise ConfigError(f"prompt {name or func.__name__!r}: {exc}") from None
        unknown = set(completions) - {arg.name for arg in made.arguments or ()}
        if unknown:
            raise ConfigError(f"prompt {made.name!r}: complete= names {sorted(unknown)}, which "
                              "are not its arguments")
        return Prompt(made, completions)

    return declare(fn) if fn is not None else declare


async def complete_value(completer: Completer, typed: str,
                         arguments: Mapping[str, str]) -> list[str]:
    """The values ``completer`` offers for ``typed`` (at most 100, as the protocol allows)."""
    if callable(completer):
        found = completer(typed, arguments)
        if inspect.isawaitable(found):
            found = await found
        values = [str(v) for v in found]
    else:
        values = [str(v) for v in completer if str(v).startswith(typed)]
    return values[:100]
