"""The live writer for the Gemini Interactions wire (`toolwire.proxy.live.Writer`):
`InteractionsWriter`, which the wire's record names (``live_writer``) for
`toolwire.proxy.live.writer_for`.

The events are the ones the wire's codec streams (`toolwire.codecs.gemini_interactions.stream`):
``interaction.created``, then a step per text run, per piece of reasoning and per call
(``step.start``, its ``step.delta``s, ``step.stop``, each step stopped when the next starts),
then the whole reply's ``interaction.completed``. Every event carries an ``event_id`` of this
stream's own, numbered in order, so that a client taking the stream up again after a break can
say where it stopped.

Must not import: the server.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from toolwire.codecs import get_codec
from toolwire.proxy.answers import Answer
from toolwire.proxy.live import Writer
from toolwire.proxy.live import dumps as _dumps
from toolwire.transcript import Reply, Request


class InteractionsWriter(Writer):
    """Gemini Interactions: a step per text run, per reasoning run and per call between
    ``interaction.created`` and the whole reply's ``interaction.completed``."""

    ID_PREFIX = "v1_"

    def __init__(self, wire: str, request: Request) -> None:
        super().__init__(wire, request)
        self.seq = itertools.count(1)
        self.index = -1
        self.open: str | None = None

    def _event(self, kind: str, **fields: Any) -> bytes:
        payload = {"event_type": kind, **fields, "event_id": f"evt_{next(self.seq)}"}
        return f"event: {kind}\ndata: {_dumps(payload)}\n\n".encode()

    def _start(self, kind: str, step: dict[str, Any]) -> list[bytes]:
        out = self.close()
        self.index += 1
        self.open = kind
        return [*out, self._event("step.start", index=self.index, step=step)]

    def _delta(self, delta: dict[str, Any]) -> bytes:
        return self._event("step.delta", index=self.index, delta=delta)

    def head(self) -> list[bytes]:
        return [self._event("interaction.created", interaction={
            "id": self.reply_id, "model": self.request.model, "status": "in_progress"})]

    def text(self, text: str) -> list[bytes]:
        out = [] if self.open == "text" else self._start("text", {"type": "model_output"})
        return [*out, self._delta({"type": "text", "text": text})]

    def reasoning(self, text: str) -> list[bytes]:
        out = [] if self.open == "thought" else self._start("thought", {"type": "thought"})
        return [*out, self._delta({"type": "thought_summary",
                                   "content": {"type": "text", "text": text}})]

    def call(self, position: int, call_id: str, name: str) -> list[bytes]:
        return self._start(f"call{position}", {"type": "function_call", "id": call_id,
                                               "name": name, "arguments": {}})

    def arguments(self, position: int, fragment: str) -> list[bytes]:
        if self.open != f"call{position}":  # calls stream one after another in this wire
            return []
        return [self._delta({"type": "arguments_delta", "arguments": fragment})]

    def close(self) -> list[bytes]:
        if self.open is None:
            return []
        self.open = None
        return [self._event("step.stop", index=self.index)]

    def block(self, block: dict[str, Any], *, readable: bool) -> list[bytes]:
        if block.get("type") != "thought":
            return []
        out = self._start("sealed", {"type": "thought"})
        if readable:
            for said in block.get("summary") or ():
                if isinstance(said, dict) and said.get("type") == "text" and said.get("text"):
                    out.append(self._delta({"type": "thought_summary", "content": said}))
        if block.get("signature"):
            out.append(self._delta({"type": "thought_signature",
                                    "signature": block["signature"]}))
        return [*out, *self.close()]

    def finish(self, reply: Reply) -> list[bytes]:
        """What is open stopped, the sealed reasoning, then ``interaction.completed`` with the
        whole reply's status and usage (its steps are the ones streamed)."""
        final = get_codec(self.wire).encode_response(reply, request=self.request)
        done = {k: v for k, v in final.items() if k != "steps"}
        return [*self.close(), *self.sealed_blocks(reply),
                self._event("interaction.completed", interaction=done)]

    def failed(self, error: Answer) -> list[bytes]:
        found = json.loads(error[2]).get("error")
        said = found if isinstance(found, dict) else {}
        code = said.get("status") or said.get("code")
        return [self._event("error", error={"code": str(code or "INTERNAL"),
                                            "message": str(said.get("message") or "")})]


__all__ = ["InteractionsWriter"]
