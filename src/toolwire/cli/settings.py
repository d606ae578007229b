"""The command line's settings (default model, approval policy, sandbox, colour, the run's
time limit and the bounds on what model servers send): each from its flag, else the
environment, else the config file, else a built-in default; and where it came from.

Owns `SETTINGS`, `config_path`, `read_config`, `mcp_table`, `resolve`, `apply`, `limits` and
`Setting`. The config file is TOML at ``$XDG_CONFIG_HOME/toolwire/config.toml``
(``~/.config/toolwire/config.toml`` when that variable is unset), with top-level keys named as in
`SETTINGS` and an ``[mcp]`` table of MCP servers' credentials (read by `toolwire.mcp.access`);
``TOOLWIRE_CONFIG`` names another file. A file that cannot be read, an unknown key or a value
of the wrong kind is a `UserError` naming the file and the key. Imports only the command line's
`common` and `toolwire.http.limits` (the bounds and their sizes).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolwire.cli.common import UserError
from toolwire.http.limits import Limits, parse_size


@dataclass(frozen=True, slots=True)
class Spec:
    """One setting: its environment variable, the values it takes (None: any text), default."""

    env: str
    choices: tuple[str, ...] | None
    default: str | None
    help: str
    check: Callable[[str], object] | None = None
    """Reads the value (a number, a size), raising `ValueError` for one it does not take."""


def seconds(text: str) -> float:
    """A number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise ValueError(f"must be a number of seconds above 0, got {text!r}")
    return value


def model_form(text: str) -> str:
    """A model id holding nothing no model id holds (a control character, a space, a base
    URL that is not plain ASCII); its provider, model and what the environment must hold for
    them are checked where it is used, naming where it came from."""
    from toolwire.errors import ConfigError
    from toolwire.http.endpoints import check_model_text

    try:
        check_model_text(text)
    except ConfigError as exc:
        raise ValueError(f"is not a model id toolwire takes: {exc}") from None
    return text


_SIZE_HELP = " (bytes, or a number with KiB, MiB or GiB)"


SETTINGS: dict[str, Spec] = {
    "model": Spec("TOOLWIRE_MODEL", None, None, "the model id run and batch use without --model",
                  model_form),
    "approve": Spec("TOOLWIRE_APPROVE", ("ask", "auto", "never", "defer"), "ask",
                    "what run and resume do before a tool that changes things"),
    "sandbox": Spec("TOOLWIRE_SANDBOX", ("auto", "required", "landlock", "off"), "auto",
                    "where run and resume run commands (--sandbox)"),
    "color": Spec("TOOLWIRE_COLOR", ("auto", "always", "never"), "auto",
                  "colour on a terminal (NO_COLOR set: never)"),
    "mcp_read_only": Spec("TOOLWIRE_MCP_READ_ONLY", ("ask", "allow"), "ask",
                          "MCP tools their server marks read-only: through --approve like "
                          "the rest (ask), or run without it (allow)"),
    "max_seconds": Spec("TOOLWIRE_MAX_SECONDS", None, None,
                        "the longest a run may take, in seconds (--max-seconds)", seconds),
    "idle_seconds": Spec("TOOLWIRE_IDLE_SECONDS", None, "300",
                         "how long a stream may send no event before it is ended", seconds),
    "max_body": Spec("TOOLWIRE_MAX_BODY", None, "64MiB",
                     "the most a model server may send for one reply" + _SIZE_HELP, parse_size),
    "max_decoded": Spec("TOOLWIRE_MAX_DECODED", None, "256MiB",
                        "the most one reply may inflate to (gzip, deflate)" + _SIZE_HELP,
                        parse_size),
    "max_line": Spec("TOOLWIRE_MAX_LINE", None, "16MiB",
                     "the longest line of a streamed reply" + _SIZE_HELP, parse_size),
    "max_error_body": Spec("TOOLWIRE_MAX_ERROR_BODY", None, "1MiB",
                           "the most a model server may send with an error" + _SIZE_HELP,
                           parse_size),
}


@dataclass(frozen=True, slots=True)
class Setting:
    """A setting's value in effect and where it came from (a flag, a variable, a file)."""

    name: str
    value: str | None
    source: str


def config_path(env: Mapping[str, str] | None = None) -> Path:
    """Where the config file is looked for."""
    env = os.environ if env is None else env
    if env.get("TOOLWIRE_CONFIG"):
        return Path(env["TOOLWIRE_CONFIG"])
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "toolwire" / "config.toml"


