"""The providers' batch APIs: send many requests as one job, ask how it goes, read its answers.

Owns `BatchApi` (one per API: `OpenAIBatches`, `AnthropicBatches`, `GeminiBatches`),
`JobStatus`, `Answer`, `api_for` (which API a model's endpoint uses) and `unsupported` (why a
provider has none toolwire can drive). The request bodies are the ones the model would send
live, encoded by its codec; this module only carries them:

- OpenAI (Chat Completions and Responses): the requests as a JSONL file uploaded to
  ``/v1/files`` (purpose ``batch``), a job made with ``POST /v1/batches`` naming the file and the
  endpoint, polled with ``GET /v1/batches/{id}``; answers are read from its output file and its
  error file (``GET /v1/files/{id}/content``), one line per request.
- Anthropic Message Batches: ``POST /v1/messages/batches`` with the requests inline,
  ``GET /v1/messages/batches/{id}``, then the JSONL at its ``results_url``.
- Gemini batch mode: ``POST /v1beta/models/{model}:batchGenerateContent`` with the requests
  inline, an operation polled with ``GET /v1beta/batches/{id}`` whose metadata holds the state
  and, once done, the answers inline.

Cancelling is ``POST .../cancel`` (``batches/{id}:cancel`` for Gemini). Must not import the
loop: it speaks HTTP through the model's transport and nothing else.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from toolwire import _json
from toolwire.errors import ProviderError

if TYPE_CHECKING:
    from toolwire.http.client import HttpModel

Kind = Literal["ok", "error", "expired", "cancelled"]
State = Literal["running", "ended", "expired", "cancelled", "failed"]


@dataclass(frozen=True, slots=True)
class Answer:
    """One request's answer in a job: a reply body (``ok``), an error body with its status
    (``error``), or no answer because the job expired or was cancelled first."""

    kind: Kind
    body: Any = None
    status: int = 200


@dataclass(frozen=True, slots=True)
class JobStatus:
    """Where a job stands: ``state``, its request counts, and the provider's own word."""

    state: State
    total: int = 0
    answered: int = 0
    failed: int = 0
    said: str = ""
    problem: str = ""
    """Why a ``failed`` job failed (the provider's validation errors)."""

    @property
    def over(self) -> bool:
        return self.state != "running"


def unsupported(provider: str) -> str | None:
    """Why ``provider`` cannot take ``--provider-batch``, or None when it can."""
    from toolwire.http.providers import get_provider

    spec = get_provider(provider)
    why = spec.no_batch if spec is not None else ""
    if why:
        return (f"--provider-batch does not work with {provider}: {why}; run the batch "
                "without --provider-batch, or use the provider's own API (anthropic:, "
                "openai:, openai-responses:, gemini:)")
    return None


class BatchApi:
    """What every batch API does; the subclasses know their paths and shapes."""

    name = ""
    max_bytes = 100_000_000
    """The request bodies one job may carry, in bytes (under the provider's own limit)."""

    def __init__(self, model: HttpModel) -> None:
        self.model = model
        self.url = model.endpoint.url(stream=False)

    async def _call(self, method: str, url: str, body: Any = None, *,
                    content: bytes | None = None, kind: str | None = None,
                    raw: bool = False) -> Any:
        """One request to the batch API, sent again on a rate limit or a server failure (at
        most four tries); its JSON (or bytes with ``raw``), or the provider's error."""
        from toolwire.http.transport import WireRequest

        headers = self.model.endpoint.headers()
        if kind is not None:
            headers["content-type"] = kind
        if content is None:
            content = b"" if body is None else _json.dumps(body)
        sent = WireRequest(url=url, body={}, headers=headers, method=method, content=content)
        for attempt in range(1, 5):
            try:
                response = await self.model._send(sent)
            except ProviderError as error:
                if not error.retryable or attempt == 4:
                    raise
                await asyncio.sleep(min(error.retry_after or 0.5 * 2 ** attempt, 30.0))
                continue
            data = await response.read()
            return data if raw else _json.loads(data or b"null")
        raise AssertionError("unreachable")

    async def submit(self, items: Sequence[tuple[str, dict[str, Any]]]) -> str:
        raise NotImplementedError

    async def status(self, job: str) -> JobStatus:
        raise NotImplementedError

    async def results(self, job: str) -> dict[str, Answer]:
        raise NotImplementedError

    async def cancel(self, job: str) -> None:
        raise NotImplementedError


def _jsonl(data: bytes) -> list[Any]:
    return [_json.loads(line) for line in data.splitlines() if line.strip()]


