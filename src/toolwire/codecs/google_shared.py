"""What Google's two Gemini wires (gemini-generate, gemini-interactions) share: tool names, the
error body, media read from a body, and the JSON of a stream's events.

Owns the tool-name rule both APIs hold names to and the `NameMap` built with it (`name_map`,
`request_names`, `wire_name`), a wire's own entry of provider data (`own`, `entry`), list fields
(`as_list`), Google's error body both ways (`decode_error`, `encode_error`: ``{"error": {code,
message, status, details}}`` as ``google.rpc.Status`` has it, where ``code`` is the HTTP status
as an integer; the Interactions API puts a word such as ``invalid_request`` in ``code`` instead,
read as the error's type), the wait a ``RetryInfo`` detail asks for (`retry_delay`), a media
part from the media type and the bytes or URI a body gave (`read_media`), and the JSON of one
stream event (`event_json`). Each function takes the wire it speaks for; nothing here names one.

Pure functions over plain JSON values. Imports only the transcript, errors, `toolwire._json` and
the codecs' shared `base` and `media`; must not import a wire, transport, client or any vendor
SDK.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from toolwire import _json
from toolwire.codecs.base import NameMap, error_body, provider_error, retry_after_from
from toolwire.codecs.base import wrong_shape as wrong
from toolwire.codecs.media import kind_of, unb64
from toolwire.errors import ProviderError, StreamError
from toolwire.transcript import JSON, MediaPart, ProviderData, Request, ToolSpec

__all__ = [
    "NAME_PATTERN",
    "as_list",
    "decode_error",
    "encode_error",
    "entry",
    "event_json",
    "name_map",
    "own",
    "read_media",
    "request_names",
    "retry_delay",
    "wire_name",
]

NAME_PATTERN = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$")
"""A tool name both Gemini APIs take: a letter or ``_`` first, at most 128 characters."""
_BAD_CHAR = re.compile(r"[^a-zA-Z0-9_.:-]")


# --------------------------------------------------------------------------- tool names


def name_map(tools: Sequence[ToolSpec]) -> NameMap:
    """The mapping between the user's tool names and names Gemini accepts (empty, and quick,
    when every name already fits)."""
    names = [t.name for t in tools]
    if all(map(NAME_PATTERN.match, names)):
        return NameMap()
    return NameMap.build(names, pattern=NAME_PATTERN, max_len=128, bad_char=_BAD_CHAR)


def request_names(request: Request | None) -> NameMap:
    """The name map of a request's tools (empty with no request): what a reply's names mean."""
    return name_map(request.tools) if request is not None else NameMap()


def wire_name(names: NameMap, name: str, tool_names: Sequence[str]) -> str:
    """A name for the wire, including names in the history that are no longer in the tools."""
    if name in names.to_wire or NAME_PATTERN.match(name):
        return names.wire(name)
    extended = NameMap.build([*tool_names, name], pattern=NAME_PATTERN, max_len=128,
                             bad_char=_BAD_CHAR)
    return extended.wire(name)


# --------------------------------------------------------------------------- provider data


def own(data: ProviderData | None, wire: str) -> dict[str, Any] | None:
    """``wire``'s entry of a provider_data mapping, as a new dict, if it is an object."""
    if not data:
        return None
    found = data.get(wire)
    return dict(found) if isinstance(found, Mapping) else None


def entry(extras: Mapping[str, JSON], wire: str) -> ProviderData | None:
    """``extras`` as provider data under ``wire`` (None when there are none)."""
    return {wire: dict(extras)} if extras else None


