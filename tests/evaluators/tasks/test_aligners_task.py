"""``xlbench eval aligners`` end to end on a toy pair whose links are obvious."""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main as eval_main
from evaluators.core.errors import UsageError
from evaluators.metrics.correlation import pearson
from evaluators.tasks.aligners import _pos_tagger, parse_pair

TOY = [
    ("the house", "la maison", "0-0 1-1"),
    ("the red house", "la maison rouge", "0-0 1-2 2-1"),
    ("a red car", "une voiture rouge", "0-0 1-2 2-1"),
    ("the car", "la voiture", "0-0 1-1"),
    ("a house", "une maison", "0-0 1-1"),
    ("the blue car", "la voiture bleue", "0-0 1-2 2-1"),
    ("a blue house", "une maison bleue", "0-0 1-2 2-1"),
]

EXTRA = [
    (" ".join(w for w in (d, a, n) if w), " ".join(w for w in (fd, fn, fa) if w))
    for d, fd in (("the", "la"), ("a", "une"))
    for n, fn in (("house", "maison"), ("car", "voiture"))
    for a, fa in (("", ""), ("red", "rouge"), ("blue", "bleue"))
]


def _fixture(tmp_path):
    silver = tmp_path / "silver"
    silver.mkdir()
    (silver / "parallel.txt").write_text(
        "".join(f"{s} ||| {t}\n" for s, t, _ in TOY), encoding="utf-8"
    )
    # Silver decides only the nouns/adjectives (partial), 0-based, one line per link as SilverAlign may write it.
    gold_lines = []
    for n, (_, _, links) in enumerate(TOY):
        for link in links.split()[1:]:
            gold_lines.append(f"{n}\t{link}")
    (silver / "gold.txt").write_text("\n".join(gold_lines), encoding="utf-8")
    # Gold: 1-based, every word, target side first (reversed like WPT ro-en).
    gt = tmp_path / "gold.src-tgt"
    gt.write_text("".join(f"{t} ||| {s}\n" for s, t, _ in TOY), encoding="utf-8")
    gl = tmp_path / "gold.links"
    gl.write_text(
        "".join(
            " ".join(f"{int(j) + 1}-{int(i) + 1}" for i, j in (x.split("-") for x in links.split()))
            + "\n"
            for _, _, links in TOY
        ),
        encoding="utf-8",
    )
    # Extra text: every determiner/adjective/noun combination, five times; the seven evaluation pairs
    # among them and all repeats are dropped when training per setting (12 x 5 - 5 kept = 55 per setting).
    train_s, train_t = tmp_path / "train.src", tmp_path / "train.tgt"
    train_s.write_text("".join(f"{s}\n" for s, _ in EXTRA * 5), encoding="utf-8")
    train_t.write_text("".join(f"{t}\n" for _, t in EXTRA * 5), encoding="utf-8")
    return silver, gt, gl, train_s, train_t


