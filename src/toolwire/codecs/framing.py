"""Cutting a byte stream into the units a wire streams in: server-sent events or JSON lines.

Owns `SSEFramer` (with `SSEEvent`) and `NDJSONFramer`. Both take bytes split anywhere, even in
the middle of a UTF-8 character, and give whole units. Knows nothing of any wire's JSON; imports
nothing of toolwire.

Two rules hold whatever the bytes:

- Linear work. Bytes are appended to one buffer, each byte is searched for a line end once, and
  each line is copied once when it is cut out; the buffer is trimmed only after whole lines were
  taken, so what is left to move is never more than the newest chunk. One large event in tiny
  chunks costs what it costs in one piece. ``scanned`` and ``copied`` count the bytes each
  framer looked at and moved, so tests and benches can show it without a clock. Lines that
  end in LF alone (what servers send) are found by a plain search for LF; the pattern for
  CR, LF and CRLF is used only once a chunk holds a CR, with the same lines and counts.
- Text that is not UTF-8 (a stray byte, a stream cut in the middle of a character) is read with
  U+FFFD in place of the broken bytes, as the server-sent events standard asks of a browser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(slots=True)
class SSEEvent:
    event: str | None
    data: str


_LINE_END = re.compile(rb"\r\n|\r|\n")


class _Lines:
    """What both framers share: the buffer, where the search for a line end goes on from,
    the counts, and the lines of a buffer whose lines end in LF alone."""

    __slots__ = ("_buf", "_scan", "copied", "scanned")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._scan = 0  # no line end before this index of _buf
        self.scanned = 0
        self.copied = 0

    def _lf_lines(self, buf: bytearray) -> list[str]:
        """The whole lines in ``buf`` (LF its only line end), cut out, the rest kept. They are
        decoded together and split at LF: the decoder never takes an LF into a broken
        character, so each line reads as it would decoded alone. The counts are those of a
        search line by line: each byte from where the last search stopped is looked at, each
        line's bytes and then the rest are moved."""
        scan, size = self._scan, len(buf)
        self.scanned += size - scan
        last = buf.rfind(b"\n", scan)
        if last < 0:
            self._scan = size
            return []
        if last == size - 1:  # the usual chunk: whole lines only
            lines = buf.decode("utf-8", "replace").split("\n")
            lines.pop()
            buf.clear()
        else:
            lines = buf[:last].decode("utf-8", "replace").split("\n")
            del buf[:last + 1]
        rest = size - last - 1
        self.copied += last + 1 - len(lines) + rest
        self._scan = rest
        return lines


class SSEFramer(_Lines):
    """Server-sent events from bytes split anywhere (mid-line, mid-UTF-8 character).

    Follows the spec: ``event:`` and ``data:`` fields, multi-line data joined with newlines, a
    blank line ends an event, lines starting with ``:`` are comments (keep-alives). CR, LF and
    CRLF all end lines.
    """

    __slots__ = ("_cr", "_data", "_event")

    def __init__(self) -> None:
        super().__init__()
        self._cr = False  # whether what is left in _buf holds a CR
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, data: bytes) -> list[SSEEvent]:
        buf = self._buf
        buf += data
        self.copied += len(data)
        out: list[SSEEvent] = []
        # `find`, not `in`, here: `in` first tries its operand as a number, making and
        # dropping an error
        if not self._cr and data.find(b"\r") < 0:  # lines end in LF alone: no pattern needed
            self._take(self._lf_lines(buf), out)
            return out
        start = 0
        search = _LINE_END.search
        lines: list[str] = []
        while True:
            found = search(buf, self._scan)
            if found is None:
                self.scanned += len(buf) - self._scan
                self._scan = len(buf)
                break
            end = found.start()
            if found.end() == len(buf) == end + 1 and buf[end] == 13:  # may start a CRLF
                self.scanned += end - self._scan
                self._scan = end
                break
            self.scanned += found.end() - self._scan
            self.copied += end - start
            lines.append(buf[start:end].decode("utf-8", "replace"))
            start = self._scan = found.end()
        if start:
            del buf[:start]  # what is left came after the last line end: within the new chunk
            self.copied += len(buf)
            self._scan -= start
        self._cr = buf.find(b"\r") >= 0
        self._take(lines, out)
        return out

    def _take(self, lines: list[str], out: list[SSEEvent]) -> None:
        """``lines`` read in order: each event a blank line ends goes to ``out``."""
        for line in lines:
            if line[:6] == "data: ":  # the usual line: a data field, its one space dropped
                self._data.append(line[6:])
                continue
            if not line:
                if self._data or self._event is not None:
                    out.append(SSEEvent(self._event, "\n".join(self._data)))
                self._event, self._data = None, []
                continue
            if line[0] == ":":
                continue
            name, _, value = line.partition(":")
            if value[:1] == " ":
                value = value[1:]
            if name == "data":
                self._data.append(value)
            elif name == "event":
                self._event = value

    def close(self) -> list[SSEEvent]:
        """Flush what is left when the connection ends (a last event with no blank line)."""
        out: list[SSEEvent] = []
        if self._buf:
            rest = self._buf.decode("utf-8", "replace")
            self._buf, self._scan, self._cr = bytearray(), 0, False
            self._take(rest.splitlines(), out)
        self._take([""], out)
        return out


class NDJSONFramer(_Lines):
    """One JSON value per line, from bytes split anywhere. Blank lines are skipped."""

    __slots__ = ()

    def feed(self, data: bytes) -> list[str]:
        buf = self._buf
        buf += data
        self.copied += len(data)
        return [line for raw in self._lf_lines(buf) if (line := raw.strip())]

    def close(self) -> list[str]:
        rest = self._buf.decode("utf-8", "replace").strip()
        self._buf, self._scan = bytearray(), 0
        return [rest] if rest else []
