"""Running the command line on a pseudo-terminal: to its end (`run_on_pty`), or answering its
prompts as they show (`drive_on_pty`)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys


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


def drive_on_pty(argv: list[str], answers: list[tuple[str, str]], env: dict[str, str]) -> str:
    """Run a command on a pseudo-terminal, typing each answer once its prompt appears."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the command, with the terminal as stdin, stdout and stderr
        os.execvpe(sys.executable, [sys.executable, "-m", "toolwire.cli", *argv], env)
    seen, unread, pending = "", "", list(answers)
    while True:
        ready, _, _ = select.select([fd], [], [], 30)
        if not ready:
            break
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        text = data.decode("utf-8", "replace")
        seen, unread = seen + text, unread + text
        if pending and pending[0][0] in unread:  # answer each prompt once, when it shows
            prompt, answer = pending.pop(0)
            unread = unread[unread.index(prompt) + len(prompt):]
            os.write(fd, (answer + "\n").encode())
    os.waitpid(pid, 0)
    os.close(fd)
    return seen