def as_list(value: Any, where: str, expected: str) -> list[Any]:
    """A list field; absent or null reads as empty."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise wrong(where, expected, value)
    return value


# --------------------------------------------------------------------------- errors

_DELAY = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def _seconds(value: Any) -> float | None:
    """A number of a ``Duration`` given as an object (a number, or digits as text)."""
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def retry_delay(details: JSON) -> float | None:
    """The seconds a ``RetryInfo`` entry of an error's ``details`` asks the client to wait:
    its ``retryDelay`` as JSON writes a ``Duration`` (``"37s"``), or as an object of
    ``seconds`` and ``nanos``; None when there is none, or it cannot be read."""
    if not isinstance(details, list):
        return None
    for item in details:
        if not isinstance(item, Mapping) or not str(item.get("@type", "")).endswith("RetryInfo"):
            continue
        delay = item.get("retryDelay")
        if isinstance(delay, str) and (m := _DELAY.match(delay)):
            return float(m.group(1))
        if isinstance(delay, Mapping):
            seconds, nanos = _seconds(delay.get("seconds")), _seconds(delay.get("nanos"))
            if seconds is not None and nanos is not None:
                return seconds + nanos / 1e9
    return None


def decode_error(status: int, body: Any, headers: Mapping[str, str] | None = None, *,
                 wire: str) -> ProviderError:
    """The typed error for Google's error body ``{"error": {code, message, status, details}}``.

    ``error_type`` is the gRPC status name (``RESOURCE_EXHAUSTED``, ``UNAVAILABLE``, ...), or a
    code given in words; an integer ``code`` (never a boolean) is the status when none came with
    the reply; the wait comes from a ``Retry-After`` header or else the body's
    ``RetryInfo.retryDelay``.
    """
    parsed, text = error_body(body)
    if isinstance(parsed, list) and parsed and isinstance(parsed[0], Mapping):
        parsed = parsed[0]
    error = parsed.get("error") if isinstance(parsed, Mapping) else None
    message, error_type, details = text.strip(), None, None
    if isinstance(error, Mapping):
        message = str(error.get("message") or message)
        code = error.get("code")
        kind = error.get("status") or (code if isinstance(code, str) else None)
        error_type = str(kind) if kind else None
        details = error.get("details")
        if not status and isinstance(code, int) and not isinstance(code, bool):
            status = code
    elif isinstance(error, str):
        message = error
    retry = retry_after_from(headers)
    if retry is None:
        retry = retry_delay(details)
    return provider_error(status, message or f"HTTP {status}", wire=wire, error_type=error_type,
                          body=parsed, retry_after=retry)


_ERROR_STATUSES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                   404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
                   503: "UNAVAILABLE"}


def encode_error(status: int, message: str) -> dict[str, Any]:
    """An error body as Google's servers send it for ``status``."""
    return {"error": {"code": status, "message": message,
                      "status": _ERROR_STATUSES.get(status, "INTERNAL")}}


# --------------------------------------------------------------------------- media


def read_media(mime: Any, *, data: Any = None, uri: Any = None, has_data: bool, where: str,
               keys: tuple[str, str, str], file_uris: tuple[str, ...], wire: str,
               extras: Mapping[str, JSON]) -> MediaPart:
    """A media part from what a body gave: its media type, and its base64 bytes
    (``has_data``) or else its URI, which is a file id of ``wire`` when it starts with one of
    ``file_uris`` and a URL otherwise. ``keys`` name the three fields (media type, bytes, URI)
    under ``where`` for the error a field of the wrong shape raises."""
    mime_key, data_key, uri_key = keys
    if not isinstance(mime, str) or not mime:
        raise wrong(f"{where}.{mime_key}", "a media type string", mime)
    kind, kept = kind_of(mime), entry(extras, wire)
    if has_data:
        return MediaPart(kind=kind, media_type=mime, provider_data=kept,
                         data=unb64(data, f"{where}.{data_key}", proto=True))
    if not isinstance(uri, str) or not uri:
        raise wrong(f"{where}.{uri_key}", "a URI string (or data)", uri)
    if uri.startswith(file_uris):
        return MediaPart(kind=kind, media_type=mime, file_ids={wire: uri}, provider_data=kept)
    return MediaPart(kind=kind, media_type=mime, url=uri, provider_data=kept)


# --------------------------------------------------------------------------- streams


def event_json(data: str, wire: str, what: str = "a stream event") -> Any:
    """The JSON value of one stream event's data; None for an empty event or ``[DONE]``; a
    `StreamError` holding the text when it is not JSON (``what`` names the event in it)."""
    text = data.strip()
    if not text or text == "[DONE]":
        return None
    try:
        return _json.loads(text)
    except json.JSONDecodeError as exc:  # `toolwire.errors.JSONTextError` is one
        raise StreamError(f"{what} is not JSON: {exc.msg}", wire=wire,
                          body=text) from None

