"""Many agent runs at once: a task file in, one result line per run out, resumable.

Owns `run_batch`, `run_task`, `RateGate` (one backoff shared by every run of a batch),
`BatchProgress` and `BatchSummary`; the files are read and written by `toolwire.batch.files`
and the Ray driver lives in `toolwire.batch.on_ray`. Must not import the command line.

Task file (JSONL, one task per line; blank lines and ``#`` lines are skipped)::

    {"id": "fix-42", "prompt": "The tests fail. Fix them.", "workdir": "templates/proj",
     "tools": "coding", "limits": {"max_turns": 30, "time_limit": 600}}

``id`` (string or number, unique) and ``prompt`` are required. ``workdir`` is a template
folder (relative paths are read from the task file's folder) copied to ``RUNS/work/<id>/`` for
the run. ``tools`` is ``"coding"`` (every built-in coding tool but ``ask_user``), ``"none"``
(the default) or a list of their names (``read_file``, ``list_files``, ``edit_file``,
``write_file``, ``run_command``, ``run_tests``); a run with tools and no template gets an empty
folder. Tools run without asking: a batch has no one to ask. ``limits`` may hold
``max_turns``, ``token_budget``, ``cost_budget`` and ``time_limit`` (seconds). Optional too:
``system`` (system prompt), ``output`` (a JSON Schema: the run must answer with it),
``test_command`` (what ``run_tests`` runs) and ``meta`` (any JSON, copied to the result).

Results file (JSONL, one line per finished run, appended as runs finish)::

    {"id": "fix-42", "stop": "answered", "ok": true, "answer": "...", "turns": 5,
     "usage": {"input_tokens": 812, "output_tokens": 95, "total_tokens": 907, ...},
     "seconds": 3.21, "log": "/abs/RUNS/logs/fix-42.jsonl", "workdir": "/abs/RUNS/work/fix-42",
     "error": null, "notes": [], "resumed": false}

``stop`` is a `toolwire.RunStop` value, or ``"error"`` when the run raised (``error`` says
what). A batch sent through the provider's batch API also writes ``batch_job`` lines, which
name the provider's jobs (`toolwire.batch.rounds`); they hold no ``id`` and are not results.
``output`` and ``meta`` appear when the task had them. A rerun of the same batch skips every
id already in the results file; a run that was cut short (its log exists but no result line)
is continued from its run log, in the same working folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolwire.batch.files import (
    BatchError,
    BatchTask,
    ResultsFile,
    parse_task,
    pending,
    read_tasks,
)
from toolwire.errors import TranscriptError

if TYPE_CHECKING:
    from toolwire.protocol import Model
    from toolwire.schema.tool import Tool

ToolsFor = Callable[[BatchTask, Path | None], "Sequence[Tool | Callable[..., Any]]"]
"""Makes a run's tools from its task and its working folder (None when it has none)."""


class RateGate:
    """One backoff shared by many runs: when one is told to wait, every run waits.

    `toolwire.HttpModel` awaits `wait` before each request and calls `backoff` when the
    provider answers with a rate limit or an overload it will retry. After a backoff every
    waiting run sends again, each at a random moment within ``spread`` (a fraction of the
    wait) after the deadline, so the provider is not hit by all of them in the same instant.
    """

    def __init__(self, *, spread: float = 0.1, seed: int | None = None) -> None:
        self.spread = spread
        self.backoffs = 0
        self._until = 0.0
        self._rng = random.Random(seed)

    @property
    def remaining(self) -> float:
        """Seconds until requests may be sent again (0 when they may now)."""
        return max(0.0, self._until - time.monotonic())

    async def wait(self) -> None:
        while (delay := self._until - time.monotonic()) > 0:
            await asyncio.sleep(delay + self._rng.uniform(0, self.spread * delay))

    def backoff(self, seconds: float) -> None:
        until = time.monotonic() + max(0.0, seconds)
        if until > self._until:
            self._until = until
            self.backoffs += 1


