"""``python -m toolwire``: the ``toolwire`` command (`toolwire.cli.main`). Imports only that."""

import sys

from toolwire.cli import main

sys.exit(main())
