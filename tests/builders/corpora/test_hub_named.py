"""The named Hub corpora against loopback copies with their real configs, splits, columns and types."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path

import pyarrow as pa
import pytest

from builders.cli import main
from builders.corpora import open_corpus
from evaluators.core.errors import UsageError

_spec = importlib.util.spec_from_file_location(
    "corpora_hubdata", Path(__file__).with_name("hubdata.py")
)
hubdata = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hubdata)

ENG = [f"English sentence number {i} is here." for i in range(6)]


def _flores(token: str, mark: str = "") -> str:
    """Host FLORES+'s layout; ``mark`` makes other bytes (nothing of them in the local caches)."""
    files, configs = {}, {}
    for code, prefix in (("eng_Latn", ""), ("deu_Latn", "DE "), ("cmn_Hans", "ZH ")):
        configs[code] = {}
        for split, n in (("dev", 4), ("devtest", 6)):
            table = pa.table(
                {
                    "id": pa.array(range(1, n + 1), pa.int64()),
                    "iso_639_3": [code[:3]] * n,
                    "iso_15924": [code[4:]] * n,
                    "glottocode": ["stan1293"] * n,
                    "text": [mark + prefix + s for s in ENG[:n]],
                    "url": [f"https://en.wikinews.org/{i}" for i in range(n)],
                    "domain": ["wikinews"] * n,
                    "topic": ["science"] * n,
                    "has_image": pa.array([False] * n),
                    "has_hyperlink": pa.array([True] * n),
                    "last_updated": ["2.1"] * n,
                }
            )
            files[f"{split}/{code}.parquet"] = hubdata.parquet_bytes(table)
            configs[code][split] = f"{split}/{code}.parquet"
    files["README.md"] = hubdata.readme(configs, "cc-by-sa-4.0", gated=True)
    return hubdata.host("openlanguagedata/flores_plus", files, token)


def test_flores_plus_needs_a_token_then_reads_devtest(hub_log, token, monkeypatch):
    sha = _flores(token)
    monkeypatch.delenv("HF_TOKEN")
    with pytest.raises(
        UsageError,
        match=r"^openlanguagedata/flores_plus is gated: accept its conditions .* set HF_TOKEN",
    ):
        open_corpus("flores_plus")
    monkeypatch.setenv("HF_TOKEN", token)
    corpus = open_corpus("flores200")  # no folder: the Hub's FLORES+
    assert corpus.info.name == "flores_plus" and corpus.revision() == sha
    assert corpus.languages() == ["cmn_Hans", "deu_Latn", "eng_Latn"]
    pairs = corpus.pairs("eng", "deu")
    assert len(pairs) == 6 and pairs[0] == ("devtest-1", ENG[0], "DE " + ENG[0])
    assert next(corpus.rows("cmn_Hans")).meta == {
        "split": "devtest",
        "domain": "wikinews",
        "topic": "science",
    }
    assert len(open_corpus("flores_plus", ["split=dev"]).pairs("eng", "zh-CN")) == 4


