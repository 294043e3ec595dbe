"""Any ``transformers`` sequence-classification NLI model, run in both directions.

The label mapping is read from the model's ``config.id2label`` (names
containing ``entail``, ``neutral``, ``contradict``); labels the model lacks
(a two-label entailment / not-entailment model) are reported as NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from builders.adapters.device import resolve_device
from builders.alee.logic.nli_filter import CONTRADICTION, ENTAILMENT, LABELS, NEUTRAL
from evaluators.core.errors import EngineUnavailableError


def label_map(id2label: dict) -> dict[str, int]:
    """Map ``entailment``/``neutral``/``contradiction`` to the model's label ids.

    >>> label_map({0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"})
    {'entailment': 0, 'neutral': 1, 'contradiction': 2}
    >>> label_map({"0": "entailment", "1": "not_entailment"})
    {'entailment': 0}

    Raises:
        EngineUnavailableError: no label names entailment.
    """
    out: dict[str, int] = {}
    for key, name in id2label.items():
        low = str(name).lower().replace("-", "_")
        if low.startswith(("not_", "non_", "no_")):
            continue
        for label, stem in (
            (ENTAILMENT, "entail"),
            (NEUTRAL, "neutral"),
            (CONTRADICTION, "contradict"),
        ):
            if stem in low:
                out[label] = int(key)
    if ENTAILMENT not in out:
        raise EngineUnavailableError(
            f"The NLI model's labels {sorted(map(str, id2label.values()))} name no 'entailment' class; "
            f"choose an NLI model whose config.id2label names entailment/neutral/contradiction."
        )
    return {k: out[k] for k in LABELS if k in out}


def _unavailable(model_id: str, err: Exception) -> EngineUnavailableError:
    return EngineUnavailableError(
        f"Cannot load the NLI model {model_id!r} ({str(err).splitlines()[0][:120]}); download it with "
        f"'huggingface-cli download {model_id}' and pass --nli-model <local folder>, or pass --no-nli."
    )


def _revision(config, revision: str | None) -> str:
    return revision or getattr(config, "_commit_hash", None) or "unknown"


def model_identity(model_id: str, revision: str | None = None) -> tuple[str, str]:
    """Return ``(model id, revision)`` as :meth:`NliModel.from_pretrained` records them, reading only the config.

    For a driver that runs no model (``--engine ray``): the revision is the same
    one a loaded model reports.

    Raises:
        EngineUnavailableError: the model cannot be found; says how to fix it.
    """
    try:
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(model_id, revision=revision)
    except (OSError, ValueError) as err:
        raise _unavailable(model_id, err) from err
    return model_id, _revision(config, revision)


class NliModel:
    """A sequence-classification NLI model with its tokenizer (batched, CPU or GPU)."""

    def __init__(
        self,
        model,
        tokenizer,
        model_id: str = "local",
        revision: str = "unknown",
        batch_size: int = 16,
        max_length: int = 512,
        device: str | None = None,
    ):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.model_id = model_id
        self.revision = revision
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = resolve_device(device)
        self.model.to(self.device)
        self.labels = label_map(dict(model.config.id2label))

    @classmethod
    def from_pretrained(cls, model_id: str, revision: str | None = None, **kwargs) -> NliModel:
        """Load a Hub id or local folder.

        Raises:
            EngineUnavailableError: the model cannot be loaded (offline, wrong id); says how to fix it.
        """
        try:
            from transformers import AutoModelForSequenceClassification, AutoTokenizer

            tok = AutoTokenizer.from_pretrained(model_id, revision=revision)
            model = AutoModelForSequenceClassification.from_pretrained(model_id, revision=revision)
        except (OSError, ValueError) as err:
            raise _unavailable(model_id, err) from err
        return cls(model, tok, model_id, _revision(model.config, revision), **kwargs)

    def probabilities(
        self, premises: Sequence[str], hypotheses: Sequence[str]
    ) -> list[dict[str, float]]:
        """Return label -> probability for each (premise, hypothesis) pair."""
        import torch

        out: list[dict[str, float]] = []
        for start in range(0, len(premises), self.batch_size):
            enc = self.tokenizer(
                list(premises[start : start + self.batch_size]),
                list(hypotheses[start : start + self.batch_size]),
                padding=True,
                truncation=True,
                max_length=self.max_length,
                return_tensors="pt",
            ).to(self.device)
            with torch.no_grad():
                probs = torch.softmax(self.model(**enc).logits.float(), dim=-1).cpu().numpy()
            for row in probs:
                out.append(
                    {
                        lab: float(row[self.labels[lab]]) if lab in self.labels else math.nan
                        for lab in LABELS
                    }
                )
        return out

    def both_directions(self, origs: Sequence[str], foils: Sequence[str]):
        """Return ``(orig -> foil probabilities, foil -> orig probabilities)``."""
        return self.probabilities(origs, foils), self.probabilities(foils, origs)
