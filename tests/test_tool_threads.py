"""The threads plain tools run on (`toolwire.agent.workers.ToolThreads`): what a call gives
back, how many threads, what a cancelled call does, closing, dropping the pool and the
interpreter's exit, each with real threads, and held to ``loop.run_in_executor`` over a
`ThreadPoolExecutor` for every value and error."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire.agent.workers import ToolThreads

WAIT = 30.0  # a bound for a wait that should end at once: a hang fails, a slow machine does not


def _outcome(fn: Any, arg: Any) -> tuple[str, Any]:
    async def go() -> tuple[str, Any]:
        pool = ToolThreads(2, "t")
        try:
            loop = asyncio.get_running_loop()
            try:
                return "value", await pool.run(loop, contextvars.copy_context(), fn, arg)
            except BaseException as exc:  # compared below
                return type(exc).__name__, str(exc)
        finally:
            pool.close()

    return asyncio.run(go())


def _outcome_executor(fn: Any, arg: Any) -> tuple[str, Any]:
    async def go() -> tuple[str, Any]:
        with ThreadPoolExecutor(2) as pool:
            try:
                return "value", await asyncio.get_running_loop().run_in_executor(pool, fn, arg)
            except BaseException as exc:  # compared above
                return type(exc).__name__, str(exc)

    return asyncio.run(go())


class _Odd(Exception):
    pass


_RAISES = {"ValueError": ValueError, "KeyError": KeyError, "_Odd": _Odd,
           "SystemExit": SystemExit, "ZeroDivisionError": ZeroDivisionError}


@given(value=st.one_of(st.none(), st.integers(), st.text(), st.lists(st.integers())),
       raises=st.sampled_from([None, *_RAISES]))
def test_every_value_and_error_comes_back_as_from_a_thread_pool(value: Any,
                                                                raises: str | None) -> None:
    def tool(arg: Any) -> Any:
        if raises is not None:
            raise _RAISES[raises](repr(arg))
        return arg

    assert _outcome(tool, value) == _outcome_executor(tool, value)


def test_stop_iteration_comes_back_as_an_error_a_future_can_hold() -> None:
    def tool(_: Any) -> Any:
        raise StopIteration("over")

    kind, text = _outcome(tool, None)
    assert kind == "RuntimeError" and "StopIteration" in text and "over" in text


def test_the_call_runs_in_the_context_it_is_given_on_a_named_thread() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")

    def tool(_: Any) -> tuple[str, str]:
        return var.get(), threading.current_thread().name

    async def go() -> tuple[str, str]:
        pool = ToolThreads(1, "toolwire-tool")
        var.set("the caller's")
        try:
            return await pool.run(asyncio.get_running_loop(), contextvars.copy_context(), tool,
                                  None)
        finally:
            pool.close()

    seen, name = asyncio.run(go())
    assert seen == "the caller's" and name == "toolwire-tool_0"


def test_threads_are_started_as_calls_need_them_and_never_past_the_size() -> None:
    release = threading.Event()
    running: list[int] = []
    most = [0]
    lock = threading.Lock()

    def tool(n: int) -> int:
        with lock:
            running.append(n)
            most[0] = max(most[0], len(running))
        release.wait(WAIT)
        with lock:
            running.remove(n)
        return n

    async def go() -> tuple[list[int], int]:
        pool = ToolThreads(2, "t")
        loop = asyncio.get_running_loop()
        try:
            futures = [pool.run(loop, contextvars.copy_context(), tool, n) for n in range(5)]
            while len(running) < 2:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)  # a third thread, were there one, would start meanwhile
            loop.call_later(0.05, release.set)
            return list(await asyncio.gather(*futures)), pool.threads
        finally:
            pool.close()

    values, threads = asyncio.run(go())
    assert values == [0, 1, 2, 3, 4] and threads == 2 and most[0] == 2


def test_calls_one_after_another_share_one_thread() -> None:
    async def go() -> tuple[set[str], int]:
        pool = ToolThreads(4, "t")
        loop = asyncio.get_running_loop()
        names = set()
        for _ in range(20):
            names.add(await pool.run(loop, contextvars.copy_context(),
                                     lambda _: threading.current_thread().name, None))
            await asyncio.sleep(0.001)  # the thread counts itself idle after its call
        threads = pool.threads
        pool.close()
        return names, threads

    names, threads = asyncio.run(go())
    assert names == {"t_0"} and threads == 1


def test_a_call_cancelled_before_it_starts_never_runs() -> None:
    release = threading.Event()
    ran: list[str] = []

    def tool(name: str) -> str:
        ran.append(name)
        if name == "first":
            release.wait(WAIT)
        return name

    async def go() -> str:
        pool = ToolThreads(1, "t")
        loop = asyncio.get_running_loop()
        first = pool.run(loop, contextvars.copy_context(), tool, "first")
        second = pool.run(loop, contextvars.copy_context(), tool, "second")
        second.cancel()
        third = pool.run(loop, contextvars.copy_context(), tool, "third")
        release.set()
        try:
            return await first + await third
        finally:
            pool.close()

    assert asyncio.run(go()) == "firstthird"
    assert ran == ["first", "third"]


def test_a_call_given_up_while_it_runs_finishes_and_its_outcome_is_dropped() -> None:
    release = threading.Event()
    finished = threading.Event()
    errors: list[Any] = []

    def tool(_: Any) -> Any:
        release.wait(WAIT)
        finished.set()
        raise ValueError("nobody waits for this")

    async def go() -> str:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _loop, context: errors.append(context))
        pool = ToolThreads(1, "t")
        try:
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.05):
                    await pool.run(loop, contextvars.copy_context(), tool, None)
            release.set()
            while not finished.is_set():
                await asyncio.sleep(0.01)
            # the same thread takes the next call once the dropped one is settled
            return str(await pool.run(loop, contextvars.copy_context(), str.upper, "next"))
        finally:
            pool.close()

    assert asyncio.run(go()) == "NEXT"
    gc.collect()
    assert errors == []


def test_close_cancels_the_waiting_calls_and_the_threads_end() -> None:
    release = threading.Event()
    ran: list[int] = []

    def tool(n: int) -> int:
        ran.append(n)
        release.wait(WAIT)
        return n

    async def go() -> tuple[list[bool], ToolThreads]:
        pool = ToolThreads(1, "t")
        loop = asyncio.get_running_loop()
        futures = [pool.run(loop, contextvars.copy_context(), tool, n) for n in range(3)]
        while not ran:
            await asyncio.sleep(0.01)
        pool.close()
        with pytest.raises(RuntimeError, match="closed"):
            pool.run(loop, contextvars.copy_context(), tool, 9)
        await asyncio.sleep(0.05)
        cancelled = [f.cancelled() for f in futures]
        release.set()
        assert await futures[0] == 0  # the running call was let finish
        return cancelled, pool

    cancelled, pool = asyncio.run(go())
    assert cancelled == [False, True, True] and ran == [0]
    for thread in pool._shared.threads:
        thread.join(WAIT)
        assert not thread.is_alive()


def test_a_dropped_pool_lets_its_threads_end() -> None:
    async def go() -> list[threading.Thread]:
        pool = ToolThreads(3, "t")
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(pool.run(loop, contextvars.copy_context(), abs, -n)
                               for n in range(3)))
        threads = list(pool._shared.threads)
        del pool
        return threads

    threads = asyncio.run(go())
    gc.collect()
    assert threads
    for thread in threads:
        thread.join(WAIT)
        assert not thread.is_alive()


def test_a_call_whose_loop_closed_leaves_the_thread_working() -> None:
    release = threading.Event()
    pool = ToolThreads(1, "t")

    def slow(_: Any) -> str:
        release.wait(WAIT)
        return "late"

    async def start() -> None:
        pool.run(asyncio.get_running_loop(), contextvars.copy_context(), slow, None)

    asyncio.run(start())  # the loop is closed with the call running
    release.set()

    async def again() -> str:
        return str(await pool.run(asyncio.get_running_loop(), contextvars.copy_context(),
                                  str.upper, "alive"))

    assert asyncio.run(again()) == "ALIVE"
    pool.close()


def test_a_pool_needs_a_thread() -> None:
    with pytest.raises(ValueError, match="at least one thread"):
        ToolThreads(0, "t")


def test_the_interpreter_exits_with_idle_threads_and_waits_for_running_calls(
        tmp_path: Path) -> None:
    done = tmp_path / "done"
    script = textwrap.dedent(f"""
        import asyncio, contextvars, threading, time
        from toolwire.agent.workers import ToolThreads
        idle, busy = ToolThreads(2, "idle"), ToolThreads(1, "busy")
        started = threading.Event()
        def slow(path):
            started.set()
            time.sleep(0.2)
            open(path, "w").write("finished")
        async def main():
            loop = asyncio.get_running_loop()
            await idle.run(loop, contextvars.copy_context(), abs, -1)
            busy.run(loop, contextvars.copy_context(), slow, {str(done)!r})
            started.wait()
        asyncio.run(main())
        print("main ends")
    """)
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "main ends\n" and ran.stderr == ""
    assert done.read_text() == "finished"


def test_an_exit_hook_added_before_the_pool_still_ends_a_running_call(tmp_path: Path) -> None:
    """Exit hooks run last-added first; one added before this module (as the command runner's,
    which stops the commands tool threads still run) must still come before the interpreter
    waits for a running call, or the exit would wait for the command."""
    script = textwrap.dedent("""
        import asyncio, contextvars, threading
        ending = threading.Event()
        threading._register_atexit(ending.set)  # added first: runs after later hooks
        from toolwire.agent.workers import ToolThreads
        pool = ToolThreads(1, "busy")
        started = threading.Event()
        def command(_):
            started.set()
            ending.wait()  # a command that runs until the program ends
        async def main():
            pool.run(asyncio.get_running_loop(), contextvars.copy_context(), command, None)
            started.wait()
        asyncio.run(main())
        print("main ends")
    """)
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert ran.returncode == 0 and ran.stdout == "main ends\n", ran.stderr
