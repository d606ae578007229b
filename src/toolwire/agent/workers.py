"""The threads a dispatcher runs its plain (not ``async``) tools on.

A tool that blocks must not hold up the event loop, so each call of a plain tool runs on a
worker thread and its value comes back to the loop as an `asyncio.Future`. `ToolThreads` does
for this one use what ``loop.run_in_executor`` over a `concurrent.futures.ThreadPoolExecutor`
does, with about half the work for the loop and the thread: a call is a tuple on a queue; a
worker runs it in the context it was given and hands its outcome to the loop with one
``call_soon_threadsafe``. There is no second future kept in step with the first, and no
condition taken to start or end a call.

Threads are started as calls need them, up to ``size``, and an idle one waits on the queue;
calls past ``size`` wait there for a free thread. A caller that stops waiting (a timeout, a
cancelled run) cancels its future: a call that has not started then never does, and one that
is running is left to finish, its outcome dropped. `ToolThreads.close` cancels the calls still
waiting and lets the threads end; so does dropping the pool. At the interpreter's exit, as
with the standard library's pools, idle threads end and running calls are waited for (by
the interpreter, once every exit hook has run).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import Callable
from contextvars import Context
from queue import Empty, SimpleQueue
from typing import Any

_Call = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Context, Callable[[Any], Any], Any]


class _Shared:
    """What a pool's threads share with it (not the pool itself, which may be dropped)."""

    __slots__ = ("calls", "idle", "lock", "threads")

    def __init__(self) -> None:
        self.calls: SimpleQueue[_Call | None] = SimpleQueue()
        self.idle = 0  # threads waiting on the queue, less the calls already handed to them
        self.lock = threading.Lock()
        self.threads: list[threading.Thread] = []

    def end(self) -> None:
        """Cancel the calls still waiting and tell every thread to end once it is idle."""
        while True:
            try:
                call = self.calls.get_nowait()
            except Empty:
                break
            if call is not None:
                _cancel(call[0], call[1])
        self.release()

    def release(self) -> None:
        """Tell every thread to end once it is idle (after the calls already queued)."""
        for _ in self.threads:
            self.calls.put(None)


_LIVE: weakref.WeakSet[ToolThreads] = weakref.WeakSet()
"""The pools with threads, whose threads end at the interpreter's exit."""
_EXITING: list[bool] = [False]


def _cancel(loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any]) -> None:
    with contextlib.suppress(RuntimeError):  # else its loop is closed: nobody waits
        loop.call_soon_threadsafe(future.cancel)


def _settle(future: asyncio.Future[Any], ok: bool, outcome: Any) -> None:
    if future.cancelled():  # the caller stopped waiting
        return
    if ok:
        future.set_result(outcome)
    else:
        future.set_exception(outcome)


def _work(shared: _Shared) -> None:
    calls, lock = shared.calls, shared.lock
    while (call := calls.get()) is not None:
        loop, future, context, fn, arg = call
        del call
        if not future.cancelled():  # a read across threads: at worst a call runs for nothing
            try:
                ok, outcome = True, context.run(fn, arg)
            except StopIteration as exc:  # which a future cannot hold
                ok, outcome = False, RuntimeError(f"StopIteration raised: {exc!r}")
            except BaseException as exc:
                ok, outcome = False, exc
            try:  # noqa: SIM105 - no context manager on the path of every call
                loop.call_soon_threadsafe(_settle, future, ok, outcome)
            except RuntimeError:  # the loop is closed: the run is over
                pass
            del outcome
        del loop, future, context, fn, arg
        with lock:
            shared.idle += 1


class ToolThreads:
    """Up to ``size`` threads, named ``name`` and a number, that run what `run` hands them."""

    __slots__ = ("__weakref__", "_closed", "_name", "_shared", "_size")

    def __init__(self, size: int, name: str) -> None:
        if size < 1:
            raise ValueError(f"a pool of tool threads needs at least one thread, not {size}")
        self._size = size
        self._name = name
        self._shared = _Shared()
        self._closed = False
        weakref.finalize(self, self._shared.end).atexit = False

    def run(self, loop: asyncio.AbstractEventLoop, context: Context,
            fn: Callable[[Any], Any], arg: Any) -> asyncio.Future[Any]:
        """A future of ``fn(arg)``, run in ``context`` on one of the threads; cancelling it
        before the call starts keeps the call from running."""
        if self._closed:
            raise RuntimeError("the tool threads are closed: no call can be started")
        future = loop.create_future()
        shared = self._shared
        with shared.lock:
            if shared.idle:
                shared.idle -= 1
            elif len(shared.threads) < self._size:
                self._start(shared)
        shared.calls.put((loop, future, context, fn, arg))
        return future

    def _start(self, shared: _Shared) -> None:
        if _EXITING[0]:
            raise RuntimeError("the interpreter is exiting: no tool call can be started")
        thread = threading.Thread(target=_work, args=(shared,),
                                  name=f"{self._name}_{len(shared.threads)}")
        thread.start()
        shared.threads.append(thread)
        _LIVE.add(self)

    @property
    def threads(self) -> int:
        """How many threads have been started."""
        return len(self._shared.threads)

    def close(self) -> None:
        """Cancel the calls still waiting for a thread and let the threads end; the calls
        running are not waited for."""
        if not self._closed:
            self._closed = True
            self._shared.end()


def _at_exit() -> None:
    """As the interpreter starts to exit: idle threads end, and no call starts any more. The
    running ones are waited for by the interpreter's own join of its threads, which comes after
    every hook of this kind, so a hook that ends what a tool waits for (a command it runs) may
    come before or after this one."""
    _EXITING[0] = True
    for pool in list(_LIVE):
        pool._shared.release()


threading._register_atexit(_at_exit)  # type: ignore[attr-defined]  # as concurrent.futures

__all__ = ["ToolThreads"]
