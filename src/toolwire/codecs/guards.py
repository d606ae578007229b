"""The guards `toolwire.codecs.base.Codec` puts around every decoder, so each is total.

Owns `guard_response`, `guard_request`, `guard_error` and `guard_stream` (and `GuardedResumable`,
the guarded decoder of a wire whose record says ``resumable``), what they need to name a
failure (`unreadable`, `refined`, `named`, `not_an_object`) and to bound what a reply keeps
(`kept_values`, `hold_reply`). The readers they stand under are `toolwire.codecs.reading`'s.
Imports the JSON reader, errors, events, the transcript and `reading`; must not import
`toolwire.codecs.base` or any wire.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from toolwire._json import MAX_DEPTH, SHALLOW, loads
from toolwire.codecs.reading import (
    ResumableDecoder,
    StreamDecoder,
    first_problem,
    is_unicode,
    wrong_shape,
)
from toolwire.errors import (
    JSONTextError,
    ProviderError,
    StreamError,
    ToolwireError,
    WireFormatError,
)
from toolwire.events import StreamEvent
from toolwire.transcript import (
    OpaquePart,
    Reply,
    Request,
    ToolCallPart,
    ToolResultPart,
)

# --------------------------------------------------------------------------- total decoders
#
# Every decoder reads what a server, a model or a file sent, so it must be total: a value or a
# toolwire error, whatever the input. The wires read bodies with the typed readers of `reading`
# (`field_object`, `field_list`, ...), whose errors name the wire, the path inside the body and
# what was expected. The guards that `Codec` puts around each decoder are the floor under that:
# a body that is not an object is refused up front, nesting past the interpreter's own limit (a
# dict built in Python, which no JSON reader limited) is named as such, and any other exception
# a wire lets out becomes a `WireFormatError` naming the wire, chained to the exception, so
# nothing but a toolwire error ever leaves a decoder. The campaign in bench/fuzz.py counts how
# often that last net is reached (its aim: never).


def unreadable(what: str, exc: BaseException, body: Any = None) -> WireFormatError:
    """The error for an exception a decoder let out.

    When ``body`` holds something no JSON text holds (nesting past `MAX_DEPTH`, a number that is
    not finite, a lone surrogate, a key that is not text, a set or any other object: a value
    built in Python rather than read), that is named with its path; otherwise the error names the
    body and the exception, which is then a shape toolwire does not expect.
    """
    if body is not None:
        found = first_problem(what, body)
        if found is not None:
            return found
    if isinstance(exc, RecursionError):
        return WireFormatError(f"{what}: nested deeper than toolwire reads (JSON from outside is "
                               f"read up to {MAX_DEPTH} levels)")
    return WireFormatError(f"{what}: cannot be read ({type(exc).__name__}: {exc}); this body "
                           "has a shape toolwire does not expect")


def named(exc: ToolwireError, what: str) -> ToolwireError:
    """``exc`` with the body it is about (``what``: the wire and the kind of body) in front of a
    shape error's message; any other toolwire error as it is."""
    if (isinstance(exc, WireFormatError) and exc.args and isinstance(exc.args[0], str)
            and not exc.args[0].startswith(what)):
        exc.args = (f"{what}: {exc.args[0]}", *exc.args[1:])
        if isinstance(exc, JSONTextError):
            exc.msg = f"{what}: {exc.msg}"
    return exc


def not_an_object(what: str, body: Any) -> WireFormatError:
    return wrong_shape(f"{what}: the body", "a JSON object", body)


def refined(exc: Exception, what: str, body: Any) -> ToolwireError:
    """What a guard raises for ``exc``: a toolwire error as it is (a shape error with ``what`` in
    front), anything else as `unreadable` says, chained to it."""
    if isinstance(exc, ToolwireError):
        return named(exc, what)
    error = unreadable(what, exc, body)
    error.__cause__ = exc
    return error


# A reply's body is held to the JSON policy's depth where its values are kept. The decoders
# read a body only at the fixed depths of their wire's shape and keep a few values whole
# (provider blocks, opaque parts, arguments sent as objects); whatever else the body holds is
# dropped, so its depth cannot matter. Checking what the reply keeps costs the size of that,
# where counting the brackets of the whole text costs every byte: a reply of 100 KB of text
# keeps next to nothing whole. Text short enough that it cannot nest past the limit skips
# even that; a mapping (built in Python, read by no reader of ours) is checked for everything
# JSON cannot hold.


