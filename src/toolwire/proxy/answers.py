"""What the proxy answers by itself, in the client's wire: errors and model lists.

Owns `error_response` (an error body in the shape a wire's server sends it, with the status,
``retry-after`` and the header AWS names its error types in), `provider_error_response` (an
upstream's typed error, told to the client in its own wire) and `models_response` (``/v1/models``
in the shape the client's headers ask for, Gemini's ``models`` list, Ollama's ``/api/tags``).

Must not import: the server or the transport.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from toolwire import _json
from toolwire.codecs import get_codec
from toolwire.codecs.registry import get_wire
from toolwire.errors import ContextLengthError, OverloadedError, ProviderError, ToolwireError

JSON_TYPE = "application/json"

Answer = tuple[int, dict[str, str], bytes]
"""A whole answer: status, headers and body."""


def error_response(wire: str, status: int, message: str,
                   headers: Mapping[str, str] | None = None) -> Answer:
    """An error as ``wire``'s server words it: its body shape, the status given."""
    body = get_codec(wire).encode_error(status, message)
    out = {"content-type": JSON_TYPE, **(headers or {})}
    if isinstance(body.get("__type"), str):
        out["x-amzn-errortype"] = body["__type"]  # AWS names its error types here too
    return status, out, _json.dumps(body)


def provider_error_response(wire: str, error: ToolwireError) -> Answer:
    """The upstream's failure as the client's ``wire`` reports one: a rate limit stays a 429
    with its ``retry-after``, an overloaded upstream gets the client wire's overloaded status,
    a prompt too long stays a 400 worded as the client wire words it (`too_long`), and
    anything the upstream could not say (a broken connection, a reply that cannot be read) is
    a 502 naming what went wrong."""
    headers: dict[str, str] = {}
    if isinstance(error, ProviderError):
        status = error.status or 502
        said = f"upstream: {error}"
        if isinstance(error, OverloadedError):
            status = get_wire(wire).overloaded_status
        elif isinstance(error, ContextLengthError):
            status = 400
            said = f"{too_long(wire, str(error))} ({said})"
        if error.retry_after is not None:
            headers["retry-after"] = f"{error.retry_after:g}"
        return error_response(wire, status, said, headers)
    return error_response(wire, 502, f"upstream: {type(error).__name__}: {error}")


def too_long(wire: str, message: str) -> str:
    """A prompt too long for the model, worded as ``wire``'s server words it (clients look
    for those words to shorten their history), with the counts the upstream's ``message``
    gives: of its two numbers the larger is the prompt's, the smaller the window."""
    numbers = sorted(int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", message))
    tokens, limit = (numbers[-1], numbers[0]) if len(numbers) >= 2 else ("?", "?")
    return get_wire(wire).context_error.format(tokens=tokens, limit=limit)


def models_response(path: str, headers: Mapping[str, str], models: list[str]
                    ) -> Answer | None:
    """The model list a client asks for at ``path``, naming the models served; None when
    ``path`` is no model list."""
    body: dict[str, Any]
    if path.endswith("/api/tags"):
        body = {"models": [{"name": m, "model": m, "modified_at": _EPOCH, "size": 0,
                            "digest": "", "details": {"format": "", "family": "",
                                                      "parameter_size": "",
                                                      "quantization_level": ""}}
                           for m in models]}
    elif path.rstrip("/").endswith("/v1beta/models"):
        body = {"models": [{"name": f"models/{m}", "displayName": m,
                            "supportedGenerationMethods": ["generateContent", "countTokens"]}
                           for m in models]}
    elif path.rstrip("/").endswith("/models"):
        if "anthropic-version" in headers or "x-api-key" in headers:
            body = {"data": [{"type": "model", "id": m, "display_name": m,
                              "created_at": _EPOCH} for m in models],
                    "has_more": False, "first_id": models[0], "last_id": models[-1]}
        else:
            body = {"object": "list", "data": [{"id": m, "object": "model", "created": 0,
                                                "owned_by": "toolwire"} for m in models]}
    else:
        return None
    return 200, {"content-type": JSON_TYPE}, _json.dumps(body)


_EPOCH = "1970-01-01T00:00:00Z"

__all__ = ["JSON_TYPE", "Answer", "error_response", "models_response",
           "provider_error_response", "too_long"]
