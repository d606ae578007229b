"""A batch on a Ray cluster: each run a Ray task, each result streamed back to the driver.

Owns `run_batch_ray` (the driver: the same task file, results file, resume rule and progress as
`toolwire.batch.run_batch`), `run_on_worker` (the Ray task: one run in a worker process),
`GateActor` (the batch's shared backoff, kept by one Ray actor) and `ActorGate` (how a run in a
worker waits on it). Only Ray's own primitives are used: remote functions, one actor,
``ray.wait`` to keep at most ``concurrency`` runs in flight and take results as they finish.
Ray is imported only here, when a Ray batch starts (``pip install "toolwire[ray]"``).

Logs and working folders are written by the worker under the runs folder; a log the driver
cannot see (a worker on another machine without a shared filesystem) is sent back with the
result and written by the driver, so every result line points at a log the driver has.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from toolwire.batch.files import BatchTask, parse_task
from toolwire.batch.runner import (
    BatchProgress,
    BatchSummary,
    Bookkeeper,
    batch_trace,
    error_line,
    load_tasks,
    run_task,
)
from toolwire.errors import ConfigError


class GateActor:
    """The batch's backoff deadline, in the actor's own clock (no clock is shared between
    machines: callers ask how long is left)."""

    def __init__(self) -> None:
        self._until = 0.0

    def remaining(self) -> float:
        return max(0.0, self._until - time.monotonic())

    def backoff(self, seconds: float) -> None:
        self._until = max(self._until, time.monotonic() + max(0.0, seconds))


class ActorGate:
    """The `toolwire.http.client.Gate` a run in a worker uses: it asks the batch's `GateActor`."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    async def wait(self) -> None:
        while (remaining := float(await self.actor.remaining.remote())) > 0:
            await asyncio.sleep(remaining)

    def backoff(self, seconds: float) -> None:
        self.actor.backoff.remote(seconds)


def run_on_worker(task: dict[str, Any], model_id: str, runs: str, options: dict[str, Any],
                  gate: Any, log: bool, trace: dict[str, Any] | None = None
                  ) -> tuple[dict[str, Any], bytes | None]:
    """One run, as a Ray task: its result line and its log's bytes.

    ``trace`` (from a traced batch: the batch span's trace context and whether content is
    captured) makes the run a child of the batch's span, traced in this worker."""
    if trace is not None:
        with _worker_trace(trace, options):
            return run_on_worker(task, model_id, runs, options, gate, log)
    from toolwire.http.client import model as make

    parsed = parse_task(task, f"task {task.get('id')!r}")

    async def go() -> dict[str, Any]:
        used = make(model_id, gate=ActorGate(gate) if gate is not None else None)
        try:
            return await run_task(parsed, used, Path(runs), options=options, log=log)
        finally:
            await used.aclose()

    line = asyncio.run(go())
    data = Path(line["log"]).read_bytes() if line.get("log") else None
    return line, data


_exporting: Any = None
"""The exporting a worker process set up for the first traced run it got, kept for the next."""


@contextlib.contextmanager
def _worker_trace(trace: dict[str, Any], options: dict[str, Any]) -> Iterator[None]:
    """Trace the runs started in the block under the batch's span. A worker with no tracer
    provider of its own exports like the driver (the ``OTEL_*`` variables come along) and
    sends its spans before the Ray task ends."""
    from toolwire.telemetry.export import export_wanted, start_exporting
    from toolwire.telemetry.settings import make
    from toolwire.telemetry.spans import remote_parent

    global _exporting
    if _exporting is None and export_wanted():
        _exporting = start_exporting()  # None when the worker has a provider of its own
    options["instrument"] = make(capture_content=bool(trace.get("capture_content")))
    try:
        with remote_parent(trace["context"]):
            yield
    finally:
        if _exporting is not None:
            _exporting.flush()


