"""The registry of evaluators: ``name -> module``.

Each module defines ``NAME``, ``HELP``, ``EPILOG``, ``add_arguments(parser)``
and ``run(args) -> EvalResult``. Modules import only light dependencies at
top level so building the CLI stays fast.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from evaluators.errors import UsageError, did_you_mean

_TASKS: dict[str, str] = {}


def _register(name: str, module: str) -> None:
    if name in _TASKS:
        raise RuntimeError(f"duplicate evaluator name {name!r}")
    _TASKS[name] = module


for _name, _module in (
    ("word-retrieval", "evaluators.tasks.word_retrieval"),
    ("sentence-retrieval", "evaluators.tasks.sentence_retrieval"),
    ("alignment", "evaluators.tasks.alignment"),
    ("aligners", "evaluators.tasks.aligners"),
    ("embedding-aligner", "evaluators.tasks.embedding_aligner"),
    ("tacc", "evaluators.tasks.tacc"),
    ("bucc", "evaluators.tasks.bucc"),
    ("bitext-retrieval", "evaluators.tasks.bitext_retrieval"),
):
    _register(_name, _module)


def task_names() -> list[str]:
    """Return every registered evaluator name."""
    return list(_TASKS)


def get_task(name: str) -> ModuleType:
    """Import and return an evaluator module.

    Raises:
        UsageError: unknown name; the message suggests close names and lists all.
    """
    if name not in _TASKS:
        raise UsageError(f"Unknown evaluator {name!r}; valid: {', '.join(_TASKS)}.{did_you_mean(name, _TASKS)}")
    return importlib.import_module(_TASKS[name])


def available_tasks() -> dict[str, ModuleType]:
    """Return the evaluator modules that import (skipping ones not yet implemented)."""
    out = {}
    for name, module in _TASKS.items():
        try:
            out[name] = importlib.import_module(module)
        except ModuleNotFoundError as err:
            if err.name != module:
                raise
    return out
