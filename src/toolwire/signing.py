"""How toolwire's records are signed and checked: a chained HMAC-SHA256 over a record, line by
line, with the record key of `toolwire.records`.

Owns `Signer` and `verify` (and `sign_document` and `verify_document` for a record written
whole, such as a cassette). Each signed line is the JSON object it would have been, with
``"mac": "<hex>"`` as its last member; the MAC covers the previous line's MAC and this line's
bytes without its own, so no line can be changed, left out or moved without breaking every MAC
after it. A record cut short by a crash still verifies up to its last whole line, and appending
(a resumed run) extends the chain. `Verdict` says what a record's MACs show, for a person too.

Imports nothing of toolwire.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

_CHAIN_START = b"toolwire record 1"
_HEX = re.compile(rb"[0-9a-f]{64}")


_INNER_PAD = bytes(x ^ 0x36 for x in range(256))
_OUTER_PAD = bytes(x ^ 0x5C for x in range(256))
_BLOCK = 64
"""SHA-256's block size, the length HMAC pads its key to."""


class _Keyed:
    """HMAC-SHA256 with one key, as RFC 2104 writes it: the SHA-256 states after the key's two
    padded blocks are made once and copied for each MAC, so a MAC hashes only its message and
    the inner digest, with no HMAC object to copy and finish; the bytes `hmac.digest` gives."""

    __slots__ = ("inner", "outer")

    def __init__(self, key: bytes) -> None:
        if len(key) > _BLOCK:
            key = hashlib.sha256(key).digest()
        block = key.ljust(_BLOCK, b"\0")
        self.inner = hashlib.sha256(block.translate(_INNER_PAD))
        self.outer = hashlib.sha256(block.translate(_OUTER_PAD))

    def mac(self, previous: bytes, body: bytes) -> bytes:
        """The hex MAC of ``previous``, a newline and ``body``."""
        inner = self.inner.copy()
        inner.update(previous + b"\n" + body)
        outer = self.outer.copy()
        outer.update(inner.digest())
        return outer.hexdigest().encode()


def _keyed(key: bytes) -> _Keyed:
    """The `_Keyed` of ``key``, made again only when the key is not the last one given (a
    process signs with one user's key: its two padded blocks are hashed once, not for each
    record); its states are only ever copied, so records share them."""
    kept = _LAST_KEYED[0]
    if kept is not None and kept[0] == key:
        return kept[1]
    keyed = _Keyed(key)
    _LAST_KEYED[0] = (key, keyed)
    return keyed


_LAST_KEYED: list[tuple[bytes, _Keyed] | None] = [None]
"""The last key `_keyed` was given and its `_Keyed`."""


class Signer:
    """Signs the lines of one record in order; ``last`` is the MAC the next line chains to
    (give it to go on with a record already signed)."""

    __slots__ = ("_inner", "_outer", "last")

    def __init__(self, key: bytes, last: bytes = _CHAIN_START) -> None:
        keyed = _keyed(key)
        self._inner, self._outer = keyed.inner, keyed.outer
        self.last = last

    def sign(self, body: bytes, end: bytes = b"") -> bytes:
        """``body`` (a JSON object's bytes, no newline) with its MAC as its last member, and
        ``end`` after it (a line's newline, put on in the same copy)."""
        if body[:1] != b"{" or body[-1:] != b"}":
            raise ValueError("a signed line must be a JSON object")
        inner = self._inner.copy()  # `_Keyed.mac`, written out: a call less for each line
        inner.update(self.last + b"\n" + body)
        outer = self._outer.copy()
        outer.update(inner.digest())
        mac = self.last = outer.hexdigest().encode()
        return b"".join((body[:-1], b'"mac":"' if body == b"{}" else b',"mac":"', mac, b'"}',
                         end))


