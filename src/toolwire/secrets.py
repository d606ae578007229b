"""Secrets: which environment variables hold them, and the one function that takes them out of text.

Owns `is_secret_name` (a variable named like a key, token or password), `known_secrets` (the
values a run knows: provider keys and cloud credentials in the environment, the values the
process was told to keep (`remember`: an MCP server's bearer token or OAuth tokens), plus any
given),
`Redactor`, `StreamRedactor`, `redact_json` and `redact`. Every tool result passes through a
`Redactor` before it reaches the model, the run log or ``explain``; cassettes use the same one
before they are written, OpenTelemetry content capture before anything goes on a span, the run
log before each line (`redact_json`: the task, the model's text, provider errors; a part the
provider signed is kept as it came, since it must go back unchanged), and the terminal before
anything is shown (`StreamRedactor` for text that arrives in pieces). A value
is replaced by ``[redacted: NAME]``, NAME being the variable it came from; well-known credential
shapes (Anthropic and OpenAI keys, Google API keys and OAuth tokens, AWS secret keys and session
tokens written as ``name = value``, Azure account keys in connection strings) are replaced even
when no variable holds them, by ``[redacted: <kind>]``.

Imports nothing of toolwire: everything above may use it.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping
from typing import Any

PROVIDER_KEY_VARS = (
    "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY",
    "GOOGLE_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AZURE_OPENAI_API_KEY",
    "AZURE_API_KEY", "AZURE_CLIENT_SECRET", "GOOGLE_OAUTH_ACCESS_TOKEN",
)
"""Variables whose values are always secret, whatever the naming rule below says."""

_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL",
                 "AUTH", "COOKIE", "PRIVATE", "SIGNATURE")
MIN_SECRET_LENGTH = 8
"""Shorter values are not redacted: replacing every "1" or "true" would garble output."""

_SHAPES: tuple[tuple[str, str], ...] = (
    ("Anthropic key", r"sk-ant-[A-Za-z0-9_\-]{20,}"),
    ("OpenAI key", r"sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{32,}"),
    ("Google API key", r"AIza[0-9A-Za-z_\-]{35}"),
    ("Google OAuth token", r"ya29\.[0-9A-Za-z_\-.]{20,}"),
    ("AWS secret", r"(?i:(?<=aws_secret_access_key)(\s*[=:]\s*[\"']?)[A-Za-z0-9/+=]{20,})"),
    ("AWS session token", r"(?i:(?<=aws_session_token)(\s*[=:]\s*[\"']?)[A-Za-z0-9/+=]{20,})"),
    ("Azure account key", r"(?i:(?<=AccountKey=)[A-Za-z0-9/+=]{20,})"),
)
"""Well-known credential shapes: a kind and its pattern (a group, if any, is kept: the text
between a name and its value)."""
_SHAPE_MIN = 20
"""No shape matches fewer characters."""
_SHAPE_NEEDLES: tuple[tuple[bytes, bool], ...] = (
    (b"sk-ant-", False), (b"sk-", False), (b"AIza", False), (b"ya29.", False),
    (b"aws_secret_access_key", True), (b"aws_session_token", True), (b"accountkey=", True),
)
"""For each shape, in its order, text that every match of it (or the name it follows) holds
as it is in JSON, and whether that text is to be found in any case (then it is written in
lower case): a line holding none of them and none of the known values cannot match."""
assert len(_SHAPE_NEEDLES) == len(_SHAPES), "every shape needs its needle"
_PLAIN_NEEDLES: tuple[tuple[int, bytes], ...] = (
    (ord("-"), b"sk-"), (ord("z"), b"AIza"), (ord("2"), b"ya29."))
"""The needles found as they are ("sk-" covers "sk-ant-"), each after a byte of it that JSON
text of conversations seldom holds: a line without that byte cannot hold the needle, and a
look for one byte is far quicker than a look for the needle."""
_ANY_CASE_NEEDLES: tuple[tuple[int, int, bytes], ...] = (
    (ord("w"), ord("W"), b"aws_se"), (ord("="), ord("="), b"accountkey="))
"""The needles found in any case (written in lower case; ``aws_se`` starts both AWS names),
each after a byte of it that such text seldom holds, in lower and in upper case."""


def _either_case(name: str) -> str:
    """``name`` in any case, written so that each alternative starts with one plain
    character: a search then skips ahead to the characters a match can start with."""
    first, rest = name[0], name[1:]
    return f"{first.lower()}(?i:{rest})|{first.upper()}(?i:{rest})"


_SHAPE_PROBE = "|".join(shape if "(?<=" not in shape else  # the name such a shape follows
                        _either_case(shape.split("(?<=", 1)[1].split(")", 1)[0])
                        for _, shape in _SHAPES)
"""What every match of a shape holds as it is in JSON text: the shapes made of characters JSON
writes as they are, and the names the others follow."""
_JSON_PLAIN = re.compile(r'[ !#-\[\]-~]*\Z')
"""Printable ASCII but for the quote and the backslash: what JSON writes as it is in a string."""


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a key, token or password."""
    upper = name.upper()
    return upper in PROVIDER_KEY_VARS or any(word in upper for word in _SECRET_WORDS)


