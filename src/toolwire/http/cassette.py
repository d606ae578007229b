"""Record and replay: transports that write a run to a cassette and play it back.

Owns `RecordTransport`, `ReplayTransport`, `cassette_writer`, `CassetteError` and
`CassetteMismatch`. A cassette is
one JSON file per run::

    {"toolwire_cassette": 2,
     "written_by": "proxy",          # only when a writer named itself (`cassette_writer`)
     "interactions": [
        {"request": {"method", "path", "headers", "body"},
         "response": {"status", "headers", "body"} | {"status", "headers", "stream"}}]}

Bodies are stored parsed, streams as their raw events in order (an AWS event stream as its
messages: text headers and parsed payloads), so cassettes diff well. Media in a body (a base64
string or a base64 ``data:`` URL over `toolwire.mediafiles.INLINE_MAX` bytes) are kept once by
content hash in the folder ``<cassette>.media/`` and the body holds ``{"toolwire_media": FILE}``
in their place (version 2, with ``"media": true`` on such a request or response), so a run that
sends the same screenshot in every request stores it once; a replay compares requests in that
form and answers with the bytes put back. Headers
pass through an allow-list: an API key, a cookie or an auth header is never written, and every
secret `toolwire.secrets.Redactor` knows (values of key and token variables, key shapes, the
``secrets`` given) is replaced before the file is written. The file
is rewritten after every interaction, so a crash loses nothing that completed: written under a
new random name beside it and renamed over it, signed with the user's record key (``mac``, the
document's last member, `toolwire.records`).

A replay answers in order and fails, with a readable diff, on a request that differs from the
recorded one: that is how a replay notices that a tool now returns something else. Closing a
replay with interactions left unplayed is an error.
"""

from __future__ import annotations

import base64
import difflib
import json
import os
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from toolwire import _json, records, signing
from toolwire.codecs.eventstream import MEDIA_TYPE, EventStreamFramer, encode_message
from toolwire.errors import StreamError, ToolwireError
from toolwire.http.transport import HttpTransport, Transport, WireRequest, WireResponse
from toolwire.media import sniff_media_type
from toolwire.mediafiles import INLINE_MAX, MediaFiles, b64_bytes, media_name
from toolwire.secrets import Redactor

CASSETTE_VERSION = 2
"""The version written; 1 (before media were kept apart) still reads."""
MEDIA_KEY = "toolwire_media"
HEADER_ALLOW = frozenset({
    "content-type", "anthropic-version", "anthropic-beta", "retry-after", "retry-after-ms",
    "x-should-retry", "request-id", "x-request-id",
})



class CassetteError(ToolwireError):
    """A cassette cannot be read, or a replay ended with interactions left unplayed."""


class CassetteMismatch(CassetteError):
    """A replayed run sent a request that differs from the recorded one."""


def _path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _headers(headers: Any) -> dict[str, str]:
    return {k.lower(): v for k, v in dict(headers).items() if k.lower() in HEADER_ALLOW}


def _split_events(text: str) -> list[str]:
    """Raw stream text as its events (SSE blocks or NDJSON lines), separators kept."""
    sep = next((s for s in ("\r\n\r\n", "\n\n", "\r\r") if s in text), "\n")
    pieces = text.split(sep)
    out = [p + sep for p in pieces[:-1]]
    if pieces[-1]:
        out.append(pieces[-1])
    return out


def _stream_entries(raw: bytes, content_type: str) -> list[Any]:
    """A streamed body as the cassette keeps it: SSE or NDJSON as its events' text; an AWS
    event stream as its messages (a stream that does not frame, as base64 of its bytes)."""
    if not content_type.startswith(MEDIA_TYPE):
        return _split_events(raw.decode("utf-8", "replace"))
    framer = EventStreamFramer()
    try:
        messages = framer.feed(raw)
        framer.close()
    except StreamError:
        return [{"base64": base64.b64encode(raw).decode()}]
    out: list[Any] = []
    for m in messages:
        if not all(isinstance(v, str) for v in m.headers.values()):
            return [{"base64": base64.b64encode(raw).decode()}]
        try:
            payload: Any = {"json": json.loads(m.payload)} if m.payload else {}
        except ValueError:
            payload = {"base64": base64.b64encode(m.payload).decode()}
        out.append({"headers": dict(m.headers), **payload})
    return out


