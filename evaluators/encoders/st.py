"""sentence-transformers model folders (``st:<path>``), read without the sentence-transformers package.

The folder's ``modules.json`` lists a Transformer (token states come from it, as with
``hf:``), a Pooling module (``1_Pooling/config.json``: mean, CLS or max), optional
Dense layers and an optional Normalize. ``pooling="model"`` runs that whole head, so
the vectors are the ones ``SentenceTransformer.encode`` gives (normalised when the
folder says so); ``mean``/``cls`` stay available at every layer. ``max_seq_length``
from ``sentence_bert_config.json`` and the ``prompts`` of
``config_sentence_transformers.json`` are honoured.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from evaluators.core.errors import EngineUnavailableError, InputFileError, UsageError, truncate
from evaluators.encoders.hf import HFEncoder, folder_hash

_ACTIVATIONS = {
    "Tanh": np.tanh,
    "Identity": lambda x: x,
    "ReLU": lambda x: np.maximum(x, 0),
    "Sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
}


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise InputFileError(
            f"Cannot read {path} ({exc}); the sentence-transformers folder looks damaged."
        ) from exc


def pooling_mode(config: dict) -> str:
    """Return the single pooling mode of a ``1_Pooling/config.json``.

    >>> pooling_mode({"pooling_mode_mean_tokens": True, "pooling_mode_cls_token": False})
    'mean'

    Raises:
        EngineUnavailableError: a mode we do not implement, or several at once.
    """
    known = {
        "pooling_mode_cls_token": "cls",
        "pooling_mode_mean_tokens": "mean",
        "pooling_mode_max_tokens": "max",
    }
    on = [k for k, v in config.items() if k.startswith("pooling_mode") and v is True]
    if len(on) != 1 or on[0] not in known:
        raise EngineUnavailableError(
            f"Pooling {', '.join(on) or 'none'} is not supported (one of mean, CLS or max tokens is); "
            "use pooling='mean' or 'cls' explicitly."
        )
    return known[on[0]]


def _load_dense(folder: Path):
    config = _read_json(folder / "config.json")
    if (folder / "model.safetensors").is_file():
        from safetensors.numpy import load_file

        weights = load_file(str(folder / "model.safetensors"))
    elif (folder / "pytorch_model.bin").is_file():
        import torch

        weights = {
            k: v.float().numpy()
            for k, v in torch.load(folder / "pytorch_model.bin", weights_only=True).items()
        }
    else:
        raise InputFileError(
            f"Dense module {folder} has no model.safetensors or pytorch_model.bin."
        )
    name = str(config.get("activation_function", "torch.nn.modules.linear.Identity")).rsplit(
        ".", 1
    )[-1]
    if name not in _ACTIVATIONS:
        raise EngineUnavailableError(
            f"Dense activation {name!r} in {folder} is not supported; known: {', '.join(_ACTIVATIONS)}."
        )
    weight = weights["linear.weight"].astype(np.float32)
    bias = weights.get("linear.bias")
    bias = np.zeros(weight.shape[0], np.float32) if bias is None else bias.astype(np.float32)
    return weight, bias, _ACTIVATIONS[name]


class STEncoder(HFEncoder):
    """A sentence-transformers folder: token states from its Transformer, ``model`` pooling from its head."""

    def __init__(
        self, folder: str, revision: str | None = None, *, model_id: str | None = None, **options
    ):
        root = Path(folder).expanduser()
        if not root.is_dir():
            raise InputFileError(
                f"sentence-transformers folder {truncate(folder)} does not exist; pass the folder that holds modules.json."
            )
        if not (root / "modules.json").is_file():
            raise InputFileError(
                f"{truncate(folder)} has no modules.json, so it is not a sentence-transformers folder; use hf:{folder} for a transformers folder."
            )
        modules = _read_json(root / "modules.json")
        transformer = next((m for m in modules if m.get("type", "").endswith(".Transformer")), None)
        if transformer is None:
            raise EngineUnavailableError(
                f"{truncate(folder)}: modules.json has no Transformer module; only transformers-based models are supported."
            )
        mode, denses, normalize = "mean", [], False
        for module in modules:
            kind = module.get("type", "").rsplit(".", 1)[-1]
            path = root / module.get("path", "")
            if kind == "Pooling":
                mode = pooling_mode(_read_json(path / "config.json"))
            elif kind == "Dense":
                denses.append(_load_dense(path))
            elif kind == "Normalize":
                normalize = True
            elif kind != "Transformer":
                raise EngineUnavailableError(
                    f"{truncate(folder)}: module type {module.get('type')!r} is not supported."
                )
        bert_cfg = root / transformer.get("path", "") / "sentence_bert_config.json"
        if not bert_cfg.is_file():
            bert_cfg = root / "sentence_bert_config.json"
        st_config = _read_json(bert_cfg) if bert_cfg.is_file() else {}
        if st_config.get("max_seq_length") and not options.get("max_length"):
            options["max_length"] = int(st_config["max_seq_length"])
        self._lowercase = bool(st_config.get("do_lower_case", False))
        prompts_file = root / "config_sentence_transformers.json"
        prompts = _read_json(prompts_file).get("prompts") if prompts_file.is_file() else None
        if prompts and "prefixes" not in options:
            options["prefixes"] = {
                k: v for k, v in prompts.items() if k in ("query", "passage") and v
            }
        for key in ("trust_remote_code",):
            options.setdefault(key, False)
        super().__init__(
            str(root / transformer.get("path", "")),
            revision or folder_hash(root),
            model_id=model_id or str(root.resolve()),
            **options,
        )
        self.default_pooling = mode
        self.normalize_model = normalize

        def head(matrix: np.ndarray) -> np.ndarray:
            for weight, bias, act in denses:
                matrix = act(matrix @ weight.T + bias)
            if normalize:
                matrix = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
            return matrix

        self._model_head = head
        if denses:
            self.model_dim = int(denses[-1][0].shape[0])

    def _encode_inputs(self, texts, prefix, lazy=False):  # noqa: D102 - see HFEncoder
        if self._lowercase:
            texts = [t.lower() if len(t.lower()) == len(t) else t for t in texts]
        return super()._encode_inputs(texts, prefix, lazy)


def from_spec(rest: str | None, **options) -> STEncoder:
    """Build from ``st:<path>`` (options as for ``hf:``)."""
    if not rest:
        raise UsageError("st: needs a sentence-transformers folder, e.g. st:./all-MiniLM-L6-v2.")
    return STEncoder(rest, **options)