@dataclass(slots=True)
class BatchProgress:
    """Where a batch stands: ``total`` tasks in the file, ``skipped`` finished by an earlier
    run, ``done`` finished now (``failed`` of them without an answer), ``running`` in flight,
    and the tokens and cost of the runs finished now. A batch sent through the provider's
    batch API (`toolwire.batch.rounds`) also counts its ``rounds``, the requests ``waiting``
    on the provider, and what the provider says of its jobs (``provider``)."""

    total: int
    skipped: int = 0
    done: int = 0
    failed: int = 0
    running: int = 0
    tokens: int = 0
    cost: float = 0.0
    rounds: int = 0
    waiting: int = 0
    provider: str = ""
    started: float = field(default_factory=time.monotonic)

    @property
    def finished(self) -> int:
        return self.skipped + self.done

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started

    def add(self, line: Mapping[str, Any]) -> None:
        self.running -= 1
        self.done += 1
        self.failed += not line.get("ok")
        usage = line.get("usage") or {}
        self.tokens += int(usage.get("total_tokens", 0))
        self.cost += float(usage.get("cost") or 0.0)


@dataclass(frozen=True, slots=True)
class BatchSummary:
    """How a batch ended: counts as in `BatchProgress`, the seconds it took, and ``all_ok``
    (every task in the file has a result line with an answer). ``waiting`` counts the tasks
    left waiting on the provider's batch jobs when a batch stopped at its ``max_wait``."""

    total: int
    skipped: int
    done: int
    failed: int
    tokens: int
    seconds: float
    results: Path
    runs: Path
    all_ok: bool
    cost: float = 0.0
    rounds: int = 0
    waiting: int = 0


def default_runs_dir(out: str | os.PathLike[str]) -> Path:
    """Where logs and working folders go by default: ``RESULTS.runs/`` next to the results."""
    path = Path(out)
    return path.with_name(path.stem + ".runs")


def task_tools(task: BatchTask, workdir: Path | None) -> list[Tool]:
    """The built-in coding tools a task names, confined to its working folder."""
    if not task.tools or workdir is None:
        return []
    from toolwire.tools.coding import coding_tools

    made = coding_tools(workdir, test_command=task.test_command, include_ask_user=False)
    return [t for t in made if t.name in task.tools]


def _workdir(task: BatchTask, runs: Path, *, fresh: bool) -> Path | None:
    if task.workdir is None and not task.tools:
        return None
    folder = runs / "work" / task.slug
    if fresh and folder.exists():
        shutil.rmtree(folder)
    if not folder.exists():
        if task.workdir is not None:
            shutil.copytree(task.workdir, folder, symlinks=True)
        else:
            folder.mkdir(parents=True)
    return folder


def _usage(usage: Any) -> dict[str, Any]:
    return {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
            "total_tokens": usage.total_tokens, "cache_read_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
            "reasoning_tokens": usage.reasoning_tokens, "cost": usage.cost}


def _restart_log(log: Path) -> None:
    """Move a log that cannot be continued aside, so the run starts over."""
    n = 1
    while log.with_suffix(f".broken-{n}.jsonl").exists():
        n += 1
    log.rename(log.with_suffix(f".broken-{n}.jsonl"))


