"""Text someone else wrote, made safe to put on a terminal.

Owns `visible`, `neutral` and `json_safe`. A model, an MCP server or a provider's error body
may hold control characters: a carriage return that moves the cursor back over what was
printed, an escape sequence (CSI, OSC 0 for the window title, OSC 8 for a hyperlink, OSC 52
that writes the clipboard), a bidirectional override that shows text in another order. These
functions write each such character as a visible escape (``\\r``, ``\\x1b``, ``\\u202e``), so
what is on screen is what the text holds, with colour or without. `visible` escapes every one
of them, line ends too (for a prompt about one call, which must show all of it on one line);
`neutral` keeps line ends and tabs (for text meant to be read as lines: the model's answer, a
tool's result); `json_safe` does it for JSON text, in JSON's own escapes.

Imports nothing of toolwire: everything above may use it.
"""

from __future__ import annotations

import re

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

# C0 and C1 controls and DEL; bidirectional marks, embeddings, overrides and isolates; the line
# and paragraph separators; the zero-width characters that hide text between others.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
_CONTROL_BUT_LINES = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control character written as an escape, line ends included."""
    return _CONTROL.sub(_escape, text)


def neutral(text: str) -> str:
    """``text`` with every control character but line ends (``\\n``) and tabs written as an
    escape: no escape sequence, carriage return or direction override reaches the terminal."""
    return _CONTROL_BUT_LINES.sub(_escape, text)


def json_safe(text: str) -> str:
    """JSON text (from `json.dumps`, which escapes C0 controls itself) with every other
    control character in it written as a JSON ``\\uXXXX`` escape: still the same JSON."""
    return _CONTROL_BUT_LINES.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


__all__ = ["json_safe", "neutral", "visible"]
