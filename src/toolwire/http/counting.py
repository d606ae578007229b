"""A provider's token-counting endpoint: the request for it and the count in its reply.

Owns `count_request` and `read_count`. Which wires have an endpoint, its path, the body fields
it takes and the reply field are the wire registry's (`toolwire.codecs.registry.Counting`); a
cloud host's own endpoint is its setup's (`toolwire.http.cloud.HostCount`: Bedrock's
CountTokens, Vertex AI's countTokens and Claude count-tokens), and a cloud host without one
(Azure) is counted by the local estimate. The request goes to the same server, with the same
headers (and signed like them), as the model's own requests.
`toolwire.http.client.HttpModel.count_tokens` uses them, and falls back to a local estimate for
a wire without one, and for a server that serves the wire without its counting endpoint (the
quirk ``no_token_count``, `toolwire.http.quirks`). Must not import the client.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from toolwire import _json
from toolwire.codecs.registry import Counting, get_wire
from toolwire.errors import WireFormatError
from toolwire.http.endpoints import Endpoint
from toolwire.http.providers import PROVIDERS
from toolwire.http.transport import WireRequest, body_bytes


def count_request(endpoint: Endpoint, sent: WireRequest) -> tuple[WireRequest, Counting] | None:
    """The counting request for ``sent`` (a model request at ``endpoint``), or None when
    there is no counting endpoint: the wire has none, or the cloud host serving it has none
    of its own (a cloud host counts at its own path, signed like the request)."""
    spec = PROVIDERS.get(endpoint.provider)
    host = endpoint.count
    if host is not None:
        where = dataclasses.replace(endpoint, _path=host.path, _stream_path=None)
        body = host.body(sent.body, endpoint.model)
        return WireRequest(url=where.url(), body=body, headers=sent.headers, content=body_bytes(
            body) if endpoint.signer is not None else None), Counting(
            path=host.path, keys=frozenset(), field=host.field)
    counting = get_wire(endpoint.wire).count
    if counting is None or endpoint.signer is not None or (spec is not None and (
            spec.setup is not None or "no_token_count" in spec.quirks)):
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
