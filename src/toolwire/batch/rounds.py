"""A batch sent through the provider's batch API, round by round, at the batch price.

Owns `run_provider_batch` and `Rounds`. Every task runs as an ordinary agent run whose model
is a stand-in (`TaskModel`): its request is encoded as the live request would be, then held.
When every run still going is waiting for the model, the held requests form the next round:
one provider job (more when a round is larger than ``max_requests``), polled every ``poll``
seconds until it ends; each answer is decoded by the model's codec, priced at the batch price
(`toolwire.context.prices.cost_of` with ``batch=True``) and handed back to its run, which runs
its tools here and asks again. A request the provider refused becomes that run's
`toolwire.errors.ProviderError`, as it would live.

The results file holds the jobs: a ``batch_job`` line for each job sent, naming the custom id
of each request in it and the task it belongs to, and one when the job ended. A custom id is
the task's id (made safe) and a digest of the request's body, so a stopped batch, run again,
continues each run from its log, meets the same request, and finds it in a job already sent:
that job is polled, never sent again. A job that expired or was cancelled before answering a
request is sent again once, in a new job; the second time the run gets the error.

``max_wait`` bounds the seconds this call waits on the provider; past it the batch stops (run
it again later to pick the jobs up), or with ``finish_live`` the open jobs are cancelled and
every request from then on is sent live, one at a time. Must not import the command line.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolwire import _json
from toolwire.batch.apis import Answer, BatchApi, JobStatus, api_for, describe, unsupported
from toolwire.batch.files import BatchError, BatchTask
from toolwire.batch.runner import (
    BatchProgress,
    BatchSummary,
    Bookkeeper,
    ToolsFor,
    load_tasks,
    run_task,
)
from toolwire.errors import ProviderError

if TYPE_CHECKING:
    from toolwire.http.client import HttpModel
    from toolwire.transcript import Reply, Request

MAX_REQUESTS = 10_000
"""Requests per job at most (OpenAI takes 50,000, Anthropic 100,000; a smaller job answers
sooner and stays under the upload size limits)."""


def custom_id(task: BatchTask, body: Mapping[str, Any]) -> str:
    """The request's id in a job: the task's id made safe, and a digest of the body."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9_-]", "_", task.slug)
    if len(name) > 40:  # cut short, with a digest of the whole id to keep ids apart
        name = name[:23] + "-" + hashlib.sha256(task.id.encode()).hexdigest()[:16]
    return name + "-" + digest


@dataclass(slots=True)
class Held:
    """A run's request, waiting for its round."""

    task: BatchTask
    request: Request
    body: dict[str, Any]
    reply: asyncio.Future[Reply]
    sent: int = 0
    """Jobs this request went out in (a second expiry or cancellation is final)."""


@dataclass(slots=True)
class Job:
    id: str
    ids: list[str] = field(default_factory=list)
    status: JobStatus | None = None


class Stopped(Exception):
    """The batch stopped waiting for the provider (``max_wait``) and will be picked up later."""


class TaskModel:
    """One run's model: each request goes to the batch's `Rounds` under the run's task."""

    def __init__(self, rounds: Rounds, task: BatchTask) -> None:
        self.rounds = rounds
        self.task = task
        inner = rounds.model
        self.name = inner.name
        self.provider_model = inner.provider_model
        self.endpoint = inner.endpoint
        self.codec = inner.codec
        self.context_window = inner.context_window
        self.media_tokens = inner.media_tokens
        self.telemetry = inner.telemetry

    async def complete(self, request: Request) -> Reply:
        return await self.rounds.ask(self.task, request)


