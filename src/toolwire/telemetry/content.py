"""Message content as the GenAI conventions write it on spans, with secrets taken out.

Owns `input_messages`, `output_messages`, `system_instructions`, `arguments_text` (each a JSON
string for a span attribute: messages are ``{"role", "parts": [...]}`` with ``text``,
``reasoning``, ``tool_call`` and ``tool_call_response`` parts) and `Redactor`, the one place
that decides what a secret is on a span: the values of the process's environment variables
named like a key, token, secret or password, and text shaped like a provider's API key, each
replaced by ``[redacted]``. Content reaches a span only through these functions, and only when
content capture is on. Imports only the transcript values and the JSON writer.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from toolwire import _json
from toolwire.transcript import (
    Message,
    ReasoningPart,
    Reply,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

REDACTED = "[redacted]"
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
_MIN_SECRET = 8
"""Shorter values are left alone: replacing every "1" or "true" would garble the text."""
_KEY_SHAPES = re.compile(
    r"sk-ant-[A-Za-z0-9_\-]{20,}"          # Anthropic
    r"|sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{32,}"  # OpenAI
    r"|AIza[0-9A-Za-z_\-]{35}"             # Google API key
    r"|ya29\.[0-9A-Za-z_\-.]{20,}"         # Google OAuth token
)


class Redactor:
    """Takes secrets out of text: the values of secret-named environment variables (read once,
    when the redactor is made) and anything shaped like a provider's API key."""

    __slots__ = ("_values",)

    def __init__(self, env: Mapping[str, str] | None = None,
                 secrets: Iterable[str] = ()) -> None:
        env = os.environ if env is None else env
        found = {v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_SECRET}
        found.update(s for s in secrets if len(s) >= _MIN_SECRET)
        self._values = sorted(found, key=len, reverse=True)  # a key holding another goes whole

    def __call__(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, REDACTED)
        return _KEY_SHAPES.sub(REDACTED, text)


def _dumps(value: Any) -> str:
    return _json.dumps(value).decode("utf-8")


def _call(part: ToolCallPart) -> dict[str, Any]:
    arguments: Any = part.arguments if part.parse_error is None else part.raw_arguments
    return {"type": "tool_call", "id": part.id, "name": part.name, "arguments": arguments}


def _parts(message: Message) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            out.append({"type": "text", "content": part.text})
        elif isinstance(part, ReasoningPart):
            out.append({"type": "reasoning", "content": part.text})
        elif isinstance(part, ToolCallPart):
            out.append(_call(part))
        elif isinstance(part, ToolResultPart):
            out.append({"type": "tool_call_response", "id": part.call_id,
                        "response": part.content})
        else:  # a wire's own part: say what it is, not what it holds
            out.append({"type": type(part).__name__})
    return out


def _message(message: Message) -> dict[str, Any]:
    role = "tool" if any(isinstance(p, ToolResultPart) for p in message.parts) else message.role
    return {"role": role, "parts": _parts(message)}


def input_messages(messages: Iterable[Message], redact: Redactor) -> str:
    """The ``gen_ai.input.messages`` of a request (the system prompt is separate)."""
    return redact(_dumps([_message(m) for m in messages]))


def output_messages(reply: Reply, finish_reason: str, redact: Redactor) -> str:
    """The ``gen_ai.output.messages`` of a reply."""
    message = {"role": "assistant", "parts": _parts(reply.message),
               "finish_reason": finish_reason}
    return redact(_dumps([message]))


def system_instructions(system: str, redact: Redactor) -> str:
    """The ``gen_ai.system_instructions`` of a request."""
    return redact(_dumps([{"type": "text", "content": system}]))


def arguments_text(call: ToolCallPart, redact: Redactor) -> str:
    """A call's arguments as JSON text (the raw text when it did not parse)."""
    if call.parse_error is not None:
        return redact(call.raw_arguments or "")
    return redact(_dumps(call.arguments if call.arguments is not None else {}))


__all__ = ["REDACTED", "Redactor", "arguments_text", "input_messages", "output_messages",
           "system_instructions"]
