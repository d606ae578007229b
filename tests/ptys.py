"""Running the command line on a pseudo-terminal: to its end (`run_on_pty`), or answering its
prompts as they show (`drive_on_pty`)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from collections.abc import Callable


def run_on_pty(argv: list[str], env: dict[str, str], *, pipe_stdout: bool = False,
               timeout: float = 60) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run ``argv`` to its end; return the process and what it wrote on the terminal."""
    master, slave = pty.openpty()
    proc = subprocess.run(argv, stdout=subprocess.PIPE if pipe_stdout else slave, stderr=slave,
                          stdin=subprocess.DEVNULL, env=env, text=True, timeout=timeout)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc, b"".join(chunks).decode("utf-8", "replace")


Answers = list[tuple[str, "str | Callable[[], str]"]]
"""Each prompt with what is typed at it (a callable: called when the prompt shows, for what
it returns, so a test can change things at that moment)."""


def drive_on_pty(argv: list[str], answers: Answers, env: dict[str, str]) -> str:
    """Run a command on a pseudo-terminal, typing each answer once its prompt appears."""
    return drive_on_pty_status(argv, answers, env)[0]


def spawn_on_pty(argv: list[str], env: dict[str, str]) -> tuple[int, int]:
    """Start ``toolwire ARGV`` on a pseudo-terminal: its process id and the terminal's fd."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the command, with the terminal as stdin, stdout and stderr
        os.execvpe(sys.executable, [sys.executable, "-m", "toolwire.cli", *argv], env)
    return pid, fd


def read_some(fd: int, wait: float) -> str | None:
    """What the terminal shows next; None at its end or after ``wait`` seconds of silence."""
    if not select.select([fd], [], [], wait)[0]:
        return None
    try:
        data = os.read(fd, 65536)
    except OSError:
        return None
    return data.decode("utf-8", "replace") if data else None


def until_shown(fd: int, text: str | None, wait: float = 30) -> str:
    """What the terminal shows until ``text`` is on it (None: until its end)."""
    shown = ""
    while text is None or text not in shown:
        more = read_some(fd, wait)
        if more is None:
            break
        shown += more
    return shown


def drive_on_pty_status(argv: list[str], answers: Answers, env: dict[str, str],
                        wait: float = 30) -> tuple[str, int]:
    """`drive_on_pty`, returning also the wait status. An answer ending in Ctrl-C (chr(3)) is
    typed without Enter, Ctrl-C once the text before it shows on the terminal; a command
    still running ``wait`` seconds after its last output is killed (its status says so)."""
    pid, fd = spawn_on_pty(argv, env)
    seen, unread, pending = "", "", list(answers)
    while True:
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            os.kill(pid, 9)
            break
        text = read_some(fd, 0)
        if text is None:
            break
        seen, unread = seen + text, unread + text
        if pending and pending[0][0] in unread:  # answer each prompt once, when it shows
            prompt, given = pending.pop(0)
            answer = given if isinstance(given, str) else given()
            unread = unread[unread.index(prompt) + len(prompt):]
            if not answer.endswith("\x03"):
                os.write(fd, (answer + "\n").encode())
                continue
            if answer[:-1]:  # typed, and shown on the line, before Ctrl-C
                os.write(fd, answer[:-1].encode())
                seen += until_shown(fd, answer[:-1], wait)
            os.write(fd, b"\x03")
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return seen, status
