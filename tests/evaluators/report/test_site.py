"""``xlbench report``: the site's pages, links, plots and provenance, from real result JSONs."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from builders.cli import main
from evaluators.core.errors import InputFileError, UsageError
from evaluators.report.site import build_site

pytestmark = pytest.mark.slow


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs, self.imgs, self.tables, self.rows, self._table = [], [], {}, {}, None
        self._in_body = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and "href" in a:
            self.hrefs.append(a["href"])
        if tag == "img":
            self.imgs.append(a["src"])
        if tag == "table":
            self._table = a.get("id")
            self.tables[self._table] = a
            self.rows[self._table] = []
        if tag == "tbody":
            self._in_body = True
        if tag == "tr" and self._in_body:
            self.rows[self._table].append([])
        if tag == "td" and self._in_body:
            self.rows[self._table][-1].append(a.get("data-sort-value"))

    def handle_endtag(self, tag):
        if tag == "tbody":
            self._in_body = False


def parse(path: Path) -> Links:
    p = Links()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def all_results(folder: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(folder.rglob("*.json"))]


def model_label(d: dict) -> str:
    m = d["model"]
    return f"{m['id']}@{str(m['revision'])[:12]}" if m.get("revision") else m["id"]


def test_site_leaderboards_links_plots_provenance(corpus, site):
    data = all_results(corpus)
    index = parse(site / "index.html")
    family = {
        "word-retrieval": "cbd",
        "sentence-retrieval": "cbd",
        "bucc": "bucc",
        "bitext-retrieval": "bucc",
        "tacc": "alee",
        "embedding-aligner": "silver",
        "aligners": "silver",
    }
    for fam in ("cbd", "bucc", "alee", "silver"):
        models = {model_label(d) for d in data if family[d["evaluator"]] == fam}
        table = index.rows[f"lb-{fam}"]
        assert sorted(r[0] for r in table) == sorted(models)  # one row per model
        assert index.tables[f"lb-{fam}"]["data-sortable"] == "true"
    # every score of every result file is in a leaderboard cell, and links to a copy of that file
    cells = {float(v) for rows in index.rows.values() for r in rows for v in r[1:] if v}
    # (aligners has no main score below 3 configurations: Pearson r of two points is always +-1)
    assert {
        d["main_score"]
        for d in data
        if d["main_score"] is not None and d["main_score"] == d["main_score"]
    } <= cells
    score_links = [h for h in index.hrefs if h.startswith("results/")]
    assert len(score_links) == len(data)
    for page in site.glob("*.html"):
        doc = parse(page)
        for href in doc.hrefs + doc.imgs:
            if href.startswith(("http://", "https://")):
                continue
            assert (site / href.split("#")[0]).is_file(), f"{page.name}: broken link {href}"
    copied = {json.loads((site / h).read_text())["signature"] for h in score_links}
    assert copied == {d["signature"] for d in data}
    html = (site / "index.html").read_text()
    for d in data:  # the signature is the tooltip of its number
        assert f'title="{d["signature"]}"' in html.replace("&#x27;", "'")
    # languages named in words; no CDN or remote script
    cbd = (site / "cbd.html").read_text()
    assert "English→German" in cbd and "German→English" in (site / "bucc.html").read_text()
    assert not re.search(
        r'<script[^>]+src=|<link[^>]+href="http',
        "".join(p.read_text() for p in site.glob("*.html")),
    )
    # figures: PNG + SVG for each, layer plots overlay all 3 models with a dashed chance line
    plots = {p.stem for p in (site / "plots").glob("*.png")}
    assert plots == {p.stem for p in (site / "plots").glob("*.svg")}
    expected = {
        "layers__word-retrieval__xlbench-cbd_v1.0.0__eng_Latn-deu_Latn",
        "layers__sentence-retrieval__xlbench-cbd_v1.0.0__eng_Latn-deu_Latn",
        "heatmap__bitext-retrieval__xlbench-bucc_v1.0.0",
        "heatmap__bucc__xlbench-bucc_v1.0.0",
        "heatmap__tacc__xlbench-alee_v1.1.0__perturbation",
        "heatmap__tacc__xlbench-alee_v1.1.0__length",
        "bucc_prf__xlbench-bucc_v1.0.0",
    }
    assert expected <= plots
    svg = (
        site / "plots" / "layers__word-retrieval__xlbench-cbd_v1.0.0__eng_Latn-deu_Latn.svg"
    ).read_text()
    assert "chance" in svg and all(f"seed{i}" in svg for i in range(3)) and "English→German" in svg
    if any(d["evaluator"] == "aligners" for d in data):
        scatter = next((site / "plots").glob("scatter__aligners*.svg")).read_text()
        assert "Pearson r = " in scatter and "y = x" in scatter
    # BUCC table: train-learned threshold and the oracle labelled as such
    bucc = parse(site / "bucc.html")
    assert len(bucc.rows["bucc-prf"]) == 3
    text = (site / "bucc.html").read_text()
    assert "threshold (learned on train)" in text and "oracle F1 (threshold tuned on test)" in text
    # provenance: every dataset revision and model revision behind the numbers
    prov = (site / "provenance.html").read_text()
    for d in data:
        for ds in d["dataset"].get("pairs", [d["dataset"]]):
            assert ds["revision"] in prov
        assert str(d["model"].get("revision") or "unknown") in prov
    assert "cards/" in prov  # local dataset cards copied into the site


def test_markdown_summary(corpus, tmp_path):
    site = tmp_path / "md"
    index = build_site([corpus], site, fmt="md")
    text = index.read_text()
    assert index.name == "report.md" and "## BUCC precision / recall / F1" in text
    for link in re.findall(r"\]\(([^)]+)\)", text):
        assert link.startswith("http") or (site / link).is_file(), link
    assert "oracle F1 (threshold tuned on test)" in text and "English→German" in text


def test_tolerant_of_extra_keys_and_shows_cis(results):
    from evaluators.report.html import leaderboard_table
    from evaluators.report.records import load_records
    from evaluators.report.views import leaderboards

    path = next(results.glob("bucc/bucc__*seed0__*.json"))
    d = json.loads(path.read_text())
    d["future_field"] = {"x": 1}
    d["ci_low"], d["ci_high"], d["ci_level"], d["ci_resamples"] = 0.125, 0.375, 0.95, 1000
    d["scores"]["test"][0]["new_metric"] = [1, 2]
    path.write_text(json.dumps(d))
    (results / "notes.json").write_text('{"not": "a result"}')
    records = load_records([results])
    assert len(records) == len(list(results.rglob("*.json"))) - 1
    (board,) = [b for b in leaderboards(records, {}) if b.family == "bucc"]
    assert '<span class="ci">[0.125, 0.375]</span>' in leaderboard_table(board, "t")
    # an interval on the main-score entry works too
    d.pop("ci_low")
    d["scores"]["test"][0].update(ci_low=0.2, ci_high=0.3)
    path.write_text(json.dumps(d))
    (board,) = [b for b in leaderboards(load_records([results]), {}) if b.family == "bucc"]
    assert '<span class="ci">[0.200, 0.300]</span>' in leaderboard_table(board, "t")


def test_rerender_is_identical_and_refuses_foreign_folders(corpus, site, tmp_path):
    b = tmp_path / "b"
    build_site([corpus], b)
    for page in ("index.html", "bucc.html", "provenance.html"):
        assert (site / page).read_text() == (b / page).read_text()
    build_site([corpus], b)  # a previous report may be replaced
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    with pytest.raises(UsageError, match="is not an xlbench report"):
        build_site([corpus], other)
    assert [p.name for p in other.iterdir()] == ["keep.txt"]
    before = sorted(p.name for p in corpus.rglob("*"))
    with pytest.raises(UsageError, match="holds the result .*which the site would replace"):
        build_site([corpus], corpus, overwrite=True)  # --out = the results themselves
    assert sorted(p.name for p in corpus.rglob("*")) == before
    (other / "manifest.json").write_text("{}")
    with pytest.raises(UsageError, match="holds a dataset"):
        build_site([corpus], other, overwrite=True)
    (other / "manifest.json").unlink()
    build_site([corpus], other, overwrite=True)  # a folder of other files: replaced, as asked
    assert (other / "index.html").is_file() and not (other / "keep.txt").exists()


def test_a_report_inside_its_results_folder_is_not_read_as_results(corpus, tmp_path):
    """Its results/ holds copies of the results: a second run doubled every row."""
    import shutil

    from evaluators.report.records import load_records

    results = tmp_path / "r"
    shutil.copytree(corpus, results)
    count = len(load_records([results]))
    build_site([results], results / "site")
    assert len(load_records([results])) == count
    build_site([results], results / "site")  # again, over the first one
    assert len(load_records([results])) == count


def test_cli_errors(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope"), "--out", str(tmp_path / "s")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "one.json").write_text("{}")
    assert main(["report", str(tmp_path / "one.json"), "--out", str(tmp_path / "s")]) == 2
    assert "is a file, not a results folder; pass the --out folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputFileError, match="No xlbench result JSON found"):
        build_site([tmp_path / "empty"], tmp_path / "s")
    (tmp_path / "empty" / "bad.json").write_text("{")
    assert main(["report", str(tmp_path / "empty"), "--out", str(tmp_path / "s")]) == 2
    assert "is not a readable JSON file" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


def test_worst_items_from_predictions(corpus, tmp_path):
    from evaluators.run.predictions import predictions_path, write_predictions

    res = tmp_path / "res"
    res.mkdir()
    src = next(corpus.glob("bucc/bitext-retrieval__*seed0__*.json"))
    dst = res / src.name
    dst.write_text(src.read_text())
    rows = [
        {
            "item_id": f"pair-{i}",
            "subset": "deu_Latn-eng_Latn",
            "correct": i % 3 == 0,
            "score": i / 10,
            "retrieved": f"t{i + 1}",
            "tie": i == 4,
        }
        for i in range(10)
    ]
    write_predictions(predictions_path(dst), rows)
    site = tmp_path / "site"
    build_site([res], site)
    page = parse(site / "bucc.html")
    shown = [r[0] for r in page.rows["errors-0"]]
    # wrong items only, most confident (highest score) first
    assert shown == ["pair-8", "pair-7", "pair-5", "pair-4", "pair-2", "pair-1"]
    assert (site / "results" / dst.name.replace(".json", ".predictions.parquet")).is_file()


def test_two_folders_of_one_name_stay_apart(corpus, tmp_path):
    from evaluators.report.records import load_records

    a, b = tmp_path / "a" / "results", tmp_path / "b" / "results"
    for dest in (a, b):
        dest.mkdir(parents=True)
        src = next(corpus.glob("bucc/bucc__*seed0__*.json"))
        (dest / src.name).write_text(src.read_text())
    rels = [r.rel for r in load_records([a, b])]
    assert (
        len(set(rels)) == 2
        and rels[0].startswith("1-results/")
        and rels[1].startswith("2-results/")
    )
