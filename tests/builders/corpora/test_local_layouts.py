"""The local corpus layouts (NTREX-128, FLORES-200, Tatoeba) on tiny fixture trees, and cbd/bucc built from them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders.cli import main
from builders.corpora import open_corpus
from evaluators.core.errors import InputFileError, LangCodeError, UsageError

SHARED = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"
SHARED_NTREX = SHARED / "ntrex128"

#: Ten English sentences of 5 words, each word used once; "deu" and "fra" copy them with a prefix.
WORDS = [f"w{i}" for i in range(50)]
ENG = [" ".join(WORDS[5 * i : 5 * i + 5]) for i in range(10)]


def _side(prefix: str) -> list[str]:
    return [" ".join(prefix + w for w in s.split()) for s in ENG]


def ntrex_tree(root: Path) -> Path:
    """NTREX-128's layout: source, references (one regional variant), document ids."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "newstest2019-src.eng.txt").write_text("\n".join(ENG) + "\n", encoding="utf-8")
    for code, prefix in (("deu", "d"), ("fra", "f"), ("fra-CA", "q")):
        (root / f"newstest2019-ref.{code}.txt").write_text(
            "\n".join(_side(prefix)) + "\n", encoding="utf-8"
        )
    (root / "DOCUMENT_IDS.tsv").write_text(
        "\n".join("doc.1" if i < 5 else "doc.2" for i in range(10)) + "\n", encoding="utf-8"
    )
    return root


def flores_tree(root: Path) -> Path:
    """flores200_dataset/{dev,devtest}/xxx_Xxxx.{split} with a metadata file."""
    base = root / "flores200_dataset"
    for split, n in (("dev", 4), ("devtest", 6)):
        (base / split).mkdir(parents=True)
        for code, prefix in (("eng_Latn", ""), ("deu_Latn", "d"), ("zho_Hans", "z")):
            lines = _side(prefix)[:n] if prefix else ENG[:n]
            (base / split / f"{code}.{split}").write_text("\n".join(lines) + "\n", encoding="utf-8")
        meta = ["URL\tdomain\ttopic\thas_image\thas_hyperlink"] + [
            f"http://x/{i}\twikinews\ttopic{i}\t0\t0" for i in range(n)
        ]
        (base / f"metadata_{split}.tsv").write_text("\n".join(meta) + "\n", encoding="utf-8")
    return root


def tatoeba_tree(root: Path) -> Path:
    root.mkdir(parents=True)
    for code, prefix in (("deu", "d"), ("spa", "s")):
        (root / f"tatoeba.{code}-eng.{code}").write_text(
            "\n".join(_side(prefix)[:3]) + "\n", encoding="utf-8"
        )
        (root / f"tatoeba.{code}-eng.eng").write_text("\n".join(ENG[:3]) + "\n", encoding="utf-8")
    return root


def test_ntrex_rows_ids_languages_and_documents(tmp_path):
    corpus = open_corpus(f"ntrex128:{ntrex_tree(tmp_path / 'n')}")
    assert corpus.languages() == ["deu_Latn", "eng_Latn", "fra_Latn"]
    pairs = corpus.pairs("eng", "fr")
    assert pairs[0] == ("newstest2019-0001", ENG[0], _side("f")[0])  # fra, not the fra-CA variant
    rows = list(corpus.rows("deu_Latn"))
    assert [r.meta["document"] for r in rows[4:6]] == ["doc.1", "doc.2"]
    assert corpus.sentences("deu")[0] == ("newstest2019-0001", _side("d")[0])
    rec = corpus.input_record()
    assert rec.name == "corpus:ntrex128" and rec.license == "CC-BY-SA-4.0"
    assert "NTREX-128" in (rec.citation or "")
    assert corpus.revision() == f"sha256:{rec.sha256}"
    assert corpus.pinned() == f"ntrex128:test@sha256:{rec.sha256}"


def test_ntrex_revision_follows_the_bytes(tmp_path):
    root = ntrex_tree(tmp_path / "n")
    first = open_corpus(f"ntrex128:{root}")
    first.pairs("eng", "deu")
    (root / "newstest2019-ref.deu.txt").write_text("\n".join(_side("x")) + "\n", encoding="utf-8")
    second = open_corpus(f"ntrex128:{root}")
    second.pairs("eng", "deu")
    assert first.revision() != second.revision()


