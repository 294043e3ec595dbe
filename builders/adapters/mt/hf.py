"""Any ``transformers`` sequence-to-sequence MT model (MarianMT, NLLB, M2M100)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builders.adapters.device import resolve_device
from builders.adapters.mt.base import is_offline
from evaluators.core.errors import (
    EngineUnavailableError,
    truncate,
)
from evaluators.core.optional import require
from evaluators.schema.langs import to_card_language

log = logging.getLogger("xlbench.mt")


# --- transformers --------------------------------------------------------------------


def hf_load_kwargs(model_id: str, revision: str | None) -> dict:
    """Return ``from_pretrained`` keyword arguments for a Hub id or a local folder.

    A local folder takes no revision; a Hub id takes ``revision`` when one is
    given, and ``local_files_only`` when the Hub is unreachable, so that the HF
    cache is used at once instead of retrying the network.
    """
    local = Path(model_id).is_dir()
    kwargs: dict = {"revision": revision} if revision and not local else {}
    if not local and is_offline(host="huggingface.co"):
        kwargs["local_files_only"] = True
    return kwargs


@dataclass
class TransformersTranslator:
    """Any transformers sequence-to-sequence MT model: MarianMT, NLLB-200, M2M-100.

    NLLB takes FLORES-200 codes (``spa_Latn``: xlbench's own), M2M-100 takes ISO
    639-1 codes; both force the target language as the first generated token.
    Decoding is deterministic (greedy or beam search, no sampling).
    """

    model: str
    pair: tuple[str, str]
    revision: str | None = None
    batch_size: int = 16
    num_beams: int = 1
    max_new_tokens: int = 256
    device: str | None = None
    online: bool = False

    def __post_init__(self) -> None:
        self._loaded: Any = None
        self._version: str | None = None

    @property
    def name(self) -> str:
        """``hf:<model>``."""
        return f"hf:{self.model}"

    def _load(self):
        if self._loaded is not None:
            return self._loaded
        require("torch", feature="hf: MT models")
        transformers = require("transformers", feature="hf: MT models")
        AutoModelForSeq2SeqLM, AutoTokenizer = (
            transformers.AutoModelForSeq2SeqLM,
            transformers.AutoTokenizer,
        )
        kwargs = hf_load_kwargs(self.model, self.revision)
        self.device = resolve_device(self.device)
        try:
            tok = AutoTokenizer.from_pretrained(self.model, **kwargs)
            model = (
                AutoModelForSeq2SeqLM.from_pretrained(self.model, **kwargs).to(self.device).eval()
            )
        except (OSError, ValueError) as err:
            raise EngineUnavailableError(
                f"Cannot load the MT model {self.model!r} ({truncate(str(err), 120)}); pass a local folder "
                f"or an id that is in the Hugging Face cache (the Hub may be unreachable)."
            ) from err
        self._loaded = (tok, model)
        return self._loaded

    @property
    def version(self) -> str:
        """The Hub commit of the model, or the sha256 of a local folder's config and weights."""
        if self._version:
            return self._version
        tok, model = self._load()
        commit = getattr(model.config, "_commit_hash", None)
        if commit:
            self._version = commit
            return commit
        digest = hashlib.sha256()
        root = Path(self.model)
        for path in sorted(root.glob("*")) if root.is_dir() else []:
            if path.is_file() and path.suffix in (
                ".json",
                ".bin",
                ".safetensors",
                ".model",
                ".spm",
                ".txt",
            ):
                digest.update(path.name.encode())
                digest.update(path.read_bytes())
        self._version = "local:" + digest.hexdigest()[:12]
        return self._version

    def _lang_args(self, tok) -> tuple[dict, dict]:
        src, tgt = self.pair
        kind = tok.__class__.__name__.lower()
        if "nllb" in kind:
            tok.src_lang = src
            return {}, {"forced_bos_token_id": tok.convert_tokens_to_ids(tgt)}
        if "m2m" in kind:
            tok.src_lang = to_card_language(src)
            return {}, {"forced_bos_token_id": tok.get_lang_id(to_card_language(tgt))}
        return {}, {}

    def translate_batch(self, texts: Sequence[str]) -> list[str]:
        """Translate in batches of ``batch_size``."""
        import torch

        tok, model = self._load()
        enc_kwargs, gen_kwargs = self._lang_args(tok)
        out: list[str] = []
        for start in range(0, len(texts), self.batch_size):
            chunk = list(texts[start : start + self.batch_size])
            batch = tok(chunk, return_tensors="pt", padding=True, truncation=True, **enc_kwargs).to(
                self.device
            )
            with torch.no_grad():
                ids = model.generate(
                    **batch,
                    num_beams=self.num_beams,
                    do_sample=False,
                    max_new_tokens=self.max_new_tokens,
                    **gen_kwargs,
                )
            out += [s.strip() for s in tok.batch_decode(ids, skip_special_tokens=True)]
        return out