def known_secrets(env: Mapping[str, str] | None = None,
                  given: Mapping[str, str] | Iterable[str] = ()) -> dict[str, str]:
    """Secret value -> the name to show for it: the secret-named variables of ``env`` (the
    process environment by default) and the ``given`` values (a mapping of name to value, or
    bare values, shown as "secret")."""
    env = os.environ if env is None else env
    found: dict[str, str] = dict(_REMEMBERED)
    pairs = given.items() if isinstance(given, Mapping) else (("secret", v) for v in given)
    for name, value in pairs:
        if len(value) >= MIN_SECRET_LENGTH:
            found.setdefault(value, name)
    for name, value in env.items():
        if is_secret_name(name) and len(value) >= MIN_SECRET_LENGTH:
            found.setdefault(value, name)
    return found


class Redactor:
    """Replaces known secret values, and well-known credential shapes, in text.

    The values are those of `known_secrets` (``env``, the process environment by default, read
    once when the redactor is made, plus ``secrets``). Every value and shape is one pattern,
    so text is read once, and text too short to hold any of them is not read at all;
    `Redactor.shared` gives the one made from the process environment, made again only when
    the environment changes."""

    __slots__ = ("_names", "_needles", "_pattern", "_probe", "_shortest", "_values",
                 "secrets")

    def __init__(self, env: Mapping[str, str] | None = None,
                 secrets: Mapping[str, str] | Iterable[str] = ()) -> None:
        self.secrets = known_secrets(env, secrets)
        # longest first, so a key that contains another is replaced whole
        self._values = sorted(self.secrets, key=len, reverse=True)
        alternatives = [f"({re.escape(v)})" for v in self._values]
        self._names: list[tuple[str, bool]] = [(f"[redacted: {self.secrets[v]}]", False)
                                               for v in self._values]
        for kind, shape in _SHAPES:
            kept = shape.count("(") - shape.count("(?") > 0
            alternatives.append(f"({shape})")
            self._names.append((f"[redacted: {kind}]", kept))
            if kept:
                self._names.append(("", False))  # the kept group's own number
        self._pattern = re.compile("|".join(alternatives))
        self._shortest = min([_SHAPE_MIN, *map(len, self._values)])
        self._probe: re.Pattern[bytes] | None = None
        self._needles = _PLAIN_NEEDLES
        if all(_JSON_PLAIN.match(v) for v in self._values):
            needles = [v.encode("ascii") for v in self._values]
            self._needles += tuple((n[-1], n) for n in needles)  # after its last byte
            self._probe = re.compile("|".join([*map(re.escape, self._values), _SHAPE_PROBE]
                                              ).encode("ascii"))

    @classmethod
    def shared(cls) -> Redactor:
        """The redactor of the process environment (no secrets given), kept while the
        environment stays as it was: while the mapping behind `os.environ` is the one it was
        made from and that mapping's change tag (`_change_tag`) is the same, nothing in it can
        have changed; else the mapping is compared with a copy taken then."""
        data = getattr(os.environ, "_data", None)
        data = dict(os.environ) if data is None else data
        kept = _SHARED[0]
        if kept is not None and kept[2] == len(_REMEMBERED):
            tag = kept[4]
            if kept[3] is data and tag is not None and tag.value == kept[5]:
                return kept[1]
            if kept[0] == data:
                return kept[1]
        tag = _change_tag(data)
        seen = None if tag is None else tag.value  # read before the copy: a change after it
        made = cls()  # shows as a new tag
        _SHARED[0] = (dict(data), made, len(_REMEMBERED), data, tag, seen)
        return made

    def _replace(self, match: re.Match[str]) -> str:
        index = match.lastindex or 1  # the alternative that matched: its group closes last
        shown, kept = self._names[index - 1]
        return (match.group(index + 1) or "") + shown if kept else shown

    def __call__(self, text: str) -> str:
        if len(text) < self._shortest:
            return text
        return self._pattern.sub(self._replace, text)

    def misses(self, line: bytes) -> bool:
        """Whether this redactor surely replaces nothing in any string of the JSON text
        ``line`` (one search of the whole text). True means `redact_json` would give the same
        value back; False, that it may not (a string or a key holds a secret or looks like
        one, or a known value holds a character JSON escapes)."""
        probe = self._probe
        if probe is None:
            return False
        # plain searches first, each far quicker than the probe, and before each a look for
        # one byte of its text (`in` with a number: far quicker again); `partition`, not `in`,
        # for the text (`in` first tries it as a number, and makes and drops an error each
        # time), nor `find` (which parses its arguments): its middle part is the text if found
        for mark, needle in self._needles:
            if mark in line and line.partition(needle)[1]:
                return probe.search(line) is None
        lowered = None
        for lower, upper, needle in _ANY_CASE_NEEDLES:
            if lower in line or upper in line:
                if lowered is None:
                    lowered = line.lower()
                if lowered.partition(needle)[1]:
                    return probe.search(line) is None
        return True


_SHARED: list[tuple[dict[Any, Any], Redactor, int, dict[Any, Any], Any, int | None] | None] = [
    None]
