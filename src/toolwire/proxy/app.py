"""The proxy's ASGI application: every wire at its real path, each request sent on upstream.

Owns `make_app` (the ASGI application for `ProxySettings`, on the proxy's own ASGI layer,
`toolwire.proxy.asgi`), `from_environment` (the same, for a worker process started by
`toolwire.proxy.serve`), and the checks made on every request
before it goes on: the client's key (`authorized`) or its AWS signature (`signature_wrong`),
the body's size and shape, and the
transcript rules (`toolwire.rules.check_transcript` with the client's wire: a break is logged,
and with ``strict`` refused with a 400 in the client's wire naming the rule). Paths are read by
the wire registry (`toolwire.codecs.registry.wire_at`, `count_at`), the same reading the
emulator serves by; what a path carries (the model, streaming) is the registry's `Route`.

Must not import: the command line.
"""

from __future__ import annotations

import hmac
import sys
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from toolwire import _json
from toolwire.codecs import get_codec
from toolwire.codecs.registry import Route, count_at, get_wire, wire_at, wire_names
from toolwire.errors import ToolwireError
from toolwire.http.transport import HttpTransport, Transport
from toolwire.proxy.answers import Answer, error_response, models_response
from toolwire.proxy.asgi import (
    METHODS,
    Gone,
    Incoming,
    Receive,
    Scope,
    Send,
    lifespan,
    send_answer,
    send_stream,
)
from toolwire.proxy.forward import (
    FALLBACK_HEADER,
    LOSSES_HEADER,
    Failed,
    Streamed,
    Upstream,
    header_text,
)
from toolwire.proxy.page import Figures, page_answer
from toolwire.proxy.record import Recorder
from toolwire.proxy.settings import ProxySettings
from toolwire.rules import Problem, check_transcript
from toolwire.transcript import Request

RULE_HEADER = "x-toolwire-rule"


def presented(headers: Mapping[str, str], query: Mapping[str, str]) -> list[str]:
    """The keys a client presented, each the way one of the wires takes a key
    (``x-api-key``, ``Authorization: Bearer``, ``x-goog-api-key`` or ``?key=``)."""
    auth = headers.get("authorization", "")
    given = [headers.get("x-api-key"), headers.get("x-goog-api-key"), query.get("key")]
    if auth[:7].lower() == "bearer ":
        given.append(auth[7:].strip())
    return [g for g in given if g]


def signed(headers: Mapping[str, str]) -> bool:
    """Whether the request is signed with AWS SigV4 (boto3's default for Bedrock)."""
    return headers.get("authorization", "").startswith("AWS4-HMAC-SHA256")


def authorized(headers: Mapping[str, str], query: Mapping[str, str], key: str | None
               ) -> str | None:
    """None when the client presented ``key`` (`presented`); else what is wrong, for the
    401. A signed request is not judged here: `signature_wrong` checks it, where the proxy
    has AWS key pairs to check it with."""
    if signed(headers):
        return ("this proxy has no AWS key pair to check a signature with; give the proxy's "
                "key as a bearer token (AWS_BEARER_TOKEN_BEDROCK)")
    given = presented(headers, query)
    if key is not None and any(hmac.compare_digest(g.encode(), key.encode()) for g in given):
        return None
    if key is None:
        return "this proxy takes only requests signed with its AWS key pair (SigV4)"
    if given:
        return "the key given is not this proxy's key"
    return ("this proxy needs its key: give it as your client's API key (x-api-key, "
            "Authorization: Bearer, x-goog-api-key or ?key=)")


def signature_wrong(http: Incoming, body: bytes, keys: tuple[tuple[str, str], ...]
                    ) -> str | None:
    """None when the request's SigV4 signature was made with one of ``keys`` over this very
    request (its path and query as they came on the wire); else what is wrong."""
    from toolwire.http.sigv4 import verify

    query = http.query_string
    url = "http://proxy" + http.path + ("?" + query.decode("latin-1") if query else "")
    return verify(http.method, url, http.headers, body, dict(keys))


def _guess_wire(headers: Mapping[str, str]) -> str:
    """The wire to word an answer in when the path names none: the first whose clients' own
    header the request carries (its record's ``client_headers``), else the one whose record
    says it answers such requests, else the first."""
    wires = [get_wire(name) for name in wire_names()]
    for wire in wires:
        if any(h in headers for h in wire.client_headers):
            return wire.name
    return next((w.name for w in wires if w.answers_unknown), wires[0].name)


def _say(text: str) -> None:
    print(f"toolwire proxy: {text}", file=sys.stderr, flush=True)