def recorded_stream(entries: list[Any]) -> bytes:
    """A recorded stream back as the bytes the server sent."""
    return b"".join(_stream_bytes(e) for e in entries)


def _stream_bytes(entry: Any) -> bytes:
    """One recorded stream entry back as the bytes the server sent."""
    if isinstance(entry, str):
        return entry.encode("utf-8")
    if "headers" not in entry:
        return base64.b64decode(entry.get("base64", ""))
    if "json" in entry:
        payload = json.dumps(entry["json"], ensure_ascii=False, separators=(",", ":")).encode()
    else:
        payload = base64.b64decode(entry.get("base64", ""))
    return encode_message(entry["headers"], payload)


class _Taken(Exception):
    """The body already holds a `MEDIA_KEY` object, so it is kept as it is."""


def _folded(value: Any, keep: Callable[[bytes, str | None], str]) -> Any:
    """``value`` with each media string in it (long base64, or a base64 ``data:`` URL) replaced
    by a `MEDIA_KEY` object naming what ``keep`` made of its bytes."""
    if isinstance(value, str):
        if len(value) <= INLINE_MAX:
            return value
        if value.startswith("data:"):
            head, sep, payload = value[5:].partition(",")
            raw = b64_bytes(payload) if sep and head.endswith(";base64") else None
            media_type = head[: -len(";base64")]
            if raw is not None and len(raw) > INLINE_MAX:
                return {MEDIA_KEY: keep(raw, media_type or None), "data_url": media_type}
            return value
        raw = b64_bytes(value)
        if raw is not None and len(raw) > INLINE_MAX:
            return {MEDIA_KEY: keep(raw, sniff_media_type(raw[:16]))}
        return value
    if isinstance(value, list):
        return [_folded(v, keep) for v in value]
    if isinstance(value, dict):
        if MEDIA_KEY in value:
            raise _Taken
        return {k: _folded(v, keep) for k, v in value.items()}
    return value


def _fold(record: dict[str, Any], key: str, value: Any,
          keep: Callable[[bytes, str | None], str]) -> None:
    """Set ``record[key]`` to ``value`` with its media kept apart (and ``media`` true) when it
    holds any; else to ``value`` as it is."""
    kept: list[str] = []

    def counted(raw: bytes, media_type: str | None) -> str:
        kept.append(keep(raw, media_type))
        return kept[-1]

    try:
        folded = _folded(value, counted)
    except _Taken:
        folded, kept = value, []
    record[key] = folded if kept else value
    if kept:
        record["media"] = True


def _unfolded(value: Any, files: MediaFiles, where: str) -> Any:
    """``value`` with each `MEDIA_KEY` object replaced by the string it stood for."""
    if isinstance(value, list):
        return [_unfolded(v, files, where) for v in value]
    if not isinstance(value, dict):
        return value
    if MEDIA_KEY not in value:
        return {k: _unfolded(v, files, where) for k, v in value.items()}
    try:
        text = base64.b64encode(files.get(value[MEDIA_KEY], where)).decode("ascii")
    except ToolwireError as exc:
        raise CassetteError(str(exc)) from None
    media_type = value.get("data_url")
    return text if media_type is None else f"data:{media_type};base64,{text}"


def _restored(record: Any, key: str, files: MediaFiles, where: str) -> Any:
    """``record[key]`` with its media put back when the record says it holds some."""
    value = record.get(key) if isinstance(record, dict) else None
    return _unfolded(value, files, where) if isinstance(record, dict) and record.get(
        "media") else value


