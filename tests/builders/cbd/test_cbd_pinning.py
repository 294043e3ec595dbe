"""cbd builds are pinned to every byte they read; licenses, overrides and non-determinism are stated."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from builders.cli import main
from evaluators.data.cardio import parse_card_yaml

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _b64(n: int) -> str:
    out = ""
    while True:
        out = _ALPHABET[n % 64] + out
        n //= 64
        if n == 0:
            return out


def write_dictd(folder: Path, name: str, articles: list[tuple[str, str]]) -> Path:
    """Write a FreeDict-style dictd dictionary (``.index`` + gzip ``.dict.dz``); return the index."""
    blob, index = b"", []
    for head, body in articles:
        data = body.encode("utf-8")
        index.append(f"{head}\t{_b64(len(blob))}\t{_b64(len(data))}")
        blob += data
    (folder / f"{name}.index").write_text("\n".join(index) + "\n", encoding="utf-8")
    # mtime=0: equal articles give equal bytes, whenever they are written.
    (folder / f"{name}.dict.dz").write_bytes(gzip.compress(blob, mtime=0))
    return folder / f"{name}.index"


ARTICLES = [
    ("king", "king /kɪŋ/\n1. König\n2. Herrscher\n"),
    ("house", "house\nHaus <neut>\n"),
    ("dog", "dog\nHund <masc>\n"),
]
CORPUS = [
    ("the king has a house", "der König hat ein Haus"),
    ("the dog sees the king", "der Hund sieht den König"),
    ("a house and a dog", "ein Haus und ein Hund"),
    ("the ruler has a dog", "der Herrscher hat einen Hund"),
]


def _corpus(folder: Path) -> Path:
    tsv = folder / "corpus.tsv"
    tsv.write_text("".join(f"{s}\t{t}\n" for s, t in CORPUS), encoding="utf-8")
    return tsv


def _build(out: Path, tsv: Path, index: Path, *extra: str) -> dict:
    rc = main(
        [
            "build",
            "cbd",
            "--lang",
            "eng-deu",
            "--tsv",
            str(tsv),
            "--dict",
            str(index),
            "--aligner",
            "none",
            "--max-pairs",
            "0",
            "--out",
            str(out),
            *extra,
        ]
    )
    assert rc == 0
    return json.loads((out / "manifest.json").read_text())


def test_one_gloss_changed_in_the_dict_dz_changes_digest_signature_and_rows(tmp_path, capsys):
    tsv = _corpus(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    index_a = write_dictd(a, "mini-eng-deu", ARTICLES)
    changed = [
        ARTICLES[0],
        ("house", "house\nHaut <neut>\n"),
        ARTICLES[2],
    ]  # one byte: "Haus" -> "Haut"
    index_b = write_dictd(b, "mini-eng-deu", changed)
    assert (
        index_a.read_bytes() == index_b.read_bytes()
    )  # the .index is identical: only the .dict.dz differs
    ma = _build(tmp_path / "out-a", tsv, index_a)
    mb = _build(tmp_path / "out-b", tsv, index_b)
    da = next(i for i in ma["inputs"] if i["name"].startswith("dictionary:"))
    db = next(i for i in mb["inputs"] if i["name"].startswith("dictionary:"))
    assert [Path(f["path"]).name for f in da["files"]] == [
        "mini-eng-deu.index",
        "mini-eng-deu.dict.dz",
    ]
    assert (
        da["files"][0]["sha256"] == db["files"][0]["sha256"]
        and da["files"][1]["sha256"] != db["files"][1]["sha256"]
    )
    assert da["sha256"] != db["sha256"]
    assert ma["build_signature"] != mb["build_signature"]
    assert ma["configs"] != mb["configs"] or ma["counts"] != mb["counts"]
    # The same bytes in another folder: same digest, same signature.
    c = tmp_path / "c"
    c.mkdir()
    mc = _build(tmp_path / "out-c", tsv, write_dictd(c, "mini-eng-deu", ARTICLES))
    assert mc["build_signature"] == ma["build_signature"]
    capsys.readouterr()


def test_user_inputs_of_unknown_license_give_unknown_and_an_override_needs_a_reason(
    tmp_path, capsys
):
    tsv = _corpus(tmp_path)
    index = write_dictd(tmp_path, "mini-eng-deu", ARTICLES)
    m = _build(tmp_path / "o1", tsv, index)
    assert m["license"]["spdx"] == "unknown" and m["license"]["override_reason"] is None
    assert sorted(m["license"]["derived_from"]) == ["corpus", "dictionary:mini-eng-deu"]
    assert all(i["license"] == "unknown" and i["kind"] == "file" for i in m["inputs"])
    capsys.readouterr()
    rc = main(
        [
            "build",
            "cbd",
            "--lang",
            "eng-deu",
            "--tsv",
            str(tsv),
            "--dict",
            str(index),
            "--out",
            str(tmp_path / "o2"),
            "--license",
            "cc-by-4.0",
        ]
    )
    assert rc == 2 and "--license needs --license-reason" in capsys.readouterr().err
    assert not (tmp_path / "o2").exists()
    m = _build(
        tmp_path / "o3",
        tsv,
        index,
        "--license",
        "cc-by-4.0",
        "--license-reason",
        "we wrote both files",
    )
    assert (
        m["license"]["spdx"] == "cc-by-4.0"
        and m["license"]["override_reason"] == "we wrote both files"
    )
    assert parse_card_yaml((tmp_path / "o3" / "README.md").read_text())["license"] == "cc-by-4.0"


def test_eflomal_build_is_declared_nondeterministic(tmp_path, capsys):
    pytest.importorskip("eflomal", reason="the eflomal aligner needs the eflomal package")
    tsv = _corpus(tmp_path)
    index = write_dictd(tmp_path, "mini-eng-deu", ARTICLES)
    out = tmp_path / "ef"
    rc = main(
        [
            "build",
            "cbd",
            "--lang",
            "eng-deu",
            "--tsv",
            str(tsv),
            "--dict",
            str(index),
            "--aligner",
            "eflomal",
            "--max-pairs",
            "0",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    m = json.loads((out / "manifest.json").read_text())
    assert m["nondeterministic"] == ["eflomal"]
    assert "|nondeterministic:eflomal|" in m["build_signature"]
    card = (out / "README.md").read_text()
    assert "not reproducible: eflomal's sampler cannot be seeded" in card
    assert m["build_signature"] in card
    # fast_align is deterministic: nothing declared.
    fa = _build(tmp_path / "fa", tsv, index)
    assert fa["nondeterministic"] == [] and "nondeterministic" not in fa["build_signature"]
    capsys.readouterr()