"""The process environment as `Redactor.shared` last read it (a copy), the redactor made of it,
how many values were remembered then, the mapping itself, its change tag and the tag's value
then."""

_TAGGED: list[bool] = []
"""Whether this interpreter's dicts carry a change tag `_change_tag` can read (empty: not yet
checked)."""


def _change_tag(data: dict[Any, Any]) -> Any:
    """A live view of CPython's version tag of the dict ``data`` (``ma_version_tag``: a number
    the interpreter sets anew, from a counter of its own, at every change of a dict's keys or
    values, and never otherwise), or None where there is none that behaves so: the first call
    changes a dict of its own in every way (a key added, its value replaced, the key popped,
    the dict updated and cleared) and reads it in between, and the tag must move at each
    change and stay at each read."""
    if not _TAGGED:
        if sys.implementation.name != "cpython":  # where id() need not be an address
            _TAGGED.append(False)
            return None
        try:
            import ctypes  # noqa: F401  (`_tag_view` reads through it)
        except ImportError:  # an interpreter without ctypes
            _TAGGED.append(False)
            return None
        probe: dict[Any, Any] = {}
        view, moved = _tag_view(probe), []
        for step, args in ((probe.get, (0,)), (probe.__setitem__, (0, 1)),
                           (probe.__setitem__, (0, 2)), (probe.get, (0,)), (probe.pop, (0,)),
                           (probe.update, ({0: 3},)), (probe.clear, ())):
            before = view.value
            step(*args)
            moved.append(view.value != before)
        _TAGGED.append(moved == [False, True, True, False, True, True, True])
    return _tag_view(data) if _TAGGED[0] else None


def _tag_view(data: dict[Any, Any]) -> Any:
    """The 64 bits after a dict's header and its size: CPython's ``ma_version_tag``. The view
    holds no reference: whoever keeps it keeps ``data`` too (`_SHARED` does)."""
    import ctypes

    return ctypes.c_uint64.from_address(id(data) + object.__basicsize__
                                        + ctypes.sizeof(ctypes.c_ssize_t))


_REMEMBERED: dict[str, str] = {}
"""Secret value -> name: what `remember` was given, redacted by every `Redactor` made after."""


def remember(value: str | None, name: str) -> None:
    """Keep ``value`` secret from now on in this process: every `Redactor` made afterwards
    (`Redactor.shared` too) replaces it by ``[redacted: NAME]``. For secrets that reach
    toolwire other than through the environment (a flag, a config file, a token an
    authorization server issued). Values shorter than `MIN_SECRET_LENGTH` are ignored."""
    if value and len(value) >= MIN_SECRET_LENGTH and value not in _REMEMBERED:
        _REMEMBERED[value] = name

_KEY_CHARS = re.compile(r"[A-Za-z0-9_\-/+=.]*\Z")
HOLD = 512
"""The most characters `StreamRedactor` holds back while waiting for the end of a word."""


class StreamRedactor:
    """Redacts text that arrives in pieces (a streamed reply), so that a secret split across
    pieces is still found: the end of what came so far that may be the start of a secret (a
    run of the characters keys are made of, or the start of a known value) is held back until
    the next piece, or `flush`, shows where it ends."""

    __slots__ = ("_held", "redact")

    def __init__(self, redact: Redactor) -> None:
        self.redact = redact
        self._held = ""

    def feed(self, text: str) -> str:
        """What of ``self._held + text`` can be shown now, redacted."""
        text = self._held + text
        for value in self.redact._values:  # whole known values first: the cut never splits one
            if value in text:
                text = text.replace(value, f"[redacted: {self.redact.secrets[value]}]")
        hold = len(_KEY_CHARS.search(text).group())  # type: ignore[union-attr]
        for value in self.redact.secrets:
            for size in range(min(len(value) - 1, len(text)), hold, -1):
                if text.endswith(value[:size]):
                    hold = size
                    break
        hold = min(hold, HOLD)
        cut = len(text) - hold
        self._held = text[cut:]
        return self.redact(text[:cut]) if cut else ""

    def flush(self) -> str:
        """What was held back, redacted: the text has ended."""
        held, self._held = self._held, ""
        return self.redact(held) if held else ""


def redact_json(value: Any, redact: Redactor) -> Any:
    """A JSON value with every string in it redacted, except in an object that holds
    ``provider_data`` (a part the provider signed or will check: it must go back to it
    exactly as it came) or ``media_type`` (media: its data is not text). Keys stay as they
    are."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        if value.get("provider_data") is not None or "media_type" in value:
            return value
        return {k: redact_json(v, redact) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_json(v, redact) for v in value]
    return value


def redact(text: str, secrets: Mapping[str, str] | Iterable[str] = ()) -> str:
    """``text`` with the secrets of the environment and ``secrets`` replaced (see the module
    docstring); make one `Redactor` to redact many texts."""
    return (Redactor(None, secrets) if secrets else Redactor.shared())(text)


__all__ = ["HOLD", "MIN_SECRET_LENGTH", "PROVIDER_KEY_VARS", "Redactor", "StreamRedactor",
           "is_secret_name", "known_secrets", "redact", "redact_json", "remember"]
