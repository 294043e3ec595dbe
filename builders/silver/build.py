"""``xlbench build silver``: SilverAlign silver word alignments from MT + minimal pairs.

Wires the adapters (MT engine + translation cache, substitute generator,
tokenizer, source corpus) around the pure decision rule in
:mod:`builders.silver.logic`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from builders.adapters import bible
from builders.adapters import device as device_adapter
from builders.adapters import mt as mt_adapter
from builders.adapters.parallel import read_lines
from builders.adapters.provenance import pin
from builders.adapters.wordnet import wordnet_input
from builders.base import BuildResult, file_input, manifest_params
from builders.corpora import check_corpus_alone, open_corpus
from builders.corpora.base import Corpus
from builders.release.artifact import check_export_folder, stage_exports
from builders.silver import logic, spec, stages
from builders.silver.substitutes import WordNetSubstitutes
from builders.silver.tokenize import Tokenizer
from evaluators.compute.engine import Engine, LocalEngine
from evaluators.core.cache_dir import xlbench_cache_root
from evaluators.core.errors import InputFileError, UsageError
from evaluators.core.progress import Progress, scoped
from evaluators.schema import silver as S
from evaluators.schema.langs import pair_config, resolve_pair
from evaluators.schema.meta import InputRecord, ModelRecord

log = logging.getLogger("xlbench.silver")


def default_out(args: spec.Params) -> str:
    """``out/silver-<pair>`` (``-small`` appended for Silver_Small)."""
    src, tgt = resolve_pair(args.lang)
    suffix = "-small" if getattr(args, "small_src", None) else ""
    return f"out/silver-{pair_config(src, tgt)}{suffix}"


# --- the build ---------------------------------------------------------------------------


@dataclass
class SilverOutput:
    """Rows of the main and details tables, and counts for the manifest."""

    rows: list[dict[str, Any]]
    details: list[dict[str, Any]]
    counts: dict[str, Any] = field(default_factory=dict)


def build_silver(
    items: Sequence[tuple[str, str]],
    tokenizer: Tokenizer,
    generator: spec.SubstituteGenerator,
    translate: Callable[[list[str]], list[str]],
    k: int = spec.N_ALTERNATIVES,
    min_valid: int = spec.MIN_VALID,
    max_targets: int = spec.MAX_TARGETS,
    chunk: int = 64,
    src_tokenizer: Tokenizer | None = None,
    punctuation: bool = logic.SUBSTITUTE_PUNCTUATION,
) -> SilverOutput:
    """Run SilverAlign over ``(id, sentence)`` items.

    Args:
        items: source sentences with unique ids.
        tokenizer: tokenisation of the translations (and of the source unless ``src_tokenizer``).
        generator: a :class:`~builders.silver.spec.SubstituteGenerator` (WordNet or MLM substitutes).
        translate: ``list[str] -> list[str]`` (a :class:`~builders.adapters.mt.CachedTranslator`'s
            ``translate``); called once per source sentence with the sentence and its alternatives.
        k: alternatives per word.
        min_valid: valid alternatives needed.
        max_targets: target positions one word may change.
        chunk: sentences per substitute-generator call (one MLM batch).
        src_tokenizer: tokenisation of the source sentences when it differs (``whitespace``
            for the pre-tokenised source side of a gold set).
        punctuation: substitute punctuation tokens too (the authors' default).
    """
    src_tok = src_tokenizer or tokenizer
    chunks = stages.plan_chunks(items, src_tok, chunk, punctuation)
    subs = stages.run_substitutes(
        LocalEngine(), stages.SubstitutesStage(None, "", k, generator), chunks
    )
    return decide_all(chunks, subs, tokenizer, src_tok, translate, k, min_valid, max_targets)


def decide_all(
    chunks: Sequence[stages.Chunk],
    substitutes: Sequence[list],
    tokenizer: Tokenizer,
    src_tok: Tokenizer,
    translate: Callable[[list[str]], list[str]],
    k: int,
    min_valid: int,
    max_targets: int,
) -> SilverOutput:
    """The merge: translate each sentence's request and decide every word, in input order.

    Args:
        chunks: the plan (:func:`builders.silver.stages.plan_chunks`).
        substitutes: per chunk, the generator's alternatives (the substitutes stage).
        tokenizer: tokenisation of the translations.
        src_tok: tokenisation of the sources.
        translate: ``list[str] -> list[str]``, called once per sentence with its request.
        k: alternatives per word.
        min_valid: valid alternatives needed.
        max_targets: target positions one word may change.
    """
    rows: list[dict[str, Any]] = []
    details: list[dict[str, Any]] = []
    decisions_all: list[logic.WordDecision] = []
    n_words = n_alternatives = n_items = 0
    total = sum(len(c.items) for c in chunks)
    # the local MT runs here, one request per sentence: this is the silver build's long step
    with Progress(
        total, scoped("translate and decide"), unit="sentences", quiet_if_short=True
    ) as bar:
        for c, subs in zip(chunks, substitutes):
            for (sid, text), sp, pos, alts in zip(c.items, c.spans, c.positions, subs):
                row, decisions, sent_details, words, alternatives = _sentence(
                    sid,
                    text,
                    sp,
                    pos,
                    alts,
                    translate,
                    tokenizer,
                    src_tok,
                    k,
                    min_valid,
                    max_targets,
                )
                details += sent_details
                n_words += words
                n_alternatives += alternatives
                decisions_all += decisions
                if row is not None:
                    rows.append(row)
                bar.update(1)
            n_items += len(c.items)
    n_links = sum(len(r[S.SURE]) for r in rows)
    counts = logic.silver_counts(
        n_items, len(rows), n_links, decisions_all, n_words, n_alternatives
    )
    return SilverOutput(rows, details, counts)


def _sentence(
    sid: str,
    text: str,
    sp,
    pos,
    alts,
    translate: Callable[[list[str]], list[str]],
    tokenizer: Tokenizer,
    src_tok: Tokenizer,
    k: int,
    min_valid: int,
    max_targets: int,
):
    """Translate one sentence and its alternatives, decide every word.

    Returns the main-table row (``None`` without a link), the word decisions, the details rows,
    and the numbers of words tried and alternatives made.
    """
    # One translation request per source sentence: the sentence, then its alternatives.
    translations = translate(stages.request_of(text, sp, pos, alts, k))
    tr, cursor = translations[0], 1
    src_tokens = [text[s:e].lower() if src_tok.lowercase else text[s:e] for s, e in sp]
    tgt_tokens = tokenizer.tokenize(tr)
    by_pos = dict(zip(pos, alts))
    decisions, details = [], []
    n_words = n_alternatives = 0
    for j, word in enumerate(src_tokens):
        offered = by_pos.get(j)
        if offered is None:
            decision, words, alt_tr = logic.not_a_word(), [], []
        else:
            words = list(offered[:k])
            alt_tr = translations[cursor : cursor + len(words)]
            cursor += len(words)
            n_words += 1
            n_alternatives += len(words)
            decision = logic.decide_word(
                tgt_tokens,
                [tokenizer.tokenize(a) for a in alt_tr],
                min_valid=min_valid,
                max_targets=max_targets,
            )
        decisions.append(decision)
        details.append(
            {
                S.ID: sid,
                S.SRC_INDEX: j,
                S.WORD: word,
                S.ALTERNATIVES: words,
                S.ALT_TRANSLATIONS: list(alt_tr),
                S.STATUS: decision.status,
                S.REASON: decision.reason,
                S.N_VALID: decision.n_valid,
                S.TGT_INDICES: list(decision.targets),
            }
        )
    links = logic.merge_links(decisions)
    row = None
    if links:
        row = {
            S.ID: sid,
            S.SRC_TEXT: text,
            S.TGT_TEXT: tr,
            S.SRC_TOKENS: src_tokens,
            S.TGT_TOKENS: tgt_tokens,
            S.SURE: links,
            S.POSSIBLE: [list(link) for link in links],
        }
    return row, decisions, details, n_words, n_alternatives


# --- inputs ------------------------------------------------------------------------------


def read_sentences(path: str) -> list[tuple[str, str]]:
    """Read one sentence per line (``src ||| tgt`` lines give their left side); ids are 0-based line numbers.

    Blank lines keep their number but are skipped.

    Raises:
        InputFileError: missing or empty file.
    """
    out = []
    for i, line in enumerate(read_lines(path)):
        text = line.split(" ||| ", 1)[0].strip()
        if text:
            out.append((str(i), text))
    if not out:
        raise InputFileError(f"{path!r} has no sentences; pass a file with one sentence per line.")
    return out


def _corpus_source(
    args: spec.Params, src_lang: str, tokenizer: Tokenizer
) -> tuple[list[tuple[str, str]], InputRecord, str, Corpus]:
    """Silver_Large from ``--corpus``: its ``src_lang`` sentences, filtered and sampled with ``--seed``."""
    check_corpus_alone(args.corpus, {"--src": args.src, "--small-src": args.small_src})
    corpus = open_corpus(args.corpus or "", args.corpus_opt)
    items = logic.select(
        corpus.sentences(src_lang),
        tokenizer,
        args.max_sentences,
        args.min_words,
        args.max_words,
        np.random.default_rng(args.seed),
    )
    return items, corpus.input_record(), spec.LARGE, corpus


def _sentences(
    args: spec.Params, src_lang: str, tokenizer: Tokenizer
) -> tuple[list[tuple[str, str]], InputRecord, str, Corpus | None]:
    """The source sentences, their input, the subset and the opened ``--corpus`` (``None`` without)."""
    if args.corpus:
        return _corpus_source(args, src_lang, tokenizer)
    return (*_source(args, src_lang, tokenizer), None)


def _source(
    args: spec.Params, src_lang: str, tokenizer: Tokenizer
) -> tuple[list[tuple[str, str]], InputRecord, str]:
    if args.src and args.small_src:
        raise UsageError(
            "Pass either --src (Silver_Large) or --small-src (Silver_Small), not both; build them separately."
        )
    path = args.small_src or args.src
    if path:
        items = read_sentences(path)
        items = logic.select(
            items, tokenizer, args.max_sentences, args.min_words, args.max_words, None
        )
        subset = spec.SMALL if args.small_src else spec.LARGE
        return items, file_input("small_src" if args.small_src else "src", path), subset

    translation = bible.translation_for(src_lang)
    verses = [(f"{b}:{c}:{v}", text) for (b, c, v), text in bible.verses(translation)]
    items = logic.select(
        verses,
        tokenizer,
        spec.DEFAULT_MAX_SENTENCES if args.max_sentences is None else args.max_sentences,
        spec.DEFAULT_MIN_WORDS if args.min_words is None else args.min_words,
        spec.DEFAULT_MAX_WORDS if args.max_words is None else args.max_words,
        np.random.default_rng(args.seed),
    )
    return items, bible.input_record(translation), spec.LARGE


def _generator(args: spec.Params, src_lang: str) -> spec.SubstituteGenerator:
    """The driver's substitute generator (the tests' seam: replaced by a synthetic one)."""
    return stages.open_generator(args, src_lang)


def check_rule(k: int, min_valid: int) -> None:
    """Check that ``--min-valid`` fits ``--alternatives`` (each alone is checked by its declaration).

    Raises:
        UsageError: ``min_valid`` is not in 1..k.
    """
    if not 1 <= min_valid <= k:
        raise UsageError(
            f"--min-valid must be between 1 and --alternatives ({k}), got {min_valid}."
        )


def export_files(out: SilverOutput, directory: str, config: str) -> dict[str, str]:
    """Stage the aligner-tool files of the main table: text, 0-based Pharaoh links, ids.

    ``<config>.src-tgt`` holds tokenised ``src ||| tgt`` lines, ``<config>.align``
    the sure links (``i-j``) and ``<config>.ids`` the row ids, one line per sentence.
    They are written into a temporary folder beside ``directory``; the returned
    ``final -> staged`` map is moved into place by ``write_dataset`` once the
    dataset itself is written, so a failed build leaves no export behind.

    Raises:
        OutputError: the folder cannot be written.
    """
    lines = {
        "src-tgt": "".join(
            f"{' '.join(r[S.SRC_TOKENS])} ||| {' '.join(r[S.TGT_TOKENS])}\n" for r in out.rows
        ),
        "align": "".join(logic.to_pharaoh(r[S.SURE]) + "\n" for r in out.rows),
        "ids": "".join(f"{r[S.ID]}\n" for r in out.rows),
    }
    return stage_exports(
        directory, {f"{config}.{ext}": text for ext, text in lines.items()}, "--export"
    )


def _silver_pass(
    backend, mt_store, args: spec.Params, src_lang, items, tokenizers, generator, engine
):
    """Translate and decide every sentence (substitutes + MT on the engine when not local).

    Returns the :class:`SilverOutput` and the translator (its counts go to the manifest's ``run``).
    """
    tokenizer, src_tokenizer = tokenizers
    cache = None
    if not args.no_mt_cache:
        cache = mt_adapter.TranslationCache(
            args.mt_cache or xlbench_cache_root() / "mt-cache.sqlite"
        )
    translator = mt_adapter.CachedTranslator(engine, cache, batch_size=args.mt_batch_size)
    log.info("silver: %d sentences, %s, %s substitutes", len(items), engine.name, generator.name)
    k = args.alternatives
    try:
        chunks = stages.plan_chunks(
            items, src_tokenizer, punctuation=not args.no_substitute_punctuation
        )
        subs = stages.run_substitutes(
            backend, stages.SubstitutesStage(args, src_lang, k, generator), chunks
        )
        if (
            backend.name != "local"
        ):  # workers cannot share the SQLite cache: MT first, on the cluster
            store = None if cache is None else (mt_store or f"{cache.path}.shards")
            requests = stages.requests_of(chunks, subs, k)
            served = stages.translate_on_engine(backend, args, engine, cache, store, requests)
            translator = mt_adapter.CachedTranslator(served, cache, batch_size=args.mt_batch_size)
        out = decide_all(chunks, subs, tokenizer, src_tokenizer, translator.translate, k,
                         args.min_valid, args.max_targets)  # fmt: skip
    finally:
        if cache is not None:
            cache.close()
    return out, translator


def _parameters(args: spec.Params, pair, subset, engine, generator, tokenizers, n_items) -> dict:
    tokenizer, src_tokenizer = tokenizers
    parameters = {
        **manifest_params(args),
        "pair": pair,
        "subset": subset,
        "mt": engine.name,
        "mt_spec": args.mt,
        "substitutes": generator.name,
        "tokenizer": tokenizer.signature,
        "src_tokenizer": src_tokenizer.signature,
        "sentences": n_items,
        "substitute_punctuation": not args.no_substitute_punctuation,
    }
    if args.substitutes == "mlm":
        parameters["mlm_search"] = args.mlm_search
        parameters["count_original"] = not args.no_count_original
    if generator.name == "wordnet":
        parameters["wordnet_senses"] = args.wordnet_senses
        parameters["closed_class"] = not args.no_closed_class
    if not (args.src or args.small_src or args.corpus):
        parameters.update(
            max_sentences=spec.DEFAULT_MAX_SENTENCES
            if args.max_sentences is None
            else args.max_sentences,
            min_words=spec.DEFAULT_MIN_WORDS if args.min_words is None else args.min_words,
            max_words=spec.DEFAULT_MAX_WORDS if args.max_words is None else args.max_words,
        )
    return parameters


def _translator(args: spec.Params, src_lang: str, tgt_lang: str) -> mt_adapter.Translator:
    """The MT engine ``--mt`` names for the pair; ``--mt-beams``/``--mt-revision`` only with an hf: model.

    Both options are signed: one that no engine reads would change the content id of the same rows.
    """
    engine = mt_adapter.select_translator(
        args.mt,
        src_lang,
        tgt_lang,
        rate=args.mt_rate,
        retries=args.mt_retries,
        batch_size=min(args.mt_batch_size, 64),
        num_beams=args.mt_beams,
        revision=args.mt_revision,
        device=args.device,
    )
    unused = "--mt-beams" if args.mt_beams != 1 else "--mt-revision" if args.mt_revision else None
    if unused and not engine.name.startswith("hf:"):
        raise UsageError(
            f"{unused} applies to hf: MT models, not {engine.name}; drop it, or pass --mt hf:<model>."
        )
    return engine


def run(args: spec.Params, backend: Engine) -> BuildResult:
    """Build SilverAlign silver alignments for ``--lang``.

    ``backend``: where substitutes and MT run (``--engine``; how to run, not a build parameter).
    """
    mt_store = args.mt_store

    src_lang, tgt_lang = resolve_pair(args.lang)
    check_rule(args.alternatives, args.min_valid)
    if args.export:
        check_export_folder(args.export, "--export")
    tokenizer = Tokenizer(args.tokenizer, lowercase=args.lowercase)
    src_scheme = args.src_tokenizer or ("whitespace" if args.small_src else args.tokenizer)
    src_tokenizer = Tokenizer(src_scheme, lowercase=args.lowercase)
    # The engine first: an offline build without an engine for the pair fails before any work.
    engine = _translator(args, src_lang, tgt_lang)
    # Only the masked LM and hf: MT models run on torch; their device is refused before any work.
    runs_model = args.substitutes == "mlm" or engine.name.startswith("hf:")
    device = device_adapter.run_device(args.device, backend.name, runs_model)
    generator = _generator(args, src_lang)
    items, input_record, subset, corpus = _sentences(args, src_lang, src_tokenizer)
    t0 = time.perf_counter()
    out, translator = _silver_pass(
        backend, mt_store, args, src_lang, items, (tokenizer, src_tokenizer), generator, engine
    )
    log.info("silver: built in %.1fs", time.perf_counter() - t0)
    pair = pair_config(src_lang, tgt_lang)
    main_suffix, details_suffix = spec.CONFIG_SUFFIX[subset]
    main_config = S.SCHEMA.config_name(pair, main_suffix)
    tables = {
        main_config: {"test": out.rows},
        S.SCHEMA.config_name(pair, details_suffix): {"test": out.details},
    }
    exports = export_files(out, args.export, main_config) if args.export else {}
    run_info = _run_info(translator, generator, device, time.perf_counter() - t0)
    limitations = list(spec.LIMITATIONS)
    if engine.online:
        limitations.append(
            f"The online engine ({engine.name}) is not versioned: the same command later may give other translations."
        )
    return BuildResult(
        tables=tables,
        parameters={
            **_parameters(
                args, pair, subset, engine, generator, (tokenizer, src_tokenizer), len(items)
            ),
            **({"corpus_source": corpus.pinned()} if corpus else {}),
        },
        inputs=[input_record, *_engine_inputs(engine, generator)],
        models=[
            ModelRecord("mt", engine.name, engine.version),
            ModelRecord("substitutes", generator.model_id, generator.revision),
            *([corpus.model_record()] if corpus else []),
        ],
        counts=dict(out.counts),
        construction=spec.construction(
            args,
            wordnet=generator.name == "wordnet",
            tokenizer=tokenizer.signature
            if src_tokenizer == tokenizer
            else f"{src_tokenizer.signature} (source) / {tokenizer.signature} (target)",
        ),
        limitations=limitations,
        name="xlbench-silver",
        params=args,
        # An online service is unversioned: the same request may be translated differently later.
        nondeterministic=[f"mt:{engine.name}"] if engine.online else [],
        run=run_info,
        exports=exports,
    )


def _run_info(translator, generator, device: str | None, seconds: float) -> dict[str, Any]:
    """The manifest's ``run`` section of a silver build.

    Cache hits, forward passes (they depend on the batch size), the device and timings differ
    between two builds of the same rows: they go to ``run``, never compared.
    """
    run_info: dict[str, Any] = {"mt": translator.counts(), "seconds_silver": round(seconds, 1)}
    if hasattr(generator, "forward_passes"):
        run_info["mlm_forward_passes"] = generator.forward_passes
    if device is not None:
        run_info["device"] = device
    return run_info


def _engine_inputs(engine, generator) -> list[InputRecord]:
    """Pin the installed data the engine and substitute generator read (Apertium pair, WordNet files).

    Apertium's pair data is a ``tool``: its translations are program output, not a copy
    of the dictionaries, so its GPL does not propagate. WordNet's words do appear in the
    details table (the alternatives), so WordNet is ``data``.
    """
    out = []
    files = getattr(engine, "input_files", None)
    if files:
        out.append(
            pin(
                f"mt:{engine.name}",
                files,
                role="tool",
                citation="Forcada et al. (2011). Apertium: a free/open-source "
                "platform for rule-based machine translation. Machine Translation 25(2): 127-144.",
            )
        )

    if isinstance(generator, WordNetSubstitutes):
        out.append(wordnet_input(generator._source))
    return out