class OpenAIBatches(BatchApi):
    """OpenAI's Batch API, for Chat Completions and Responses requests."""

    name = "openai"
    max_bytes = 180_000_000  # the input file may be 200 MB

    def __init__(self, model: HttpModel) -> None:
        super().__init__(model)
        tail = "/responses" if self.url.endswith("/responses") else "/chat/completions"
        self.root = self.url[: -len(tail)]
        self.endpoint = "/v1" + tail

    async def submit(self, items: Sequence[tuple[str, dict[str, Any]]]) -> str:
        lines = b"".join(
            _json.dumps({"custom_id": cid, "method": "POST", "url": self.endpoint,
                         "body": body}) + b"\n" for cid, body in items)
        boundary = uuid.uuid4().hex
        form = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\n"
                f"batch\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
                f"filename=\"requests.jsonl\"\r\nContent-Type: application/jsonl\r\n\r\n"
                ).encode() + lines + f"\r\n--{boundary}--\r\n".encode()
        made = await self._call("POST", self.root + "/files", content=form,
                                kind=f"multipart/form-data; boundary={boundary}")
        job = await self._call("POST", self.root + "/batches", {
            "input_file_id": made["id"], "endpoint": self.endpoint,
            "completion_window": "24h"})
        return str(job["id"])

    async def status(self, job: str) -> JobStatus:
        found = await self._call("GET", f"{self.root}/batches/{job}")
        said = str(found.get("status"))
        counts = found.get("request_counts") or {}
        state: State = {"completed": "ended", "expired": "expired", "cancelled": "cancelled",
                        "failed": "failed"}.get(said, "running")  # type: ignore[assignment]
        errors = (found.get("errors") or {}).get("data") or []
        problem = "; ".join(str(e.get("message")) for e in errors if isinstance(e, dict))
        return JobStatus(state, int(counts.get("total") or 0),
                         int(counts.get("completed") or 0), int(counts.get("failed") or 0),
                         said, problem)

    async def results(self, job: str) -> dict[str, Answer]:
        found = await self._call("GET", f"{self.root}/batches/{job}")
        out: dict[str, Answer] = {}
        for key in ("output_file_id", "error_file_id"):
            if not found.get(key):
                continue
            data = await self._call("GET", f"{self.root}/files/{found[key]}/content", raw=True)
            for line in _jsonl(data):
                out[str(line.get("custom_id"))] = self._answer(line)
        return out

    @staticmethod
    def _answer(line: dict[str, Any]) -> Answer:
        response = line.get("response") or {}
        status = int(response.get("status_code") or 0)
        if response and status == 200:
            return Answer("ok", response.get("body"))
        error = line.get("error") or {}
        code = str(error.get("code") or "")
        if code == "batch_expired":
            return Answer("expired")
        if code == "batch_cancelled":
            return Answer("cancelled")
        if response:
            return Answer("error", response.get("body"), status)
        return Answer("error", {"error": {"message": error.get("message") or "the request "
                                          "failed", "code": code or None}}, 400)

    async def cancel(self, job: str) -> None:
        await self._call("POST", f"{self.root}/batches/{job}/cancel")


_ANTHROPIC_STATUS = {"invalid_request_error": 400, "authentication_error": 401,
                     "permission_error": 403, "not_found_error": 404,
                     "request_too_large": 413, "rate_limit_error": 429, "api_error": 500,
                     "overloaded_error": 529}


class AnthropicBatches(BatchApi):
    """Anthropic's Message Batches API."""

    name = "anthropic"
    max_bytes = 230_000_000  # a batch may be 256 MB

    async def submit(self, items: Sequence[tuple[str, dict[str, Any]]]) -> str:
        made = await self._call("POST", self.url + "/batches", {"requests": [
            {"custom_id": cid, "params": body} for cid, body in items]})
        return str(made["id"])

    async def status(self, job: str) -> JobStatus:
        found = await self._call("GET", f"{self.url}/batches/{job}")
        said = str(found.get("processing_status"))
        counts = found.get("request_counts") or {}
        answered = int(counts.get("succeeded") or 0)
        failed = sum(int(counts.get(k) or 0) for k in ("errored", "canceled", "expired"))
        total = answered + failed + int(counts.get("processing") or 0)
        state: State = "running"
        if said == "ended":  # a job that expired answered nothing: its requests expired
            state = ("cancelled" if found.get("cancel_initiated_at") else
                     "expired" if int(counts.get("expired") or 0) and not answered
                     and not int(counts.get("errored") or 0) else "ended")
        return JobStatus(state, total, answered, failed, said)

    async def results(self, job: str) -> dict[str, Answer]:
        found = await self._call("GET", f"{self.url}/batches/{job}")
        url = found.get("results_url") or f"{self.url}/batches/{job}/results"
        out: dict[str, Answer] = {}
        for line in _jsonl(await self._call("GET", url, raw=True)):
            result = line.get("result") or {}
            kind = result.get("type")
            if kind == "succeeded":
                answer = Answer("ok", result.get("message"))
            elif kind in ("expired", "canceled"):
                answer = Answer("expired" if kind == "expired" else "cancelled")
            else:
                body = result.get("error") or {}
                inner = body.get("error")
                inner = inner if isinstance(inner, dict) else {}
                answer = Answer("error", body, _ANTHROPIC_STATUS.get(str(inner.get("type")),
                                                                     400))
            out[str(line.get("custom_id"))] = answer
        return out

    async def cancel(self, job: str) -> None:
        await self._call("POST", f"{self.url}/batches/{job}/cancel")


