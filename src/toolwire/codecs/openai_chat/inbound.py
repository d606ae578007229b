"""OpenAI Chat Completions: a body a client sent, read back into a canonical `Request`
(`decode_request`: either token-limit field into `Request.max_tokens`, the leading system
message as the system prompt), and the first rule a raw body breaks, worded as the API words it
(`check_body`).

Bodies are read in place and never changed: decoded values (tool schemas) are shared with the
body. Pure: imports the transcript, the shared codec modules and this wire's ``parts``,
``schema`` and ``request``; never the wire's reply or stream.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.codecs.base import (
    list_at,
    role_problem,
    tools_lack_schemas,
    wrong_shape,
)
from toolwire.codecs.model_checks import chat_model_problem
from toolwire.codecs.openai_chat import media_problem
from toolwire.codecs.openai_chat.parts import (
    EMPTY_RESULT,
    RESULT_KEYS,
    WIRE,
    assistant_parts,
    content_parts,
    decode_result,
    extras_of,
    plain,
    plain_calls,
    real_id,
)
from toolwire.codecs.openai_chat.request import ASSISTANT_KEYS
from toolwire.codecs.openai_chat.schema import (
    decode_choice,
    decode_max_tokens,
    decode_tools,
)
from toolwire.codecs.openai_media import (
    restore_media,
)
from toolwire.codecs.openai_shared import keep_others
from toolwire.transcript import (
    Message,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

_PLAIN_KEYS = frozenset({"role", "content"})

def _messages(raw: list[Any]) -> tuple[str | None, list[Message]]:
    system: str | None = None
    start = 0
    first = raw[0] if raw else None
    if ((type(first) is dict or isinstance(first, Mapping)) and len(first) == 2
            and first.get("role") == "system"
            and isinstance(first.get("content"), str)):
        system, start = first["content"], 1
    out: list[Message] = []
    results: list[ToolResultPart] = []
    call_names: dict[str, str] = {}
    pending: list[str] = []
    for index in range(start, len(raw)):
        msg = raw[index]
        if type(msg) is dict:  # the usual messages first, read with the fewest steps: a
            # value of the type asked for is a key there, so the size tells the keys apart
            role, content, size = msg.get("role"), msg.get("content"), len(msg)
            made: Message | None = None
            if size == 2 and type(content) is str:  # role and content
                if role == "user" or role == "system":
                    made = Message(role=role, parts=(TextPart(text=content),))
                elif role == "assistant":
                    pending, call_names = [], {}
                    made = Message(role=role, parts=(TextPart(text=content),) if content else ())
            elif size != 3:
                pass
            elif role == "tool":  # role, tool_call_id and content
                call_id = msg.get("tool_call_id")
                if (type(call_id) is str and call_id and call_id != "null"
                        and type(content) is str and content and content[0] != "E"
                        and content != EMPTY_RESULT):
                    results.append(ToolResultPart(call_id=call_id, content=content,
                                                  name=call_names.get(call_id)))
                    continue
            elif role == "assistant":  # role, content (text or null) and tool_calls
                calls = msg.get("tool_calls")
                if type(calls) is list and (type(content) is str
                                            or (content is None and "content" in msg)):
                    usual = plain_calls(calls, None)
                    if usual is not None:
                        pending, call_names = [], {}
                        for made_call in usual:
                            call_names[made_call.id] = made_call.name
                        made = Message(role="assistant", parts=(
                            (TextPart(text=content), *usual) if content else tuple(usual)))
            if made is not None:
                if results:
                    out.append(Message(role="tool", parts=tuple(results)))
                    results = []
                out.append(made)
                continue
        elif not isinstance(msg, Mapping):
            raise wrong_shape(f"messages[{index}]", "an object (a message)", msg)
        if (bad := _bad_content(msg, f"messages[{index}]")) is not None:
            raise wrong_shape(*bad)
        role = msg.get("role")
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if type(call_id) is not str or not call_id or call_id == "null":
                call_id = real_id(call_id) or (pending.pop(0) if pending else "")
            content = msg.get("content")
            if (type(content) is str and content and content[0] != "E" and content != EMPTY_RESULT
                    and msg.keys() <= RESULT_KEYS):  # the usual result, read directly
                results.append(ToolResultPart(call_id=call_id, content=content,
                                              name=call_names.get(call_id)))
            else:
                results.append(decode_result(msg, call_id, call_names))
            continue
        if results and role == "user" and restore_media(results, msg.get("content")):
            continue
        if results:
            out.append(Message(role="tool", parts=tuple(results)))
            results = []
        if role == "assistant":
            pending = []
            parts = assistant_parts(msg, seed=f"messages[{index}]", names=None,
                                    made_ids=pending, where=f"messages[{index}]")
            call_names = {}
            for part in parts:
                if type(part) is ToolCallPart:
                    call_names[part.id] = part.name
            if msg.keys() <= ASSISTANT_KEYS:
                out.append(Message(role="assistant", parts=tuple(parts)))
            else:
                extras = extras_of(msg, ASSISTANT_KEYS)
                out.append(Message(role="assistant", parts=tuple(parts),
                                   provider_data={WIRE: extras} if extras else None))
            continue
        extras = None if msg.keys() <= _PLAIN_KEYS else extras_of(msg, _PLAIN_KEYS)
        if role == "system" or role == "user":
            canonical = role
        elif role not in ("developer", "function"):
            raise wrong_shape(f"messages[{index}].role", "'system', 'developer', 'user', "
                              "'assistant', 'tool' or 'function'", role)
        else:  # developer, function: a user/system message that keeps its role
            canonical = "system" if role == "developer" else "user"
            extras = extras or {}
            extras["role"] = plain(role)
        content = msg.get("content")
        out.append(Message(role=canonical,  # type: ignore[arg-type]
                           parts=(TextPart(text=content),) if type(content) is str
                           else tuple(content_parts(content, keep_empty=True)),
                           provider_data={WIRE: extras} if extras else None))
    if results:
        out.append(Message(role="tool", parts=tuple(results)))
    return system, out


def _bad_content(msg: Mapping[str, Any], where: str) -> tuple[str, str, Any] | None:
    """Where the ``content`` of a message a client sent is not what the API takes (text, null
    or a list of part objects): the field, what it takes and the value there; else None. Such
    an item is refused, never dropped."""
    content = msg.get("content")
    if content is None or type(content) is str:
        return None
    if not isinstance(content, list):
        return f"{where}.content", "text, a list of content parts or null", content
    for j, item in enumerate(content):
        if not isinstance(item, Mapping):
            return f"{where}.content[{j}]", "an object (a content part)", item
    return None


def _content_problem(messages: Any) -> str | None:
    """The first message content the API refuses (`_bad_content`), worded as it words it."""
    if isinstance(messages, list):
        for index, msg in enumerate(messages):
            if isinstance(msg, Mapping) and (
                    bad := _bad_content(msg, f"messages[{index}]")) is not None:
                return f"Invalid type for '{bad[0]}': expected {bad[1]}."
    return None


# body keys read into Request fields (each kept in the options when it cannot be read)
_REQUEST_KEYS = frozenset({
    "model", "messages", "tools", "tool_choice", "parallel_tool_calls", "max_completion_tokens",
    "max_tokens", "temperature", "stream", "stream_options",
})

def decode_request(
    body: Mapping[str, Any], *, model: str | None = None, stream: bool | None = None
) -> Request:
    """Any Chat Completions request body as a `Request`; unknown keys go to provider_options.

    The body is read, never changed; tool schemas are shared with it, not copied. ``model``
    and ``stream`` (what a URL said) count only when the body names no model or has no
    ``stream`` key.
    """
    rest = {} if body.keys() <= _REQUEST_KEYS else extras_of(body, _REQUEST_KEYS) or {}
    get = body.get
    raw = get("messages")
    system, messages = _messages(raw if type(raw) is list else list_at(raw, "messages"))
    name = get("model", "")
    if model is not None and (name is None or name == ""):
        name = model
    raw = get("tools")
    tools, extra_tools = decode_tools(raw, rest)
    if extra_tools:
        keep_others(raw, extra_tools, rest)
    choice = decode_choice(body, rest) if "tool_choice" in body or (
        "parallel_tool_calls" in body) else None
    max_tokens = decode_max_tokens(body, rest)
    temperature = get("temperature")
    streams = get("stream") is True if "stream" in body or stream is None else stream
    if "stream_options" in body:
        stream_options = body["stream_options"]
        if not (streams and stream_options == {"include_usage": True}):
            rest["stream_options"] = plain(stream_options)
    return Request(
        model=name if isinstance(name, str) else str(name),
        messages=tuple(messages),
        system=system,
        tools=tuple(tools),
        tool_choice=choice,
        max_tokens=max_tokens,
        temperature=None if temperature is None else float(temperature)
        if isinstance(temperature, int | float) else None,
        stream=streams,
        provider_options={WIRE: rest} if rest else None,
    )

def check_body(body: dict[str, Any]) -> str | None:
    """The first rule the raw ``body`` breaks, worded as the provider words it, or None."""
    if not body.get("tools") and ("tool_choice" in body or "parallel_tool_calls" in body):
        return "'tool_choice' is only allowed when 'tools' are specified"
    return role_problem(body.get("messages"),
                  ("system", "developer", "user", "assistant", "tool", "function")) or \
        _content_problem(body.get("messages")) or tools_lack_schemas(body.get("tools"), "") or \
        media_problem(body) or chat_model_problem(body)
