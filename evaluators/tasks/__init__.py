"""The registry of evaluators: one line per evaluator (:class:`~evaluators.core.registry.Registry`).

Each line names the evaluator, the module whose ``EVALUATOR`` (an
:class:`~evaluators.run.task.Evaluator`) it loads, its dataset family and its one-line help.
The help line lives here and nowhere else, so listing evaluators (``xlbench --help``,
``xlbench list``) never imports one. Modules import only light dependencies at top level so
building the CLI stays fast.
"""

from __future__ import annotations

from typing import Any

from evaluators.core.registry import Registry
from evaluators.run.task import Evaluator, TaskMetadata

TASKS = Registry("evaluator")

#: Dataset families in report order, with the title of their report section.
FAMILY_TITLES: dict[str, str] = {
    "cbd": "Contextual bilingual dictionaries (word and sentence retrieval)",
    "bucc": "BUCC-style bitext mining and retrieval",
    "alee": "alee: translation accuracy on foil triplets (TACC)",
    "silver": "Word alignment (SilverAlign silver and gold)",
}

# fmt: off
for _name, _module, _family, _help in (
    ("word-retrieval", "evaluators.tasks.word_retrieval", "cbd", "per-layer word retrieval (S_weak, S_strong with CSLS) on a contextual bilingual dictionary"),
    ("sentence-retrieval", "evaluators.tasks.sentence_retrieval", "cbd", "per-layer sentence retrieval (CSLS, CLS vs mean pooling) and translated-vs-random cosine"),
    ("alignment", "evaluators.tasks.alignment", "silver", "precision, recall, F1 and AER of predicted word alignments against gold or silver links"),
    ("aligners", "evaluators.tasks.aligners", "silver", "eflomal/fast_align with several tokenizers, scored on silver and gold; Pearson r, Spearman rho"),
    ("embedding-aligner", "evaluators.tasks.embedding_aligner", "silver", "a model's embeddings as a SimAlign-style word aligner (argmax, itermax), scored"),
    ("tacc", "evaluators.tasks.tacc", "alee", "triplet accuracy (TACC) on alee English-foil triplets, per perturbation and language"),
    ("bucc", "evaluators.tasks.bucc", "bucc", "BUCC bitext mining F1: margin-scored kNN candidates, threshold learned on train"),
    ("bitext-retrieval", "evaluators.tasks.bitext_retrieval", "bucc", "Tatoeba-style top-1 bitext retrieval (cosine and margin, both directions)"),
):
    TASKS.register(_name, f"{_module}:EVALUATOR", _help, family=_family)
# fmt: on


def task_names() -> list[str]:
    """Return every registered evaluator name."""
    return TASKS.names()


def family_of(name: str) -> str | None:
    """Return the dataset family of an evaluator (``None`` for a name not registered), without importing it.

    >>> family_of("tacc"), family_of("no-such-evaluator")
    ('alee', None)
    """
    return TASKS.entry(name).extra.get("family") if name in TASKS else None


def metadata_of(name: str) -> TaskMetadata | None:
    """Return an evaluator's metadata, or ``None`` for a name not registered (e.g. an old result's)."""
    return get_task(name).meta if name in TASKS else None


def get_task(name: str) -> Evaluator[Any]:
    """Import and return an evaluator.

    Raises:
        UsageError: unknown name; the message suggests close names and lists all.
    """
    evaluator: Evaluator[Any] = TASKS.load(name)
    return evaluator


def available_tasks() -> dict[str, Evaluator[Any]]:
    """Return the evaluators that import (skipping ones not yet implemented)."""
    return TASKS.available()
