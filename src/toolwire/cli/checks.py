"""The command line's checks of what a person gives it, made before a command does anything.

Owns the argparse types (`count`, `positive`, `temperature`, `port`) and the checks of files
to read (`read_text`, `read_json`), media files to attach (`attachment`), paths to write
(`output_path`), folders (`workdir`), ports that must be free (`free_port`), model ids
(`model_id`) and optional extras (`need_extra`). Each failure is a `UserError` naming what was
wrong and what to do. Imports only `common` of the command line, `toolwire.media`, the
library's model-id parser and, when asked for, the event-stream recogniser.
"""

from __future__ import annotations

import argparse
import importlib
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from toolwire import _json
from toolwire.cli.common import UserError
from toolwire.media import Audio, Document, Image, sniff_media_type
from toolwire.transcript import MediaPart

N = TypeVar("N", int, float)

BINARY_SNIFF = 8192
"""How many leading bytes are looked at for a NUL byte, the mark of a binary file."""

EXTRAS = {"mcp": "mcp", "ray": "ray", "uvicorn": "proxy"}
"""An optional import and the toolwire extra that installs it."""


# --------------------------------------------------------------------------- argparse types


def _at_least(parse: Callable[[str], N], low: N, *, above: bool = False
              ) -> Callable[[str], N]:
    """An argparse type: what ``parse`` reads, at least ``low`` (or above it)."""

    def check(text: str) -> N:
        value = parse(text)
        if value < low or (above and value == low):
            raise argparse.ArgumentTypeError(
                f"must be {'above' if above else 'at least'} {low}, got {text}")
        return value

    return check


count = _at_least(lambda text: _int(text), 1)
"""A whole number of at least 1 (``--max-turns``, ``--concurrency``)."""
positive = _at_least(lambda text: _float(text), 0.0, above=True)
"""A number above 0 (``--time-limit`` seconds, CPUs per run)."""
temperature = _at_least(lambda text: _float(text), 0.0)
"""A sampling temperature: a number of 0 or more."""


def port(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free one) to 65535."""
    value = _int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port: give 0 to 65535 (0: any free "
                                         "port)")
    return value


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


# --------------------------------------------------------------------------- files and folders


def _file_bytes(path: str, name: str, wanted: str) -> bytes:
    """The bytes of the file at ``path`` (called ``name``), or a `UserError` saying it does
    not exist, is a folder (give ``wanted``) or cannot be read."""
    file = Path(path)
    if not file.exists():
        raise UserError(f"{name} does not exist; check the path")
    if file.is_dir():
        raise UserError(f"{name} is a folder; give {wanted}")
    try:
        return file.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {name}: {exc.strerror or exc}") from None


def read_text(path: str, what: str = "", *, event_stream: bool = False) -> str:
    """The text of a file a command reads: it must exist, be a file, and be UTF-8 text.

    ``event_stream=True`` also takes a binary AWS event stream (a captured Bedrock stream);
    its text is then ``""``.
    """
    name = f"{what} {path}".strip()
    data = _file_bytes(path, name, "a file")
    if event_stream:
        from toolwire.codecs.eventstream import is_event_stream

        if is_event_stream(data):
            return ""
    if b"\0" in data[:BINARY_SNIFF]:
        raise UserError(f"{name} is a binary file; give a text file (JSON or JSON lines)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{name} is not UTF-8 text (byte {exc.start} cannot be read); save it "
                        "as UTF-8") from None


ATTACHABLE = {"image/png": Image, "image/jpeg": Image, "image/gif": Image,
              "image/webp": Image, "application/pdf": Document, "audio/mpeg": Audio,
              "audio/wav": Audio, "audio/flac": Audio, "audio/ogg": Audio}
"""What ``run --attach`` takes, known by a file's first bytes (not its name)."""


def attachment(path: str, flag: str = "--attach") -> MediaPart:
    """A file to send with the task, as a media part of the type its first bytes show."""
    data = _file_bytes(path, f"{flag} {path}", "an image, PDF or audio file")
    media_type = sniff_media_type(data[:16])
    build = ATTACHABLE.get(media_type or "")
    if build is None:
        raise UserError(f"{flag} {path} is not a file toolwire can attach: its first bytes are "
                        "not those of a PNG, JPEG, GIF or WebP image, a PDF, or MP3, WAV, FLAC "
                        "or Ogg audio")
    return build.from_bytes(data, media_type, name=Path(path).name)


def wire_of(model: str) -> str | None:
    """The wire a model id speaks (None when the id cannot be read here)."""
    from toolwire.errors import ConfigError
    from toolwire.http.endpoints import parse_model_id

    try:
        return parse_model_id(model).wire
    except ConfigError:
        return None


