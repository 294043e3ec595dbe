"""xlbench evaluators: score any model on xlbench datasets.

Light by design: importing this package imports nothing heavy; ``datasets``,
torch and transformers load only when a command or :func:`evaluate` needs them.
``evaluators.evaluate`` is :func:`evaluators.run.runner.evaluate` (imported on first use).
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name in ("evaluate", "run_grid"):
        from evaluators.run import runner

        return getattr(runner, name)
    raise AttributeError(f"module 'evaluators' has no attribute {name!r}")