def _redacted(body: Any, redact: Redactor) -> Any:
    """``body`` with every secret replaced, as a recording stores it."""
    text = json.dumps(body, ensure_ascii=False)
    cleaned = redact(text)
    return body if cleaned == text else json.loads(cleaned)


class RecordTransport:
    """Sends through ``inner`` (real HTTP by default) and writes every interaction to ``path``."""

    def __init__(self, path: str | Path, inner: Transport | None = None,
                 *, secrets: Iterable[str] = (), written_by: str | None = None) -> None:
        self.path = Path(path)
        self.written_by = written_by
        self.inner = inner or HttpTransport()
        self.interactions: list[dict[str, Any]] = []
        self._redact = Redactor(None, secrets)
        self.media = MediaFiles(self.path)
        self._key = records.record_key()

    def _write(self) -> None:
        head: dict[str, Any] = {"toolwire_cassette": CASSETTE_VERSION}
        if self.written_by:
            head["written_by"] = self.written_by
        text = json.dumps({**head, "interactions": self.interactions}, indent=2,
                          ensure_ascii=False)
        data = signing.sign_document(self._redact(text).encode(), self._key)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        folder = records.open_folder(self.path.parent)
        try:  # written beside it under a name no one could have planted a link at
            records.replace_in(folder, self.path.name, data, 0o644)
        finally:
            os.close(folder)

    async def send(self, request: WireRequest) -> WireResponse:
        response = await self.inner.send(request)
        sent = {"method": request.method, "path": _path(request.url),
                "headers": _headers(request.headers)}
        _fold(sent, "body", request.body, self.media.put)
        entry: dict[str, Any] = {"request": sent}
        record: dict[str, Any] = {"status": response.status,
                                  "headers": _headers(response.headers)}
        if not request.stream or response.status >= 400:
            raw = await response.read()
            try:
                _fold(record, "body", json.loads(raw), self.media.put)
            except ValueError:
                record["text"] = raw.decode("utf-8", "replace")
            entry["response"] = record
            self.interactions.append(entry)
            self._write()
            return WireResponse(response.status, response.headers, content=raw)

        async def tee() -> AsyncIterator[bytes]:
            seen: list[bytes] = []
            try:
                async for chunk in response.aiter_bytes():
                    seen.append(chunk)
                    yield chunk
            finally:
                record["stream"] = _stream_entries(b"".join(seen),
                                                   response.headers.get("content-type", ""))
                entry["response"] = record
                self.interactions.append(entry)
                self._write()

        return WireResponse(response.status, response.headers, chunks=tee())

    async def aclose(self) -> None:
        await self.inner.aclose()