def read_config(path: Path) -> dict[str, str]:
    """The settings in a config file ({} when there is none); its ``[mcp]`` table is
    `mcp_table`'s."""
    found: dict[str, str] = {}
    for key, value in _load(path).items():
        if key == "mcp":
            if not isinstance(value, dict):
                raise UserError(f"the config file {path}: mcp must be a table ([mcp]) of MCP "
                                "servers' settings")
            continue
        if key not in SETTINGS:
            raise UserError(f"the config file {path} has an unknown key {key!r}; the keys are "
                            + ", ".join([*SETTINGS, "[mcp]"]))
        found[key] = _checked(key, value, f"the config file {path}")
    return found


def mcp_table(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The config file's ``[mcp]`` table (servers' credentials: `toolwire.mcp.access`)."""
    path = config_path(env)
    table = _load(path).get("mcp", {})
    if not isinstance(table, dict):
        raise UserError(f"the config file {path}: mcp must be a table ([mcp])")
    return table


def _load(path: Path) -> dict[str, Any]:
    import tomllib

    if not path.exists():
        return {}
    if path.is_dir():
        raise UserError(f"the config file {path} is a folder; make it a TOML file")
    try:
        data = tomllib.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise UserError(f"the config file {path} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"the config file {path} is not valid TOML ({exc})") from None
    except RecursionError:
        raise UserError(f"the config file {path} nests arrays or tables too deep to read; "
                        "its settings are flat keys such as model = \"ID\"") from None
    except OSError as exc:
        raise UserError(f"cannot read the config file {path}: {exc.strerror or exc}") from None
    return data


def _checked(key: str, value: object, where: str) -> str:
    spec = SETTINGS[key]
    if spec.check not in (None, model_form) and isinstance(value, int | float) \
            and not isinstance(value, bool):
        value = str(value)  # a number in the config file
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"{where}: {key} must be a non-empty string, got {value!r}")
    if spec.choices is not None and value not in spec.choices:
        raise UserError(f"{where}: {key} must be one of {', '.join(spec.choices)}, got "
                        f"{value!r}")
    if spec.check is not None:
        try:
            spec.check(value)
        except ValueError as exc:
            raise UserError(f"{where}: {key} {exc}") from None
    return value


def resolve(flags: Mapping[str, str | None], env: Mapping[str, str] | None = None
            ) -> dict[str, Setting]:
    """Every setting in effect: ``flags`` (a flag's value, None when not given) over the
    environment over the config file over the default."""
    env = os.environ if env is None else env
    path = config_path(env)
    config = read_config(path)
    found: dict[str, Setting] = {}
    for name, spec in SETTINGS.items():
        flag = flags.get(name)
        if flag is not None:
            found[name] = Setting(name, flag, f"the --{name} flag")
        elif name == "color" and env.get("NO_COLOR"):
            found[name] = Setting(name, "never", "NO_COLOR")
        elif env.get(spec.env):
            found[name] = Setting(name, _checked(name, env[spec.env], spec.env), spec.env)
        elif name in config:
            found[name] = Setting(name, config[name], f"the config file {path}")
        else:
            found[name] = Setting(name, spec.default, "the default")
    return found


def apply(args: Any) -> dict[str, Setting]:
    """Fill a command's settings not given as flags (its attributes named as in `SETTINGS`
    that are None) from the environment or the config file; refuse a command that takes a
    model and has none. Returns every setting in effect."""
    found = resolve({name: getattr(args, name, None) for name in SETTINGS})
    for name, setting in found.items():
        if hasattr(args, name):
            setattr(args, name, setting.value)
    if hasattr(args, "model") and not getattr(args, "model_source", None):
        args.model_source = found["model"].source.removeprefix("the ").replace(
            "--model flag", "--model")
    if hasattr(args, "model") and not args.model:
        raise UserError("no model: give --model ID, set TOOLWIRE_MODEL, or write model = "
                        f'"ID" in {config_path()}')
    return found


def flag_type(name: str) -> Callable[[str], str]:
    """An argparse type for the flag of setting ``name``: its text, once its check took it."""
    import argparse

    check = SETTINGS[name].check
    assert check is not None

    def checked(text: str) -> str:
        try:
            check(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return text

    return checked


def limits(args: Any) -> Limits:
    """The bounds on what model servers send, from a command's settings (see `apply`)."""
    found = {name: getattr(args, name, None) or SETTINGS[name].default
             for name in ("max_body", "max_decoded", "max_line", "max_error_body")}
    return Limits(**{name: parse_size(str(value)) for name, value in found.items()},
                  idle_seconds=seconds(str(getattr(args, "idle_seconds", None)
                                           or SETTINGS["idle_seconds"].default)))


def max_seconds(args: Any) -> float | None:
    """The run's time limit (``max_seconds``), None when there is none."""
    value = getattr(args, "max_seconds", None)
    return None if value is None else seconds(str(value))
