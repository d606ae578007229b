"""A provider's token-counting endpoint: the request for it and the count in its reply.

Owns `count_request` and `read_count`. Which wires have an endpoint, its path, the body
fields it takes and the reply field are the wire registry's (`toolwire.codecs.registry.
Counting`); the request goes to the same server, with the same headers, as the model's own
requests. `toolwire.http.client.HttpModel.count_tokens` uses them, and falls back to a local
estimate for a wire without one. Must not import the client.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from toolwire import _json
from toolwire.codecs.registry import Counting, get_wire
from toolwire.errors import WireFormatError
from toolwire.http.endpoints import Endpoint
from toolwire.http.transport import WireRequest


def count_request(endpoint: Endpoint, sent: WireRequest) -> tuple[WireRequest, Counting] | None:
    """The counting request for ``sent`` (a model request at ``endpoint``), or None when the
    wire has no counting endpoint or the request is signed (cloud hosts)."""
    counting = get_wire(endpoint.wire).count
    if counting is None or endpoint.signer is not None:
        return None
    where = dataclasses.replace(endpoint, _path=counting.path, _stream_path=None)
    return WireRequest(url=where.url(), body=counting.body(sent.body, endpoint.model),
                       headers=sent.headers), counting


def read_count(raw: bytes, counting: Counting, wire: str) -> int:
    """The count in a counting endpoint's reply; `WireFormatError` when it holds none."""
    found: Any = _json.loads(raw)
    count = found.get(counting.field) if isinstance(found, dict) else None
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise WireFormatError(f"{wire}: the token count's reply holds no {counting.field!r} "
                              "number")
    return count


__all__ = ["count_request", "read_count"]