def load_cassette(path: str | Path, *, restore: bool = True) -> list[dict[str, Any]]:
    """The interactions of a cassette file; a clear error if it is not one. Bodies hold their
    media again unless ``restore`` is false (then as the file keeps them)."""
    try:
        data = _json.loads(Path(path).read_bytes())
    except FileNotFoundError:
        raise CassetteError(f"cassette {path} does not exist; record it first") from None
    except ValueError as exc:
        raise CassetteError(f"cassette {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("toolwire_cassette") not in (1, CASSETTE_VERSION):
        raise CassetteError(f"{path} is not a toolwire cassette (version 1 to "
                            f"{CASSETTE_VERSION})")
    interactions = data.get("interactions")
    if not isinstance(interactions, list):
        raise CassetteError(f"cassette {path} has no 'interactions' list")
    if restore:
        files = MediaFiles(path)
        for n, item in enumerate(interactions, 1):
            for side in ("request", "response") if isinstance(item, dict) else ():
                record = item.get(side)
                if isinstance(record, dict) and record.get("media"):
                    where = f"{path}: interaction {n}"
                    item[side] = {**record, "body": _restored(record, "body", files, where)}
    return interactions


def cassette_writer(path: str | Path) -> str | None:
    """What wrote the cassette at ``path``, when it named itself (``"proxy"`` for a
    ``toolwire proxy --record`` conversation); None for one that did not (every cassette
    before the mark, and ``run --record``'s). A `CassetteError` if it is not a cassette."""
    load_cassette(path, restore=False)  # the clear error for what is not one
    data = _json.loads(Path(path).read_bytes())
    said = data.get("written_by")
    return said if isinstance(said, str) else None


def _pretty(value: Any) -> list[str]:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()


class ReplayTransport:
    """Answers from a cassette, in order, checking that each request is the recorded one.

    Secrets are redacted from each request before the comparison, as they were when recording.
    """

    def __init__(self, path: str | Path, *, strict: bool = True,
                 secrets: Iterable[str] = ()) -> None:
        self.path = Path(path)
        self.interactions = load_cassette(self.path, restore=False)
        self.media = MediaFiles(self.path)
        self.strict = strict
        self.played = 0
        self._redact = Redactor(None, secrets)

    @property
    def unplayed(self) -> int:
        return len(self.interactions) - self.played

    async def send(self, request: WireRequest) -> WireResponse:
        n = self.played
        if n >= len(self.interactions):
            raise CassetteMismatch(
                f"request #{n + 1} to {_path(request.url)} was never recorded: cassette "
                f"{self.path} holds {len(self.interactions)} interaction(s). Record the run again."
            )
        recorded = self.interactions[n]
        want = recorded.get("request") if isinstance(recorded, dict) else None
        resp = recorded.get("response") if isinstance(recorded, dict) else None
        if not isinstance(want, dict) or not isinstance(resp, dict):
            raise CassetteError(f"{self.path}: interaction {n + 1} is not an object holding a "
                                "'request' and a 'response' object; record the run again")
        got_path = _path(request.url)
        body = request.body
        if want.get("media"):  # compared as recorded: each media by its file name
            folded: dict[str, Any] = {}
            _fold(folded, "body", body, media_name)
            body = folded["body"]
        body = _redacted(body, self._redact)
        if want.get("path") != got_path or want.get("body") != body:
            diff = "\n".join(difflib.unified_diff(
                _pretty({"path": want.get("path"), "body": want.get("body")}),
                _pretty({"path": got_path, "body": body}),
                fromfile=f"recorded request #{n + 1}", tofile="this run", lineterm="", n=2,
            ))
            raise CassetteMismatch(
                f"request #{n + 1} differs from the one recorded in {self.path}:\n{diff}"
            )
        self.played += 1
        return self._answer(resp, f"{self.path}: interaction {n + 1}")

    def _answer(self, resp: dict[str, Any], where: str) -> WireResponse:
        """The recorded response ``resp`` as the server sent it; a `CassetteError` naming
        ``where`` when the cassette holds something no recording writes."""
        status, headers = resp.get("status"), resp.get("headers", {})
        if (not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599
                or not isinstance(headers, dict)
                or not all(isinstance(v, str) for v in headers.values())):
            raise CassetteError(f"{where}: the response needs a status code and text headers; "
                                "the cassette was edited or damaged, record the run again")
        try:
            if "stream" in resp:
                if not isinstance(resp["stream"], list):
                    raise TypeError("its stream is not a list")
                return WireResponse(status, headers,
                                    chunks=[_stream_bytes(e) for e in resp["stream"]])
            if "body" in resp:
                body = _restored(resp, "body", self.media, where)
                return WireResponse.from_json(status, body, headers)
            return WireResponse(status, headers, content=resp.get("text", "").encode())
        except CassetteError:
            raise
        except (ToolwireError, TypeError, ValueError, KeyError, AttributeError) as exc:
            raise CassetteError(f"{where}: the response cannot be played ({exc}); the cassette "
                                "was edited or damaged, record the run again") from None

    def assert_done(self) -> None:
        if self.unplayed:
            raise CassetteError(
                f"cassette {self.path} has {self.unplayed} unplayed interaction(s) of "
                f"{len(self.interactions)}: the run made fewer requests than were recorded"
            )

    async def aclose(self) -> None:
        if self.strict:
            self.assert_done()
