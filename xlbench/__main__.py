"""``python -m xlbench`` is the ``xlbench`` console script (useful from a checkout without it)."""

import sys

from builders.cli import main

sys.exit(main())
