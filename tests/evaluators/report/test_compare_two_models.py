"""``xlbench compare`` on two real evaluator runs: two random models on a tiny dataset, predictions saved."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from builders.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))
import make_results as mk  # noqa: E402  (the report tests' tiny offline datasets)

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("evaluator", "family"), [("tacc", "alee"), ("bucc", "bucc"), ("bitext-retrieval", "bucc")]
)
def test_compare_two_random_models(evaluator, family, tmp_path, capsys):
    dataset = {"alee": mk._alee, "bucc": mk._bucc}[family](tmp_path)
    out = tmp_path / "res"
    paths = []
    for seed in (1, 2):
        code = main(
            [
                "eval",
                evaluator,
                "--dataset",
                str(dataset),
                "--model",
                f"random:16:2:{seed}",
                "--no-cache",
                "--out",
                str(out),
                "--save-predictions",
                "--json",
                *(["--no-plots"] if evaluator == "tacc" else []),
            ]
        )
        assert code == 0
        res = json.loads(capsys.readouterr().out)
        (path,) = [p for p in out.glob(f"{evaluator}__*.json") if p not in paths]
        paths.append(path)
        assert res["ci_low"] is not None
    assert main(["compare", str(paths[0]), str(paths[1])]) == 0
    text = capsys.readouterr().out
    assert "random:16:2:1" in text or "random" in text
    pvalues = [float(p) for p in re.findall(r"p = ([0-9.]+)", text)]
    assert len(pvalues) == 2 and all(0 < p <= 1 for p in pvalues)
    assert re.search(r"=> the difference is (not )?significant at alpha = 0.05", text)
    assert main(["compare", str(paths[0]), str(paths[1]), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["n_items"] > 0 and isinstance(data["significant"], bool)
    # A model against itself is never significantly different.
    assert main(["compare", str(paths[0]), str(paths[0]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["significant"] is False
