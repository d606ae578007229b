"""The providers' batch APIs, played by the emulator on a clock the caller controls.

Owns `BatchJobs`: OpenAI's files and batches (``/v1/files``, ``/v1/batches``), Anthropic's
Message Batches (``/v1/messages/batches``) and Gemini's batch mode
(``/v1beta/models/{model}:batchGenerateContent``, ``/v1beta/batches/{id}``, under ``/v1`` as
well), with their
uploads, jobs, polling, results files, per-request errors, expiry and cancellation. A job's
requests are answered, when it is ready, by the emulator itself, each as if it had been sent
live (the same checks, script and billing), so a refused request becomes that request's error
in the results. Nothing waits in real time: a job is ready ``latency`` seconds of ``clock``
after it was made (``latencies`` gives the next jobs their own), and expires when ``window``
seconds pass first; ``refusals`` makes the next jobs fail as a whole, as a provider refuses a
job it cannot take. ``submitted`` counts the jobs made, ``requests`` the requests in them.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from toolwire._json import dumps, loads
from toolwire.codecs.registry import ANTHROPIC_MESSAGES, GEMINI_GENERATE, OPENAI_CHAT
from toolwire.emulator._http import HttpRequest, HttpResponse
from toolwire.emulator.checks import error_body

Handler = Callable[[HttpRequest], Awaitable[HttpResponse]]

_GEMINI_JOB = re.compile(r"^/v1(?:beta)?/(batches/[^/:]+)(:cancel)?$")
_CUSTOM_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_OPENAI_STATUS = {"running": "in_progress", "ended": "completed", "expired": "expired",
                  "cancelled": "cancelled", "failed": "failed"}
_GEMINI_STATE = {"running": "BATCH_STATE_RUNNING", "ended": "BATCH_STATE_SUCCEEDED",
                 "expired": "BATCH_STATE_EXPIRED", "cancelled": "BATCH_STATE_CANCELLED",
                 "failed": "BATCH_STATE_FAILED"}


@dataclass(slots=True)
class EmulatedJob:
    """One job: its requests ``(custom id, path, body)``, and once over, their answers
    ``custom id -> (status, body)`` (a request never answered is missing)."""

    id: str
    api: str
    items: list[tuple[str, str, Any]]
    made: float
    ready_at: float
    expires_at: float
    endpoint: str = ""
    model: str = ""
    state: str = "running"
    cancelling: bool = False
    answers: dict[str, tuple[int, Any]] = field(default_factory=dict)
    problems: list[dict[str, Any]] = field(default_factory=list)
    """Why the provider refused the job as a whole (it then answers nothing)."""
    files: tuple[str, str] = ("", "")


class BatchJobs:
    """The emulator's batch jobs; see the module's docstring."""

    def __init__(self, handle: Handler, clock: Callable[[], float] = time.monotonic) -> None:
        self.handle = handle
        self.clock = clock
        self.latency = 0.0
        self.latencies: list[float] = []
        self.refusals: list[str] = []
        """The next jobs are refused as a whole, each with the next of these reasons."""
        self.window = 24 * 3600.0
        self.submitted = 0
        self.requests = 0
        self.jobs: dict[str, EmulatedJob] = {}
        self.files: dict[str, bytes] = {}
        self._ids = itertools.count(1)
        self.base = "http://127.0.0.1"

    def _new(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):06d}"

    def _job(self, api: str, prefix: str, items: list[tuple[str, str, Any]]) -> EmulatedJob:
        now = self.clock()
        latency = self.latencies.pop(0) if self.latencies else self.latency
        job = EmulatedJob(self._new(prefix), api, items, now, now + latency, now + self.window)
        if self.refusals:
            job.state = "failed"
            job.problems = [{"code": "invalid_request", "message": self.refusals.pop(0)}]
        self.jobs[job.id] = job
        self.submitted += 1
        self.requests += len(items)
        return job

    def cancel(self, job_id: str) -> None:
        """Cancel a job, as its owner could from elsewhere (its requests go unanswered)."""
        self.jobs[job_id].cancelling = True

    async def _advance(self, job: EmulatedJob) -> None:
        if job.state != "running":
            return
        now = self.clock()
        if job.cancelling:
            job.state = "cancelled"
        elif now >= job.ready_at and job.ready_at < job.expires_at:
            for cid, path, body in job.items:
                job.answers[cid] = await self._answer(path, body)
            job.state = "ended"
        elif now >= job.expires_at:
            job.state = "expired"

    async def _answer(self, path: str, body: Any) -> tuple[int, Any]:
        if isinstance(body, dict) and body.get("stream"):
            return 400, {"error": {"message": "a batched request cannot stream",
                                   "type": "invalid_request_error"}}
        got = await self.handle(HttpRequest("POST", path, {}, {"content-type":
                                                               "application/json"},
                                            dumps(body)))
        return got.status, loads(got.body or b"null")

    # ------------------------------------------------------------------ routing

    async def route(self, http: HttpRequest) -> HttpResponse | None:
        """The answer to a batch API request, or None when ``http`` is not one."""
        path, method = http.path, http.method
        self.base = "http://" + http.headers.get("host", "127.0.0.1")
        named = _GEMINI_JOB.match(path)
        if (named and named.group(1) in self.jobs) or path.endswith(":batchGenerateContent"):
            return await self._gemini(method, path, http)
        if path.startswith("/v1/files") or path.startswith("/v1/batches"):
            return await self._openai(method, path, http)
        if path.startswith("/v1/messages/batches"):
            return await self._anthropic(method, path, http)
        if named:
            return _json(404, error_body(GEMINI_GENERATE.name, 404, f"no batch at {path}"))
        return None

    # ------------------------------------------------------------------ OpenAI

    async def _openai(self, method: str, path: str, http: HttpRequest) -> HttpResponse:
        wire = OPENAI_CHAT.name
        if method == "POST" and path == "/v1/files":
            data = _multipart_file(http)
            if data is None:
                return _json(400, error_body(wire, 400, "upload a file as multipart/form-data "
                                                        "with purpose=batch"))
            file_id = self._new("file-")
            self.files[file_id] = data
            return _json(200, {"id": file_id, "object": "file", "bytes": len(data),
                               "purpose": "batch", "filename": "requests.jsonl",
                               "created_at": int(time.time())})
        if method == "GET" and path.startswith("/v1/files/") and path.endswith("/content"):
            data = self.files.get(path.split("/")[3])
            if data is None:
                return _json(404, error_body(wire, 404, f"no file at {path}"))
            return HttpResponse(200, {"content-type": "application/jsonl"}, body=data)
        if method == "POST" and path == "/v1/batches":
            return self._openai_create(loads(http.body or b"{}"))
        parts = path.split("/")
        found = self.jobs.get(parts[3]) if len(parts) > 3 else None
        if found is None or found.api != "openai":
            return _json(404, error_body(wire, 404, f"no batch at {path}"))
        if method == "POST" and len(parts) == 5 and parts[4] == "cancel":
            found.cancelling = True
        await self._advance(found)
        return _json(200, self._openai_view(found))

    def _openai_create(self, body: Any) -> HttpResponse:
        wire = OPENAI_CHAT.name
        data = self.files.get(str(body.get("input_file_id")))
        endpoint = str(body.get("endpoint"))
        if data is None:
            return _json(400, error_body(wire, 400, "input_file_id names no uploaded file"))
        if endpoint not in ("/v1/chat/completions", "/v1/responses"):
            return _json(400, error_body(wire, 400, f"endpoint {endpoint} takes no batches"))
        items: list[tuple[str, str, Any]] = []
        problems: list[dict[str, Any]] = []
        seen: set[str] = set()
        for n, raw in enumerate(data.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                line = loads(raw)
                cid = str(line["custom_id"])
                ok = line.get("method") == "POST" and line.get("url") == endpoint
            except Exception:
                problems.append({"code": "invalid_json_line", "line": n,
                                 "message": f"line {n} is not a request line"})
                continue
            if not ok or cid in seen:
                problems.append({"code": "invalid_request", "line": n, "message":
                                 f"line {n}: custom_id must be unique and url must be "
                                 f"{endpoint}"})
            seen.add(cid)
            items.append((cid, endpoint, line.get("body")))
        job = self._job("openai", "batch_", items)
        job.endpoint = endpoint
        if problems:
            job.state, job.problems = "failed", problems
        return _json(200, self._openai_view(job))

    def _openai_view(self, job: EmulatedJob) -> dict[str, Any]:
        if job.state != "running" and job.state != "failed" and not job.files[0]:
            out: list[dict[str, Any]] = []
            err: list[dict[str, Any]] = []
            for cid, _, _ in job.items:
                if cid in job.answers:
                    status, body = job.answers[cid]
                    line = {"id": self._new("batch_req_"), "custom_id": cid, "response": {
                        "status_code": status, "request_id": self._new("req_"), "body": body},
                        "error": None}
                    (out if status == 200 else err).append(line)
                else:
                    code = "batch_expired" if job.state == "expired" else "batch_cancelled"
                    err.append({"id": self._new("batch_req_"), "custom_id": cid,
                                "response": None, "error": {"code": code, "message":
                                                            f"the batch was {job.state}"}})
            job.files = (self._file(out), self._file(err))
        failed = sum(1 for s, _ in job.answers.values() if s != 200)
        return {
            "id": job.id, "object": "batch", "endpoint": job.endpoint,
            "completion_window": "24h", "status": _OPENAI_STATUS[job.state],
            "input_file_id": "", "output_file_id": job.files[0] or None,
            "error_file_id": job.files[1] or None, "created_at": int(job.made),
            "expires_at": int(job.expires_at),
            "errors": {"object": "list", "data": job.problems} if job.problems else None,
            "request_counts": {"total": len(job.items), "completed": len(job.answers) - failed,
                               "failed": failed + (len(job.items) - len(job.answers)
                                                   if job.state != "running" else 0)}}

    def _file(self, lines: list[dict[str, Any]]) -> str:
        if not lines:
            return ""
        file_id = self._new("file-")
        self.files[file_id] = b"".join(dumps(x) + b"\n" for x in lines)
        return file_id

    # ------------------------------------------------------------------ Anthropic

    async def _anthropic(self, method: str, path: str, http: HttpRequest) -> HttpResponse:
        wire = ANTHROPIC_MESSAGES.name
        if method == "POST" and path == "/v1/messages/batches":
            body = loads(http.body or b"{}")
            requests = body.get("requests") if isinstance(body, dict) else None
            if not isinstance(requests, list) or not requests:
                return _json(400, error_body(wire, 400, "requests: a list of at least one"))
            ids = [str(r.get("custom_id")) for r in requests if isinstance(r, dict)]
            if len(set(ids)) != len(requests) or not all(map(_CUSTOM_ID.match, ids)):
                return _json(400, error_body(wire, 400, "each custom_id must be unique and "
                                             "match ^[a-zA-Z0-9_-]{1,64}$"))
            if self.refusals:  # Anthropic checks a batch when it is made
                return _json(400, error_body(wire, 400, self.refusals.pop(0)))
            job = self._job("anthropic", "msgbatch_", [
                (str(r["custom_id"]), "/v1/messages", r.get("params")) for r in requests])
            return _json(200, self._anthropic_view(job))
        parts = path.split("/")
        found = self.jobs.get(parts[4]) if len(parts) > 4 else None
        if found is None or found.api != "anthropic":
            return _json(404, error_body(wire, 404, f"no message batch at {path}"))
        job = found
        tail = parts[5] if len(parts) > 5 else ""
        if method == "POST" and tail == "cancel":
            job.cancelling = True
        await self._advance(job)
        if tail == "results":
            if job.state == "running":
                return _json(400, error_body(wire, 400, f"batch {job.id} is still in "
                                             "progress: no results yet"))
            return HttpResponse(200, {"content-type": "application/binary"},
                                body=b"".join(dumps(x) + b"\n" for x in self._results(job)))
        return _json(200, self._anthropic_view(job))

    def _results(self, job: EmulatedJob) -> list[dict[str, Any]]:
        out = []
        for cid, _, _ in job.items:
            if cid not in job.answers:
                kind = "expired" if job.state == "expired" else "canceled"
                out.append({"custom_id": cid, "result": {"type": kind}})
                continue
            status, body = job.answers[cid]
            result = ({"type": "succeeded", "message": body} if status == 200
                      else {"type": "errored", "error": body})
            out.append({"custom_id": cid, "result": result})
        return out

    def _anthropic_view(self, job: EmulatedJob) -> dict[str, Any]:
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if job.state == "running":
            counts["processing"] = len(job.items)
        else:
            for line in self._results(job):
                kind = line["result"]["type"]
                counts[kind if kind != "canceled" else "canceled"] += 1
        over = job.state != "running"
        return {"id": job.id, "type": "message_batch",
                "processing_status": "ended" if over else
                ("canceling" if job.cancelling else "in_progress"),
                "request_counts": counts, "created_at": _iso(job.made),
                "expires_at": _iso(job.expires_at), "archived_at": None,
                "ended_at": _iso(self.clock()) if over else None,
                "cancel_initiated_at": _iso(job.made) if job.cancelling else None,
                "results_url": f"{self.base}/v1/messages/batches/{job.id}/results"
                if over else None}

    # ------------------------------------------------------------------ Gemini

    async def _gemini(self, method: str, path: str, http: HttpRequest) -> HttpResponse:
        wire = GEMINI_GENERATE.name
        if method == "POST" and path.endswith(":batchGenerateContent"):
            model = path.split("/models/", 1)[-1].removesuffix(":batchGenerateContent")
            body = loads(http.body or b"{}")
            config = ((body.get("batch") or {}).get("inputConfig") or {}) if isinstance(
                body, dict) else {}
            requests = (config.get("requests") or {}).get("requests")
            if not isinstance(requests, list) or not requests:
                return _json(400, error_body(wire, 400, "batch.inputConfig.requests.requests "
                                             "must list at least one request"))
            job = self._job("gemini", "batches/", [
                (str((r.get("metadata") or {}).get("key", n)),
                 f"{GEMINI_GENERATE.path.replace('{model}', model)}", r.get("request"))
                for n, r in enumerate(requests)])
            job.model = model
            return _json(200, self._gemini_view(job))
        named = _GEMINI_JOB.match(path)
        cancel = bool(named and named.group(2))
        found = self.jobs.get(named.group(1)) if named else None
        if found is None or found.api != "gemini":
            return _json(404, error_body(wire, 404, f"no batch at {path}"))
        job = found
        if method == "POST" and cancel:
            job.cancelling = True
            return _json(200, {})
        await self._advance(job)
        return _json(200, self._gemini_view(job))

    def _gemini_view(self, job: EmulatedJob) -> dict[str, Any]:
        ok = sum(1 for s, _ in job.answers.values() if s == 200)
        meta: dict[str, Any] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main."
                     "GenerateContentBatch",
            "model": f"models/{job.model}", "displayName": "toolwire",
            "state": _GEMINI_STATE[job.state], "createTime": _iso(job.made),
            "batchStats": {"requestCount": str(len(job.items)),
                           "successfulRequestCount": str(ok),
                           "failedRequestCount": str(len(job.answers) - ok),
                           "pendingRequestCount": str(len(job.items) - len(job.answers))}}
        view: dict[str, Any] = {"name": job.id, "metadata": meta, "done": job.state != "running"}
        if job.problems:
            view["error"] = {"code": 400, "message": job.problems[0]["message"]}
        if job.state == "ended":
            items = []
            for cid, _, _ in job.items:
                status, body = job.answers[cid]
                item: dict[str, Any] = {"metadata": {"key": cid}}
                if status == 200:
                    item["response"] = body
                else:
                    item["error"] = (body or {}).get("error") or {"code": status}
                items.append(item)
            meta["output"] = {"inlinedResponses": {"inlinedResponses": items}}
        return view


def _multipart_file(http: HttpRequest) -> bytes | None:
    """The ``file`` part of a multipart/form-data body, or None."""
    kind = http.headers.get("content-type", "")
    if "boundary=" not in kind:
        return None
    boundary = b"--" + kind.split("boundary=", 1)[1].strip('"').encode()
    for part in http.body.split(boundary):
        head, sep, data = part.partition(b"\r\n\r\n")
        if sep and b'name="file"' in head:
            return data[:-2] if data.endswith(b"\r\n") else data
    return None


def _iso(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(max(0.0, seconds)))


def _json(status: int, body: Any) -> HttpResponse:
    return HttpResponse(status, {"content-type": "application/json"}, body=dumps(body))


__all__ = ["BatchJobs", "EmulatedJob"]
