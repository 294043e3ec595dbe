"""Masked-language-model substitutes for SilverAlign (``--substitutes mlm``).

As in Köksal et al. (2022): each source word is replaced by one mask token at a
time and the model's top predictions for that slot are the alternatives
(default ``bert-large-cased``, the paper's model). All masked copies of one
sentence go through the model in one forward pass, and several sentences share
a batch.

As in the authors' code (``Scripts/2. Mask Augmentation.ipynb`` of
akoksal/SilverAlign): the top ``search`` = 10 predictions are read in order;
subword pieces (``##ing``), special tokens, case variants of the original word
and duplicates are skipped; the original word itself, when predicted, takes
one of the ``k`` = 5 places (it is no alternative, so such a word has 4). xlbench
also skips punctuation predicted for a word. ``search`` and ``count_original``
are parameters (the earlier xlbench reading: 50 and ``False``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from builders.adapters.device import resolve_device
from builders.adapters.mt import hf_load_kwargs
from builders.silver.tokenize import is_word, substitute
from evaluators.core.errors import EngineUnavailableError, UsageError, truncate
from evaluators.core.optional import require

#: The paper's masked language model.
DEFAULT_MLM = "bert-large-cased"
#: How many top predictions are read before filtering down to k (the authors': 10).
SEARCH = 10
#: The original word, when predicted, counts among the k (the authors' code).
COUNT_ORIGINAL = True


def pick_predictions(
    original: str, candidates: Sequence[str], k: int, count_original: bool = COUNT_ORIGINAL
) -> list[str]:
    """Choose up to ``k`` alternatives from ranked predictions (the original may take a place).

    >>> pick_predictions("love", ["hate", "love", "##ing", "Love", "like", "want", "need", "see"], 5)
    ['hate', 'like', 'want', 'need']
    >>> pick_predictions("love", ["hate", "love", "like", "want", "need", "see"], 5, count_original=False)
    ['hate', 'like', 'want', 'need', 'see']
    """
    seen: set[str] = set()
    picks: list[str] = []
    places = 0
    for cand in candidates:
        if places == k:
            break
        word = cand.strip().lstrip("▁Ġ")
        if count_original and word == original.strip() and word.lower() not in seen:
            seen.add(word.lower())
            places += 1
            continue
        if keep_prediction(original, cand, seen):
            picks.append(word)
            places += 1
    return picks


def keep_prediction(original: str, candidate: str, seen: set[str]) -> bool:
    """Decide whether a model prediction is a usable alternative (and remember it).

    >>> seen = set()
    >>> [keep_prediction("love", c, seen) for c in ["hate", "##ing", "Love", "hate", ",", "[UNK]", "like"]]
    [True, False, False, False, False, False, True]
    """
    cand = candidate.strip()
    if (
        not cand
        or cand.startswith("##")
        or (cand.startswith("[") and cand.endswith("]"))
        or cand.startswith("<")
    ):
        return False
    if cand.startswith("▁") or cand.startswith("Ġ"):  # SentencePiece / byte-BPE word-start markers
        cand = cand[1:]
    if not cand or (is_word(original) and not is_word(cand)) or any(ch.isspace() for ch in cand):
        return False
    key = cand.lower()
    if key == original.lower() or key in seen:
        return False
    seen.add(key)
    return True


class MLMSubstitutes:
    """Fill-mask alternatives from a transformers masked language model.

    Args:
        model: Hub id or local folder (default ``bert-large-cased``).
        revision: Hub revision to pin.
        batch_size: masked sentences per forward pass (a sentence's masks are never split).
        device: torch device (``None``: cuda when available, else cpu; see :mod:`builders.adapters.device`).
        tokenizer, mlm: an already loaded tokenizer and ``*ForMaskedLM`` (tests).
        search: top predictions read per slot (the authors': 10).
        count_original: the original word, when predicted, takes one of the ``k`` places.
    """

    name = "mlm"

    def __init__(
        self,
        model: str = DEFAULT_MLM,
        revision: str | None = None,
        batch_size: int = 64,
        device: str | None = None,
        tokenizer=None,
        mlm=None,
        search: int = SEARCH,
        count_original: bool = COUNT_ORIGINAL,
    ):
        if batch_size < 1:
            raise UsageError(f"--mlm-batch-size must be at least 1, got {batch_size}.")
        self.model_id = model
        self._revision = revision
        self.batch_size = batch_size
        # a model handed in stays where it is
        self.device = device if mlm is None else (device or str(getattr(mlm, "device", "cpu")))
        self._tok = tokenizer
        self._model = mlm
        self.forward_passes = 0
        if search < 1:
            raise UsageError(f"--mlm-search must be at least 1, got {search}.")
        self.search = search
        self.count_original = count_original

    def load(self):
        """Load the tokenizer and model (once) and return them.

        Raises:
            EngineUnavailableError: the model is neither a local folder nor reachable.
        """
        if self._model is not None:
            return self._tok, self._model
        require("torch", feature="--substitutes mlm")
        transformers = require("transformers", feature="--substitutes mlm")
        AutoModelForMaskedLM, AutoTokenizer = (
            transformers.AutoModelForMaskedLM,
            transformers.AutoTokenizer,
        )

        kwargs = hf_load_kwargs(self.model_id, self._revision)
        self.device = resolve_device(self.device)
        try:
            self._tok = AutoTokenizer.from_pretrained(self.model_id, **kwargs)
            self._model = (
                AutoModelForMaskedLM.from_pretrained(self.model_id, **kwargs).to(self.device).eval()
            )
        except (OSError, ValueError) as err:
            raise EngineUnavailableError(
                f"Cannot load the masked language model {self.model_id!r} ({truncate(str(err), 100)}); "
                f"pass --mlm with a local folder or a cached id, or use --substitutes wordnet (offline)."
            ) from err
        if self._tok.mask_token is None:
            raise UsageError(
                f"{self.model_id!r} has no mask token; pass a masked language model to --mlm."
            )
        return self._tok, self._model

    @property
    def revision(self) -> str:
        """The Hub commit, or the sha256 of the model's weights (local or in-memory models)."""
        tok, model = self.load()
        commit = getattr(model.config, "_commit_hash", None)
        if commit:
            return commit
        digest = hashlib.sha256()
        for name, tensor in sorted(model.state_dict().items()):
            digest.update(name.encode())
            digest.update(tensor.detach().cpu().numpy().tobytes())
        return "weights:" + digest.hexdigest()[:12]

    def batch(
        self,
        texts: Sequence[str],
        spans: Sequence[Sequence[tuple[int, int]]],
        positions: Sequence[Sequence[int]],
        k: int,
    ) -> list[list[list[str]]]:
        """Return, per sentence and per requested position, up to ``k`` alternatives.

        Args:
            texts: original sentences.
            spans: character spans of each sentence's tokens.
            positions: token positions to substitute, per sentence.
            k: alternatives per position.
        """
        import torch

        tok, model = self.load()
        out: list[list[list[str]]] = [[[] for _ in pos] for pos in positions]
        groups: list[list[int]] = []
        current: list[int] = []
        rows = 0
        for i, pos in enumerate(positions):
            if not pos:
                continue
            if current and rows + len(pos) > self.batch_size:
                groups.append(current)
                current, rows = [], 0
            current.append(i)
            rows += len(pos)
        if current:
            groups.append(current)
        for group in groups:
            masked, where = [], []
            for i in group:
                for slot, j in enumerate(positions[i]):
                    masked.append(substitute(texts[i], spans[i][j], tok.mask_token))
                    where.append((i, slot, texts[i][spans[i][j][0] : spans[i][j][1]]))
            enc = tok(masked, return_tensors="pt", padding=True, truncation=True).to(self.device)
            with torch.no_grad():
                logits = model(**enc).logits
            self.forward_passes += 1
            search = min(self.search, logits.shape[-1])
            for row, (i, slot, original) in enumerate(where):
                mask_idx = (enc["input_ids"][row] == tok.mask_token_id).nonzero()
                if len(mask_idx) == 0:  # the mask was truncated away (very long sentence)
                    continue
                top = torch.topk(logits[row, int(mask_idx[0])], search).indices.tolist()
                cands = [tok.convert_ids_to_tokens(token_id) for token_id in top]
                out[i][slot] = pick_predictions(original, cands, k, self.count_original)
        return out
