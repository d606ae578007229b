"""Cutting a byte stream into the units a wire streams in: server-sent events or JSON lines.

Owns `SSEFramer` (with `SSEEvent`) and `NDJSONFramer`. Both take bytes split anywhere, even in
the middle of a UTF-8 character, and give whole units. Knows nothing of any wire's JSON.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class SSEEvent:
    event: str | None
    data: str


class SSEFramer:
    """Server-sent events from bytes split anywhere (mid-line, mid-UTF-8 character).

    Follows the spec: ``event:`` and ``data:`` fields, multi-line data joined with newlines, a
    blank line ends an event, lines starting with ``:`` are comments (keep-alives). CR, LF and
    CRLF all end lines.
    """

    __slots__ = ("_buf", "_data", "_event")

    def __init__(self) -> None:
        self._buf = b""
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, data: bytes) -> list[SSEEvent]:
        self._buf += data
        out: list[SSEEvent] = []
        while True:
            nl = self._buf.find(b"\n")
            cr = self._buf.find(b"\r")
            if nl < 0 and cr < 0:
                break
            if cr >= 0 and (nl < 0 or cr < nl):
                if cr == len(self._buf) - 1:
                    break  # a CR at the end may be the first half of CRLF
                end, skip = cr, (2 if self._buf[cr + 1 : cr + 2] == b"\n" else 1)
            else:
                end, skip = nl, 1
            line = self._buf[:end].decode("utf-8")
            self._buf = self._buf[end + skip :]
            self._line(line, out)
        return out

    def _line(self, line: str, out: list[SSEEvent]) -> None:
        if not line:
            if self._data or self._event is not None:
                out.append(SSEEvent(self._event, "\n".join(self._data)))
            self._event, self._data = None, []
            return
        if line.startswith(":"):
            return
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value

    def close(self) -> list[SSEEvent]:
        """Flush what is left when the connection ends (a last event with no blank line)."""
        out: list[SSEEvent] = []
        if self._buf:
            rest, self._buf = self._buf.decode("utf-8"), b""
            for line in rest.splitlines():
                self._line(line, out)
        self._line("", out)
        return out


class NDJSONFramer:
    """One JSON value per line, from bytes split anywhere. Blank lines are skipped."""

    __slots__ = ("_buf",)

    def __init__(self) -> None:
        self._buf = b""

    def feed(self, data: bytes) -> list[str]:
        self._buf += data
        if b"\n" not in self._buf:
            return []
        *lines, self._buf = self._buf.split(b"\n")
        return [s for s in (ln.decode("utf-8").strip() for ln in lines) if s]

    def close(self) -> list[str]:
        rest, self._buf = self._buf.decode("utf-8").strip(), b""
        return [rest] if rest else []


