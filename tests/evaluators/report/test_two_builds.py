"""Issue 26 item 2: two builds of one dataset are two columns, and a model's results on both appear."""

from __future__ import annotations

from pathlib import Path

from evaluators.report import plots
from evaluators.report.records import load_records
from evaluators.report.site import build_site
from evaluators.report.views import layer_plots, leaderboards

A, B = "xlbench/random-d32-l2@seed0", "xlbench/random-d32-l2@seed1"


def _results(maker, tmp_path: Path) -> tuple[Path, list[Path]]:
    builds = []
    for seed in (0, 1):
        work = tmp_path / f"work{seed}"
        work.mkdir()
        builds.append(maker._cbd(work, seed=seed))
    res = tmp_path / "results"
    # model A on both builds, model B on the second only (the README's demo + report runs)
    for ds, model in [(builds[0], "random"), (builds[1], "random"), (builds[1], "random:32:2:1")]:
        maker._quiet(
            ["eval", "word-retrieval", "--dataset", str(ds), "--model", model, "--no-cache",
             "--n", "40", "--no-plots", "--out", str(res)]
        )  # fmt: skip
    return res, builds


def test_a_report_over_two_builds_of_one_family_shows_both(maker, tmp_path):
    res, _ = _results(maker, tmp_path)
    records = load_records([res])
    revs = sorted({r.dataset["revision"][:12] for r in records})
    assert len(revs) == 2 and {r.dataset_label for r in records} == {"xlbench-cbd v1.0.0"}
    (board,) = leaderboards(records, {})
    assert len(board.columns) == 2
    assert sorted(c.variant for c in board.columns) == [f"build {rev}" for rev in revs]
    rows = dict(board.rows)
    assert len(rows[A]) == 2 and len(rows[B]) == 1  # A's result on each build: none dropped
    (plot,) = layer_plots(records)
    labels = sorted({s.model for s in plot.series})
    assert len(labels) == 3 and all("build" in label for label in labels)
    assert len(set(plots._colours(labels).values())) == 3  # one colour per (model, build)
    index = build_site([res], tmp_path / "site")
    text = index.read_text()
    assert all(f"build {rev}" in text for rev in revs)
    md = build_site([res], tmp_path / "md", fmt="md").read_text()
    header = next(line for line in md.splitlines() if line.startswith("| model"))
    assert all(f"build {rev}" in header for rev in revs)
    assert header.count("|") == 4  # model + two columns: no pipe inside a header splits it


def test_one_build_keeps_the_plain_column(corpus):
    (board,) = [b for b in leaderboards(load_records([corpus]), {}) if b.family == "cbd"]
    assert all(c.variant == "" for c in board.columns)
