"""The suite leaderboard: family means, overall mean, rank, missing cells excluded and listed."""

from __future__ import annotations

from evaluators.report.html import suite_leaderboard
from evaluators.suites.spec import parse_suite
from evaluators.suites.summary import Cell, summarize, summary_markdown


def _suite():
    return parse_suite(
        {
            "name": "s",
            "version": "1.2.3",
            "description": "d",
            "datasets": {
                "c": {"family": "cbd", "recipe": {"lang": "eng-deu"}, "content_id": "c" * 64},
                "b": {"family": "bucc", "recipe": {"lang": "deu-eng"}, "content_id": "b" * 64},
            },
            "entries": [
                {"evaluator": "word-retrieval", "dataset": "c"},
                {"evaluator": "sentence-retrieval", "dataset": "c"},
                {"evaluator": "bucc", "dataset": "b"},
            ],
        }
    )


def cell(x):
    return Cell(x, "results/r.json", "sig", "m@1")


def test_means_rank_and_missing_cells():
    s = _suite()
    cells = {
        ("A", "word-retrieval:c"): cell(0.4),
        ("A", "sentence-retrieval:c"): cell(0.6),
        ("A", "bucc:b"): cell(0.9),
        ("B", "word-retrieval:c"): cell(0.8),
        ("B", "bucc:b"): cell(0.3),
    }
    out = summarize(s, ["A", "B", "C"], cells, {}, {"c": "c" * 64})
    rows = {r["model"]: r for r in out["models"]}
    assert rows["A"]["family_means"] == {"cbd": 0.5, "bucc": 0.9}
    assert abs(rows["A"]["overall"] - 0.7) < 1e-12 and rows["A"]["rank"] == 1
    # B lacks sentence-retrieval: excluded from its cbd mean, listed as missing
    assert rows["B"]["family_means"]["cbd"] == 0.8 and rows["B"]["missing"] == [
        "sentence-retrieval:c"
    ]
    assert rows["B"]["rank"] == 2
    assert (
        rows["C"]["overall"] is None
        and rows["C"]["rank"] is None
        and len(rows["C"]["missing"]) == 3
    )
    assert [r["model"] for r in out["models"]] == ["A", "B", "C"]
    assert out["suite"]["version"] == "1.2.3" and out["datasets"][0]["revision"] == "c" * 64
    md = summary_markdown(out)
    assert "| 1 | A | 0.5000 | 0.9000 | 0.7000 |" in md and "| – | C | – | – | – |" in md


def test_skipped_entries_are_said_on_every_form():
    s = _suite()
    out = summarize(
        s, ["<A>"], {("<A>", "bucc:b"): cell(0.5)}, {"bucc:b": "needs the internet"}, {}
    )
    assert out["entries"][2]["skipped"] == "needs the internet"
    assert "- bucc:b skipped: needs the internet" in summary_markdown(out)
    page = suite_leaderboard(out)
    assert "bucc:b skipped: needs the internet" in page and "Suite s v1.2.3" in page
    assert "&lt;A&gt;" in page and "<A>" not in page  # model names are untrusted text
    assert '<td data-sort-value="">–</td>' in page  # missing cells shown as missing
