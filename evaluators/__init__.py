"""xlbench evaluators: score any model on xlbench datasets.

Light by design: importing this package imports nothing heavy; ``datasets``,
torch and transformers load only when a command or an evaluation needs them.
The Python API is :mod:`xlbench` (``xlbench.evaluate``, ``xlbench.run_grid``); this
``__init__`` holds only the version, so that any module can import it without an
import cycle (``tests/test_import_cycles.py``).
"""

from __future__ import annotations

__version__ = "0.1.0"