def unsigned(line: bytes) -> tuple[bytes, bytes | None]:
    """``line`` without its MAC member, and the MAC (None: the line carries none)."""
    if line.endswith(b'"}') and line[-74:-66] == b',"mac":"' and _HEX.fullmatch(line[-66:-2]):
        return line[:-74] + b"}", line[-66:-2]
    if len(line) == 74 and line.startswith(b'{"mac":"') and _HEX.fullmatch(line[8:72]):
        return b"{}", line[8:72]
    return line, None


Standing = Literal["own", "edited", "foreign", "unsigned", "empty", "exposed"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a record's MACs say of it.

    ``standing``: ``own`` (every whole line is signed by this user's key, in order),
    ``edited`` (signed by this user's key up to line ``bad``, changed there or after),
    ``foreign`` (its first line is signed, but not with this user's key: another user's or
    machine's toolwire, or a header changed by hand), ``unsigned`` (no MAC at all: written by
    a toolwire from before records were signed, or by hand), ``empty`` (no whole line),
    ``exposed`` (signed with this user's key, but lying in ``where``, a folder where commands
    ran that could read the key, so the signature proves nothing).
    ``lines`` counts the whole lines that verified; ``last`` is the MAC of the last of them
    (to go on signing from).
    """

    standing: Standing
    lines: int = 0
    bad: int | None = None
    last: bytes = _CHAIN_START
    where: Path | None = None

    @property
    def own(self) -> bool:
        return self.standing == "own"

    def describe(self, what: str = "record") -> str:
        """One sentence for the person: whose record this is, and whether it was changed."""
        if self.standing == "own":
            return f"this {what} was written by your toolwire and has not been changed"
        if self.standing == "edited":
            return (f"this {what} was written by your toolwire but changed afterwards "
                    f"(line {self.bad} and after do not match their signatures)")
        if self.standing == "foreign":
            return (f"this {what} was not written by your toolwire (another user's or "
                    "machine's), or its first line was changed")
        if self.standing == "exposed":
            return (f"this {what} is signed with your key, but it lies in {self.where}, where "
                    "the model's commands ran under Landlock or unconfined and could read "
                    "that key")
        if self.standing == "unsigned":
            return (f"this {what} carries no signature (written by hand, or by a toolwire "
                    "from before records were signed)")
        return f"this {what} holds no whole line"


def verify(data: bytes, key: bytes) -> Verdict:
    """Check the chained MACs of a record's bytes (a last line without its newline, cut short
    by a crash, is left out)."""
    lines = data.split(b"\n")[:-1]  # the part after the last newline is not a whole line
    if not lines:  # a new log: no key to make ready
        return Verdict("empty")
    previous, count, keyed = _CHAIN_START, 0, _keyed(key).mac
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        body, mac = unsigned(line)
        if mac is None:
            return Verdict("unsigned" if count == 0 else "edited", count, number, previous)
        if not hmac.compare_digest(keyed(previous, body), mac):
            return Verdict("foreign" if count == 0 else "edited", count, number, previous)
        previous, count = mac, count + 1
    return Verdict("own", count, None, previous) if count else Verdict("empty")


def sign_document(body: bytes, key: bytes) -> bytes:
    """A whole-file record (a cassette: one JSON object, written anew each time) signed as a
    chain of one, with a newline after it."""
    return Signer(key).sign(body, b"\n")


def verify_document(data: bytes, key: bytes) -> Verdict:
    """Check a record `sign_document` wrote (nothing may follow its newline)."""
    body, mac = unsigned(data.rstrip(b"\n"))
    if not data.strip():
        return Verdict("empty")
    if mac is None:
        return Verdict("unsigned", 0, 1)
    if not hmac.compare_digest(_keyed(key).mac(_CHAIN_START, body), mac):
        return Verdict("foreign", 0, 1)
    return Verdict("own", 1, None, mac)


__all__ = ["Signer", "Standing", "Verdict", "sign_document", "unsigned", "verify",
           "verify_document"]
