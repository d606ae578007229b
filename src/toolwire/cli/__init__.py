"""The ``toolwire`` command line: `main` parses the arguments and runs one command.

``app`` builds the parser and holds the small commands (explain, convert, check, emulate);
``run`` the agent commands (run, resume, demo); ``batch`` the batch command; ``common`` the
exit codes and `UserError` they share. Thin: every command is a few library calls. Nothing
else in toolwire imports this package.
"""

from toolwire.cli.app import main

__all__ = ["main"]