def test_flores_splits_metadata_and_folder_forms(tmp_path):
    root = flores_tree(tmp_path / "f")
    devtest = open_corpus(f"flores200:{root}")
    assert devtest.split == "devtest" and devtest.languages() == [
        "deu_Latn",
        "eng_Latn",
        "zho_Hans",
    ]
    pairs = devtest.pairs("eng_Latn", "zho_Hans")
    assert len(pairs) == 6 and pairs[0][0] == "devtest-0001"
    row = next(devtest.rows("deu_Latn"))
    assert row.meta == {"split": "devtest", "domain": "wikinews", "topic": "topic0"}
    dev = open_corpus(f"flores200:{root / 'flores200_dataset'}", ["split=dev"])
    assert len(dev.pairs("deu", "eng")) == 4 and dev.pinned().startswith("flores200:dev@sha256:")


def test_tatoeba_pairs_with_english_only(tmp_path):
    corpus = open_corpus(f"tatoeba:{tatoeba_tree(tmp_path / 't')}")
    assert corpus.languages() == ["deu_Latn", "eng_Latn", "spa_Latn"]
    assert corpus.pairs("eng", "spa")[1] == ("spa-eng-0002", ENG[1], _side("s")[1])
    assert corpus.pairs("deu", "eng")[0] == ("deu-eng-0001", _side("d")[0], ENG[0])
    with pytest.raises(UsageError, match="pairs every language with English only"):
        corpus.pairs("deu", "spa")
    assert len(corpus.sentences("eng")) == 6


@pytest.mark.parametrize(
    ("spec", "options", "error", "message"),
    [
        ("nope", (), UsageError, "Unknown corpus 'nope'"),
        ("ntrex128", (), UsageError, "needs DIR"),
        ("ntrex128:{missing}", (), InputFileError, "is not a folder"),
        (
            "ntrex128:{root}",
            ("colour=red",),
            UsageError,
            "'colour' is not an option of corpus ntrex128",
        ),
        ("ntrex128:{root}", ("split",), UsageError, "KEY=VALUE"),
        ("ntrex128:{root}", ("split=dev",), UsageError, "has no split 'dev'"),
        ("flores200:{root}", (), InputFileError, "no devtest/ folder"),
    ],
)
def test_bad_corpus_input_is_one_sentence(tmp_path, spec, options, error, message):
    root = ntrex_tree(tmp_path / "n")
    with pytest.raises(error, match=message) as info:
        open_corpus(spec.format(root=root, missing=tmp_path / "absent"), options)
    message = str(info.value).replace("e.g. ", "")
    assert message.count(". ") == 0 and message.endswith(".")


def test_missing_language_names_the_ones_there(tmp_path):
    corpus = open_corpus(f"ntrex128:{ntrex_tree(tmp_path / 'n')}")
    with pytest.raises(
        LangCodeError, match=r"has no jpn_Jpan; it has 3 languages: deu_Latn, eng_Latn, fra_Latn\."
    ):
        corpus.pairs("eng", "jpn")


def _dictionary(path: Path, prefix: str) -> Path:
    path.write_text("".join(f"{w} {prefix}{w}\n" for w in WORDS), encoding="utf-8")
    return path


