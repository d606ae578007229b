"""A cancelled run stays cancelled: no ``finally`` or clean-up step on the way out of the loop,
the transport or a batch swallows the cancellation and lets the run go on as if nothing came.

Ctrl-C on the command line is such a cancellation (asyncio cancels the run's task), so a
cancellation lost here is a run that answers after the person stopped it.
"""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from toolwire.emulator import Emulator
from toolwire.http.transport import HttpTransport, WireRequest


async def _warm_transport(emu: Emulator) -> tuple[HttpTransport, str]:
    """A transport with an open connection to ``emu``, renewed every 30 ms while kept warm."""
    transport = HttpTransport(keepalive_expiry=0.04)
    url = f"{emu.base_url}/v1/messages"
    first = await transport.send(WireRequest(url, {"model": "m", "max_tokens": 8, "messages": [
        {"role": "user", "content": "hi"}]}))
    await first.read()
    return transport, url


async def _refresher_started(before: set[asyncio.Task[object]]) -> asyncio.Task[object]:
    """The one task started since ``before`` (the refresher), once it is there."""
    while not (started := set(asyncio.all_tasks()) - before):
        await asyncio.sleep(0.005)
    (refresher,) = started
    return refresher


async def test_a_cancellation_while_keep_warm_stops_its_refresher_is_not_lost() -> None:
    """The tools finished, and ``keep_warm`` is waiting for its refresh task to end when the
    run is cancelled: the cancellation comes out of the block."""
    with Emulator([{"text": "hi"}]) as emu:
        transport, url = await _warm_transport(emu)
        tools_done = asyncio.Event()
        reached_end = []

        async def turn() -> str:
            async with transport.keep_warm(url):
                await tools_done.wait()
            reached_end.append(True)
            return "went on"

        task = asyncio.ensure_future(turn())
        await _refresher_started({asyncio.current_task(), task})  # type: ignore[arg-type]
        tools_done.set()
        await asyncio.sleep(0)  # the block ended; its exit now waits for the refresher
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert reached_end == []
        await transport.aclose()


async def test_keep_warm_ends_its_refresher_and_the_block_goes_on() -> None:
    """After the block the refresher is over (cancelled, not left running), and the block's
    exit raises nothing of it: the turn goes on."""
    with Emulator([{"text": "hi"}]) as emu:
        transport, url = await _warm_transport(emu)
        before = set(asyncio.all_tasks())
        async with transport.keep_warm(url):
            refresher = await _refresher_started(before)
            while transport.refreshes < 2:  # renewed, and renewed again
                await asyncio.sleep(0.005)
        assert refresher.cancelled()
        await transport.aclose()


def _timers(loop: asyncio.AbstractEventLoop) -> int:
    """How many timers ``loop`` has that are not cancelled (a cancelled one leaves its heap
    only later)."""
    return sum(not h.cancelled() for h in loop._scheduled)  # type: ignore[attr-defined]


async def test_a_block_shorter_than_the_renewal_starts_nothing() -> None:
    """A block that ends before the connection needs renewing (a run's quick tools) starts no
    task and leaves nothing scheduled."""
    with Emulator([{"text": "hi"}]) as emu:
        transport, url = await _warm_transport(emu)
        transport.keepalive_expiry = 60.0
        loop = asyncio.get_running_loop()
        before = set(asyncio.all_tasks())
        pending = _timers(loop)
        async with transport.keep_warm(url):
            assert set(asyncio.all_tasks()) == before
        await asyncio.sleep(0)
        assert set(asyncio.all_tasks()) == before and transport.refreshes == 0
        assert _timers(loop) == pending  # its timer cancelled
        await transport.aclose()


async def test_keep_warm_in_a_task_that_caught_an_earlier_cancellation_still_goes_on() -> None:
    """A task that was cancelled once and caught it (without ``uncancel``) still leaves the
    block normally: only a cancellation that comes while the block's exit waits is its own."""
    with Emulator([{"text": "hi"}]) as emu:
        transport, url = await _warm_transport(emu)

        async def turn() -> str:
            me = asyncio.current_task()
            assert me is not None
            me.cancel()
            with contextlib.suppress(asyncio.CancelledError):  # the count asked stays at 1
                await asyncio.sleep(1)
            before = set(asyncio.all_tasks())
            async with transport.keep_warm(url):
                await _refresher_started(before)  # the exit has a refresher to wait for
            return "went on"

        assert await asyncio.ensure_future(turn()) == "went on"
        await transport.aclose()
