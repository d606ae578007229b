"""The proxy's live writer for the tests' own ``dialogue-chat`` wire (tests/dialogue_wire.py):
Chat Completions' chunks, its streams being Chat Completions' own, with a comment of its own
first so that a test sees this writer wrote the stream."""

from __future__ import annotations

from toolwire.proxy.writers import ChatWriter

MARK = b": dialogue-chat live\n\n"


class DialogueWriter(ChatWriter):
    def head(self) -> list[bytes]:
        return [MARK, *super().head()]
