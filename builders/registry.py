"""The registry of dataset builders: ``family -> module``.

A builder module defines ``NAME`` (the family), ``HELP``, ``EPILOG``,
``add_arguments(parser)`` and ``run(args) -> BuildResult``; the CLI adds the
common options (``--out``, ``--version``, ``--seed`` ...) and writes the folder.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from evaluators.errors import UsageError, did_you_mean

_BUILDERS: dict[str, str] = {}


def _register(name: str, module: str) -> None:
    if name in _BUILDERS:
        raise RuntimeError(f"duplicate builder name {name!r}")
    _BUILDERS[name] = module


for _name, _module in (
    ("cbd", "builders.cbd.build"),
    ("silver", "builders.silver.build"),
    ("alee", "builders.alee.build"),
    ("bucc", "builders.bucc.build"),
):
    _register(_name, _module)


def builder_names() -> list[str]:
    """Return every registered builder name."""
    return list(_BUILDERS)


def get_builder(name: str) -> ModuleType:
    """Import and return a builder module.

    Raises:
        UsageError: unknown name; the message suggests close names.
    """
    if name not in _BUILDERS:
        raise UsageError(f"Unknown dataset family {name!r}; valid: {', '.join(_BUILDERS)}.{did_you_mean(name, _BUILDERS)}")
    return importlib.import_module(_BUILDERS[name])


def available_builders() -> dict[str, ModuleType]:
    """Return the builder modules that import (skipping ones not yet implemented)."""
    out = {}
    for name, module in _BUILDERS.items():
        try:
            out[name] = importlib.import_module(module)
        except ModuleNotFoundError as err:
            if err.name not in (module, module.rsplit(".", 1)[0]):
                raise
    return out
