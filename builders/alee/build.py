"""``xlbench build alee``: AMR-edited English foils, NLI-validated, paired with any language.

English sentences of a parallel corpus are parsed to AMR (amrlib), edited once
per perturbation (PN/RS/AR/HS, :mod:`builders.alee.logic.edits`), generated back to
English, filtered by NLI in both directions and paired with the untouched
target-language translation of the original. English is processed once; the
kept foils are reused for every target language. ``--foils`` starts from foils
made elsewhere (e.g. Sentence Smith's) and runs only NLI and pairing. With
``--engine ray`` the model stages (parse, generate, NLI) run on a Ray actor pool
and give the same bytes (docs/cluster.md); the steps are stated in
:mod:`builders.alee.stages` (plan -> stage -> merge, the same on every engine).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builders.adapters import amr, bible
from builders.adapters.alee_inputs import read_foils, read_pawsx
from builders.adapters.device import run_device
from builders.adapters.parallel import read_parallel
from builders.adapters.sentences import split_sentences
from builders.adapters.wordnet import wordnet_input
from builders.adapters.wordnet_lexicon import load_lexicon
from builders.alee import stages as alee_stages
from builders.alee.logic import foil_types, pipeline
from builders.alee.logic.nli_filter import decide
from builders.alee.logic.source_facts import source_facts, with_facts
from builders.alee.spec import PERTURBATIONS, Params
from builders.base import BuildResult, file_input, manifest_params
from builders.corpora import open_corpus
from builders.corpora.base import Corpus
from evaluators.compute.engine import Engine
from evaluators.core.errors import UsageError
from evaluators.schema.langs import iso3, resolve_lang, resolve_langs
from evaluators.schema.meta import InputRecord, ModelRecord

log = logging.getLogger("xlbench")

#: alee type (as read from a foils file) -> Sentence Smith's own ``modification_type`` name.
_SENTENCE_SMITH_NAME = {"PN": "polarity_negation", "RS": "rs", "AR": "antonym", "HS": "hypernym"}


def relabel(kept, generator: str) -> dict[str, str]:
    """Give foils made by ``generator`` their honest labels in place; return ``read type -> label`` where they differ.

    Sentence Smith's RS and HS do not meet alee's definitions
    (:mod:`builders.alee.logic.foil_types`); its PN and AR keep their names, though they are
    broader than alee's (PN on any node, AR over every WordNet sense; the card says so).
    Foils of an unknown generator keep the types their file states.
    """
    if generator != foil_types.SENTENCE_SMITH:
        return {}
    changed: dict[str, str] = {}
    for c in kept:
        label = foil_types.honest_label(_SENTENCE_SMITH_NAME[c.perturbation], generator)
        if label != c.perturbation:
            changed[c.perturbation] = label
            c.perturbation = label
    return dict(sorted(changed.items()))


def default_out(args: Params) -> str:
    """Return ``out/alee-<lang>-<lang>...`` (ISO 639-3 codes; ``out/alee-all`` for ``--langs all``)."""
    if _all_langs(args):
        return "out/alee-all"
    langs = [iso3(code) for code in resolve_langs(args.langs)]
    return f"out/alee-{'-'.join(langs)}"


def _lang_value(spec: str, option: str) -> tuple[str, str]:
    if "=" not in spec:
        raise UsageError(
            f"{option} expects LANG=..., got {spec!r} (e.g. {option} deu_Latn=en.txt,de.txt)."
        )
    lang, _, rest = spec.partition("=")
    return resolve_lang(lang.strip()), rest.strip()


def read_corpora(args: Params, langs: list[str]):
    """Return ``(English sources in order, {lang: {English: target}}, inputs, the opened --corpus or None, facts)``.

    ``facts``: English text -> the level and domain ``--corpus`` states for it
    (:func:`~builders.alee.logic.source_facts.source_facts`); empty for other inputs.
    """
    english: list[str] = []
    targets: dict[str, dict[str, str]] = {lang: {} for lang in langs}
    inputs: list[InputRecord] = []
    opened: Corpus | None = None
    described: list[tuple[str, Any]] = []

    def add(lang: str, triples) -> None:
        for _id, en, tgt in triples:
            if en not in targets[lang]:
                targets[lang][en] = tgt
            english.append(en)

    if args.pawsx:
        en, maps, files = read_pawsx(args.pawsx, langs)
        english += en
        for lang in langs:
            targets[lang].update({k: v for k, v in maps[lang].items() if k not in targets[lang]})
        inputs += [
            file_input(
                f"pawsx:{p.name}",
                p,
                citation="Yang, Zhang, Tar and Baldridge (2019). PAWS-X: A Cross-lingual Adversarial Dataset for "
                "Paraphrase Identification. EMNLP-IJCNLP.",
            )
            for p in files
        ]
    for spec in args.parallel:
        lang, files = _lang_value(spec, "--parallel")
        if lang not in targets:
            raise UsageError(f"--parallel names {lang}, which is not in --langs {','.join(langs)}.")
        parts = files.split(",")
        if len(parts) != 2:
            raise UsageError(f"--parallel expects LANG=EN_FILE,TGT_FILE, got {spec!r}.")
        add(lang, read_parallel(parts[0], parts[1]))
        inputs += [file_input(f"{lang}:en", parts[0]), file_input(f"{lang}:tgt", parts[1])]
    for spec in args.tsv:
        lang, path = _lang_value(spec, "--tsv")
        if lang not in targets:
            raise UsageError(f"--tsv names {lang}, which is not in --langs {','.join(langs)}.")
        add(lang, read_parallel(path))
        inputs.append(file_input(f"{lang}:tsv", path))
    if args.corpus:
        corpus = open_corpus(args.corpus, args.corpus_opt)
        # The English row of a segment states its level and domain (its translations share its id).
        stated = {r.id: r.meta for r in corpus.rows(corpus.check_lang("eng_Latn"))}
        for lang in langs:
            triples = corpus.pairs("eng_Latn", lang)
            add(lang, triples)
            described += [(en, stated.get(i, {})) for i, en, _ in triples]
        inputs.append(corpus.input_record())
        opened = corpus
    if args.bible or not (args.pawsx or args.parallel or args.tsv or args.corpus):
        eng = bible.translation_for("eng_Latn")
        inputs.append(bible.input_record(eng))
        for lang in langs:
            tr = bible.translation_for(lang)
            add(lang, bible.parallel_verses(eng, tr, args.bible_books))
            inputs.append(bible.input_record(tr))
    return list(dict.fromkeys(english)), targets, inputs, opened, source_facts(described)


@dataclass(frozen=True)
class _FoilOrigin:
    """Where a build's foils came from, as the manifest and the card record it.

    Attributes:
        generator: who made the foils of a ``--foils`` file (``None``: this build's AMR pipeline).
        excluded: foil types of the file outside alee's four -> how many were left out.
        relabelled: type the file claims -> honest label the rows carry (:func:`relabel`).
    """

    generator: str | None = None
    excluded: dict[str, int] = field(default_factory=dict)
    relabelled: dict[str, str] = field(default_factory=dict)


def run(args: Params, backend: Engine) -> BuildResult:
    """Build the alee dataset (see the module docstring).

    ``backend``: where the model stages run (``--engine``; how to run, not a build parameter).
    """
    # Refused before any model or corpus is read; no model runs with --foils and --no-nli.
    device = run_device(args.device, backend.name, runs_model=not (args.foils and args.no_nli))
    run_info = {"device": device} if device else {}
    langs = _checked_langs(args)
    english, targets, inputs, corpus, facts = read_corpora(args, langs)

    def thresholds(a, b):
        return decide(
            a, b, threshold=args.entail_threshold, reject_bidirectional=not args.keep_bidirectional
        )

    model_stages = alee_stages.EngineStages(
        backend,
        {"parse": args.amr_batch_size, "generate": args.amr_batch_size, "nli": args.nli_batch_size},
    )
    models: list[ModelRecord] = [corpus.model_record()] if corpus else []
    if not args.no_nli:
        nli_id = model_stages.add(
            "nli",
            alee_stages.NliStage(
                args.nli_model, args.nli_revision, args.nli_batch_size, args.device
            ),
        )
        models.append(ModelRecord("nli", *nli_id))
    else:
        models.append(ModelRecord("nli", "none", "skipped"))

    def split(text: str) -> list[str]:
        return split_sentences(text, args.splitter)

    if args.foils:
        stages = model_stages.stages(split, thresholds)
        kept, counts, origin = _from_foils(args.foils, args, stages, inputs, models)
    else:
        kept, counts = _from_sources(args, english, model_stages, split, thresholds, inputs, models)
        origin = _FoilOrigin()
    kept = with_facts(kept, facts)
    tables, paired = pipeline.pair(kept, targets)
    _check_paired(kept, paired)
    return BuildResult(
        tables=tables,
        parameters=_parameters(args, langs, origin, kept, corpus.pinned() if corpus else None),
        inputs=inputs,
        models=models,
        counts=_manifest_counts(args, pipeline.table2(counts, paired), origin),
        construction=_construction(args, langs, origin),
        summary=_summary(args, origin, kept),
        limitations=_limitations(args, origin),
        params=args,
        run=run_info,
    )


def _check_paired(kept, paired: dict[str, dict[str, int]]) -> None:
    """Refuse a build where a target language got no triplet (its config would silently vanish).

    Raises:
        UsageError: kept foils exist but no original has a translation in some language.
    """
    empty = [lang for lang, n in paired.items() if kept and n["paired"] == 0]
    if empty:
        raise UsageError(
            f"None of the {len(kept)} kept foils' English originals has a translation in "
            f"{', '.join(empty)}: the foils and the target sentences come from different corpora; "
            f"pass the corpus the foils were made from (e.g. --pawsx for Sentence Smith's PAWS foils)."
        )


def _all_langs(args: Params) -> bool:
    return [lang.lower() for lang in args.langs] == ["all"]


def _corpus_langs(args: Params) -> list[str]:
    """``--langs all``: every language of ``--corpus`` but English (alee-F200, alee-BQ275)."""
    if not args.corpus:
        raise UsageError("--langs all means every language of --corpus; pass --corpus too.")
    return [
        lang for lang in open_corpus(args.corpus, args.corpus_opt).languages() if lang != "eng_Latn"
    ]


def _checked_langs(args: Params) -> list[str]:
    """Return the target languages after checking the options, before any corpus is read.

    Raises:
        UsageError: a bad option (English as a target, an unknown type, ``--foils``
            without target sentences); ranges are checked by the ``param`` declarations.
        EngineUnavailableError: an amrlib model is missing (without ``--foils``).
    """
    langs = _corpus_langs(args) if _all_langs(args) else resolve_langs(args.langs)
    if "eng_Latn" in langs:
        raise UsageError(
            "--langs lists target languages; English (eng_Latn) is always the source side, drop it."
        )
    unknown = [t for t in args.types if t not in PERTURBATIONS]
    if unknown:
        raise UsageError(f"--types has {unknown}; choose from {', '.join(PERTURBATIONS)}.")
    if not args.foils:
        # Detect missing amrlib models before reading corpora or loading anything heavy.
        amr.model_dir("parse", args.amr_parser)
        amr.model_dir("generate", args.amr_generator)
    if args.foils and not (args.pawsx or args.parallel or args.tsv or args.bible or args.corpus):
        raise UsageError(
            "--foils needs target sentences: add --pawsx DIR, --parallel, --tsv, --corpus or --bible."
        )
    return langs


def _from_foils(foils: str, args: Params, stages, inputs: list, models: list):
    """Filter the foils of the file ``foils`` (``--foils``) with NLI; return ``(kept, counts, origin)``.

    The foils file goes first into ``inputs`` and ``models`` (in place).
    """
    items, skipped = read_foils(foils)
    items = items[: args.limit] if args.limit else items
    items = [it for it in items if it[3] in args.types]
    inputs.insert(0, file_input("foils", foils))
    kept, counts = pipeline.filter_given_foils(items, stages, args.types)
    models.insert(0, ModelRecord("foils", Path(foils).name, inputs[0].sha256[:12]))
    generator = foil_types.generator_of(foils)
    return kept, counts, _FoilOrigin(generator, dict(skipped), relabel(kept, generator))


def _from_sources(args: Params, english: list[str], model_stages: alee_stages.EngineStages,
                  split, rule, inputs: list, models: list):  # fmt: skip
    """Make foils of the English sources (parse, edit, generate, NLI); return ``(kept, counts)``.

    The AMR models go first into ``models``, WordNet (for AR and HS) last into ``models``
    and ``inputs`` (in place).
    """
    parse_id = model_stages.add(
        "parse",
        alee_stages.AmrStage("parse", args.amr_parser, args.amr_batch_size, args.device),
    )
    generate_id = model_stages.add(
        "generate",
        alee_stages.AmrStage("generate", args.amr_generator, args.amr_batch_size, args.device),
    )
    models[:0] = [
        ModelRecord("amr-parse", *parse_id),
        ModelRecord("amr-generate", *generate_id),
    ]
    if {"AR", "HS"} & set(args.types):
        lexicon = load_lexicon()
        models.append(ModelRecord("wordnet", "wordnet", lexicon.revision))
        inputs.append(wordnet_input())  # antonyms and hypernyms come from these files
    else:
        lexicon = None
    sources = english[: args.limit] if args.limit else english
    numbered = [(str(i), s) for i, s in enumerate(sources)]
    stages = model_stages.stages(split, rule, lexicon)
    return pipeline.generate_candidates(numbered, args.types, stages, args.seed)


def _manifest_counts(args: Params, counts: dict[str, Any], origin: _FoilOrigin) -> dict[str, Any]:
    """The manifest's counts: Table 2's, then where ``--foils`` foils came from."""
    if origin.excluded:
        counts["excluded_types"] = origin.excluded
    if args.foils:
        counts["foil_generator"] = origin.generator
        # Counts stay under the types the file claims; the rows carry the honest labels.
        counts["relabelled"] = origin.relabelled
    return counts


def _construction(args: Params, langs: list[str], origin: _FoilOrigin) -> list[str]:
    """The card's construction steps."""
    nli_note = (
        "NLI filter SKIPPED (--no-nli): foils were not validated by NLI in this build; nli_* columns are NaN."
        if args.no_nli
        else f"NLI ({args.nli_model}) in both directions; rejected when both directions predict entailment"
        f"{' (disabled)' if args.keep_bidirectional else ''} or P(entailment) > {args.entail_threshold} in either direction."
    )
    skipped_types, relabelled = origin.excluded, origin.relabelled
    return (
        [
            f"Foils read from {Path(args.foils).name} (made elsewhere by {origin.generator}; parse/edit/generate not run here); "
            "types mapped to PN/RS/AR/HS"
            + (f", excluded: {skipped_types}" if skipped_types else "")
            + (
                ", then relabelled as what the generator's edits are: "
                + ", ".join(f"{a} -> {b}" for a, b in relabelled.items())
                + " (PN and AR keep alee's names but are broader: PN on any node, AR over every WordNet sense;"
                " TACC's main score then averages every type present)"
                if relabelled
                else ""
            )
            + "."
        ]
        if args.foils
        else [
            "English sources split into sentences (multi-sentence sources are paragraphs).",
            "Each sentence parsed to AMR with amrlib (parse_xfm); failures recorded with their reason.",
            "One edit per foil on the penman graph: PN adds :polarity -, RS swaps ARG0/ARG1, AR uses a WordNet lemma antonym, HS a WordNet first-sense hypernym.",
            "Edited graphs generated back to English with amrlib; clipped or unchanged generations dropped.",
            "Paragraphs: sentence i (from 0) edited and validated at sentence and paragraph level, reverting and moving on until one edit survives.",
        ]
    ) + [
        nli_note,
        f"Foils paired with the untouched translation of the original in {', '.join(langs)}; English processed once.",
    ]


def _summary(args: Params, origin: _FoilOrigin, kept) -> list[str]:
    """The card's "This build": which foils the rows hold and whether NLI ran (the family prose describes alee's own pipeline)."""
    labels = ", ".join(sorted({c.perturbation for c in kept})) or "none"
    made = (
        f"Foils read from {Path(args.foils).name}, made elsewhere by {origin.generator or 'an unknown generator'}"
        if args.foils
        else "Foils made here by alee's own AMR pipeline"
    )
    out = [f"{made}; perturbation labels: {labels}."]
    if args.foils and origin.generator == foil_types.SENTENCE_SMITH:
        out.append(foil_types.SENTENCE_SMITH_NOTE)
    out.append(
        "The NLI filter was NOT run (--no-nli): no foil was checked for a change of meaning here."
        if args.no_nli
        else f"The NLI filter ran ({args.nli_model}, both directions)."
    )
    return out


def _limitations(args: Params, origin: _FoilOrigin) -> list[str]:
    """The card's limitations, the build's own first."""
    limitations = [
        "Foils are machine-generated from AMR; a foil may be ungrammatical or change more than the edited concept.",
        "Only the English side is edited: TACC tests whether a model maps a target sentence closer to its English original than to the foil.",
    ]
    if args.no_nli:
        limitations.insert(
            0,
            "The NLI filter was skipped: some foils may not change the meaning (e.g. paraphrases).",
        )
    if args.foils and origin.generator == foil_types.SENTENCE_SMITH:
        limitations.insert(0, foil_types.SENTENCE_SMITH_NOTE)
    return limitations


def _parameters(
    args: Params, langs: list[str], origin: _FoilOrigin, kept, pinned: str | None
) -> dict[str, Any]:
    """The manifest's build parameters (``corpus_source`` only with ``--corpus``: other content ids stay)."""
    return {
        **({"corpus_source": pinned} if pinned else {}),
        **manifest_params(args),
        "langs": langs,
        "source": "foils" if args.foils else "amr-pipeline",
        "foil_generator": origin.generator if args.foils else "xlbench amr-pipeline",
        "labels": sorted({c.perturbation for c in kept}),
        "nli": "skipped" if args.no_nli else args.nli_model,
        "entail_threshold": None if args.no_nli else args.entail_threshold,
        "reject_bidirectional": None if args.no_nli else not args.keep_bidirectional,
    }
