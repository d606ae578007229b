"""How a request to a model is tried again: the one retry loop of `HttpModel.complete` and
`HttpModel.stream`.

Owns `RetryPolicy` (how often and how long to wait), `Gate` (pacing shared by many callers),
`BAD_REPLY_RETRIES` and `retrying`, the loop itself: send, make what the response holds into
events (a whole reply or a stream, ending with `StreamEnd`), and on a failure either wait and
send again or give up; `retried` is the same loop for a reply read whole, with no events in
between. A provider error that may pass (a rate limit, overload, a 5xx, a dropped
connection) is retried up to the policy's attempts, honouring the provider's retry-after; a bad
reply (`WireFormatError`) is sent again once. Each retry is a `RetryEvent` given to
`toolwire.events.emit`. Imports nothing of the transport or the codecs.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from toolwire.errors import OverloadedError, ProviderError, RateLimitError, WireFormatError
from toolwire.events import RetryEvent, StreamEvent, emit

BAD_REPLY_RETRIES = 1
"""How many times a request is sent again after a bad reply (one the client could not use)."""

R = TypeVar("R")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to retry a failed request.

    The wait before attempt ``n`` (from 1) is a random value up to ``base * 2**(n-1)`` seconds,
    capped at ``max_wait``; a provider's retry-after is used instead when it is given and at most
    ``max_retry_after`` seconds.
    """

    max_attempts: int = 4
    base: float = 0.5
    max_wait: float = 30.0
    max_retry_after: float = 60.0

    def wait(self, attempt: int, error: ProviderError, rng: random.Random) -> float:
        if error.retry_after is not None and 0 <= error.retry_after <= self.max_retry_after:
            return error.retry_after
        return rng.uniform(0, min(self.max_wait, self.base * 2 ** (attempt - 1)))


class Gate(Protocol):
    """Pacing shared by the callers of one provider: ``wait`` before each send, ``backoff``
    when the provider said to slow down (a rate limit or overload that will be retried)."""

    async def wait(self) -> None: ...

    def backoff(self, seconds: float) -> None: ...


class _Tries:
    """The count of one request's tries: `failed` raises the error that ends them, else waits
    out a provider error that may pass (or lets a bad reply be sent again at once)."""

    __slots__ = ("attempt", "bad", "gate", "policy", "rng")

    def __init__(self, policy: RetryPolicy, gate: Gate | None, rng: random.Random) -> None:
        self.policy, self.gate, self.rng = policy, gate, rng
        self.attempt, self.bad = 1, 0

    async def failed(self, error: ProviderError | WireFormatError) -> None:
        attempt, self.attempt = self.attempt, self.attempt + 1
        if isinstance(error, WireFormatError):
            self.bad += 1
            if self.bad > BAD_REPLY_RETRIES:
                raise error
            emit(RetryEvent(attempt=attempt, wait=0.0, error=error))
            return
        policy = self.policy
        if not error.retryable or attempt >= policy.max_attempts:
            raise error
        event = RetryEvent(attempt=attempt, wait=policy.wait(attempt, error, self.rng),
                           error=error)
        if self.gate is not None and (isinstance(error, RateLimitError | OverloadedError)
                                      or error.retry_after is not None):
            self.gate.backoff(event.wait)
        emit(event)
        await asyncio.sleep(event.wait)


async def retrying(send: Callable[[], Awaitable[R]],
                   attempt_once: Callable[[R], AsyncIterator[StreamEvent]], *,
                   policy: RetryPolicy, gate: Gate | None,
                   rng: random.Random) -> AsyncGenerator[StreamEvent, None]:
    """``send`` and yield what ``attempt_once`` makes of the response, until a try succeeds
    or fails for good: a provider error that may pass is waited out, a bad reply sent again."""
    tries = _Tries(policy, gate, rng)
    while True:
        try:
            response = await send()
            events = attempt_once(response)
            try:  # closed at once when the caller stops early, not left to the GC
                async for event in events:
                    yield event
            finally:
                await events.aclose()  # type: ignore[attr-defined]
            return
        except (ProviderError, WireFormatError) as error:
            await tries.failed(error)


async def retried(send: Callable[[], Awaitable[R]], once: Callable[[R], Awaitable[T]], *,
                  policy: RetryPolicy, gate: Gate | None, rng: random.Random) -> T:
    """`retrying` for a value made of the whole response (a reply not streamed): what
    ``once`` makes of the response of the try that succeeds, with no stream in between."""
    tries = _Tries(policy, gate, rng)
    while True:
        try:
            return await once(await send())
        except (ProviderError, WireFormatError) as error:
            await tries.failed(error)


__all__ = ["BAD_REPLY_RETRIES", "Gate", "RetryPolicy", "retried", "retrying"]