_GEMINI_STATES: dict[str, State] = {
    "BATCH_STATE_SUCCEEDED": "ended", "BATCH_STATE_FAILED": "failed",
    "BATCH_STATE_CANCELLED": "cancelled", "BATCH_STATE_EXPIRED": "expired"}


class GeminiBatches(BatchApi):
    """Gemini's batch mode (the Gemini API's ``batchGenerateContent``), requests inline."""

    name = "gemini"
    max_bytes = 18_000_000  # requests sent inline may be 20 MB in all

    def __init__(self, model: HttpModel) -> None:
        super().__init__(model)
        self.create = self.url.replace(":generateContent", ":batchGenerateContent")
        self.root = self.url[: self.url.index("/models/")]

    async def submit(self, items: Sequence[tuple[str, dict[str, Any]]]) -> str:
        made = await self._call("POST", self.create, {"batch": {
            "displayName": "toolwire", "inputConfig": {"requests": {"requests": [
                {"request": body, "metadata": {"key": cid}} for cid, body in items]}}}})
        return str(made["name"])

    async def _get(self, job: str) -> dict[str, Any]:
        found = await self._call("GET", f"{self.root}/{job}")
        return found if isinstance(found, dict) else {}

    async def status(self, job: str) -> JobStatus:
        found = await self._get(job)
        meta = found.get("metadata") or {}
        said = str(meta.get("state"))
        stats = meta.get("batchStats") or {}
        error = found.get("error") or meta.get("error") or {}
        return JobStatus(_GEMINI_STATES.get(said, "running"),
                         int(stats.get("requestCount") or 0),
                         int(stats.get("successfulRequestCount") or 0),
                         int(stats.get("failedRequestCount") or 0), said,
                         str(error.get("message") or ""))

    async def results(self, job: str) -> dict[str, Answer]:
        found = await self._get(job)
        output: dict[str, Any] = ((found.get("metadata") or {}).get("output")
                                  or found.get("response") or {})
        out: dict[str, Answer] = {}
        for item in (output.get("inlinedResponses") or {}).get("inlinedResponses") or []:
            key = str((item.get("metadata") or {}).get("key"))
            if item.get("response") is not None:
                out[key] = Answer("ok", item["response"])
            else:
                error = item.get("error") or {}
                out[key] = Answer("error", {"error": error}, int(error.get("code") or 400))
        return out

    async def cancel(self, job: str) -> None:
        await self._call("POST", f"{self.root}/{job}:cancel")


def api_for(model: HttpModel) -> BatchApi:
    """The batch API ``model``'s requests go through; `BatchError` when it has none."""
    from toolwire.batch.files import BatchError

    why = unsupported(model.endpoint.provider)
    if why is not None:
        raise BatchError(why)
    from toolwire.codecs.registry import get_wire

    kinds: dict[str, type[BatchApi]] = {  # by the path the requests go to when sent live
        "/v1/messages": AnthropicBatches, "/v1/chat/completions": OpenAIBatches,
        "/v1/responses": OpenAIBatches, "/v1beta/models/{model}:generateContent": GeminiBatches}
    kind = kinds.get(get_wire(model.wire).path)
    if kind is None:
        raise BatchError(f"--provider-batch does not work with {model.endpoint.provider}: its "
                         f"wire {model.wire} has no batch API toolwire drives")
    return kind(model)


def describe(status: JobStatus) -> str:
    """The provider's word on a job, for the progress line."""
    return f"{status.answered + status.failed}/{status.total} {status.said}"


__all__ = ["Answer", "AnthropicBatches", "BatchApi", "GeminiBatches", "JobStatus",
           "OpenAIBatches", "api_for", "describe", "unsupported"]
