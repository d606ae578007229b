"""A cancelled run stays cancelled: no ``finally`` or clean-up step on the way out of the loop,
the transport or a batch swallows the cancellation and lets the run go on as if nothing came.

Ctrl-C on the command line is such a cancellation (asyncio cancels the run's task), so a
cancellation lost here is a run that answers after the person stopped it.
"""

from __future__ import annotations

import asyncio

import pytest

from toolwire.emulator import Emulator
from toolwire.http.transport import HttpTransport, WireRequest


async def test_a_cancellation_while_keep_warm_stops_its_refresher_is_not_lost() -> None:
    """The tools finished, and ``keep_warm`` is waiting for its refresh task to end when the
    run is cancelled: the cancellation comes out of the block."""
    with Emulator([{"text": "hi"}]) as emu:
        transport = HttpTransport()
        url = f"{emu.base_url}/v1/messages"
        first = await transport.send(WireRequest(url, {"model": "m", "max_tokens": 8,
                                                      "messages": [{"role": "user",
                                                                    "content": "hi"}]}))
        await first.read()
        tools_done = asyncio.Event()
        reached_end = []

        async def turn() -> str:
            async with transport.keep_warm(url):
                await tools_done.wait()
            reached_end.append(True)
            return "went on"

        task = asyncio.ensure_future(turn())
        await asyncio.sleep(0)  # the block is entered, its refresher started
        tools_done.set()
        await asyncio.sleep(0)  # the block ended; its exit now waits for the refresher
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert reached_end == []
        await transport.aclose()