def not_sent(model: str, temperature: float | None) -> list[str]:
    """What the model's wire will not send of the settings given (said at the start of a
    run, so a person does not believe a setting took effect when it did not)."""
    from toolwire.codecs import get_codec
    from toolwire.transcript import Message, Request

    wire = wire_of(model)
    if wire is None or temperature is None:
        return []
    encoded = get_codec(wire).encode(Request(model="m", messages=(Message.user("."),),
                                             temperature=temperature))
    return [f"--temperature is not sent to {model}: {note.detail}" for note in encoded.notes
            if note.subject == "temperature"]


def attachments_fit(parts: list[MediaPart], paths: list[str], wire: str | None,
                    flag: str = "--attach") -> None:
    """Refuse, before anything is written, an attached file the model's wire would refuse
    (a type it does not take, over its size limit), naming the file as it was given."""
    from toolwire.codecs import get_codec
    from toolwire.errors import ConfigError
    from toolwire.transcript import Message, Request, TextPart

    if wire is None or not parts:
        return
    codec = get_codec(wire)
    for part, path in zip(parts, paths, strict=True):
        try:
            codec.encode_request(Request(model="m", messages=(
                Message(role="user", parts=(TextPart(text="."), part)),)))
        except ConfigError as exc:
            detail = str(exc)
            if detail.startswith("messages["):  # where in a request: not what was typed
                detail = detail.partition(": ")[2]
            raise UserError(f"{flag} {path}: {detail}") from None


def read_json(path: str, what: str = "") -> Any:
    """A JSON file's value, read with `read_text`'s checks."""

    text = read_text(path, what)
    try:
        return _json.loads(text)
    except ValueError as exc:
        name = f"{what} {path}".strip()
        raise UserError(f"{name} is not valid JSON ({exc})") from None


def output_path(path: str, flag: str, *, fresh: bool = False) -> Path:
    """A file a command will write: its folder must exist and it must not be a folder.

    ``fresh=True`` also refuses a file that already holds something. Nothing is created.
    """
    file = Path(path)
    if file.is_dir():
        raise UserError(f"{flag} {path} is a folder; give a file path inside it, such as "
                        f"{file / 'out'}")
    folder = file.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise UserError(f"{flag} {path}: the folder {folder} {what}; create it first or give "
                        "another path")
    if fresh and file.exists() and file.stat().st_size > 0:
        hint = f" (a run log there is continued with: toolwire resume {path})" if flag in (
            "--log",) else " (or remove it first)"
        raise UserError(f"{flag} {path} already holds something; give a new path{hint}")
    return file


def workdir(path: str, flag: str = "--workdir") -> Path:
    """An existing folder, resolved."""
    folder = Path(path)
    if not folder.exists():
        raise UserError(f"{flag} {path} does not exist; give an existing folder")
    if not folder.is_dir():
        raise UserError(f"{flag} {path} is a file, not a folder; give an existing folder")
    return folder.resolve()


# --------------------------------------------------------------------------- the rest


def free_port(number: int, flag: str = "--port", host: str = "127.0.0.1") -> None:
    """Refuse a port another program already listens on (0 is always fine)."""
    if number == 0:
        return
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers bind
        try:
            sock.bind((host, number))
        except OSError as exc:
            raise UserError(f"{flag} {number}: cannot listen on {host}:{number} "
                            f"({exc.strerror or exc}); give a free port, or 0 for any") from None


def model_id(value: str, flag: str = "--model", *, keys: bool = False) -> str:
    """A model id whose form is right (its base URL after ``@`` too) and whose settings in the
    environment are there (a cloud id's region, project or resource and credentials); with
    ``keys``, also one whose API key is set. ``flag`` names where the value came from (the
    flag, an environment variable, the config file). Nothing is started or sent."""
    from toolwire.errors import ConfigError
    from toolwire.http.endpoints import PROVIDERS, parse_model_id
    from toolwire.http.providers import guess_provider

    guess = None if ":" in value else guess_provider(value)
    try:
        endpoint = parse_model_id(value)
        if PROVIDERS[endpoint.provider].local_server and "@" not in value:
            from toolwire.http.local import find_model

            find_model(endpoint.model)
    except ConfigError as exc:
        if guess is not None:
            raise UserError(f"{flag}: {value!r} names no provider; write {guess}:{value} "
                            f"({exc})") from None
        if keys or "needs an API key" not in str(exc):
            raise UserError(f"{flag}: {exc}") from None
    return value


def need_package(module: str, feature: str, package: str) -> None:
    """Refuse a feature that needs another project's optional part, with its pip line."""
    try:
        importlib.import_module(module)
    except ImportError:
        raise UserError(f"{feature} needs {package}, which is not installed: "
                        f"pip install '{package}'") from None


def need_extra(module: str, feature: str) -> None:
    """Refuse a feature whose optional dependency is not installed, with the pip line."""
    try:
        importlib.import_module(module)
    except ImportError:
        extra = EXTRAS.get(module, module)
        raise UserError(f"{feature} needs the {extra} extra, which is not installed: "
                        f"pip install 'toolwire[{extra}]'") from None