class Rounds:
    """The held requests of a batch, sent round by round; see the module's docstring."""

    def __init__(self, model: HttpModel, book: Bookkeeper, *, poll: float, max_wait: float | None,
                 finish_live: bool, max_requests: int, clock: Callable[[], float]) -> None:
        self.model = model
        self.api: BatchApi = api_for(model)
        self.book = book
        self.poll = poll
        self.max_wait = max_wait
        self.finish_live = finish_live
        self.max_requests = max_requests
        self.clock = clock
        self.waited = 0.0
        self.live = False
        self.active = 0
        self.held: dict[str, Held] = {}
        self.runs: list[asyncio.Task[None]] = []
        self.round: asyncio.Task[None] | None = None
        self.stopped = False
        self.known: dict[str, str] = {}  # custom id -> the job it was sent in
        self.resent: set[str] = set()  # custom ids sent in a second job already
        self.ended: dict[str, str] = {}  # job -> how it ended
        self.answers: dict[str, dict[str, Answer]] = {}  # job -> its answers, once read
        for line in book.results.jobs:
            job = str(line["batch_job"])
            for cid in line.get("requests") or {}:
                if cid in self.known and self.known[cid] != job:
                    self.resent.add(cid)
                self.known[cid] = job
            if isinstance(line.get("ended"), str):
                self.ended[job] = line["ended"]

    # ------------------------------------------------------------------ runs

    async def ask(self, task: BatchTask, request: Request) -> Reply:
        if self.live:
            return await self.model.complete(request)
        prepared, wire = self.model._prepare(request, stream=False)
        body = dict(wire.body)
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self.held[custom_id(task, body)] = Held(task, prepared, body, future)
        self._check()
        return await future

    def finished_one(self) -> None:
        self.active -= 1
        self._check()

    def _check(self) -> None:
        """Send the next round once every run still going waits for the model."""
        if self.held and len(self.held) >= self.active and self.round is None:
            self.round = asyncio.get_running_loop().create_task(self._round())

    async def _round(self) -> None:
        held = {cid: h for cid, h in self.held.items() if not h.reply.done()}  # runs gone
        self.held = {}
        self.book.progress.rounds += 1
        self.book.progress.waiting = len(held)
        self.book.tell()
        try:
            await self._answer(held)
        except Stopped:
            self.stopped = True
            for run in self.runs:
                run.cancel()
        except BaseException as exc:
            for h in held.values():
                if not h.reply.done():
                    h.reply.set_exception(exc if isinstance(exc, Exception) else
                                          BatchError(f"the round was stopped: {exc!r}"))
            if not isinstance(exc, Exception):
                raise
        finally:
            self.round = None
            self.book.progress.waiting = 0
            self.book.tell()
        self._check()

    # ------------------------------------------------------------------ jobs

    async def _answer(self, held: dict[str, Held]) -> None:
        jobs: dict[str, Job] = {}
        fresh: list[str] = []
        for cid, h in held.items():
            known = self.known.get(cid)
            if known is None or self.ended.get(known) in ("expired", "cancelled", "failed"):
                fresh.append(cid)  # new, or its job is over without it: sent (again)
                continue
            h.sent = 2 if cid in self.resent else 1
            jobs.setdefault(known, Job(known)).ids.append(cid)
        for made in await self._send(fresh, held):
            jobs[made.id] = made
        while jobs:
            done = await self._wait(jobs, held)
            if done is None:  # answered live
                return
            again: list[str] = []
            for job in done:
                answers = await self._answers(job)
                for cid in job.ids:
                    answer = answers.get(cid) or self._missing(job)
                    h = held[cid]
                    if answer.kind in ("expired", "cancelled") and h.sent < 2:
                        again.append(cid)
                    else:
                        self._settle(h, answer, job)
                del jobs[job.id]
            for made in await self._send(again, held, resend=True):
                jobs[made.id] = made

    def _missing(self, job: Job) -> Answer:
        how = self.ended.get(job.id, "ended")
        if how in ("expired", "cancelled"):
            return Answer(how)  # type: ignore[arg-type]
        problem = job.status.problem if job.status is not None else ""
        return Answer("error", {"error": {"message": problem or "the provider's job "
                                          f"{job.id} ended without an answer to this request",
                                          "type": "invalid_request_error"}}, 400)

    async def _send(self, ids: list[str], held: dict[str, Held], *, resend: bool = False
                    ) -> list[Job]:
        made: list[Job] = []
        for part in self._parts(ids, held):
            job = await self.api.submit([(cid, held[cid].body) for cid in part])
            line: dict[str, Any] = {"batch_job": job, "api": self.api.name,
                                    "round": self.book.progress.rounds,
                                    "requests": {cid: held[cid].task.given_id for cid in part}}
            if resend:
                line["resent"] = True
            self.book.results.note_job(line)
            for cid in part:
                held[cid].sent += 1
                self.known[cid] = job
                if resend:
                    self.resent.add(cid)
            made.append(Job(job, list(part)))
        return made

    def _parts(self, ids: list[str], held: Mapping[str, Held]) -> list[list[str]]:
        """``ids`` cut into jobs of at most ``max_requests`` requests and the API's bytes."""
        parts: list[list[str]] = []
        size = 0
        for cid in ids:
            bytes_ = len(_json.dumps(held[cid].body))
            if not parts or len(parts[-1]) >= self.max_requests or (
                    size + bytes_ > self.api.max_bytes and parts[-1]):
                parts.append([])
                size = 0
            parts[-1].append(cid)
            size += bytes_
        return parts

    async def _wait(self, jobs: Mapping[str, Job], held: Mapping[str, Held]
                    ) -> list[Job] | None:
        """Poll until at least one job is over: the jobs over, their end noted (None when
        ``max_wait`` passed and the requests were answered live)."""
        while True:
            over: list[Job] = []
            for job in jobs.values():
                if job.id in self.ended:
                    over.append(job)
                    continue
                job.status = await self.api.status(job.id)
                if job.status.over:
                    self.ended[job.id] = job.status.state
                    self.book.results.note_job({"batch_job": job.id,
                                                "ended": job.status.state})
                    over.append(job)
            self.book.progress.provider = "; ".join(
                f"{j.id}: {describe(j.status)}" for j in jobs.values() if j.status is not None)
            self.book.tell()
            if over:
                return over
            if self.max_wait is not None and self.waited >= self.max_wait:
                await self._give_up(jobs, held)
                return None
            started = self.clock()
            await asyncio.sleep(self.poll)
            self.waited += max(0.0, self.clock() - started)

    async def _give_up(self, jobs: Mapping[str, Job], held: Mapping[str, Held]) -> None:
        """``max_wait`` is over: stop, or cancel the jobs and answer their requests live."""
        if not self.finish_live:
            raise Stopped
        self.live = True
        for job in jobs.values():
            with contextlib.suppress(ProviderError):  # it may have ended meanwhile
                await self.api.cancel(job.id)
            self.ended[job.id] = "cancelled"
            self.book.results.note_job({"batch_job": job.id, "ended": "cancelled",
                                        "finished_live": True})
        gate = asyncio.Semaphore(self.book.concurrency)

        async def live(h: Held) -> None:
            async with gate:
                try:
                    h.reply.set_result(await self.model.complete(h.request))
                except Exception as exc:
                    h.reply.set_exception(exc)

        pending = [held[cid] for job in jobs.values() for cid in job.ids]
        await asyncio.gather(*(live(h) for h in pending if not h.reply.done()))

    async def _answers(self, job: Job) -> dict[str, Answer]:
        if job.id not in self.answers:
            self.answers[job.id] = await self.api.results(job.id)
        return self.answers[job.id]

    def _settle(self, h: Held, answer: Answer, job: Job) -> None:
        if h.reply.done():
            return
        try:
            h.reply.set_result(self._reply(h, answer, job))
        except Exception as exc:
            h.reply.set_exception(exc)

    def _reply(self, h: Held, answer: Answer, job: Job) -> Reply:
        from toolwire.context.prices import cost_of
        from toolwire.http.answers import bad_reply, nothing
        from toolwire.http.providers import PROVIDERS
        from toolwire.protocol import holds_nothing
        from toolwire.transcript import replace

        model = self.model
        if answer.kind == "expired" or answer.kind == "cancelled":
            raise ProviderError(
                f"the provider's batch job {job.id} {answer.kind} before answering, and this "
                "request had already been sent once before in another job that "
                f"{answer.kind} too; run the batch again to send it once more",
                wire=model.wire, retryable=False)
        if answer.kind == "error":
            error = model.codec.decode_error(answer.status, answer.body, {})
            if isinstance(error, ProviderError):
                raise error
            raise ProviderError(f"the batch refused the request: {answer.body!r}",
                                status=answer.status, wire=model.wire)
        try:
            reply = model.codec.decode_response(_json.dumps(answer.body), request=h.request)
        except Exception as exc:
            raise bad_reply(model.wire, f"the batch's answer is not a {model.wire} reply",
                            exc) from exc
        if holds_nothing(reply):
            raise nothing(model.codec, model.wire, reply, answer.body, None)
        if reply.usage.cost is None:
            provider = PROVIDERS.get(model.endpoint.provider)
            cost = cost_of(reply.usage, model.endpoint.model,
                           provider.prices if provider is not None else None, batch=True)
            if cost is not None:
                reply = replace(reply, usage=replace(reply.usage, cost=cost))
        return model._priced(reply, h.request)


