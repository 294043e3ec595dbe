"""Build a small corpus of real result JSONs: tiny offline datasets, several seeded random encoders.

Used by the report tests (one session fixture) and runnable by hand to look at a site:

    PYTHONPATH=. python tests/support/make_results.py /tmp/xl-results
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import numpy as np

from builders.cli import main

MODELS = ("random", "random:32:2:1", "random:32:2:2")
VOCAB = [f"w{i}" for i in range(120)]


def _letters(i: int) -> str:
    alphabet = "bcdfghjklmnpqrstvxz"
    return alphabet[i % 19] + alphabet[(i // 19) % 19] + "a" + alphabet[(i // 361) % 19]


def _quiet(argv: list[str]) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        rc = main(argv)
    if rc != 0:
        raise RuntimeError(f"xlbench {' '.join(argv)} exited {rc}")


def _cbd(work: Path, seed: int = 0) -> Path:
    """Build a cbd folder under ``work``; another ``seed`` gives another build (other sentences)."""
    rng = np.random.default_rng(seed)
    # Half the words copied, half mapped: the random encoders land between chance and 1.
    mapping = {w: (w if i % 2 else _letters(i)) for i, w in enumerate(VOCAB)}
    order = rng.permutation(len(VOCAB))
    lines = []
    for i in range(len(VOCAB) // 5):
        words = [VOCAB[k] for k in order[5 * i : 5 * i + 5]]
        lines.append(f"{i}\t{' '.join(words)}\t{' '.join(mapping[w] for w in words)}")
    (work / "corpus.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (work / "dict.txt").write_text("".join(f"{w} {mapping[w]}\n" for w in VOCAB), encoding="utf-8")
    out = work / "cbd"
    _quiet(
        [
            "build",
            "cbd",
            "--lang",
            "eng-deu",
            "--tsv",
            str(work / "corpus.tsv"),
            "--dict",
            str(work / "dict.txt"),
            "--aligner",
            "none",
            "--max-pairs",
            "0",
            "--out",
            str(out),
        ]
    )
    return out


def _bucc(work: Path) -> Path:
    rng = np.random.default_rng(1)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    src_lines = [" ".join("".join(rng.choice(letters, 5)) for _ in range(4)) for _ in range(200)]
    # Targets share two of four words with their source: imperfect, model-dependent mining.
    tgt_lines = [
        " ".join(s.split()[:2] + ["".join(rng.choice(letters, 5)) for _ in range(2)])
        for s in src_lines
    ]
    (work / "c.de").write_text("\n".join(src_lines) + "\n", encoding="utf-8")
    (work / "c.en").write_text("\n".join(tgt_lines) + "\n", encoding="utf-8")
    out = work / "bucc"
    _quiet(
        [
            "build",
            "bucc",
            "--lang",
            "deu-eng",
            "--parallel",
            str(work / "c.de"),
            str(work / "c.en"),
            "--gold-pairs",
            "20",
            "--parallel-fraction",
            "0.2",
            "--out",
            str(out),
        ]
    )
    return out


FOILS = """en_orig,en_foil,type
It rains.,It does not rain.,PN
The dog chased the cat.,The cat chased the dog.,RS
The penguin swims.,The bird swims.,hypernym
It is big.,It is small.,antonym
Nobody translated this.,Nobody translated that.,PN
"""
TARGETS = {
    "It rains.": "It rains.",
    "The dog chased the cat.": "Der Hund jagte die Katze.",
    "The penguin swims.": "The bird swims.",
    "It is big.": "It is big.",
}


def _alee(work: Path) -> Path:
    (work / "foils.csv").write_text(FOILS, encoding="utf-8")
    (work / "de.tsv").write_text(
        "".join(f"{en}\t{de}\n" for en, de in TARGETS.items()), encoding="utf-8"
    )
    out = work / "alee"
    _quiet(
        [
            "build",
            "alee",
            "--langs",
            "de",
            "--foils",
            str(work / "foils.csv"),
            "--tsv",
            f"de={work / 'de.tsv'}",
            "--no-nli",
            "--out",
            str(out),
        ]
    )
    return out


def _silver(work: Path) -> Path:
    silver = work / "silver"
    silver.mkdir()
    (silver / "parallel.txt").write_text(
        "the red house ||| the red house\nzq xv ||| mmmm zq\na blue car ||| une voiture bleue\n",
        encoding="utf-8",
    )
    (silver / "gold.txt").write_text("0\t0-0 1-1 2-2\n1\t0-1\n2\t0-0 1-2 2-1\n", encoding="utf-8")
    return silver


def make_results(root: Path, models: tuple[str, ...] = MODELS) -> Path:
    """Build the datasets under ``root/work`` and write every result under ``root/results``."""
    work, res = root / "work", root / "results"
    work.mkdir(parents=True, exist_ok=True)
    cbd, bucc, alee, silver = _cbd(work), _bucc(work), _alee(work), _silver(work)
    for model in models:
        common = ["--model", model, "--no-cache"]
        _quiet(
            [
                "eval",
                "word-retrieval",
                "--dataset",
                str(cbd),
                *common,
                "--n",
                "50",
                "--repeats",
                "2",
                "--no-plots",
                "--save-predictions",  # the cbd page's error table (words and sentences)
                "--out",
                str(res / "cbd"),
            ]
        )
        _quiet(
            [
                "eval",
                "sentence-retrieval",
                "--dataset",
                str(cbd),
                "--model",
                model,
                "--n",
                "20",
                "--out",
                str(res / "cbd"),
            ]
        )
        _quiet(  # with the bucc page's error table (sentences)
            [
                "eval",
                "bucc",
                "--dataset",
                str(bucc),
                *common,
                "--save-predictions",
                "--out",
                str(res / "bucc"),
            ]
        )
        _quiet(
            [
                "eval",
                "bitext-retrieval",
                "--dataset",
                str(bucc),
                *common,
                "--out",
                str(res / "bucc"),
            ]
        )
        _quiet(
            [
                "eval",
                "tacc",
                "--dataset",
                str(alee),
                "--model",
                model,
                "--no-plot",
                "--save-predictions",  # the alee page's error table (the three sentences)
                "--out",
                str(res / "alee"),
            ]
        )
        _quiet(
            [
                "eval",
                "embedding-aligner",
                "--model",
                model,
                "--silver",
                str(silver),
                "--layer",
                "all",
                "--method",
                "argmax",
                "itermax",
                "--no-cache",
                "--out",
                str(res / "silver"),
            ]
        )
    try:
        _aligners(work, res / "silver")
    except (RuntimeError, ImportError) as err:  # the statistical aligners are a build extra
        print(f"aligners skipped: {err}", file=sys.stderr)
    return res


TOY = [
    ("the house", "la maison", "0-0 1-1"),
    ("the red house", "la maison rouge", "0-0 1-2 2-1"),
    ("a red car", "une voiture rouge", "0-0 1-2 2-1"),
    ("the car", "la voiture", "0-0 1-1"),
    ("a house", "une maison", "0-0 1-1"),
    ("the blue car", "la voiture bleue", "0-0 1-2 2-1"),
    ("a blue house", "une maison bleue", "0-0 1-2 2-1"),
]


def _aligners(work: Path, out: Path) -> None:
    """Statistical aligners (no encoder): silver and gold F1 per configuration."""
    from evaluators.cli import main as eval_main

    silver = work / "toy-silver"
    silver.mkdir()
    (silver / "parallel.txt").write_text(
        "".join(f"{s} ||| {t}\n" for s, t, _ in TOY), encoding="utf-8"
    )
    (silver / "gold.txt").write_text(
        "\n".join(
            f"{n}\t{link}" for n, (_, _, links) in enumerate(TOY) for link in links.split()[1:]
        ),
        encoding="utf-8",
    )
    gt, gl = work / "gold.src-tgt", work / "gold.links"
    gt.write_text("".join(f"{s} ||| {t}\n" for s, t, _ in TOY), encoding="utf-8")
    gl.write_text(
        "".join(
            " ".join(f"{int(i) + 1}-{int(j) + 1}" for i, j in (x.split("-") for x in links.split()))
            + "\n"
            for _, _, links in TOY
        ),
        encoding="utf-8",
    )
    ts, tt = work / "train.src", work / "train.tgt"
    ts.write_text("".join(f"{s}\n" for s, _, _ in TOY * 5), encoding="utf-8")
    tt.write_text("".join(f"{t}\n" for _, t, _ in TOY * 5), encoding="utf-8")
    spec = f"name=eng_Latn-fra_Latn,silver={silver},gold_text={gt},gold_links={gl}"
    with contextlib.redirect_stdout(io.StringIO()):
        rc = eval_main(
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
                "35",
                "--out",
                str(out),
            ]
        )
    if rc != 0:
        raise RuntimeError(f"xlbench eval aligners exited {rc}")


if __name__ == "__main__":
    print(make_results(Path(sys.argv[1])))
