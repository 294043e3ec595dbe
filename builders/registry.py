"""The registry of dataset builders (the help lines repeat each module's ``HELP``, so listing imports nothing): ``family -> module`` (one :class:`~evaluators.core.registry.Registry`).

A builder module defines ``NAME`` (the family), ``HELP``, ``EPILOG``,
``add_arguments(parser)`` and ``run(args) -> BuildResult``; the CLI adds the
common options (``--out``, ``--version``, ``--seed`` ...) and writes the folder.
"""

from __future__ import annotations

from types import ModuleType

from evaluators.core.registry import Registry

BUILDERS = Registry("dataset family")

for _name, _module, _help, _title, _paper in (
    (
        "cbd",
        "builders.cbd.build",
        "contextual bilingual dictionary: translated word pairs in their sentence contexts (unique-candidate rule)",
        "Contextual bilingual dictionaries",
        "Gaschi et al. 2022, *Multilingual Transformer Encoders: a Word-Level Task-Agnostic Evaluation*",
    ),
    (
        "silver",
        "builders.silver.build",
        "SilverAlign silver word alignments: MT + one-word substitutions (Köksal et al. 2022)",
        "SilverAlign silver word alignments",
        "Köksal et al. 2022, *SilverAlign*",
    ),
    (
        "alee",
        "builders.alee.build",
        "English minimal-pair foils (AMR edit + NLI filter) paired with target-language sentences",
        "alee foil triplets",
        "*alee: Any-Language Evaluation of Embeddings via English-Centric Minimal Pairs*",
    ),
    (
        "bucc",
        "builders.bucc.build",
        "BUCC-style bitext mining: sentences of two corpora with hidden translation pairs (train/test)",
        "BUCC bitext mining",
        "Zweigenbaum et al. 2017/2018; margin mining of Artetxe & Schwenk 2019",
    ),
):
    BUILDERS.register(_name, _module, _help, title=_title, paper=_paper)


def family_table() -> str:
    """Return the README's family table (family, build name, paper, evaluators), from the registries."""
    from evaluators.tasks import TASKS

    lines = [
        "| family | `xlbench build` | paper | evaluators (`xlbench eval`) |",
        "| --- | --- | --- | --- |",
    ]
    for e in BUILDERS.entries():
        tasks = ", ".join(f"`{t.name}`" for t in TASKS.entries() if t.extra.get("family") == e.name)
        lines.append(f"| {e.extra['title']} | `{e.name}` | {e.extra['paper']} | {tasks} |")
    return "\n".join(lines)


def builder_names() -> list[str]:
    """Return every registered builder name."""
    return BUILDERS.names()


def available_builders() -> dict[str, ModuleType]:
    """Return the builder modules that import (skipping ones not yet implemented)."""
    return BUILDERS.available()
