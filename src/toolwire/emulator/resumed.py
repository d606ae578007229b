"""Streams the emulator takes up again, for wires whose server keeps conversations (the
registry record's ``memory``).

Owns `Streams`: each streamed reply of such a wire, kept under its id, even one whose
connection the script cut (``Fault("drop_mid_stream")``: the server finished the reply; the
client lost it). ``GET {wire path}/{id}`` answers the kept reply whole; with ``stream=true``
it streams it again, and with ``last_event_id`` too only the events after that one, as the
server does for a client taking a broken stream up again.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from urllib.parse import unquote

from toolwire._json import dumps, loads
from toolwire.codecs import get_codec
from toolwire.codecs.registry import MEDIA_TYPES, get_wire, wire_names
from toolwire.emulator._http import HttpRequest, HttpResponse
from toolwire.emulator.checks import error_body
from toolwire.transcript import Reply, Request


class Streams:
    """The streamed replies kept by id, and the ``GET`` that serves them again."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[str, Reply, Request]] = {}
        self._lock = threading.Lock()

    def keep(self, wire: str, reply: Reply, request: Request) -> None:
        """Keep a reply streamed in ``wire`` when its server keeps conversations."""
        if get_wire(wire).memory is None:
            return
        rid = get_codec(wire).encode_response(reply, request=request).get("id")
        if isinstance(rid, str) and rid:
            with self._lock:
                self._kept[rid] = (wire, reply, request)

    def answer(self, http: HttpRequest) -> HttpResponse | None:
        """The answer to ``GET {path}/{id}`` of a wire that keeps conversations; None for a
        request that is not one."""
        if http.method != "GET":
            return None
        for name in wire_names():
            spec = get_wire(name)
            if spec.memory is None or not http.path.startswith(spec.path + "/"):
                continue
            rid = unquote(http.path[len(spec.path) + 1:])
            with self._lock:
                kept = self._kept.get(rid)
            if kept is None:
                return _json(404, error_body(name, 404, f"no interaction has the id {rid!r}"))
            wire, reply, request = kept
            codec = get_codec(wire)
            if (http.query.get("stream") or ["false"])[-1] != "true":
                return _json(200, codec.encode_response(reply, request=request))
            chunks = list(codec.encode_stream(reply, request=request))
            after = (http.query.get("last_event_id") or [""])[-1]
            if after:
                ids = [_event_id(chunk) for chunk in chunks]
                if after not in ids:
                    return _json(400, error_body(name, 400, (
                        f"last_event_id {after!r} is not an event of interaction {rid!r}")))
                chunks = chunks[ids.index(after) + 1:]
            return HttpResponse(200, {"content-type": MEDIA_TYPES[spec.framing]},
                                chunks=_each(chunks))
        return None


def _event_id(chunk: bytes) -> str | None:
    """The ``event_id`` of one server-sent event."""
    for line in chunk.decode().splitlines():
        if line.startswith("data:"):
            found = loads(line[5:].strip())
            return found.get("event_id") if isinstance(found, dict) else None
    return None


async def _each(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


def _json(status: int, body: object) -> HttpResponse:
    return HttpResponse(status, {"content-type": "application/json"}, body=dumps(body))


__all__ = ["Streams"]
