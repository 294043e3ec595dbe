"""A silver rebuild from a warm MT cache is the same content: republishing it is a no-op.

The rebuild answers every translation from the cache, so the manifest's ``run``
section differs (cached vs translated) while rows, counts and signature do not;
``publish`` compares manifests through ``evaluators.schema.meta.stable_manifest``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from builders.cli import main
from builders.silver import build as silver_build


def _synthetic():
    # The synthetic translator of the silver tests (tests/builders/silver/conftest.py), loaded as a module.
    path = Path(__file__).resolve().parents[1] / "silver" / "conftest.py"
    spec = importlib.util.spec_from_file_location("silver_synthetic", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("silver_synthetic", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_warm_cache_silver_rebuild_republishes_as_unchanged(
    hub_log, token, tmp_path, monkeypatch, capsys
):
    import builders.adapters.mt as mt

    syn = _synthetic()
    engines = []

    def select_translator(spec, src, tgt, **kwargs):
        engines.append(syn.SyntheticEngine(pair=(src, tgt)))
        return engines[-1]

    monkeypatch.setattr(mt, "select_translator", select_translator)
    monkeypatch.setattr(silver_build, "_generator", lambda args, src: syn.FixedSubstitutes())
    src = tmp_path / "src.txt"
    src.write_text("".join(f"{s}\n" for s, _, _ in syn.CASES), encoding="utf-8")
    out, cache = tmp_path / "silver", tmp_path / "mt.sqlite"
    build = [
        "build",
        "silver",
        "--lang",
        "eng-spa",
        "--src",
        str(src),
        "--out",
        str(out),
        "--mt-cache",
        str(cache),
    ]
    repo = "xlbench-test/silver-warm"
    assert main(build) == 0
    cold = json.loads((out / "manifest.json").read_text())
    assert main(["publish", str(out), "--repo", repo, "--yes"]) == 0
    capsys.readouterr()
    assert main([*build, "--overwrite"]) == 0
    warm = json.loads((out / "manifest.json").read_text())
    capsys.readouterr()
    assert (
        engines[1].calls == 0
        and warm["run"]["mt"]["translated"] == 0
        and cold["run"]["mt"]["cached"] == 0
    )
    assert main(["publish", str(out), "--repo", repo, "--yes"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "unchanged", report
