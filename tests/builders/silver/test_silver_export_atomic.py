"""``silver --export`` files appear only when the dataset itself was written."""

from __future__ import annotations

import pytest

from builders.cli import main
from builders.release import artifact
from builders.silver import build as silver_build


@pytest.fixture
def fake_adapters(monkeypatch, synthetic):
    """Route the builder to the synthetic translator and the fixed substitute table."""
    import builders.adapters.mt as mt

    monkeypatch.setattr(
        mt, "select_translator", lambda spec, src, tgt, **kw: synthetic["engine"](pair=(src, tgt))
    )
    monkeypatch.setattr(silver_build, "_generator", lambda args, src: synthetic["generator"]())


def _args(tmp_path, synthetic):
    src = tmp_path / "src.txt"
    src.write_text("\n".join(s for s, _, _ in synthetic["cases"]) + "\n", encoding="utf-8")
    return ["build", "silver", "--lang", "eng-spa", "--src", str(src), "--out", str(tmp_path / "ds"),
            "--export", str(tmp_path / "export"), "--mt-cache", str(tmp_path / "c.sqlite")]  # fmt: skip


def test_failed_dataset_write_leaves_no_export(
    tmp_path, synthetic, fake_adapters, monkeypatch, capsys
):
    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(artifact, "render_card", disk_full)
    assert main(_args(tmp_path, synthetic)) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "c.sqlite",
        "src.txt",
    ]  # no export, no temp folders


def test_export_is_written_after_the_dataset(
    tmp_path, synthetic, fake_adapters, monkeypatch, capsys
):
    seen = []
    real = artifact._move_exports

    def spy(exports):
        seen.append(((tmp_path / "ds" / "README.md").exists(), (tmp_path / "export").exists()))
        real(exports)

    monkeypatch.setattr(artifact, "_move_exports", spy)
    assert main(_args(tmp_path, synthetic)) == 0, capsys.readouterr().err
    assert seen == [(True, False)]  # dataset in place, export not yet
    assert sorted(p.name for p in (tmp_path / "export").iterdir()) == [
        "eng_Latn-spa_Latn.align",
        "eng_Latn-spa_Latn.ids",
        "eng_Latn-spa_Latn.src-tgt",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.sqlite", "ds", "export", "src.txt"]
