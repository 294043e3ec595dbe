"""The translator protocol and the offline check every translator module shares."""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Sequence
from typing import Protocol

log = logging.getLogger("xlbench.mt")


class Translator(Protocol):
    """What every translator (MT system) offers (read-only: translators compute some of these as properties)."""

    @property
    def name(self) -> str:
        """Translator name used in cache keys and manifests (``apertium:eng-spa``, ``google``)."""
        ...

    @property
    def version(self) -> str:
        """Pins the translator's behaviour (package + data versions); part of the cache key."""
        ...

    @property
    def pair(self) -> tuple[str, str]:
        """Canonical ``(src, tgt)`` languages."""
        ...

    @property
    def online(self) -> bool:
        """True for translators that need the internet."""
        ...

    def translate_batch(self, texts: Sequence[str]) -> list[str]:
        """Translate ``texts`` in order; one output per input."""
        ...


# --- offline detection ---------------------------------------------------------------


def is_offline(host: str = "translate.google.com", port: int = 443, timeout: float = 1.5) -> bool:
    """Return True when online translators cannot be reached.

    ``XLBENCH_OFFLINE=1`` or ``HF_HUB_OFFLINE=1`` force offline without touching
    the network; otherwise one DNS lookup and TCP connect with a short timeout.
    """
    if os.environ.get("XLBENCH_OFFLINE", "") in ("1", "true", "yes") or os.environ.get(
        "HF_HUB_OFFLINE", ""
    ) in (
        "1",
        "true",
        "yes",
    ):
        return True
    import threading

    result = {"offline": True}

    def probe() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                result["offline"] = False
        except OSError:
            pass

    # DNS lookups ignore the socket timeout, so the probe runs in a daemon thread we stop waiting for.
    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(2 * timeout)
    return result["offline"]
