"""The files of a batch: the task lines read in, the result lines written out.

Owns `BatchTask` (one task line, checked), `read_tasks`, `parse_task`, `ResultsFile` (the
append-only results file and the ids it already holds) and `BatchError`. The formats are
documented in `toolwire.batch`. Must not import the loop, the client or the transport: this
module only reads and writes JSON lines.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolwire import _json
from toolwire.errors import ToolwireError

CODING_TOOL_NAMES = ("read_file", "list_files", "edit_file", "write_file", "run_command",
                     "run_tests")
LIMIT_KEYS = {"max_turns": int, "token_budget": int, "cost_budget": float, "time_limit": float}
TASK_KEYS = ("id", "prompt", "workdir", "tools", "limits", "system", "output", "test_command",
             "meta")


class BatchError(ToolwireError, ValueError):
    """A task file or results file that cannot be used; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class BatchTask:
    """One task of a batch, as read from its line (see `toolwire.batch` for the format).

    ``workdir`` is the template folder, already resolved; ``tools`` the names of the built-in
    coding tools the run gets; ``limits`` the `toolwire.Agent` limits that override the batch's.
    """

    id: str
    prompt: str
    workdir: str | None = None
    tools: tuple[str, ...] = ()
    limits: Mapping[str, float] = field(default_factory=dict)
    system: str | None = None
    output: Mapping[str, Any] | None = None
    test_command: str | None = None
    meta: Any = None
    line: int = 0
    json_id: str | int | None = None
    """The id as the task line gave it, a string or a number; result lines repeat it so."""

    @property
    def given_id(self) -> str | int:
        """The id with the JSON type the task line gave it (``id`` is always its text)."""
        return self.id if self.json_id is None else self.json_id

    @property
    def slug(self) -> str:
        """The id made safe as a file name; ids changed to make them safe get a short hash."""
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", self.id)[:80].lstrip(".")
        if safe != self.id or not safe:
            safe = f"{safe}-{hashlib.sha1(self.id.encode()).hexdigest()[:8]}"
        return safe

    def to_dict(self) -> dict[str, Any]:
        """The task as a task line would give it (``workdir`` resolved)."""
        data: dict[str, Any] = {"id": self.given_id, "prompt": self.prompt}
        for key in ("workdir", "system", "output", "test_command", "meta"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        if self.tools:
            data["tools"] = list(self.tools)
        if self.limits:
            data["limits"] = dict(self.limits)
        return data


def _tools(value: Any, where: str) -> tuple[str, ...]:
    if value is None or value == "none":
        return ()
    if value == "coding":
        return CODING_TOOL_NAMES
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        unknown = [v for v in value if v not in CODING_TOOL_NAMES]
        if unknown:
            raise BatchError(f"{where}: unknown tool(s) {', '.join(map(repr, unknown))}; the "
                             f"built-in tools are {', '.join(CODING_TOOL_NAMES)}")
        return tuple(dict.fromkeys(value))
    raise BatchError(f'{where}: "tools" must be "coding", "none" or a list of tool names, '
                     f"got {value!r}")


def _limits(value: Any, where: str) -> dict[str, float]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BatchError(f'{where}: "limits" must be an object like {{"max_turns": 20}}')
    out: dict[str, float] = {}
    for key, raw in value.items():
        kind = LIMIT_KEYS.get(key)
        if kind is None:
            raise BatchError(f"{where}: unknown limit {key!r}; limits are "
                             f"{', '.join(LIMIT_KEYS)}")
        ok = isinstance(raw, int | float) and not isinstance(raw, bool) and raw > 0
        if not ok or (kind is int and not isinstance(raw, int)):
            what = "a positive whole number" if kind is int else "a positive number"
            raise BatchError(f"{where}: limit {key!r} must be {what}, got {raw!r}")
        out[key] = raw
    return out


def _optional_str(data: Mapping[str, Any], key: str, where: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise BatchError(f"{where}: {key!r} must be a string, got {value!r}")
    return value


def parse_task(data: Any, where: str, base: Path | None = None, line: int = 0) -> BatchTask:
    """One task from its JSON value; ``base`` resolves a relative ``workdir`` and, when given,
    the template folder must exist. Raises `BatchError` starting with ``where``."""
    if not isinstance(data, dict):
        raise BatchError(f"{where}: a task must be a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - set(TASK_KEYS))
    if unknown:
        raise BatchError(f"{where}: unknown field(s) {', '.join(map(repr, unknown))}; a task "
                         f"has {', '.join(TASK_KEYS)}")
    task_id = given = data.get("id")
    if isinstance(task_id, int) and not isinstance(task_id, bool):
        task_id = str(task_id)
    if not isinstance(task_id, str) or not task_id.strip():
        raise BatchError(f'{where}: every task needs an "id" (a non-empty string or number): '
                         "results are matched to tasks by id, and a rerun skips finished ids")
    prompt = data.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise BatchError(f'{where}: task {task_id!r} needs a "prompt" (non-empty text)')
    workdir = _optional_str(data, "workdir", where)
    if workdir is not None and base is not None:
        folder = (base / workdir).resolve()
        if not folder.is_dir():
            raise BatchError(f"{where}: workdir template {workdir!r} is not a folder "
                             f"(looked for {folder})")
        workdir = str(folder)
    output = data.get("output")
    if output is not None and not isinstance(output, dict):
        raise BatchError(f'{where}: "output" must be a JSON Schema object')
    return BatchTask(
        id=task_id, prompt=prompt, workdir=workdir, tools=_tools(data.get("tools"), where),
        limits=_limits(data.get("limits"), where), system=_optional_str(data, "system", where),
        output=output, test_command=_optional_str(data, "test_command", where),
        meta=data.get("meta"), line=line, json_id=given if isinstance(given, int) else None,
    )


def read_tasks(path: str | os.PathLike[str], base: Path | None = None) -> list[BatchTask]:
    """Every task in a JSONL file (blank lines and lines starting with ``#`` are skipped).

    A relative ``workdir`` is resolved against ``base`` (default: the file's folder). Raises
    `BatchError` naming the file and line of the first bad line, or of a repeated id.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BatchError(f"task file {file} does not exist") from None
    base = file.resolve().parent if base is None else base
    tasks: list[BatchTask] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        where = f"{file} line {number}"
        try:
            data = _json.loads(raw)
        except ValueError as exc:
            raise BatchError(f"{where}: not valid JSON ({exc})") from None
        task = parse_task(data, where, base, number)
        if task.id in seen:
            raise BatchError(f"{where}: id {task.id!r} was already used on line "
                             f"{seen[task.id]}; ids must be unique")
        seen[task.id] = number
        tasks.append(task)
    return tasks


def _dumps(value: Any) -> bytes:
    return (json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
            + "\n").encode()


class ResultsFile:
    """The results file, opened for appending: ``finished`` maps each id found to its last line.

    A last line cut short by a crash is dropped before appending. Each result line is written
    with one ``write`` call on a file opened in append mode, so a killed batch leaves whole
    lines only (or one torn last line, dropped on the next open). The file is locked while
    open, so two batches cannot write it at once (the lock goes with the process).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.finished: dict[str, dict[str, Any]] = {}
        self.jobs: list[dict[str, Any]] = []
        """The lines of a batch sent through a provider's batch API (``batch_job`` lines:
        which job holds which task's request), in order (`toolwire.batch.rounds`)."""
        self.torn = False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.close()
            raise BatchError(f"another batch is writing {self.path}; wait for it to end or "
                             "give another results file") from None
        try:
            self._read()
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> ResultsFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read(self) -> None:
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            self.torn = True
            with self.path.open("rb+") as f:
                f.truncate(data.rfind(b"\n") + 1)
            data = data[: data.rfind(b"\n") + 1]
        for number, raw in enumerate(data.decode("utf-8").splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                line = _json.loads(raw)
            except ValueError as exc:
                raise BatchError(f"results file {self.path} line {number}: not valid JSON "
                                 f"({exc}); fix or remove that line") from None
            if isinstance(line, dict) and "batch_job" in line:
                self.jobs.append(_job_line(line, f"results file {self.path} line {number}"))
                continue
            found = line.get("id") if isinstance(line, dict) else None
            if not isinstance(found, str | int) or isinstance(found, bool):
                raise BatchError(f'results file {self.path} line {number}: a result line is '
                                 'an object with an "id", a string or a whole number')
            self.finished[str(found)] = line

    def append(self, line: Mapping[str, Any]) -> None:
        self._write(line)
        self.finished[str(line["id"])] = dict(line)

    def note_job(self, line: Mapping[str, Any]) -> None:
        """Append a ``batch_job`` line (a job sent, or how it ended)."""
        self._write(line)
        self.jobs.append(dict(line))

    def _write(self, line: Mapping[str, Any]) -> None:
        if self._fd is None:
            raise ValueError(f"results file {self.path} is closed")
        data = _dumps(line)
        while data:
            data = data[os.write(self._fd, data):]

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _job_line(line: dict[str, Any], where: str) -> dict[str, Any]:
    """A ``batch_job`` line, checked: a job id, and what its requests were or how it ended."""
    job, requests, ended = line.get("batch_job"), line.get("requests"), line.get("ended")
    ok = isinstance(job, str) and bool(job) and (
        (isinstance(requests, dict) and all(isinstance(k, str) for k in requests))
        or isinstance(ended, str))
    if not ok:
        raise BatchError(f'{where}: a "batch_job" line names a job and holds its "requests" '
                         '(an object) or how it "ended" (text); fix or remove that line')
    return line


def pending(tasks: Sequence[BatchTask], results: ResultsFile, *, retry_failed: bool
            ) -> Iterator[BatchTask]:
    """The tasks that still need a run: no result yet, or (``retry_failed``) a failed one."""
    for task in tasks:
        done = results.finished.get(task.id)
        if done is None or (retry_failed and done.get("stop") in RETRIED_STOPS):
            yield task


RETRIED_STOPS = ("error", "provider_error", "bad_reply")
"""Result stops that ``retry_failed`` runs again: the run raised, the provider kept failing, or
its replies could not be used."""
