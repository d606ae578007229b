"""``--record DIR``: each conversation through the proxy written as a cassette, and a log.

Owns `Recorder` and `conversation_key`. A conversation is told apart by how it begins: its
system prompt and first message, hashed (`conversation_key`); every request that begins the
same way is the next turn of it, and its exchange with the upstream (in the upstream's wire) is
added to ``DIR/<key>.json``, a cassette (`toolwire.http.cassette.RecordTransport`: redacted,
media stored once, signed) that ``toolwire explain`` reads. A conversation first
seen by this process whose file is already there (from an earlier start) goes to
``<key>-2.json`` and so on. ``DIR/proxy.jsonl`` gets one line per request: when, the path, the
client's wire, the upstream's, the status, the conversation and the transcript problems and
losses found. The folder is bounded (`MAX_FOLDER` unless told otherwise): once it holds that
much, new conversations are not recorded, the conversations already open still are, and the
log gets one ``record_full`` line.

Must not import: the server.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

import msgspec

from toolwire.http.cassette import RecordTransport
from toolwire.http.transport import Transport
from toolwire.proxy.settings import MAX_FOLDER
from toolwire.transcript import Request

KEPT_OPEN = 256
"""How many conversations a process keeps open at once (the oldest is let go beyond that;
a turn of it that comes later starts a file of its own)."""

LOG_NAME = "proxy.jsonl"
WRITTEN_BY = "proxy"
"""The mark each cassette of the proxy's carries (`toolwire.http.cassette.cassette_writer`):
``toolwire replay`` plays such a conversation's model side only, the client's tools being
the client's own."""


def conversation_key(request: Request) -> str:
    """The name a conversation's files get: a hash of its system prompt and first message."""
    head = msgspec.json.encode([request.system, request.messages[:1]])
    return hashlib.sha256(head).hexdigest()[:16]


class Recorder:
    """Writes each conversation's exchanges under ``folder``."""

    def __init__(self, folder: str | Path, inner: Transport, max_size: int = MAX_FOLDER
                 ) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.inner = inner
        self.max_size = max_size
        self.full = False
        """Whether the folder reached ``max_size``: new conversations are then not recorded
        (the ones already open still are), and the log says so once."""
        self._open: OrderedDict[str, RecordTransport] = OrderedDict()
        self._lock = threading.Lock()

    def size(self) -> int:
        """The bytes the folder holds (its media folders included)."""
        return sum(f.stat().st_size for f in self.folder.rglob("*") if f.is_file())

    def transport(self, request: Request) -> tuple[str, Transport]:
        """The conversation ``request`` belongs to, and the transport that records it (the
        plain one, once the folder is full)."""
        key = conversation_key(request)
        with self._lock:
            found = self._open.get(key)
            if found is not None:
                self._open.move_to_end(key)
                return key, found
            if self.size() >= self.max_size:
                if not self.full:
                    self.full = True
                    self._write({"event": "record_full", "bytes": self.max_size})
                return key, self.inner
            path = self.folder / f"{key}.json"
            n = 1
            while path.exists():
                n += 1
                path = self.folder / f"{key}-{n}.json"
            found = self._open[key] = RecordTransport(path, self.inner,
                                                        written_by=WRITTEN_BY)
            while len(self._open) > KEPT_OPEN:
                self._open.popitem(last=False)
            return key, found

    def log(self, entry: dict[str, Any]) -> None:
        """Add one line to the request log."""
        with self._lock:
            self._write(entry)

    def _write(self, entry: dict[str, Any]) -> None:
        line = json.dumps({"t": round(time.time(), 3), **entry}, ensure_ascii=False)
        with open(self.folder / LOG_NAME, "a", encoding="utf-8") as file:
            file.write(line + "\n")


__all__ = ["KEPT_OPEN", "LOG_NAME", "WRITTEN_BY", "Recorder", "conversation_key"]