async def run_task(
    task: BatchTask,
    model: Model,
    runs: Path,
    *,
    tools: ToolsFor | None = None,
    options: Mapping[str, Any] | None = None,
    log: bool = True,
) -> dict[str, Any]:
    """Run one task (or continue it from its log) and return its result line.

    ``options`` are `toolwire.Agent` keyword arguments for every run (the task's ``limits`` and
    ``system`` override them). Never raises for a failing run: the line says ``"error"``.
    """
    from toolwire.agent.loop import Agent
    from toolwire.agent.runlog import read_log

    started = time.perf_counter()
    log_path = runs / "logs" / f"{task.slug}.jsonl" if log else None
    folder: Path | None = None
    resume = False
    line: dict[str, Any]
    try:
        if log_path is not None:
            if not log_path.parent.is_dir():  # made by the first run: a stat for the others
                log_path.parent.mkdir(parents=True, exist_ok=True)
            if log_path.is_file() and log_path.stat().st_size > 0:
                try:
                    resume = bool(read_log(log_path).messages)
                except TranscriptError:
                    resume = False
                if not resume:
                    _restart_log(log_path)
        folder = _workdir(task, runs, fresh=not resume)
        settings: dict[str, Any] = {"approval": "allow", **(options or {}), **task.limits}
        if task.system is not None:
            settings["system"] = task.system
        agent = Agent(model=model, tools=(tools or task_tools)(task, folder), **settings)
        if resume:
            assert log_path is not None
            result = await agent.aresume(log_path, output=task.output)
        else:
            result = await agent.arun(task.prompt, output=task.output, log=log_path)
    except Exception as exc:
        line = error_line(task, f"{type(exc).__name__}: {exc}")
    else:
        line = {"id": task.given_id, "stop": str(result.stop), "ok": result.ok,
                "answer": result.answer, "turns": result.turns, "usage": _usage(result.usage),
                "error": str(result.error) if result.error is not None else None,
                "notes": list(result.notes)}
        if task.output is not None:
            output: Any = result.output
            line["output"] = output.model_dump() if hasattr(output, "model_dump") else output
    line["seconds"] = round(time.perf_counter() - started, 6)
    line["log"] = str(log_path.resolve()) if log_path is not None else None
    line["workdir"] = str(folder.resolve()) if folder is not None else None
    line["resumed"] = resume
    if task.meta is not None:
        line["meta"] = task.meta
    return line


def error_line(task: BatchTask, error: str) -> dict[str, Any]:
    """The result line of a run that raised instead of ending (``stop`` is ``"error"``)."""
    from toolwire.transcript import Usage

    return {"id": task.given_id, "stop": "error", "ok": False, "answer": "", "turns": 0,
            "usage": _usage(Usage()), "error": error, "notes": [], "seconds": 0.0,
            "log": None, "workdir": None, "resumed": False}


class Bookkeeper:
    """The results file and the progress of one batch, shared by the local and Ray drivers."""

    def __init__(self, tasks: Sequence[BatchTask], out: str | os.PathLike[str],
                 runs: str | os.PathLike[str] | None, *, retry_failed: bool,
                 on_progress: Callable[[BatchProgress], None] | None) -> None:
        self.tasks = list(tasks)
        self.results = ResultsFile(out)
        self.runs = Path(runs) if runs is not None else default_runs_dir(out)
        self.runs.mkdir(parents=True, exist_ok=True)
        self.todo = list(pending(self.tasks, self.results, retry_failed=retry_failed))
        self.progress = BatchProgress(total=len(self.tasks),
                                      skipped=len(self.tasks) - len(self.todo))
        self.on_progress = on_progress
        self.concurrency = 1
        self.tell()

    def tell(self) -> None:
        if self.on_progress is not None:
            self.on_progress(self.progress)

    def started(self) -> None:
        self.progress.running += 1
        self.tell()

    def finished(self, line: Mapping[str, Any]) -> None:
        self.results.append(line)
        self.progress.add(line)
        self.tell()

    def close(self) -> None:
        self.results.close()

    def summary(self) -> BatchSummary:
        p = self.progress
        all_ok = all(bool(self.results.finished.get(t.id, {}).get("ok")) for t in self.tasks)
        return BatchSummary(total=p.total, skipped=p.skipped, done=p.done, failed=p.failed,
                            tokens=p.tokens, seconds=p.seconds, results=self.results.path,
                            runs=self.runs, all_ok=all_ok, cost=p.cost, rounds=p.rounds)


def load_tasks(tasks: str | os.PathLike[str] | Iterable[BatchTask | Mapping[str, Any]]
               ) -> list[BatchTask]:
    """Tasks from a JSONL file path, or from task values or dicts (workdirs read from cwd)."""
    if isinstance(tasks, str | os.PathLike):
        return read_tasks(tasks)
    out: list[BatchTask] = []
    seen: set[str] = set()
    for n, item in enumerate(tasks, start=1):
        task = item if isinstance(item, BatchTask) else parse_task(
            dict(item), f"task #{n}", Path.cwd(), n)
        if task.id in seen:
            raise BatchError(f"task #{n}: id {task.id!r} is used twice; ids must be unique")
        seen.add(task.id)
        out.append(replace(task, line=task.line or n))
    return out


