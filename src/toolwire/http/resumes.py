"""A broken stream taken up where it stopped, for a wire whose server can serve it again.

Owns `resuming` and `resume_request`. A wire whose server serves a stream again says so in its
record (``resumable``), and its stream decoder is then a
`toolwire.codecs.reading.ResumableDecoder`, with a ``resume_point`` (the reply's id and the
last event it read: the Interactions wire's, `toolwire.codecs.gemini_interactions.stream`),
which `toolwire.codecs.base.Codec.resumable` hands out; when the connection breaks part of the way
through, the same stream is asked for again from that event,
``GET {request URL}/{id}?stream=true&last_event_id={event}``, and its bytes go on to the same
decoder, which skips any event it has read already. Nothing is started over, so the events
already given to the caller stand and no `RetryEvent` is emitted. When there is no point to take
it up from, or asking again fails, the break is raised as it was (the request's retry loop,
`toolwire.http.retries`, then sends the whole request again). Imports only that protocol of
the codecs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from toolwire.codecs.reading import ResumableDecoder
from toolwire.errors import StreamError, ToolwireError
from toolwire.http.transport import WireRequest, WireResponse

RESUMES = 3
"""How many times one stream is taken up again before its break is raised."""


def resume_request(sent: WireRequest, reply_id: str, last_event: str) -> WireRequest:
    """The ``GET`` that streams the reply ``sent`` began again, after ``last_event``."""
    url = urlsplit(sent.url)
    path = f"{url.path.rstrip('/')}/{quote(reply_id, safe='')}"
    query = "&".join(q for q in (url.query, urlencode(
        {"stream": "true", "last_event_id": last_event})) if q)
    headers = {k: v for k, v in sent.headers.items() if k.lower() != "content-type"}
    return WireRequest(url=urlunsplit((url.scheme, url.netloc, path, query, "")), body={},
                       headers=headers, stream=True, method="GET", content=b"")


async def resuming(response: WireResponse, decoder: ResumableDecoder | None, sent: WireRequest,
                   send: Callable[[WireRequest], Awaitable[WireResponse]]
                   ) -> AsyncIterator[bytes]:
    """The bytes of ``response``'s stream, taken up again (up to `RESUMES` times) where it
    broke when ``decoder`` (fed each chunk before the next is asked for) says where; with no
    decoder (a wire whose server cannot serve a stream again), a break is raised as it was."""
    taken_up = 0
    while True:
        chunks = response.aiter_bytes()
        try:
            async for chunk in chunks:
                yield chunk
            return
        except StreamError as broke:
            point = decoder.resume_point if decoder is not None else None
            if decoder is None or point is None or taken_up >= RESUMES:
                raise
            taken_up += 1
            try:
                response = await send(resume_request(sent, *point))
            except ToolwireError:
                raise broke from None
            decoder.drop_partial()  # an event cut off at the break comes again whole
        finally:
            await chunks.aclose()  # type: ignore[attr-defined]


__all__ = ["RESUMES", "resume_request", "resuming"]