def test_aligners_experiment_end_to_end(tmp_path, capsys):
    silver, gt, gl, ts, tt = _fixture(tmp_path)
    out = tmp_path / "res"
    spec = f"name=toy,silver={silver},gold_text={gt},gold_links={gl},gold_reversed=1"
    code = eval_main(
        [
            "aligners",
            "--pair",
            spec,
            "--train-text",
            str(ts),
            str(tt),
            "--methods",
            "fast_align",
            "--tokenizers",
            "word",
            "bpe",
            "--vocab-size",
            "40",
            "--sweep",
            "30",
            "--sweep-tokenizer",
            "bpe",
            "--out",
            str(out),
            "--json",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    entries = {e["config"]: e for e in data["scores"]["test"]}
    assert list(entries) == ["fast_align/word", "fast_align/bpe-40", "fast_align/bpe-30"]
    word = entries["fast_align/word"]
    # The toy links are learnt exactly: silver (partial) and gold scores are perfect at word level.
    assert (word["silver_f1"], word["gold_f1"], word["gold_aer"]) == (1.0, 1.0, 0.0)
    assert word["silver_n_sure"] == 11 and word["gold_n_sure"] == 18
    assert word["groups"] == ["aligner", "tokenizer"]
    corr = data["scores"]["correlation"][0]
    for key, group in (("tokenizer", "tokenizer"), ("sweep", "sweep"), ("all", None)):
        chosen = [e for e in data["scores"]["test"] if group is None or group in e["groups"]]
        assert corr[f"n_configs_{key}"] == len(chosen)
        if len(chosen) < 3:  # r over two points is always ±1: never reported, never the main score
            assert corr[f"pearson_r_{key}"] is None and corr[f"spearman_rho_{key}"] is None
        else:
            r = pearson([e["silver_f1"] for e in chosen], [e["gold_f1"] for e in chosen])
            assert corr[f"pearson_r_{key}"] == (None if r is None else pytest.approx(r))
    assert (corr["n_configs_tokenizer"], corr["n_configs_sweep"], corr["n_configs_all"]) == (
        2,
        2,
        3,
    )
    assert data["main_score"] is None and "only from 3 configurations on" in " ".join(data["notes"])
    info = data["dataset"]["pairs"][0]
    assert info["gold_base"] == 1
    # One aligner per setting, each on its 7 sentences + the 5 new extra pairs (the paper's training).
    assert info["training"] == {
        s: {"lines": 12, "extra": 5, "dropped_duplicates": 55} for s in ("silver", "gold")
    }
    assert data["parameters"]["training"] == "per-setting" and data["parameters"]["dedup"] is True
    assert "|train:per-setting|dedup:yes|boot:1000|" in data["signature"]
    # Each F1 carries its bootstrap spread; perfect on every sentence, so no spread at all.
    assert (word["silver_f1_std"], word["silver_f1_low"], word["silver_f1_high"]) == (0.0, 1.0, 1.0)
    assert "bootstrap resamples" in " ".join(data["notes"])
    assert {f["bin"] for f in data["scores"]["frequency"]} >= {"1", "2-5", "6-20"}
    if _pos_tagger() is None:
        assert "part-of-speech breakdown skipped" in " ".join(data["notes"])
    # Plot names carry the result's stem (evaluator, dataset, model, parameters; issue 11).
    for png in ("silver_vs_gold.png", "vocab_sweep.png", "freq_toy.png"):
        (path,) = out.glob(f"aligners__*__{png}")
        assert path.read_bytes()[:4] == b"\x89PNG"


def test_pair_spec_errors():
    with pytest.raises(UsageError, match="Bad --pair field 'colour=red'"):
        parse_pair("silver=x,colour=red")
    with pytest.raises(UsageError, match="needs silver=<SilverAlign folder> or dataset="):
        parse_pair("name=x")
    with pytest.raises(UsageError, match="needs both gold_text and gold_links"):
        parse_pair("silver=x,gold_text=y")
    with pytest.raises(UsageError, match="needs both train_src and train_tgt"):
        parse_pair("silver=x,train_src=y")
    assert parse_pair("silver=/a/eng_fra")["name"] == "eng_fra"


def test_unknown_tokenizer_and_aligner(tmp_path, capsys):
    silver, *_ = _fixture(tmp_path)
    base = ["aligners", "--pair", f"silver={silver}", "--out", str(tmp_path / "r")]
    assert eval_main([*base, "--tokenizers", "spm"]) == 2
    assert (
        "Unknown tokenizer 'spm'; choose from word, bpe, wordpiece, unigram"
        in capsys.readouterr().err
    )
    assert eval_main([*base, "--methods", "giza"]) == 2
    assert "Unknown aligner 'giza'; choose from fast_align, eflomal" in capsys.readouterr().err


def test_silver_only_run_has_no_correlation(tmp_path, capsys):
    silver, *_ = _fixture(tmp_path)
    code = eval_main(
        [
            "aligners",
            "--pair",
            f"silver={silver}",
            "--methods",
            "fast_align",
            "--tokenizers",
            "word",
            "--sweep",
            "--no-plots",
            "--out",
            str(tmp_path / "r"),
            "--json",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert [e["config"] for e in data["scores"]["test"]] == ["fast_align/word"]
    assert data["scores"]["correlation"] == [] and data["main_score"] is None
    assert "no gold alignment given" in " ".join(data["notes"])
    assert "gold_f1" not in data["scores"]["test"][0]


def test_input_file_errors(tmp_path, capsys):
    silver, gt, gl, ts, tt = _fixture(tmp_path)
    short = tmp_path / "short.tgt"
    short.write_text("la maison\n", encoding="utf-8")
    base = ["aligners", "--methods", "fast_align", "--tokenizers", "word", "--sweep", "--no-plots"]
    out = ["--out", str(tmp_path / "r")]
    assert (
        eval_main([*base, "--pair", f"silver={silver}", "--train-text", str(ts), str(short), *out])
        == 2
    )
    assert "differ in length (60 vs 1 lines)" in capsys.readouterr().err
    gl.write_text("1-1\n", encoding="utf-8")
    assert (
        eval_main([*base, "--pair", f"silver={silver},gold_text={gt},gold_links={gl}", *out]) == 2
    )
    err = capsys.readouterr().err
    assert "gold.links has 1 lines but" in err and "has 7 sentence pairs" in err
    assert eval_main([*base, "--pair", f"silver={tmp_path / 'nope'}", *out]) == 2
    assert "Parallel text" in (err := capsys.readouterr().err) and "does not exist" in err


def test_joint_training_and_bootstrap_options(tmp_path, capsys):
    """--training joint --no-dedup is the earlier behaviour; --bootstrap 0 drops the spread, never an F1."""
    silver, gt, gl, ts, tt = _fixture(tmp_path)
    spec = f"name=toy,silver={silver},gold_text={gt},gold_links={gl},gold_reversed=1"
    base = [
        "aligners",
        "--pair",
        spec,
        "--train-text",
        str(ts),
        str(tt),
        "--methods",
        "fast_align",
        "--tokenizers",
        "word",
        "--sweep",
        "--no-plots",
        "--json",
    ]
    runs = {}
    for name, extra in (
        ("paper", []),
        ("joint", ["--training", "joint", "--no-dedup", "--bootstrap", "0"]),
    ):
        assert eval_main([*base, *extra, "--out", str(tmp_path / name)]) == 0
        runs[name] = json.loads(capsys.readouterr().out)
    joint = runs["joint"]
    # One corpus: 7 silver + 7 gold sentences + all 60 extra lines, nothing dropped.
    assert joint["dataset"]["pairs"][0]["training"] == {
        "joint": {"lines": 74, "extra": 60, "dropped_duplicates": 0}
    }
    assert "|train:joint|dedup:no|boot:0|" in joint["signature"]
    (paper_entry,), (joint_entry,) = runs["paper"]["scores"]["test"], joint["scores"]["test"]
    assert "silver_f1_std" in paper_entry and "gold_f1_low" in paper_entry
    assert not any(k.endswith(("_std", "_low", "_high")) for k in joint_entry)
    assert not any("bootstrap" in n for n in joint["notes"])
    assert eval_main([*base, "--bootstrap", "-1", "--out", str(tmp_path / "bad")]) == 2
    assert (
        "--bootstrap must be 0 (no interval) or a positive number of resamples, got -1."
        in capsys.readouterr().err
    )


def test_bootstrap_spread_is_seeded_and_shows_noise(tmp_path):
    """The spread comes from its own stream: same seed, same spread; a wrong sentence widens it."""

    from evaluators.metrics.correlation import bootstrap_f1, sentence_counts
    from evaluators.run.rng import bootstrap_rng

    sure = [{(0, 0), (1, 1)}, {(0, 0)}, {(0, 1), (1, 0)}, {(0, 0), (1, 1)}]
    pred = [{(0, 0), (1, 1)}, {(0, 0)}, {(0, 0), (1, 1)}, {(0, 0), (1, 1)}]  # sentence 2 wrong
    counts = sentence_counts(sure, None, pred)
    a = bootstrap_f1(counts, bootstrap_rng(0), 200)
    b = bootstrap_f1(counts, bootstrap_rng(0), 200)
    assert a == b and a.low < a.f1 < a.high and a.std > 0


@pytest.mark.parametrize(
    "ys",
    [[0.5, 0.5, 0.5, 0.99], [0.74, 0.742, 0.741, 0.71, 0.84], [0.9, 0.95, 1.0, 1.0], [0.3]],
)
def test_scatter_labels_are_spread_apart_in_the_points_order(ys):
    from evaluators.plots.alignment import spread_labels

    gap, low, high = 0.05, 0.0, 1.0
    out = spread_labels(ys, gap, low, high)
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    placed = [out[i] for i in order]
    # No two labels closer than a label's height, in the points' order, inside the panel.
    assert all(b - a >= gap - 1e-12 for a, b in zip(placed, placed[1:]))
    assert all(low <= y <= high for y in out)
    # A label that nothing forces away stays at its point.
    alone = [i for i in order if all(abs(ys[i] - ys[j]) >= 2 * gap for j in order if j != i)]
    assert all(out[i] == ys[i] for i in alone)
