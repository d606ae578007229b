"""What the emulator refuses, the way each provider refuses it.

Owns `check_body` and `check_pairing` (the first rule a request breaks, as the provider would
word it, or None) and `error_body` (an error in the wire's own shape). Raw-body checks catch
what the canonical form cannot show (roles, a tool without a schema, Gemini's response counts); the
pairing rules come from `toolwire.rules.check_transcript` on the decoded request.
"""

from __future__ import annotations

import re
from typing import Any, cast

from toolwire.codecs.base import WireName
from toolwire.transcript import Request

_ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+$")

_ERROR_TYPES: dict[str, dict[int, str]] = {
    "anthropic-messages": {400: "invalid_request_error", 401: "authentication_error",
                           403: "permission_error", 404: "not_found_error",
                           429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"},
    "openai": {400: "invalid_request_error", 401: "invalid_request_error",
               404: "invalid_request_error", 429: "rate_limit_exceeded", 500: "server_error",
               503: "server_error"},
    "gemini-generate": {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                        404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
                        503: "UNAVAILABLE"},
}


def error_body(wire: str, status: int, message: str) -> dict[str, Any]:
    """An error body shaped as ``wire`` shapes its errors."""
    if wire == "anthropic-messages":
        kind = _ERROR_TYPES[wire].get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message},
                "request_id": "req_emulator"}
    if wire == "ollama-chat":
        return {"error": message}
    if wire == "gemini-generate":
        kind = _ERROR_TYPES[wire].get(status, "INTERNAL")
        return {"error": {"code": status, "message": message, "status": kind}}
    kind = _ERROR_TYPES["openai"].get(status, "server_error")
    return {"error": {"message": message, "type": kind, "param": None,
                      "code": "rate_limit_exceeded" if status == 429 else None}}


def check_body(wire: str, body: dict[str, Any]) -> str | None:
    """The first rule the raw ``body`` breaks for ``wire``, worded as the provider would."""
    return _RAW_CHECKS[wire](body)


def check_pairing(wire: str, request: Request) -> str | None:
    """The first pairing or ordering rule the decoded request breaks, or None."""
    from toolwire.rules import check_transcript

    for problem in check_transcript(request.messages, cast(WireName, wire)):
        if problem.severity == "error":
            return f"messages.{problem.index}: {problem.message}"
    return None


def _tools_have_schemas(tools: Any, key: str) -> str | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        return "tools: expected an array"
    for n, tool in enumerate(tools):
        fn = tool.get("function", tool) if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or not fn.get("name"):
            return f"tools.{n}: a tool needs a name"
        if key and key not in fn and tool.get("type") in (None, "custom", "function"):
            return f"tools.{n}.{key}: Field required"
    return None


def _roles(messages: Any, allowed: tuple[str, ...], field: str = "messages") -> str | None:
    if not isinstance(messages, list) or not messages:
        return f"{field}: at least one message is required"
    for n, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role is not None and role not in allowed:
            return (f"{field}.{n}.role: Input should be " + " or ".join(repr(r) for r in allowed)
                    + f", got {role!r}")
    return None


def _anthropic(body: dict[str, Any]) -> str | None:
    if "max_tokens" not in body:
        return "max_tokens: Field required"
    problem = _roles(body.get("messages"), ("user", "assistant")) or _tools_have_schemas(
        body.get("tools"), "input_schema")
    if problem:
        return problem
    for i, m in enumerate(body["messages"]):
        content = m.get("content")
        if not isinstance(content, list):
            continue
        seen_other = False
        for j, block in enumerate(content):
            kind = block.get("type")
            if kind == "text" and not block.get("text"):
                return f"messages.{i}.content.{j}: text content blocks must be non-empty"
            for key in ("id", "tool_use_id"):
                if kind in ("tool_use", "tool_result") and key in block \
                        and not _ANTHROPIC_ID.match(str(block[key])):
                    return (f"messages.{i}.content.{j}.{kind}.{key}: String should match "
                            f"pattern '^[a-zA-Z0-9_-]+$'")
            if kind == "tool_result" and seen_other:
                return (f"messages.{i}.content.{j}: tool_result blocks must come first in the "
                        "user message, before any other content")
            if kind != "tool_result":
                seen_other = True
    return None


def _openai_chat(body: dict[str, Any]) -> str | None:
    if not body.get("tools") and ("tool_choice" in body or "parallel_tool_calls" in body):
        return "'tool_choice' is only allowed when 'tools' are specified"
    return _roles(body.get("messages"),
                  ("system", "developer", "user", "assistant", "tool", "function")) or \
        _tools_have_schemas(body.get("tools"), "")


def _openai_responses(body: dict[str, Any]) -> str | None:
    if not body.get("tools") and "tool_choice" in body:
        return "'tool_choice' is only allowed when 'tools' are specified"
    items = body.get("input")
    if isinstance(items, str):
        return None
    return _tools_have_schemas(body.get("tools"), "parameters") or (
        None if isinstance(items, list) and items else "input: at least one item is required")


def _ollama(body: dict[str, Any]) -> str | None:
    problem = _roles(body.get("messages"), ("system", "user", "assistant", "tool"))
    if problem:
        return problem
    for i, m in enumerate(body["messages"]):
        for call in m.get("tool_calls") or ():
            if not isinstance(call.get("function", {}).get("arguments", {}), dict):
                return (f"messages.{i}: json: cannot unmarshal string into Go struct field "
                        "ToolCallFunction.messages.tool_calls.function.arguments")
    return None


def _gemini(body: dict[str, Any]) -> str | None:
    contents = body.get("contents")
    problem = _roles(contents, ("user", "model", "function"), "contents")
    if problem or not isinstance(contents, list):
        return problem
    for i, content in enumerate(contents):
        calls = sum(1 for p in content.get("parts", ()) if "functionCall" in p)
        if not calls:
            continue
        following = contents[i + 1] if i + 1 < len(contents) else None
        if following is None:
            continue
        answers = sum(1 for p in following.get("parts", ()) if "functionResponse" in p)
        if answers != calls:
            return ("Please ensure that the number of function response parts is equal to the "
                    f"number of function call parts of the function call turn (contents.{i} "
                    f"has {calls} call(s), contents.{i + 1} has {answers} response(s)).")
    return None


_RAW_CHECKS = {
    "anthropic-messages": _anthropic,
    "openai-chat": _openai_chat,
    "openai-responses": _openai_responses,
    "ollama-chat": _ollama,
    "gemini-generate": _gemini,
}
