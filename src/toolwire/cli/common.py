"""What every command of the command line shares: exit codes, the help epilog, `UserError`,
`for_people` (text as it can be shown), and the report written when toolwire itself fails.

Exit codes: 0 success; 1 the command ran and found a problem (``check`` found broken rules,
a run ended without an answer); 2 bad usage or input, printed as one line naming what was wrong
and what to do; 3 an internal error (a bug in toolwire), printed as one line naming the file
that holds the full traceback; 4 a run ended because a reply arrived but could not be used (stop
``bad_reply``: a broken server or proxy, not a model that did not finish); 141 the program
reading the output closed it early (``| head``), ended quietly as a process ended by SIGPIPE.
Must not import the commands themselves: they import this.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, EXIT_INTERNAL, EXIT_BAD_REPLY = 0, 1, 2, 3, 4
EXIT_CLOSED_PIPE = 141  # 128 + SIGPIPE, as a shell reports a process that signal ended

EPILOG = """exit codes: 0 success; 1 problems found or the run ended without an answer;
2 bad usage or input (the message says what to fix); 3 an internal error in toolwire (the
message says where its traceback was written); 4 the run ended because a reply could not be
used (stop bad_reply); 141 the output was closed early (as by head), nothing more written."""


def for_people(text: str) -> str:
    """``text`` as it can be printed or written as UTF-8: a lone surrogate (text that is not
    valid Unicode, which a server can send as ``"\\udcff"`` and a run log keeps as it came)
    shows as U+FFFD."""
    if text.isascii():
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class UserError(Exception):
    """A mistake a person must fix; printed as one line, with no traceback."""


def one_line(exc: BaseException) -> str:
    """An exception's message on one line (a message with several lines is joined by ``; ``)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return "; ".join(lines) or type(exc).__name__


def report_crash(command: str | None, exc: BaseException, argv: Sequence[str]) -> int:
    """Write the traceback of an unexpected error to a file, say so in one line, return 3."""
    import platform
    import tempfile
    import traceback

    from toolwire.version import __version__

    name = f"toolwire {command}" if command else "toolwire"
    details = (f"toolwire {__version__}, Python {platform.python_version()}, "
               f"{platform.platform()}\ncommand: toolwire {' '.join(argv)}\n\n"
               + "".join(traceback.format_exception(exc)))
    try:
        handle, path = tempfile.mkstemp(prefix="toolwire-crash-", suffix=".txt")
        with open(handle, "w", encoding="utf-8") as file:
            file.write(details)
        where = f"the full traceback is in {path}"
    except OSError:
        where = "the traceback could not be written to the temporary folder"
    print(f"{name}: internal error ({type(exc).__name__}): this is a bug in toolwire, not in "
          f"what you gave it; {where}. Please report it to toolwire's issue tracker with that "
          "file and the command that caused it.", file=sys.stderr)
    return EXIT_INTERNAL