def kept_values(reply: Reply) -> list[tuple[Any, str]]:
    """The values ``reply`` keeps whole from its body, each with what names it (a part by its
    number): provider data, opaque payloads, arguments that came as objects."""
    message = reply.message
    kept: list[tuple[Any, str]] = []
    if reply.provider_data is not None:
        kept.append((reply.provider_data, "the reply's provider data"))
    if message.provider_data is not None:
        kept.append((message.provider_data, "the message's provider data"))
    for n, part in enumerate(message.parts):  # exact types: isinstance is slow on Structs
        if type(part) is OpaquePart:
            kept.append((part.payload, f"part {n}"))
            continue
        data = part.provider_data  # type: ignore[union-attr] # every part but OpaquePart has it
        if data is not None:
            kept.append((data, f"part {n}: its provider data"))
        if type(part) is ToolCallPart:
            if part.raw_arguments is None:  # arguments sent as text were read by `loads`
                kept.append((part.arguments, f"part {n}: the call's arguments"))
        elif type(part) is ToolResultPart and type(part.content) is tuple:
            for m, inner in enumerate(part.content):
                if inner.provider_data is not None:
                    kept.append((inner.provider_data, f"part {n}: content {m}: provider data"))
    return kept


_LEAVES = frozenset({int, bool, type(None)})


def _sound(value: Any, *, read: bool) -> bool:
    """Whether ``value`` is plain JSON nested at most `MAX_DEPTH` levels, found without naming
    anything (`first_problem` names what is wrong once this says something is). ``read``: the
    value came from `toolwire._json.loads`, so only its depth can be wrong."""
    if type(value) is not dict and type(value) is not list:
        return read or _sound_leaf(value)
    todo: list[tuple[Any, int]] = [(value, 0)]
    while todo:
        node, depth = todo.pop()
        if depth >= MAX_DEPTH:
            return False
        if type(node) is dict:
            if not read:
                for key in node:
                    if type(key) is not str:
                        return False
            node = node.values()
        for item in node:
            kind = type(item)
            if kind is dict or kind is list:
                todo.append((item, depth + 1))
            elif not (read or kind in _LEAVES or _sound_leaf(item)):
                return False
    return True


def _sound_leaf(value: Any) -> bool:
    """Whether a value that is not a container is a JSON scalar toolwire could have read."""
    kind = type(value)
    if kind is str:
        return value.isascii() or is_unicode(value)
    if kind is float:
        return bool(value - value == 0.0)  # finite
    return kind in _LEAVES  # not subclasses, tuples, other mappings: `first_problem` judges


def hold_reply(reply: Reply, what: str, *, read: bool) -> None:
    """Refuse a decoded reply keeping a value no JSON text read by toolwire would give.

    ``read``: the body came as text (through `loads`, unchecked for depth), so only depth is
    left to check; otherwise every kept value is checked for all of it.
    """
    for value, where in kept_values(reply):
        if read and type(value) is dict:  # the usual kept object is flat: one level
            for item in value.values():
                if type(item) is dict or type(item) is list:
                    break
            else:
                continue
        if not _sound(value, read=read):
            problem = first_problem(f"{what}: {where}", value)
            if problem is not None:
                raise problem


def guard_response(
    decode: Callable[..., Reply], wire: str
) -> Callable[..., Reply]:
    what = f"{wire} reply"

    def decode_response(
        body: Mapping[str, Any] | str | bytes | bytearray | memoryview, *,
        request: Request | None = None,
    ) -> Reply:
        # What the values the reply keeps still need: every check (False: a mapping), their
        # depth alone (True: long text) or nothing (None: text too short to nest that deep).
        left: bool | None = False
        kind = type(body)
        if kind is bytes or kind is str or (
                kind is not dict and isinstance(body, bytearray | memoryview)):
            left = True if len(body) > SHALLOW else None
            body = loads(body, what=what, check_depth=False)  # type: ignore[arg-type]
            if type(body) is not dict:
                raise not_an_object(what, body)
        elif kind is not dict and not isinstance(body, Mapping):
            raise not_an_object(what, body)
        try:
            reply = decode(body, request=request)
        except Exception as exc:
            raise refined(exc, what, body)  # noqa: B904 - chained inside
        if left is not None:
            hold_reply(reply, what, read=left)
        return reply

    return functools.wraps(decode)(decode_response)