def _key_env(model_id: str) -> dict[str, str]:
    """The environment variables a worker needs for ``model_id`` (its API key, Ollama host)."""
    from toolwire.http.endpoints import PROVIDERS, parse_model_id
    from toolwire.http.providers import host_vars

    endpoint = parse_model_id(model_id, os.environ)  # a missing key fails here, before Ray
    names = (*PROVIDERS[endpoint.provider].key_vars, *host_vars())
    found = {name: os.environ[name] for name in names if name in os.environ}
    found.update((k, v) for k, v in os.environ.items() if k.startswith("OTEL_"))
    return found


def _captures(options: Mapping[str, Any] | None) -> bool:
    """Whether the batch's runs capture content (its `toolwire.telemetry.settings`)."""
    from toolwire.telemetry.settings import for_agent

    telemetry = for_agent((options or {}).get("instrument"))
    return bool(telemetry is not None and telemetry.capture_content)


def _keep_log(line: Mapping[str, Any], data: bytes | None) -> None:
    path = line.get("log")
    if path and data is not None and not Path(path).exists():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_bytes(data)


def run_batch_ray(
    tasks: str | os.PathLike[str] | Iterable[BatchTask | Mapping[str, Any]],
    model_id: str,
    out: str | os.PathLike[str],
    *,
    address: str | None = None,
    concurrency: int = 10,
    runs: str | os.PathLike[str] | None = None,
    options: Mapping[str, Any] | None = None,
    on_progress: Callable[[BatchProgress], None] | None = None,
    retry_failed: bool = False,
    cpus_per_run: float = 1.0,
    num_cpus: int | None = None,
    log: bool = True,
) -> BatchSummary:
    """`toolwire.batch.run_batch` on Ray: ``address`` of a running cluster, or None to start a
    local Ray instance (with ``num_cpus`` CPUs, default all) for this batch only.

    Each run is one Ray task asking for ``cpus_per_run`` CPUs (runs mostly wait on the
    network, so a fraction lets more run per CPU). The model is made per run from
    ``model_id``; one `GateActor` gives every run the same backoff. Blocks until done.
    """
    try:
        ray: Any = importlib.import_module("ray")
    except ImportError:
        raise ConfigError('a Ray batch needs Ray: pip install "toolwire[ray]"') from None
    env = _key_env(model_id)
    book = Bookkeeper(load_tasks(tasks), out, runs, retry_failed=retry_failed,
                      on_progress=on_progress)
    ours = not ray.is_initialized()
    if ours:
        settings: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address:
            settings.update(address=address, runtime_env={"env_vars": env})
        elif num_cpus is not None:
            settings["num_cpus"] = num_cpus
        ray.init(**settings)
    try:
        gate = ray.remote(num_cpus=0)(GateActor).remote()
        remote = ray.remote(run_on_worker).options(num_cpus=cpus_per_run)
        folder = str(book.runs.resolve())
        todo = iter(book.todo)
        inflight: dict[Any, BatchTask] = {}
        run_options = {k: v for k, v in (options or {}).items() if k != "instrument"}
        with batch_trace(options, len(book.todo)) as carrier:
            trace = None if carrier is None else {
                "context": carrier, "capture_content": _captures(options)}
            while True:
                while len(inflight) < concurrency and (task := next(todo, None)) is not None:
                    ref = remote.remote(task.to_dict(), model_id, folder, dict(run_options),
                                        gate, log, trace)
                    inflight[ref] = task
                    book.started()
                if not inflight:
                    break
                ready, _ = ray.wait(list(inflight), num_returns=1)
                for ref in ready:
                    task = inflight.pop(ref)
                    try:
                        line, data = ray.get(ref)
                    except ray.exceptions.RayError as exc:
                        line, data = error_line(task, f"the Ray task failed: {exc}"), None
                    _keep_log(line, data)
                    book.finished(line)
    finally:
        book.close()
        if ours:
            ray.shutdown()
    return book.summary()


__all__ = ["ActorGate", "GateActor", "run_batch_ray", "run_on_worker"]