def test_cbd_from_ntrex_fixture_records_the_corpus(tmp_path, capsys):
    root = ntrex_tree(tmp_path / "n")
    out = tmp_path / "ds"
    argv = ["build", "cbd", "--lang", "eng-deu", "--corpus", f"ntrex128:{root}", "--dict"]
    argv += [
        "muse:" + str(_dictionary(tmp_path / "d.txt", "d")),
        "--aligner",
        "none",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    corpus = next(i for i in manifest["inputs"] if i["name"] == "corpus:ntrex128")
    assert corpus["license"] == "CC-BY-SA-4.0" and "Federmann" in corpus["citation"]
    assert manifest["parameters"]["corpus_source"] == f"ntrex128:test@sha256:{corpus['sha256']}"
    assert manifest["configs"]["eng_Latn-deu_Latn"]["test"] == 50
    assert manifest["build_signature"].startswith(
        f"cbd|corpus:ntrex128@sha256:{corpus['sha256'][:16]}|"
    )
    card = (out / "README.md").read_text()
    assert "corpus:ntrex128" in card and "NTREX-128" in card and "CC-BY-SA-4.0" in card


def test_cbd_bad_corpus_leaves_no_folder(tmp_path, capsys):
    root = ntrex_tree(tmp_path / "n")
    out = tmp_path / "ds"
    for extra in (
        ["--corpus", f"ntrex128:{root}", "--lang", "eng-jpn"],
        ["--corpus", "nope", "--lang", "eng-deu"],
    ):
        assert main(["build", "cbd", *extra, "--aligner", "none", "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ")
        assert not out.exists()
    tsv = tmp_path / "c.tsv"
    tsv.write_text("a\tb\n", encoding="utf-8")
    argv = ["build", "cbd", "--lang", "eng-deu", "--corpus", f"ntrex128:{root}", "--tsv", str(tsv)]
    assert main([*argv, "--out", str(out)]) == 2
    assert "either --corpus or --tsv" in capsys.readouterr().err and not out.exists()


def test_bucc_from_ntrex_fixture(tmp_path, capsys):
    root = ntrex_tree(tmp_path / "n")
    out = tmp_path / "ds"
    argv = [
        "build",
        "bucc",
        "--lang",
        "deu-eng",
        "--corpus",
        f"ntrex128:{root}",
        "--gold-pairs",
        "2",
    ]
    assert main([*argv, "--parallel-fraction", "0.5", "--out", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["parameters"]["corpus_source"].startswith("ntrex128:test@sha256:")
    assert manifest["parameters"]["source"].startswith("NTREX-128 (split test")
    assert any(i["name"] == "corpus:ntrex128" for i in manifest["inputs"])


@pytest.mark.skipif(
    not SHARED_NTREX.is_dir(), reason="../shared/data/ntrex128 is absent (real NTREX-128 copy)"
)
def test_real_ntrex_builds_cbd_and_bucc_offline(tmp_path, capsys):
    muse = SHARED / "muse_full_dicts_hunalign" / "en-fr.dict"
    if not muse.exists():
        pytest.skip("../shared/data/muse_full_dicts_hunalign/en-fr.dict is absent")
    cbd = tmp_path / "cbd"
    argv = [
        "build",
        "cbd",
        "--lang",
        "eng-fra",
        "--corpus",
        f"ntrex128:{SHARED_NTREX}",
        "--dict",
        str(muse),
    ]
    assert main([*argv, "--aligner", "none", "--out", str(cbd)]) == 0
    manifest = json.loads((cbd / "manifest.json").read_text())
    assert manifest["counts"]["table2"]["dictionary"]["pairs"] > 1000
    bucc = tmp_path / "bucc"
    argv = ["build", "bucc", "--lang", "fra-eng", "--corpus", f"ntrex128:{SHARED_NTREX}"]
    assert (
        main([*argv, "--gold-pairs", "200", "--parallel-fraction", "0.25", "--out", str(bucc)]) == 0
    )
    manifest = json.loads((bucc / "manifest.json").read_text())
    assert manifest["configs"]["fra_Latn-eng_Latn-gold"] == {"test": 100, "train": 100}


def test_list_corpora_names_access_license_and_citation(capsys):
    assert main(["list", "corpora"]) == 0
    out = capsys.readouterr().out
    for name in (
        "ntrex128:DIR",
        "flores200:DIR",
        "tatoeba:DIR",
        "hf:REPO[@REVISION]",
        "wmt24pp",
        "bouquet",
        "c4[:CONFIG]",
    ):
        assert f"\n{name}" in f"\n{out}"
    assert "flores_plus (= flores200 without DIR): FLORES+ (HF_TOKEN + internet)" in out
    assert "NTREX-128 (offline)" in out and "license: CC-BY-SA-4.0" in out and "Federmann" in out
    assert main(["list", "corpora", "--markdown"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert (
        table[0]
        == "| corpus | title | languages | splits | license | token | internet | citation |"
    )
    assert len(table) == 2 + 8


def test_alee_all_languages_of_a_flores_tree(tmp_path, capsys):
    root = flores_tree(tmp_path / "f")
    foils = tmp_path / "foils.csv"
    foils.write_text(
        "en_orig,en_foil,type\n" + "".join(f"{e},{e} not,PN\n" for e in ENG[:6]), encoding="utf-8"
    )
    out = tmp_path / "alee"
    argv = [
        "build",
        "alee",
        "--langs",
        "all",
        "--corpus",
        f"flores200:{root}",
        "--foils",
        str(foils),
    ]
    assert main([*argv, "--no-nli", "--out", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["parameters"]["langs"] == ["deu_Latn", "zho_Hans"]
    assert manifest["parameters"]["corpus_source"].startswith("flores200:devtest@sha256:")
    assert manifest["configs"]["eng_Latn-zho_Hans"] == {"test": 6}
    assert (
        main(
            [
                "build",
                "alee",
                "--langs",
                "all",
                "--foils",
                str(foils),
                "--no-nli",
                "--out",
                str(out) + "2",
            ]
        )
        == 2
    )
    assert "--langs all means every language of --corpus" in capsys.readouterr().err
