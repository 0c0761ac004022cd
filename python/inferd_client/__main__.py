"""`python -m inferd_client ...` runs inferd-cli."""

import sys

from .cli import main

sys.exit(main())