def guard_request(decode: Callable[..., Request], wire: str) -> Callable[..., Request]:
    what = f"{wire} request"

    def decode_request(
        body: Mapping[str, Any], *, model: str | None = None, stream: bool | None = None
    ) -> Request:
        if type(body) is not dict and not isinstance(body, Mapping):
            raise not_an_object(what, body)
        try:
            return decode(body, model=model, stream=stream)
        except Exception as exc:
            raise refined(exc, what, body)  # noqa: B904 - chained inside

    return functools.wraps(decode)(decode_request)


def guard_check(check: Callable[..., str | None], wire: str) -> Callable[..., str | None]:
    """``check`` (a wire's ``check_body``), total: a body shaped where the wire's rules do not
    expect it (a block that is a number, a list that is a string) is refused by name, the way
    the API refuses a body it cannot read, instead of raising."""

    def check_body(body: dict[str, Any], headers: Mapping[str, str] | None = None) -> str | None:
        try:
            return check(body, headers)
        except RecursionError:
            return f"the body is nested too deep to be a {wire} request; send a flatter one"
        except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
            return (f"the body is not a {wire} request the API can read "
                    f"({type(exc).__name__}: {exc}); send each field in the shape the API "
                    "documents")

    return functools.wraps(check)(check_body)


def guard_error(decode: Callable[..., ProviderError], wire: str) -> Callable[..., ProviderError]:
    what = f"{wire} error body"

    def decode_error(
        status: int, body: Any, headers: Mapping[str, str] | None = None
    ) -> ProviderError:
        if type(status) is not int:
            raise wrong_shape(f"{what}: the status", "an integer", status)
        try:
            return decode(status, body, headers)
        except Exception as exc:
            raise refined(exc, what, body)  # noqa: B904 - chained inside

    return functools.wraps(decode)(decode_error)


class _GuardedDecoder:
    """A wire's incremental stream decoder (``wrapped``) whose failures are all toolwire errors:
    anything else it lets out becomes a `StreamError`."""

    __slots__ = ("_what", "wrapped")

    def __init__(self, decoder: StreamDecoder, what: str) -> None:
        self.wrapped = decoder
        self._what = what

    def feed(self, data: bytes) -> list[StreamEvent]:
        if type(data) is not bytes and not isinstance(data, bytes | bytearray | memoryview):
            raise wrong_shape(f"{self._what}: a chunk", "bytes", data)
        try:
            return self.wrapped.feed(data)
        except ToolwireError:
            raise
        except Exception as exc:
            raise self._broken(exc) from exc

    def finish(self) -> Reply:
        try:
            return self.wrapped.finish()
        except ToolwireError:
            raise
        except Exception as exc:
            raise self._broken(exc) from exc

    def _broken(self, exc: Exception) -> StreamError:
        wire = self._what.split(" ", 1)[0]
        return StreamError(str(unreadable(self._what, exc)), wire=wire)


class GuardedResumable(_GuardedDecoder):
    """The guarded decoder of a wire whose record says ``resumable``: it says where its stream
    is taken up again, as the wire's own decoder (a `ResumableDecoder`) does."""

    __slots__ = ()

    wrapped: ResumableDecoder

    @property
    def resume_point(self) -> tuple[str, str] | None:
        return self.wrapped.resume_point

    def drop_partial(self) -> None:
        self.wrapped.drop_partial()


def guard_stream(make: Callable[..., StreamDecoder], wire: str, *,
                 resumable: bool = False) -> Callable[..., StreamDecoder]:
    what = f"{wire} stream"
    guarded = GuardedResumable if resumable else _GuardedDecoder

    def stream_decoder(*, request: Request | None = None) -> StreamDecoder:
        return guarded(make(request=request), what)

    return stream_decoder
