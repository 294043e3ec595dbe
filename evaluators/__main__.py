import sys

from evaluators.cli import main

sys.exit(main())
