"""The registry of evaluators: ``name -> module`` (one :class:`~evaluators.core.registry.Registry`).

Each module defines ``TASK`` (:class:`~evaluators.run.task.TaskMetadata`), ``Params``
(a frozen dataclass of :func:`~evaluators.run.task.param` fields) and
``score(data, model, params, rng) -> Scores``; :mod:`evaluators.run.runner` does the
rest. Modules import only light dependencies at top level so building the CLI
stays fast.
"""

from __future__ import annotations

from types import ModuleType

from evaluators.core.registry import Registry

TASKS = Registry("evaluator")

for _name, _module, _family, _help in (
    (
        "word-retrieval",
        "evaluators.tasks.word_retrieval",
        "cbd",
        "per-layer word retrieval (S_weak, S_strong, CSLS)",
    ),
    (
        "sentence-retrieval",
        "evaluators.tasks.sentence_retrieval",
        "cbd",
        "per-layer sentence retrieval (CLS vs mean pooling)",
    ),
    (
        "alignment",
        "evaluators.tasks.alignment",
        "silver",
        "precision, recall, F1, AER of predicted word alignments",
    ),
    (
        "aligners",
        "evaluators.tasks.aligners",
        "silver",
        "word aligners compared on silver and gold alignments",
    ),
    (
        "embedding-aligner",
        "evaluators.tasks.embedding_aligner",
        "silver",
        "word alignments from a model's embeddings, scored",
    ),
    ("tacc", "evaluators.tasks.tacc", "alee", "triplet accuracy (TACC) on English-foil triplets"),
    ("bucc", "evaluators.tasks.bucc", "bucc", "BUCC bitext mining F1 (threshold learned on train)"),
    (
        "bitext-retrieval",
        "evaluators.tasks.bitext_retrieval",
        "bucc",
        "Tatoeba-style top-1 bitext retrieval",
    ),
):
    TASKS.register(_name, _module, _help, family=_family)


def task_names() -> list[str]:
    """Return every registered evaluator name."""
    return TASKS.names()


def get_task(name: str) -> ModuleType:
    """Import and return an evaluator module.

    Raises:
        UsageError: unknown name; the message suggests close names and lists all.
    """
    return TASKS.load(name)


def available_tasks() -> dict[str, ModuleType]:
    """Return the evaluator modules that import (skipping ones not yet implemented)."""
    return TASKS.available()