async def run_provider_batch(
    tasks: str | os.PathLike[str] | Iterable[BatchTask | Mapping[str, Any]],
    model: str | HttpModel,
    out: str | os.PathLike[str],
    *,
    concurrency: int = 10,
    runs: str | os.PathLike[str] | None = None,
    tools: ToolsFor | None = None,
    options: Mapping[str, Any] | None = None,
    on_progress: Callable[[BatchProgress], None] | None = None,
    retry_failed: bool = False,
    log: bool = True,
    env: Mapping[str, str] | None = None,
    poll: float = 30.0,
    max_wait: float | None = None,
    finish_live: bool = False,
    max_requests: int = MAX_REQUESTS,
    clock: Callable[[], float] = time.monotonic,
) -> BatchSummary:
    """Run every task not yet in ``out`` through the provider's batch API (see the module's
    docstring), appending each result line as its run ends; the same arguments as
    `toolwire.batch.run_batch` mean the same, and ``concurrency`` bounds only the requests
    sent live after ``max_wait`` with ``finish_live``. ``poll`` is the seconds between two
    looks at a job, ``clock`` what measures ``max_wait``. A summary whose ``waiting`` is not
    zero stopped at ``max_wait``: run it again to continue."""
    if concurrency < 1:
        raise BatchError(f"concurrency must be at least 1, got {concurrency}")
    if max_requests < 1:
        raise BatchError(f"max_requests must be at least 1, got {max_requests}")
    owned = isinstance(model, str)
    used: HttpModel
    if isinstance(model, str):
        from toolwire.http.client import model as make

        why = unsupported(model.split(":", 1)[0])
        if why is not None:
            raise BatchError(why)
        used = make(model, env=env)
    else:
        used = model
    try:
        api_for(used)
    except BatchError:
        if owned:
            await used.aclose()
        raise
    book = Bookkeeper(load_tasks(tasks), out, runs, retry_failed=retry_failed,
                      on_progress=on_progress)
    book.concurrency = concurrency
    try:
        rounds = Rounds(used, book, poll=poll, max_wait=max_wait, finish_live=finish_live,
                        max_requests=max_requests, clock=clock)
    except BaseException:
        book.close()
        raise

    async def one(task: BatchTask) -> None:
        try:
            line = await run_task(task, TaskModel(rounds, task), book.runs, tools=tools,
                                  options=options, log=log)
            book.finished(line)
        finally:
            rounds.finished_one()

    try:
        rounds.active = len(book.todo)
        for _ in book.todo:
            book.started()
        rounds.runs = [asyncio.create_task(one(t)) for t in book.todo]
        await asyncio.gather(*rounds.runs, return_exceptions=True)
        if rounds.round is not None:  # every run ended (a time limit): none waits for it
            rounds.round.cancel()
            await asyncio.gather(rounds.round, return_exceptions=True)
    finally:
        book.close()
        if owned:
            await used.aclose()
    summary = book.summary()
    if rounds.stopped:
        left = sum(1 for t in book.tasks if t.id not in book.results.finished)
        from dataclasses import replace as copy

        summary = copy(summary, waiting=left)
    return summary


__all__ = ["MAX_REQUESTS", "Rounds", "Stopped", "TaskModel", "custom_id", "run_provider_batch"]
