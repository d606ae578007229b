"""Ctrl-C at the command line's prompts: a prompt read in a worker thread (approvals,
``ask_user``) ends at once when Ctrl-C is pressed, so a run stops without waiting for Enter.

Owns `Interrupts` (the SIGINT handler of a run, installed from the main thread, which wakes
every prompt waiting in another thread and then raises `KeyboardInterrupt` in the main thread
as Python's own handler does) and `read_line`, the prompt those threads use. Imports nothing
of toolwire.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

CTRL_C = {signal.SIGINT.value, 3}
"""What in the pipe means Ctrl-C: SIGINT's number (written as the signal arrives) or the byte
the handler writes."""


class Interrupts:
    """Where Ctrl-C is caught while a run goes on: a pipe that a prompt in another thread
    waits on beside the terminal, written to by the SIGINT handler; and the text typed on the
    line when it came (from readline, when it holds the line)."""

    def __init__(self) -> None:
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_write, False)
        self.typed: str | None = None  # the line's text at the last Ctrl-C, when known

    def pressed(self) -> bool:
        """Whether Ctrl-C came since the last `reset`."""
        ready, _, _ = select.select([self._wake_read], [], [], 0)
        return bool(ready)

    def reset(self) -> None:
        while self.pressed():
            os.read(self._wake_read, 64)
        self.typed = None

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        readline = sys.modules.get("readline")
        self.typed = readline.get_line_buffer() if readline is not None else None
        with contextlib.suppress(OSError):
            os.write(self._wake_write, b"\x03")
        raise KeyboardInterrupt

    @contextlib.contextmanager
    def caught(self) -> Iterator[None]:
        """Install the handler while the block runs (only from the main thread, where Python
        delivers signals; elsewhere the block runs as it is)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        before = signal.signal(signal.SIGINT, self._handler)
        # the signal's number is written to the pipe as it arrives, before Python runs the
        # handler: a prompt waiting in another thread wakes even while the main thread sleeps
        woke = signal.set_wakeup_fd(self._wake_write, warn_on_full_buffer=False)
        try:
            yield
        finally:
            signal.set_wakeup_fd(woke)
            signal.signal(signal.SIGINT, before)

    @contextlib.contextmanager
    def ticking(self, every: float = 0.1) -> Iterator[None]:
        """While the block waits at a prompt of the main thread (readline's ``input``), wake it
        every ``every`` seconds, so a Ctrl-C that came just before it began to wait is acted
        on at once rather than at the next key (readline only looks for signals when woken).
        Only from the main thread; elsewhere the block runs as it is."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        before = signal.signal(signal.SIGALRM, lambda signum, frame: None)
        signal.setitimer(signal.ITIMER_REAL, every, every)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, before)

    def read_line(self, prompt: str) -> str | None:
        """A line typed at the terminal, without its end (None at the end of input); raises
        `KeyboardInterrupt` as soon as Ctrl-C is pressed, in whatever thread it waits."""
        if not sys.stdin.isatty():
            try:
                return input(prompt)
            except EOFError:
                return None
        sys.stdout.write(prompt)
        sys.stdout.flush()
        fd, data = sys.stdin.fileno(), b""
        while not data.endswith(b"\n"):
            ready, _, _ = select.select([fd, self._wake_read], [], [])
            if self._wake_read in ready:
                if CTRL_C & set(os.read(self._wake_read, 64)):
                    raise KeyboardInterrupt
                continue  # another signal woke it
            chunk = os.read(fd, 4096)
            if not chunk:
                return data.decode("utf-8", "replace") if data else None
            data += chunk
        return data[:-1].decode("utf-8", "replace")



def _main_thread_only() -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def signals_to_the_main_thread(loop: Any) -> None:
    """Give ``loop`` worker threads that never take SIGINT, so Ctrl-C always reaches the main
    thread (which may be waiting at a prompt) and not an idle worker."""
    from concurrent.futures import ThreadPoolExecutor

    loop.set_default_executor(ThreadPoolExecutor(initializer=_main_thread_only))


_ONE: list[Interrupts] = []


def interrupts() -> Interrupts:
    """The process's one `Interrupts` (made when first asked for)."""
    if not _ONE:
        _ONE.append(Interrupts())
    return _ONE[0]