class Proxy:
    """One application's state: the settings, the upstreams (one connection pool for all)
    and the recorder."""

    def __init__(self, settings: ProxySettings) -> None:
        self.settings = settings
        self.transport = HttpTransport(timeout=settings.timeout)
        self.upstreams = {model: Upstream(settings, model, self.transport)
                          for model in (settings.model, *(m for _, m in settings.routes),
                                        *settings.fallbacks)}
        self.recorder = (Recorder(settings.record, self.transport, settings.record_max)
                         if settings.record else None)
        self.figures = Figures()

    def upstream(self, route: Route, body: dict[str, Any]) -> Upstream:
        """The upstream for a request at ``route``: by the model name it asks for."""
        asked = route.model if route.in_url else body.get("model")
        return self.upstreams[self.settings.model_for(asked if isinstance(asked, str)
                                                      else None)]

    def listed(self) -> list[str]:
        """The model names a model list shows: the default upstream's, then each route's
        pattern that names one model."""
        literal = [p for p, _ in self.settings.routes if not any(c in p for c in "*?[")]
        return [self.upstreams[self.settings.model].endpoint.model, *literal]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI application: each request answered (`handle`), the server's start and
        stop (the connection pool closed at the stop)."""
        kind = scope["type"]
        if kind == "http":
            if scope["method"] not in METHODS:
                await send_answer(send, 405, {"content-type": "text/plain; charset=utf-8",
                                              "allow": ", ".join(METHODS)},
                                  b"Method Not Allowed")
                return
            try:
                result = await self.handle(Incoming(scope, receive))
            except Gone:
                return
            if isinstance(result, Streamed):
                await send_stream(send, receive, result.status, result.headers, result.chunks)
            else:
                await send_answer(send, *result)
        elif kind == "lifespan":
            await lifespan(receive, send, self.transport.aclose)

    async def handle(self, http: Incoming) -> Answer | Streamed:
        """What ``http`` is answered: the checks made, then the request sent on."""
        # the path as it came, so that a model id percent-encoded in it (a Bedrock ARN, with
        # its slash) stays one segment until the route reads it
        path, headers, method = http.path, http.headers, http.method
        counting = count_at(path) if method == "POST" else None
        route = counting or (wire_at(path) if method == "POST" else None)
        wire = route.error_wire if route is not None else _guess_wire(headers)
        check_signature = self.settings.guarded and signed(headers) and bool(
            self.settings.aws_keys)
        if self.settings.guarded and not check_signature:
            wrong = authorized(headers, http.query, self.settings.key)
            if wrong is not None:
                return error_response(wire, 401, wrong)
        if check_signature and method in ("GET", "HEAD"):
            wrong = signature_wrong(http, b"", self.settings.aws_keys)
            if wrong is not None:
                return error_response(wire, 403, wrong)
        if method in ("GET", "HEAD"):
            if path in ("/", "/health"):
                return 200, {"content-type": "application/json"}, b'{"status":"ok"}'
            listed = models_response(path, headers, self.listed())
            if listed is not None:
                return listed
            shown = page_answer(path, dict(http.query), self.settings.record, self.figures)
            if shown is not None:
                return shown
        if route is None:
            return error_response(wire, 404, f"no wire is served at {method} {path}")
        raw = await http.body(self.settings.max_body)
        if raw is None:
            return error_response(wire, 413, (
                f"the body is over {self.settings.max_body} bytes, the most this proxy "
                "takes"))
        if check_signature:
            wrong = signature_wrong(http, raw, self.settings.aws_keys)
            if wrong is not None:
                return error_response(wire, 403, wrong)
        try:
            body = _json.loads(raw or b"{}")
        except ToolwireError as exc:
            return error_response(wire, 400, f"the body is not valid JSON: {exc}")
        if not isinstance(body, dict):
            return error_response(wire, 400, "the body must be a JSON object")
        upstream = self.upstream(route, body)
        if self.settings.pass_client_keys:
            upstream = upstream.with_key(next(iter(presented(headers, http.query)), None))
        if counting is not None:
            return await upstream.count(counting, body, self.transport)
        return await self._forward(upstream, route, raw, body, headers)

    async def _forward(self, upstream: Upstream, route: Route, raw: bytes,
                       body: dict[str, Any], headers: Mapping[str, str]) -> Answer | Streamed:
        spec, wire = route.wire, route.error_wire
        began = time.perf_counter()
        try:
            request = get_codec(spec.name).decode_request(body, **route.url_says())
        except ToolwireError as exc:
            return error_response(wire, 400, f"malformed request: {exc}")
        problems = [p for p in check_transcript(request.messages, spec.name)
                    if p.severity == "error"]
        entry: dict[str, Any] = {"path": route.wire.path, "client": spec.name,
                                 "upstream": upstream.wire, "model": upstream.model_id,
                                 "problems": [str(p) for p in problems]}
        transport: Transport = self.transport
        if self.recorder is not None:
            entry["conversation"], transport = self.recorder.transport(request)
        for problem in problems:
            _say(f"{spec.name} request breaks a transcript rule: {problem}")
        if problems and self.settings.strict:
            entry["status"] = 400
            self._log(entry)
            return refusal(wire, problems[0])
        stream = route.stream if route.in_url else spec.wants_stream(body)
        result = await self._send(upstream, route, raw, body, request, stream, headers,
                                  transport, entry)
        entry["status"] = result.status if isinstance(result, Streamed) else result[0]
        said = result.headers if isinstance(result, Streamed) else result[1]
        if LOSSES_HEADER in said:
            entry["losses"] = said[LOSSES_HEADER]
        entry["stream"] = stream
        if isinstance(result, Streamed) and self.recorder is not None:
            result.chunks = self._logged_after(result, result.chunks, entry, began)
        else:
            entry["ms"] = _ms(began)
            self._log(entry)
        return result

    async def _logged_after(self, streamed: Streamed, chunks: AsyncIterator[bytes],
                            entry: dict[str, Any], began: float) -> AsyncIterator[bytes]:
        """``streamed``'s bytes, its log line written once the stream has ended (or the
        client went away): with the losses found only when the reply was whole, which its
        headers could not carry, and the failure that ended it, if one did."""
        finished = False
        try:
            async for chunk in chunks:
                entry.setdefault("first_ms", _ms(began))
                yield chunk
            finished = True
        finally:
            entry["ms"] = _ms(began)
            if streamed.notes:
                entry["losses"] = "; ".join(streamed.notes)
            if streamed.broke:
                entry["broke"] = streamed.broke[-1]
            elif not finished:
                entry["broke"] = "the client went away before the stream ended"
            self._log(entry)

    async def _send(self, upstream: Upstream, route: Route, raw: bytes, body: dict[str, Any],
                    request: Request, stream: bool, headers: Mapping[str, str],
                    transport: Transport, entry: dict[str, Any]) -> Answer | Streamed:
        """The request sent to ``upstream``, then, while its failure is one that moves a
        fallback chain on (`toolwire.failover.table.FAILURES`) and no byte has reached the
        client, to each fallback in turn; the entry names each model passed over and why."""
        from toolwire.failover.table import failure

        chain = [upstream, *(self.upstreams[m] for m in self.settings.fallbacks
                             if m != upstream.model_id)]
        passed: list[str] = []
        for at, link in enumerate(chain):
            last = at == len(chain) - 1
            try:
                if link.passes_through(route):
                    result = await link.same_wire(route, raw, body, stream, headers, transport,
                                                  fallible=not last)
                else:
                    result = await link.converted(route, request, stream, transport,
                                                  fallible=not last)
            except Failed as failed:
                row = failure(failed.error)
                if row is None or not row.moves_on:
                    return failed.answer
                passed.append(f"{link.model_id} ({row.why})")
                _say(f"{link.model_id} failed ({row.why}: {failed.error}); "
                     f"{chain[at + 1].model_id} takes the request over")
                continue
            entry["priced_as"] = [link.endpoint.provider, link.endpoint.model]
            if passed:
                entry["model"] = link.model_id
                entry["passed_over"] = passed
                said = result.headers if isinstance(result, Streamed) else result[1]
                said[FALLBACK_HEADER] = header_text(
                    f"{link.model_id}; passed over: {', '.join(passed)}")
            return result
        raise AssertionError("the chain's last model answers, failed or not")

    def _log(self, entry: dict[str, Any]) -> None:
        if self.recorder is not None:
            self.recorder.log(entry)


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)


def refusal(wire: str, problem: Problem) -> Answer:
    """The 400 for a request that breaks ``problem``'s rule, naming it."""
    status, headers, body = error_response(wire, 400, (
        f"the conversation breaks the transcript rule {problem.rule!r} at message "
        f"{problem.index}: {problem.message}. Fix: {problem.fix}"))
    return status, {**headers, RULE_HEADER: header_text(problem.rule)}, body


def make_app(settings: ProxySettings) -> Proxy:
    """The proxy for ``settings`` as an ASGI application."""
    return Proxy(settings)


def from_environment() -> Proxy:
    """The application for a worker process: its settings from the starting process."""
    return make_app(ProxySettings.from_environment())


__all__ = ["RULE_HEADER", "Proxy", "authorized", "from_environment", "make_app", "refusal",
           "signature_wrong", "signed"]
