"""gemini-interactions: a canonical `Request` as an interactions body.

Owns `encode` (a canonical `Request` as the body ``POST /v1beta/interactions`` takes: the model,
``system_instruction``, ``input`` as typed steps, function tools, ``generation_config`` and
``store``, with a `Note` for every change made to fit); reading a body back and checking a raw
one are `inbound`'s.

The server keeps a conversation when asked (``store``, which it does by default): toolwire
always sends ``store`` itself, false unless ``provider_options["gemini-interactions"]["store"]``
is true, and always holds the whole transcript. With ``store`` on, a request continues from
the last stored interaction in the history (``previous_interaction_id``, and only the messages
after that interaction's reply as ``input``); the codec setting ``"_continue": false`` sends
the whole transcript instead. Pure; imports only the transcript, `toolwire.codecs.base` and
this wire's folder (`input_steps`), `parts` and `schema`; must not import the wire's reply or
stream modules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.codecs.base import Encoded, Note, own_options
from toolwire.codecs.gemini_interactions.parts import (
    INTERACTION,
    WIRE,
    StepEncoder,
    name_map,
    own,
)
from toolwire.codecs.gemini_interactions.schema import (
    encode_choice,
    encode_tools,
)
from toolwire.transcript import Message, Request

READ = frozenset({"model", "input", "system_instruction", "tools", "stream", "store"})
CONFIG_READ = frozenset({"max_output_tokens", "temperature", "tool_choice"})


def stored_from(messages: Sequence[Message]) -> tuple[int, str] | None:
    """The last assistant message that came from a stored interaction, and that id."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        entry = own(message.provider_data) if message.role == "assistant" else None
        if entry and isinstance(entry.get(INTERACTION), str) and entry[INTERACTION]:
            return index, entry[INTERACTION]
    return None


def encode(request: Request) -> Encoded:
    """The request body the API documents, and a note for every change made to fit it."""
    notes: list[Note] = []
    names = name_map(request.tools)
    notes.extend(names.notes())
    extra = own_options(request.provider_options, WIRE, notes)
    settings = {k: extra.pop(k) for k in list(extra) if k.startswith("_")}
    store = extra.pop("store", False) is True
    messages = request.messages
    body: dict[str, Any] = {"model": request.model}
    stored = stored_from(messages) if store and settings.get("_continue", True) else None
    if stored is not None and "previous_interaction_id" not in extra:
        body["previous_interaction_id"] = stored[1]
        messages = messages[stored[0] + 1:]
    encoder = StepEncoder(names, [t.name for t in request.tools], notes)
    steps = [step for n, m in enumerate(messages) for step in encoder.message(m, n)]
    body["input"] = steps
    if request.system is not None:
        body["system_instruction"] = request.system
    tools = encode_tools(request.tools, names, notes)
    more = extra.pop("tools", None)
    if isinstance(more, list):
        tools.extend(more)
    if tools:
        body["tools"] = tools
    config: dict[str, Any] = {}
    given = extra.pop("generation_config", None)
    if isinstance(given, Mapping):
        config.update(given)
    if request.max_tokens is not None:
        config["max_output_tokens"] = request.max_tokens
    if request.temperature is not None:
        config["temperature"] = request.temperature
    choice = encode_choice(request.tool_choice, names, notes)
    if choice is not None:
        config["tool_choice"] = choice
    if config:
        body["generation_config"] = config
    if request.stream:
        body["stream"] = True
    body["store"] = store  # the prompt cache is the server's own: Request.cache asks nothing
    body.update(extra)
    return Encoded(body=body, notes=tuple(notes))


# --------------------------------------------------------------------------- decode
