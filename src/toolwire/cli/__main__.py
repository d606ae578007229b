"""``python -m toolwire.cli``: the same as the ``toolwire`` command."""

import sys

from toolwire.cli.app import main

sys.exit(main())
