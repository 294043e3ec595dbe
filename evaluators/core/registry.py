"""One generic registry: ``name -> "module:attribute"``, imported only when asked for.

Families (builders), evaluators (tasks) and model kinds (encoders) are all
registered here the same way, so listing them never imports a heavy module and
an unknown name always gets the same "did you mean" sentence.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from evaluators.core.errors import UsageError, did_you_mean


@dataclass(frozen=True)
class Entry:
    """One registered name.

    Attributes:
        name: the name users type.
        target: ``"module"`` or ``"module:attribute"`` to import on demand.
        help: one line for listings (``xlbench list``, the README tables).
        extra: free-form facts shown in listings (e.g. the dataset family of a task).
    """

    name: str
    target: str
    help: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class Registry:
    """Names of one kind (e.g. ``"evaluator"``) mapped to lazily imported targets."""

    def __init__(self, kind: str, option: str | None = None):
        """Create an empty registry; ``option`` (e.g. ``--model``) is named in error messages."""
        self.kind = kind
        self.option = option
        self._entries: dict[str, Entry] = {}

    def register(self, name: str, target: str, help: str = "", **extra: Any) -> None:
        """Add ``name``; a duplicate is a programming error."""
        if name in self._entries:
            raise RuntimeError(f"duplicate {self.kind} name {name!r}")
        self._entries[name] = Entry(name, target, help, dict(extra))

    def names(self) -> list[str]:
        """Return every registered name, in registration order."""
        return list(self._entries)

    def entries(self) -> list[Entry]:
        """Return every entry, in registration order."""
        return list(self._entries.values())

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def entry(self, name: str) -> Entry:
        """Return the entry of ``name``.

        Raises:
            UsageError: unknown name; the message suggests close names and lists all.
        """
        if not isinstance(name, str) or name not in self._entries:
            where = f" ({self.option})" if self.option else ""
            close = did_you_mean(name, self._entries) if isinstance(name, str) else ""
            raise UsageError(
                f"Unknown {self.kind} {name!r}{where}; valid: {', '.join(self._entries)}.{close}"
            )
        return self._entries[name]

    def load(self, name: str) -> Any:
        """Import and return the target of ``name`` (a module, or its attribute)."""
        module, _, attr = self.entry(name).target.partition(":")
        mod = importlib.import_module(module)
        return getattr(mod, attr) if attr else mod

    def available(self) -> dict[str, Any]:
        """Return ``name -> target`` for every entry whose module imports (skipping unimplemented ones)."""
        out = {}
        for name, entry in self._entries.items():
            module = entry.target.partition(":")[0]
            try:
                out[name] = self.load(name)
            except ModuleNotFoundError as err:
                if err.name not in (module, module.rsplit(".", 1)[0]):
                    raise
        return out

    def markdown(
        self, headers: tuple[str, ...] = ("name", "what"), keys: tuple[str, ...] = ()
    ) -> str:
        """Render the registry as a Markdown table (``name``, ``help``, then ``extra[key]`` per key)."""
        lines = [
            "| " + " | ".join(headers) + " |",
            "| " + " | ".join("---" for _ in headers) + " |",
        ]
        for e in self._entries.values():
            cells = [f"`{e.name}`", e.help, *(str(e.extra.get(k, "")) for k in keys)]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)
