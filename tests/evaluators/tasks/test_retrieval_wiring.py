"""Task-level wiring of the paper-fidelity options (issue 16) and the one-pass paths (issue 18) of the cbd evaluators.

Tiny built cbd datasets, the random encoder and a tiny randomly initialised BERT:
the builder's paper defaults and their signature, the tie rule and tie counts of
word retrieval, S_strong modes, plots drawn without encoding again, and sentence
retrieval's criteria, poolings and single forward pass per batch.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

from builders.cli import main
from evaluators.run.runner import evaluate


def _word(i: int) -> str:
    """A 4-letter word (one random-encoder piece; letters only, so the tiny BERT spells it)."""
    alphabet = "bcdfghjklmnpqrstvxz"
    return alphabet[i % 19] + alphabet[(i // 19) % 19] + "a" + alphabet[(i // 361) % 19]


def corpus(
    folder: Path,
    n_sent: int,
    vocab: int,
    seed: int = 0,
    copy: bool = True,
    extra_dict: tuple[str, ...] = (),
    lines: list[str] | None = None,
) -> tuple[Path, Path]:
    """Sentences of 5 distinct words drawn from ``vocab`` words (so words repeat across sentences)."""
    rng = np.random.default_rng(seed)
    words = [_word(i) for i in range(vocab)]
    mapping = {w: (w if copy else _word(i + 400)) for i, w in enumerate(words)}
    if lines is None:
        lines = []
        for i in range(n_sent):
            pick = [words[k] for k in rng.choice(vocab, size=5, replace=False)]
            lines.append(f"{i}\t{' '.join(pick)}\t{' '.join(mapping[w] for w in pick)}")
    folder.mkdir(parents=True, exist_ok=True)
    tsv, dic = folder / "corpus.tsv", folder / "dict.txt"
    tsv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    dic.write_text(
        "".join(f"{w} {mapping[w]}\n" for w in words) + "".join(x + "\n" for x in extra_dict),
        encoding="utf-8",
    )
    return tsv, dic


def build(folder: Path, tsv: Path, dic: Path, *extra: str) -> Path:
    out = folder / "ds"
    assert (
        main(
            [
                "build",
                "cbd",
                "--lang",
                "eng-deu",
                "--tsv",
                str(tsv),
                "--dict",
                str(dic),
                "--max-pairs",
                "0",
                "--out",
                str(out),
                *extra,
            ]
        )
        == 0
    )
    return out


def manifest(ds: Path) -> dict:
    return json.loads((ds / "manifest.json").read_text(encoding="utf-8"))


# ---------------------------------------------------------------- builder defaults


def test_builder_defaults_are_the_authors_and_each_can_be_turned_off(tmp_path):
    lines = [
        "0\tthe ecole is here\tdie École ist hier",
        "1\tthe school is here\tdie Schule ist hier",
        "2\tan ecole there\teine École dort",
    ]
    tsv, dic = corpus(
        tmp_path, 0, 0, lines=lines, extra_dict=("ecole école", "school schule", "here hier")
    )
    paper = build(tmp_path / "paper", tsv, dic, "--aligner", "none")
    m = manifest(paper)
    assert (
        m["params"]["fold_case"] is True
        and m["params"]["fold_accents"] is True
        and m["params"]["avoid_repetition"] is True
    )
    assert m["parameters"]["fold_case"] is True and m["parameters"]["avoid_repetition"] is True
    sig = m["build_signature"]
    assert (
        "fold-case" not in sig and "fold-accents" not in sig and "avoid-repetition" not in sig
    )  # defaults: in the hash
    from datasets import load_dataset

    rows = load_dataset(str(paper), "eng_Latn-deu_Latn", split="test").to_list()
    pairs = sorted((r["src_word"], r["tgt_word"]) for r in rows)
    # Folded matching finds ecole -> École (case and accent differ); each word type once: "ecole"/"here" once.
    assert ("ecole", "École") in pairs and len([p for p in pairs if p[0] == "ecole"]) == 1
    assert (
        m["counts"]["selection"]["dropped"]["repetition"]
        == m["counts"]["extraction"]["kept"] - len(rows)
        > 0
    )

    exact = build(
        tmp_path / "exact",
        tsv,
        dic,
        "--aligner",
        "none",
        "--no-fold-case",
        "--no-fold-accents",
        "--allow-repetition",
    )
    m2 = manifest(exact)
    assert (
        m2["params"]["fold_case"],
        m2["params"]["fold_accents"],
        m2["params"]["avoid_repetition"],
    ) == (False, False, False)
    assert (
        "fold-case:false" in m2["build_signature"] and "fold-accents:false" in m2["build_signature"]
    )
    assert "avoid-repetition:false" in m2["build_signature"]
    assert m2["counts"]["selection"]["dropped"]["repetition"] == 0
    rows2 = load_dataset(str(exact), "eng_Latn-deu_Latn", split="test").to_list()
    assert not any(
        r["src_word"] == "ecole" for r in rows2
    )  # "École" is not "ecole" without folding
    assert m["build_signature"].rsplit("|h:", 1)[1] != m2["build_signature"].rsplit("|h:", 1)[1]


def test_repetition_counts_accent_variants_as_one_word_type():
    from builders.cbd import logic

    recs = [{"src_word": "ete", "tgt_word": "a"}, {"src_word": "été", "tgt_word": "b"}]
    kept, counts = logic.select(recs, np.random.default_rng(0), avoid_repetition=True, accents=True)
    assert counts["repetition"] == 1 and len(kept) == 1
    kept, counts = logic.select(
        recs, np.random.default_rng(0), avoid_repetition=True, accents=False
    )
    assert counts["repetition"] == 0 and len(kept) == 2


# ---------------------------------------------------------------- word retrieval: ties, modes, signature


@pytest.fixture(scope="module")
def repeated_words(tmp_path_factory):
    """A copy language with word types repeated across sentences (kept: --allow-repetition)."""
    folder = tmp_path_factory.mktemp("rep")
    tsv, dic = corpus(folder, 40, 120)
    return build(folder, tsv, dic, "--aligner", "none", "--allow-repetition")


def one_hot_vectors(folder: Path, words: list[str]) -> tuple[str, str]:
    """Static vectors, one-hot per word type: every product is exact, so twins tie exactly under any BLAS."""
    lines = [f"{len(words)} {len(words)}"]
    for i, w in enumerate(words):
        lines.append(w + " " + " ".join("1" if j == i else "0" for j in range(len(words))))
    path = folder / "onehot.vec"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path), str(path)


def test_tie_rule_strict_and_first_on_duplicated_vectors(repeated_words, tmp_path):
    from datasets import load_dataset

    rows = load_dataset(str(repeated_words), "eng_Latn-deu_Latn", split="test").to_list()
    n = len(rows)
    words = [r["src_word"] for r in rows]
    once = sum(words.count(w) == 1 for w in set(words))
    distinct = len(set(words))
    assert 0 < once < distinct < n  # the fixture has unique and repeated words
    common = {
        "dataset": str(repeated_words),
        "n": 10_000,
        "repeats": 1,
        "criterion": "cosine",
        "static_vectors": one_hot_vectors(tmp_path, sorted(set(words))),
    }
    strict = evaluate("word-retrieval", **common)
    first = evaluate(
        "word-retrieval", **common, tie_rule="first", out=str(tmp_path), save_predictions=True
    )
    (s,), (f,) = strict.scores["test"], first.scores["test"]
    # the per-item rows follow the tie rule too: their mean is the best layer's S_weak
    import polars as pl

    (predictions,) = tmp_path.glob("*.predictions.parquet")
    items = pl.read_parquet(predictions)
    for d in ("src_tgt", "tgt_src"):
        mine = items.filter(pl.col("item_id").str.ends_with(":" + d))
        assert mine["correct"].mean() == pytest.approx(f[f"s_weak_{d}"])
    # Every occurrence of a word has the same vector. Strict: only words seen once are retrieved;
    # the authors' first-index argmax: the first occurrence of each word.
    for d in ("src_tgt", "tgt_src"):
        assert s[f"s_weak_{d}"] == pytest.approx(once / n)
        assert f[f"s_weak_{d}"] == pytest.approx(distinct / n)
        assert (
            s[f"s_weak_ties_{d}"] == f[f"s_weak_ties_{d}"] == n - once
        )  # counted under both rules
    assert s["ties"] == sum(
        s[k]
        for k in (
            "s_weak_ties_src_tgt",
            "s_weak_ties_tgt_src",
            "s_strong_ties_src_tgt",
            "s_strong_ties_tgt_src",
        )
    )
    assert (
        s["counts"][0]["src_tgt"]["weak_ties"] == n - once
        and s["counts"][0]["src_tgt"]["tie_rule"] == "strict"
    )
    assert "tie-rule:strict" in strict.signature and "tie-rule:first" in first.signature
    assert any("ties between the translation" in note for note in strict.notes)
    # CSLS: the same twins tie (their neighbourhoods are equal too); first never scores below strict.
    c_strict = evaluate("word-retrieval", **{**common, "criterion": "csls"}).scores["test"][0]
    c_first = evaluate(
        "word-retrieval", **{**common, "criterion": "csls"}, tie_rule="first"
    ).scores["test"][0]
    assert (
        c_strict["s_weak_ties_src_tgt"] >= n - once
        and c_first["s_weak_src_tgt"] > c_strict["s_weak_src_tgt"]
    )


@pytest.mark.parametrize("mode", ["paper", "pooled", "union"])
def test_strong_modes_are_read_from_their_own_counts(repeated_words, mode):
    res = evaluate(
        "word-retrieval",
        model="random:32:2:0",
        dataset=str(repeated_words),
        n=60,
        repeats=2,
        layers="1",
        strong=mode,
    )
    assert (
        res.scores["test"][0]["s_strong_src_tgt"] > 0.5
    )  # layer 1 mixes in the sentence: no longer all ties
    (entry,) = res.scores["test"]
    for direction in ("src_tgt", "tgt_src"):
        per_repeat = [c[direction][f"strong_{mode}"] / c[direction]["n"] for c in entry["counts"]]
        assert entry[f"s_strong_{direction}"] == pytest.approx(float(np.mean(per_repeat)))
        assert entry[f"s_strong_ties_{direction}"] == sum(
            c[direction][f"strong_{mode}_ties"] for c in entry["counts"]
        )
    assert (
        f"strong:{mode}" in res.signature
        and "criterion:csls" in res.signature
        and "csls-k:10" in res.signature
    )


def test_word_retrieval_matches_separate_directions(repeated_words):
    """The shared-neighbourhood path gives the counts of two independent one-direction calls."""
    from evaluators.encoders import load_encoder
    from evaluators.metrics import csls
    from evaluators.tasks.word_retrieval import encode_spans

    res = evaluate(
        "word-retrieval",
        model="random:32:2:0",
        dataset=str(repeated_words),
        n=10_000,
        repeats=1,
        layers="2",
    )
    (entry,) = res.scores["test"]
    from datasets import load_dataset

    rows = load_dataset(str(repeated_words), "eng_Latn-deu_Latn", split="test").to_list()
    enc = load_encoder("random:32:2:0")
    u, _, _ = encode_spans(
        enc, [r["src_sentence"] for r in rows], [(r["src_start"], r["src_end"]) for r in rows], [2]
    )
    v, _, _ = encode_spans(
        enc, [r["tgt_sentence"] for r in rows], [(r["tgt_start"], r["tgt_end"]) for r in rows], [2]
    )
    fwd, bwd = csls.retrieval_counts(u[0], v[0]), csls.retrieval_counts(v[0], u[0])
    assert (
        entry["counts"][0]["src_tgt"]["weak"] == fwd.weak
        and entry["counts"][0]["tgt_src"]["weak"] == bwd.weak
    )
    assert entry["counts"][0]["src_tgt"]["strong_paper"] == fwd.strong_paper


def test_histogram_uses_the_vectors_of_the_scoring(tmp_path, monkeypatch):
    """The aligner pairs of Fig. 5 come from sentences already encoded: plots encode nothing, scores do not move."""
    import evaluators.tasks.word_retrieval as wr

    tsv, dic = corpus(tmp_path, 40, 300, copy=False)
    ds = build(tmp_path, tsv, dic, "--aligner", "fast_align")
    calls = []
    real = wr.encode_spans

    def counted(*args, **kwargs):
        calls.append(len(args[1]))
        return real(*args, **kwargs)

    monkeypatch.setattr(wr, "encode_spans", counted)
    res = evaluate(
        "word-retrieval",
        model="random:32:2:0",
        dataset=str(ds),
        n=100,
        repeats=1,
        out=str(tmp_path / "r"),
        plots=True,
    )
    assert len(calls) == 2  # source side and target side, once each; the plot called nothing
    hist = [p for p in res.artifacts if "hist-layer" in p]
    assert len(hist) == 1 and Path(hist[0]).stat().st_size > 1000
    plain = evaluate(
        "word-retrieval",
        model="random:32:2:0",
        dataset=str(ds),
        n=100,
        repeats=1,
        hist_aligner_pairs=0,
    )
    strip = [{k: v for k, v in e.items() if k != "counts"} for e in res.scores["test"]]
    assert strip == [{k: v for k, v in e.items() if k != "counts"} for e in plain.scores["test"]]


# ---------------------------------------------------------------- sentence retrieval


def _tiny_bert(folder: Path) -> str:
    conftest = Path(__file__).resolve().parents[2] / "evaluators" / "encoders" / "conftest.py"
    spec = importlib.util.spec_from_file_location("_encoders_conftest", conftest)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_bert(folder)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sr")
    tsv, dic = corpus(folder, 12, 60, copy=False)
    ds = build(folder, tsv, dic, "--aligner", "none")
    return ds, _tiny_bert(folder / "bert")


@pytest.mark.slow
def test_sentence_retrieval_one_forward_pass_per_batch_for_every_layer_and_pooling(tiny):
    from evaluators.encoders import load_encoder

    ds, bert = tiny
    enc = load_encoder(f"hf:{bert}", batch_size=4, use_cache=False)
    calls = []
    forward = enc.model.forward

    def counted(*args, **kwargs):
        calls.append(1)
        return forward(*args, **kwargs)

    enc.model.forward = counted
    res = evaluate("sentence-retrieval", model=enc, dataset=str(ds), n=10, layers="all")
    assert [e["layer"] for e in res.scores["test"]] == [0, 1, 2]
    # 10 source + 10 target sentences, batches of 4: 5 passes serve 3 layers x 2 poolings (not 2 x 6 x 3).
    assert len(calls) == math.ceil(20 / 4)
    e = res.scores["test"][0]
    for pooling in ("cls", "mean"):
        assert {
            f"acc_{pooling}",
            f"ties_{pooling}",
            f"cos_translated_{pooling}",
            f"cos_random_{pooling}",
        } <= set(e)
    assert (
        e["cos_translated"] == e["cos_translated_cls"]
    )  # Fig. 4's pooling is the CLS token, as in the paper
    assert res.main_score == max(x["acc_mean"] for x in res.scores["test"])
    sig = res.signature
    for part in (
        "criterion:csls",
        "csls-k:10",
        "tie-rule:strict",
        "poolings:cls,mean",
        "mean:non-special-tokens",
    ):
        assert part in sig


@pytest.mark.slow
def test_sentence_retrieval_matches_an_independent_computation(tiny):
    """CLS = the first position; mean = mean of the non-special tokens; CSLS or cosine, as asked."""
    from datasets import load_dataset

    from evaluators.encoders import load_encoder
    from evaluators.metrics.sentence import sentence_retrieval

    ds, bert = tiny
    enc = load_encoder(f"hf:{bert}", use_cache=False)
    rows = load_dataset(str(ds), "eng_Latn-deu_Latn", split="test").to_list()
    pairs = list(dict.fromkeys((r["src_sentence"], r["tgt_sentence"]) for r in rows))
    for criterion in ("csls", "cosine"):
        res = evaluate(
            "sentence-retrieval",
            model=enc,
            dataset=str(ds),
            n=len(pairs),
            layers="1",
            criterion=criterion,
            csls_k=3,
        )
        (e,) = res.scores["test"]
        src, tgt = (
            [p[0] for p in pairs],
            [p[1] for p in pairs],
        )  # n = all: every pair, in dataset order
        for pooling in ("cls", "mean"):
            if pooling == "cls":
                a, b = (enc.sentence_embeddings(x, pooling="cls", layer=1) for x in (src, tgt))
            else:  # token_states drop the special tokens: their mean is the paper's mean pooling
                a, b = (
                    np.stack([t.states[0].mean(axis=0) for t in enc.token_states(x, [1])])
                    for x in (src, tgt)
                )
            want = sentence_retrieval(a, b, criterion, k=3)
            assert e[f"correct_{pooling}"] == [want.correct_src_tgt, want.correct_tgt_src]
            assert e[f"ties_{pooling}"] == [want.ties_src_tgt, want.ties_tgt_src]
        assert ("csls-k:3" in res.signature) == (criterion == "csls")


def test_sentence_retrieval_options_and_plots(tmp_path):
    tsv, dic = corpus(tmp_path, 20, 60, copy=True)
    ds = build(tmp_path, tsv, dic, "--aligner", "none")
    res = evaluate(
        "sentence-retrieval",
        model="random:32:2:0",
        dataset=str(ds),
        n=15,
        poolings="mean",
        tie_rule="first",
        criterion="cosine",
        out=str(tmp_path / "r"),
        plots=True,
    )
    e = res.scores["test"][0]
    assert (
        "acc_cls" not in e
        and e["acc_mean"] == 1.0
        and e["cos_translated"] == e["cos_translated_mean"]
    )
    assert (
        "poolings:mean" in res.signature
        and "tie-rule:first" in res.signature
        and "csls-k" not in res.signature
    )
    pngs = [p for p in res.artifacts if p.endswith(".png")]
    assert len(pngs) == 1 and pngs[0].endswith("__mean.png")
    both = evaluate(
        "sentence-retrieval",
        model="random:32:2:0",
        dataset=str(ds),
        n=15,
        out=str(tmp_path / "r2"),
        plots=True,
    )
    assert sorted(
        Path(p).name.rsplit("__", 1)[1] for p in both.artifacts if p.endswith(".png")
    ) == ["cls.png", "mean.png"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"poolings": "max"}, "--poolings takes comma-separated names from cls, mean; got 'max'."),
        ({"csls_k": 0}, "--csls-k must be at least 1, got 0."),
        ({"criterion": "dot"}, "--criterion must be one of csls, cosine; got 'dot'."),
        ({"tie_rule": "last"}, "--tie-rule must be one of strict, first; got 'last'."),
    ],
)
def test_sentence_retrieval_bad_options(kwargs, message):
    from evaluators.core.errors import UsageError

    with pytest.raises(UsageError) as err:
        evaluate("sentence-retrieval", model="random", dataset="unused", **kwargs)
    assert message in str(err.value)
