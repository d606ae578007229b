"""What an answer that is not a usable reply becomes: the errors `toolwire.http.client.HttpModel`
raises for them, worded the same for a whole body and a stream.

Owns `status_error` (a failed status: always a `ProviderError`, the codec's reading of the
error body when it can read one, else a `ServerError` naming the status and the body's start),
`bad_reply` (a reply that arrived with a success status but cannot be used: a
`WireFormatError` naming what was wrong), `unreadable` (what a stream decoder raised: the
provider's own error event stays its `ProviderError`, anything else is a bad reply), `nothing`
(a reply that decoded to nothing: an error body sent with a success status, or an empty reply)
and `decoded` (a whole body read by the codec, each failure made one of those). Imports the
codecs' front, the error tree, `toolwire.protocol.holds_nothing` and how bodies are shown.
"""

from __future__ import annotations

from typing import Any

from toolwire import _json
from toolwire.codecs import Codec
from toolwire.errors import JSONTextError, ProviderError, ServerError, WireFormatError
from toolwire.http.shown import named, shown, snippet
from toolwire.http.transport import WireResponse
from toolwire.protocol import holds_nothing
from toolwire.transcript import Reply, Request


async def status_error(codec: Codec, wire: str, response: WireResponse) -> ProviderError:
    """The provider's error for a failed status; never anything but a `ProviderError`."""
    raw = await response.read()
    body: Any
    try:
        body = _json.loads(raw)
    except Exception:  # not JSON, or JSON too deep to read: the text says what came
        body = raw.decode("utf-8", "replace")
    try:
        error = codec.decode_error(response.status, body, response.headers)
    except Exception as exc:  # an error body the codec cannot read still names the status
        error = None
        detail = f"{snippet(raw)} (the error body cannot be read: {named(exc)})"
    if isinstance(error, ProviderError):
        return error
    if error is not None:
        detail = f"{snippet(raw)} (the codec gave {type(error).__name__}, not an error)"
    retryable = response.status == 429 or response.status >= 500
    return ServerError(f"{wire}: the server failed with status {response.status}: "
                       f"{detail}", status=response.status, wire=wire, retryable=retryable)


def bad_reply(wire: str, what: str, exc: BaseException | None = None) -> WireFormatError:
    """The error for a reply that arrived but cannot be used, naming what was wrong."""
    if exc is not None:
        what = f"{what}: {named(exc)}"
    return WireFormatError(f"{wire}: the reply cannot be used: {what}")


def unreadable(wire: str, exc: Exception) -> Exception:
    """What a stream decoder raised: an error event the provider sent stays its
    `ProviderError`; anything else means the stream cannot be read, a bad reply."""
    if isinstance(exc, ProviderError) and (exc.error_type is not None
                                           or exc.status is not None):
        return exc
    return bad_reply(wire, "the stream cannot be read", exc)


def nothing(codec: Codec, wire: str, reply: Reply, body: Any,
            response: WireResponse | None) -> WireFormatError:
    """The error for a reply that decoded to nothing: an error body, or an empty reply."""
    if isinstance(body, dict) and ("error" in body or body.get("type") == "error"):
        status = 200 if response is None else response.status
        try:
            said = str(codec.decode_error(status, body, response.headers
                                          if response is not None else {}))
        except Exception:
            said = shown(body)
        return bad_reply(wire, f"the server sent an error body with status {status}: {said}")
    what = "" if body is None else f": {shown(body)}"
    return bad_reply(wire, f"it holds no text and no tool call (stop {reply.stop!r}){what}")


def decoded(codec: Codec, wire: str, raw: bytes, response: WireResponse,
            request: Request) -> Reply:
    """A whole reply from the body; a bad reply raises `WireFormatError`."""
    try:  # the bytes: the codec reads them as they came, its limits held where it keeps
        reply = codec.decode_response(raw, request=request)
    except JSONTextError as exc:
        raise bad_reply(wire, f"the body is not JSON: {snippet(raw)}", exc) from None
    except ProviderError as exc:  # the codec read an error body: it came with a success
        raise bad_reply(wire, f"the server sent an error body with status "
                              f"{response.status}", exc) from exc
    except Exception as exc:
        raise bad_reply(wire, f"it is not a {wire} reply", exc) from exc
    if holds_nothing(reply):
        raise nothing(codec, wire, reply, _json.loads(raw, check_depth=False), response)
    return reply