async def run_batch(
    tasks: str | os.PathLike[str] | Iterable[BatchTask | Mapping[str, Any]],
    model: str | Model,
    out: str | os.PathLike[str],
    *,
    concurrency: int = 10,
    runs: str | os.PathLike[str] | None = None,
    tools: ToolsFor | None = None,
    options: Mapping[str, Any] | None = None,
    on_progress: Callable[[BatchProgress], None] | None = None,
    retry_failed: bool = False,
    gate: RateGate | None = None,
    log: bool = True,
    env: Mapping[str, str] | None = None,
) -> BatchSummary:
    """Run every task not yet in ``out``, at most ``concurrency`` at once, appending each
    result line to ``out`` as its run finishes.

    ``model`` is a model id (made into one `toolwire.HttpModel` with the batch's `RateGate` and
    a connection per run in flight, closed at the end) or a model you made and close yourself
    (an `HttpModel` without a gate gets the batch's for the batch's duration).
    ``runs`` holds the run logs and working folders (default `default_runs_dir`). ``tools``
    makes each run's tools (default `task_tools`); ``options`` go to every `toolwire.Agent`.
    ``retry_failed`` also reruns ids whose result says ``error`` or ``provider_error``.
    ``log=False`` writes no run logs (a cut-short run then starts over).
    """
    if concurrency < 1:
        raise BatchError(f"concurrency must be at least 1, got {concurrency}")
    gate = gate or RateGate()
    book = Bookkeeper(load_tasks(tasks), out, runs, retry_failed=retry_failed,
                      on_progress=on_progress)
    owned = isinstance(model, str)
    used: Any = _make_model(model, concurrency, gate, env) if isinstance(model, str) else model
    lent = not owned and getattr(used, "gate", False) is None
    if lent:
        used.gate = gate
    queue = iter(book.todo)

    async def worker() -> None:
        for task in queue:
            book.started()
            line = await run_task(task, used, book.runs, tools=tools, options=options, log=log)
            book.finished(line)

    try:
        with batch_trace(options, len(book.todo)), heap_set_aside():
            workers = [asyncio.create_task(worker())
                       for _ in range(min(concurrency, len(book.todo)))]
            try:
                await asyncio.gather(*workers)
            finally:
                for w in workers:
                    w.cancel()
                # the workers' own ends are results here: only this task's cancellation raises
                await asyncio.gather(*workers, return_exceptions=True)
    finally:
        book.close()
        if lent:
            used.gate = None
        if owned:
            await used.aclose()
    return book.summary()


@contextlib.contextmanager
def heap_set_aside() -> Iterator[None]:
    """Objects made before a batch left out of the collector's passes while it runs (`gc.freeze`:
    many runs in flight make passes frequent), given back after; not if off or frozen already."""
    import gc

    if not gc.isenabled() or gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def batch_trace(options: Mapping[str, Any] | None, size: int
                ) -> contextlib.AbstractContextManager[dict[str, str] | None]:
    """While traced (`toolwire.instrument`, or ``instrument`` in ``options``), a
    ``toolwire.batch`` span, current in the block, whose trace every run started inside joins;
    it gives the span's trace context for runs in other processes. Otherwise nothing."""
    from toolwire.telemetry.settings import for_agent

    telemetry = for_agent((options or {}).get("instrument"))
    if telemetry is None:
        return contextlib.nullcontext()
    from toolwire.telemetry.spans import batch_span

    return batch_span(telemetry, {"toolwire.batch.runs": size})


def _make_model(model_id: str, concurrency: int, gate: RateGate,
                env: Mapping[str, str] | None) -> Model:
    """The batch's model: one connection pool, a connection per run in flight."""
    from toolwire.http.client import model as make
    from toolwire.http.transport import HttpTransport

    return make(model_id, env=env, gate=gate, transport=HttpTransport(max_connections=concurrency))


__all__ = [
    "BatchError",
    "BatchProgress",
    "BatchSummary",
    "BatchTask",
    "RateGate",
    "ResultsFile",
    "batch_trace",
    "default_runs_dir",
    "heap_set_aside",
    "load_tasks",
    "read_tasks",
    "run_batch",
    "run_task",
    "task_tools",
]