def test_flores_plus_refused_by_the_hub_without_access(hub_log, token, capsys, tmp_path):
    _flores(token, mark="gated ")
    hub_log.gate("openlanguagedata/flores_plus")  # the token is valid but never accepted the terms
    try:
        out = tmp_path / "alee"
        argv = [
            "build",
            "alee",
            "--langs",
            "deu",
            "--corpus",
            "flores_plus",
            "--foils",
            str(tmp_path / "f.csv"),
        ]
        (tmp_path / "f.csv").write_text("en_orig,en_foil,type\na,b,PN\n", encoding="utf-8")
        capsys.readouterr()
        assert main([*argv, "--no-nli", "--out", str(out)]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [
            "error: reading corpus flores_plus: openlanguagedata/flores_plus is gated; accept its conditions "
            "on the Hub page and set HF_TOKEN to that account's token."
        ]
        assert not out.exists()
        hub_log.gate("openlanguagedata/flores_plus", (token,))
        assert open_corpus("flores_plus").languages() == ["cmn_Hans", "deu_Latn", "eng_Latn"]
    finally:
        hub_log.ungate("openlanguagedata/flores_plus")


def _wmt(token: str) -> str:
    files, configs = {}, {}
    for config, prefix in (("en-de_DE", "DE "), ("en-ar_EG", "EG "), ("en-ar_SA", "SA ")):
        rows = [
            {
                "lp": config,
                "domain": "literary" if i < 3 else "news",
                "document_id": f"doc{i // 3}",
                "segment_id": i,
                "is_bad_source": i == 1,
                "source": ENG[i],
                "target": prefix + ENG[i],
                "original_target": "orig " + ENG[i],
            }
            for i in range(6)
        ]
        files[f"{config}.jsonl"] = hubdata.jsonl_bytes(rows)
        configs[config] = {"train": f"{config}.jsonl"}
    files["README.md"] = hubdata.readme(configs, "apache-2.0")
    return hubdata.host("google/wmt24pp", files, token)


def test_wmt24pp_drops_bad_sources_unless_asked(hub_log, token):
    sha = _wmt(token)
    corpus = open_corpus("wmt24pp")
    assert corpus.revision() == sha and corpus.languages() == ["arb_Arab", "deu_Latn", "eng_Latn"]
    pairs = corpus.pairs("eng", "deu")
    assert [p[0] for p in pairs] == ["doc0:0", "doc0:2", "doc1:3", "doc1:4", "doc1:5"]
    assert pairs[0][1:] == (ENG[0], "DE " + ENG[0])
    kept = open_corpus("wmt24pp", ["keep_bad=1"]).pairs("deu", "eng")
    assert len(kept) == 6 and kept[1] == ("doc0:1", "DE " + ENG[1], ENG[1])
    assert open_corpus("wmt24pp").pairs("eng", "ar")[0][2].startswith("EG ")
    assert open_corpus("wmt24pp", ["config=en-ar_SA"]).pairs("eng", "ar")[0][2].startswith("SA ")
    row = next(open_corpus("wmt24pp").rows("deu_Latn"))
    assert row.meta == {
        "split": "train",
        "domain": "literary",
        "document": "doc0",
        "is_bad_source": False,
    }
    rec = corpus.input_record()
    assert rec.origin == f"hub:google/wmt24pp@{sha}" and rec.license == "Apache-2.0"


def _bouquet(token: str) -> str:
    files = {}
    configs: dict[str, dict[str, str]] = {"paragraph_level": {}, "sentence_level": {}}
    for level in configs:
        for split in ("dev", "test"):
            for code, prefix in (("eng_Latn", ""), ("deu_Latn", "DE ")):
                if level == "paragraph_level":
                    ids, pars, texts = ["P001"], ["P001"], [prefix + " ".join(ENG[:2])]
                else:
                    ids, pars, texts = (
                        ["P001-S1", "P001-S2"],
                        ["P001", "P001"],
                        [prefix + s for s in ENG[:2]],
                    )
                n = len(ids)
                table = pa.table(
                    {
                        "uniq_id": ids,
                        "par_id": pars,
                        "src_lang": [code] * n,
                        "src_text": texts,
                        "tgt_lang": ["eng_Latn"] * n,
                        "tgt_text": ENG[:n],
                        "orig_text": ENG[:n],
                        "domain": ["narration"] * n,
                        "register": ["formal"] * n,
                        "tags": [split] * n,  # distinct bytes per file (one LFS object each)
                    }
                )
                files[f"data/{level}/{split}/{code}.parquet"] = hubdata.parquet_bytes(table)
            configs[level][split] = f"data/{level}/{split}/*.parquet"
    files["README.md"] = hubdata.readme(configs, "cc-by-sa-4.0")
    return hubdata.host("facebook/bouquet", files, token)


def test_bouquet_keeps_the_level(hub_log, token):
    _bouquet(token)
    corpus = open_corpus("bouquet")
    assert corpus.split == "dev" and corpus.languages() == ["deu_Latn", "eng_Latn"]
    rows = list(corpus.rows("deu_Latn"))
    assert [(r.id, r.meta["level"]) for r in rows] == [
        ("P001", "paragraph"),
        ("P001-S1", "sentence"),
        ("P001-S2", "sentence"),
    ]
    assert open_corpus("bouquet", ["level=sentence", "split=test"]).pairs("eng", "deu")[1] == (
        "P001-S2",
        ENG[1],
        "DE " + ENG[1],
    )
    with pytest.raises(UsageError, match="level must be sentence, paragraph or both"):
        open_corpus("bouquet", ["level=word"]).languages()


def _c4(token: str) -> str:
    files = {}
    for shard in range(2):
        docs = [
            {
                "text": f"Doc {shard}-{d} opens here. It has a middle sentence. And it closes now.",
                "timestamp": "2019-04-25T12:57:54Z",
                "url": f"https://news.example/{shard}/{d}",
            }
            for d in range(30)
        ]
        raw = "".join(json.dumps(r) + "\n" for r in docs).encode()
        files[f"realnewslike/c4-train.0000{shard}-of-00002.json.gz"] = gzip.compress(raw, mtime=0)
    files["README.md"] = hubdata.readme(
        {"realnewslike": {"train": "realnewslike/c4-train.*-of-00002.json.gz"}}, "odc-by"
    )
    return hubdata.host("allenai/c4", files, token)


def test_c4_sample_is_seeded_streamed_and_never_materialised(hub_log, token):
    import datasets

    _c4(token)
    corpus = open_corpus("c4:realnewslike", ["n=10", "seed=3", "buffer=8"])
    assert isinstance(corpus.stream(), datasets.IterableDataset)
    first = corpus.sentences("eng")
    again = open_corpus("c4:realnewslike", ["n=10", "seed=3", "buffer=8"]).sentences("eng")
    other = open_corpus("c4:realnewslike", ["n=10", "seed=4", "buffer=8"]).sentences("eng")
    assert len(first) == 10 and first == again and first != other
    assert all(i.startswith("https://news.example/") and "#" in i for i, _ in first)
    cache = Path(datasets.config.HF_DATASETS_CACHE)
    # Streamed: no Arrow file of C4 in the datasets cache (a load without streaming writes one).
    assert not [p for p in cache.rglob("*.arrow") if "allenai___c4" in p.parts]
    assert corpus.pinned().startswith("c4,buffer=8,config=realnewslike,n=10,seed=3:train@")


def test_silver_reads_c4_through_the_same_path(hub_log, token, tmp_path, capsys):
    _c4(token)
    capsys.readouterr()
    out = tmp_path / "silver"
    argv = [
        "build",
        "silver",
        "--lang",
        "eng-spa",
        "--corpus",
        "c4:realnewslike",
        "--corpus-opt",
        "n=8",
    ]
    argv += ["--out", str(out)]
    assert main([*argv, "--corpus-opt", "thing=1"]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: --corpus-opt 'thing' is not an option of corpus c4; valid: buffer, n, revision, seed, split."
    )
    assert not out.exists()
    assert main(argv) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    corpus = next(i for i in manifest["inputs"] if i["name"] == "corpus:c4")
    assert corpus["kind"] == "hub" and corpus["license"] == "ODC-BY-1.0"
    assert manifest["parameters"]["corpus_source"].startswith(
        "c4,config=realnewslike,n=8,seed=13:train@"
    )
    assert manifest["parameters"]["sentences"] <= 8
