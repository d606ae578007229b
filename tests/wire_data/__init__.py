"""Each wire's test data in one place: a module per wire, ``tests/wire_data/<wire>.py`` (the
wire's name with ``_`` for ``-``), so that a test looping over the wire registry reads what it
needs of a wire here instead of keeping a table of its own. A wire added later adds its module
here, and the looping tests pick it up with no edit (`looped` is every registered wire).

What a module holds (each test reads the names it needs):

- ``MODEL_ID``: a model id of the wire's usual provider, as a user writes it;
- ``HISTORY_KEY``: the body field that holds the conversation;
- ``CACHES_PROMPTS``: the emulator reports cached input tokens for the wire's provider;
- ``IMAGE_TOKENS``: what a 1000 x 1000 picture counts as on the wire (its billing rule);
- ``REPLY_CALL_IDS``: the emulator's replies on the wire keep the call ids a reply was given;
- ``MEDIA_MODEL``, ``MEDIA_MOVED``, ``result_image(body)``: the model a tool's image is sent
  to, whether the image leaves the result for it (with a ``media_moved`` note), and where the
  next request's body carries it;
- ``MEDIA_CARRIED``: the kinds of media the wire carries in a user message; ``MEDIA_NAMES``:
  whether it sends a document's name; ``MEDIA_NOTES``: the kinds of the notes encoding a user's
  image and PDF and a tool's image gives (for ``MEDIA_MODEL``);
- ``REASONING``: the wire's own reasoning block (as its codec keeps it in ``provider_data``),
  with `THOUGHT` as its text.
- ``SECRET_REASONING``: the wire's reasoning as it sends it, with `SECRET` in its
  provider-only fields, and ``LOOKUPS_REASONING`` its reasoning "Two lookups at once." as
  it sends it; ``TEXT_ARGUMENTS``: its calls carry their arguments as text (they
  decode with ``raw_arguments`` kept); ``tool_names(body)``: where a request body names tools
  (the tool list, the tool choice, the calls, the results);
- ``USAGE_TEXT``: how a reply's JSON text gives 10 input tokens; ``KEEPS_UNKNOWN_FIELDS``:
  the codec keeps a reply's fields it does not know whole; ``ERROR_AS_REPLY``: error bodies
  saying "slow down" that came with a 200, and ``ERROR_NAMES_KIND`` whether they name a rate
  limit;
- ``SETTINGS``: a request with settings of the wire's own, and their names (kept to the same
  wire, named as lost to another); ``ALWAYS_SENT``: body keys the wire always sends with a
  value of its own;
- ``CACHE_MARKERS_TAKEN``: the wire takes Anthropic's prompt-cache markers (as its own);
  ``SDK_ANY_OF``: its SDK's types take ``anyOf`` in a tool's property;
- ``SDK_BODY``: a request as the wire's SDK shapes it (system text, a tool, a call and its
  result), which tests/test_three_way_rule.py adds fields of a client's own to;
- ``STREAM_QUERY``: what a client adds to the wire's stream path; ``PROXY_BODY``: a request
  with spacing and key order no encoder of toolwire's would choose (None where the proxy is
  not checked byte for byte), and ``PROXY_ENV`` what the proxy needs in its environment to
  reach the wire's provider;

Run the suite with ``TOOLWIRE_TEST_WIRES=module[,module]`` and each module's ``RECORD`` is
registered before the tests are collected (tests/conftest.py), which is how
tests/test_wire_data.py shows that the looping tests take a new wire up.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from toolwire.codecs.registry import wire_names

THOUGHT = "The user wants the weather; ask the tool."
"""The text of every wire's `REASONING` block."""

SECRET = "s3cr3t-provider-payload-7f1c"
"""What every wire's `SECRET_REASONING` holds in its provider-only fields."""


def looped() -> tuple[str, ...]:
    """The wires a looping test runs for: every registered wire, built in or added."""
    return wire_names()


def data(wire: str) -> ModuleType:
    """The test data module of ``wire``."""
    return importlib.import_module(f"wire_data.{wire.replace('-', '_')}")


def table(name: str) -> dict[str, Any]:
    """``name`` of every registered wire's data, by wire."""
    return {wire: getattr(data(wire), name) for wire in looped()}


__all__ = ["SECRET", "THOUGHT", "data", "looped", "table"]
