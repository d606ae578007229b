"""What every command of the command line shares: exit codes, the help epilog, `UserError`.

Must not import the commands themselves: they import this.
"""

from __future__ import annotations

EXIT_OK, EXIT_PROBLEM, EXIT_USAGE = 0, 1, 2

EPILOG = """exit codes: 0 success; 1 problems found or the run ended without an answer;
2 bad usage or input (the message says what to fix)."""


class UserError(Exception):
    """A mistake a person must fix; printed as one line, with no traceback."""
