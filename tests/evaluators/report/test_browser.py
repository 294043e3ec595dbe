"""The report in a real browser: Debian's chromium, headless, opening the site from disk."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed (make setup installs it as root: apt-get install chromium)",
)
#: Where the screenshots go when set (docs/img for the README); a temporary folder otherwise.
SHOT_DIR = os.environ.get("XLBENCH_SCREENSHOTS")
#: A folder of real results (the README's runs) to test instead of the tiny random-model corpus.
REAL_RESULTS = os.environ.get("XLBENCH_REPORT_RESULTS")

if REAL_RESULTS:

    @pytest.fixture(scope="module")
    def corpus() -> Path:
        """The real results named by ``XLBENCH_REPORT_RESULTS``."""
        return Path(REAL_RESULTS)

    @pytest.fixture(scope="module")
    def site(corpus, tmp_path_factory) -> Path:
        """The HTML report of the real results."""
        from evaluators.report.site import build_site

        out = tmp_path_factory.mktemp("real-site") / "site"
        build_site([corpus], out)
        return out


def chromium(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    cmd = [
        CHROMIUM,
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--hide-scrollbars",
        "--allow-file-access-from-files",
        "--virtual-time-budget=5000",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def dom(url: str) -> tuple[str, str]:
    out = chromium("--enable-logging=stderr", "--v=0", "--dump-dom", url)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout, out.stderr


def body_attrs(html: str) -> dict[str, str]:
    tag = re.search(r"<body([^>]*)>", html).group(1)
    return dict(re.findall(r'([\w-]+)="([^"]*)"', tag))


def column(html: str, table_id: str, col: int) -> list[str]:
    table = re.search(rf'<table id="{table_id}".*?</table>', html, re.S).group(0)
    body = table.split("<tbody>", 1)[1]
    rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)
    return [re.findall(r'<td data-sort-value="([^"]*)"', r)[col] for r in rows]


@needs_chromium
def test_pages_run_their_script_without_errors_and_links_resolve(site, corpus):
    data = [json.loads(p.read_text()) for p in corpus.rglob("*.json")]
    for page in sorted(site.glob("*.html")):
        html, log = dom(page.as_uri())
        attrs = body_attrs(html)
        assert attrs.get("data-js-ready") == "1", f"{page.name}: script did not run"
        assert "data-js-errors" not in attrs, f"{page.name}: {attrs}"
        assert "Uncaught" not in log, log[-2000:]
        loaded, total = attrs["data-images"].split("/")
        assert loaded == total, f"{page.name}: only {loaded} of {total} images loaded"
        for href in re.findall(r'href="([^"#]+)', html):
            if not href.startswith("http"):
                assert (site / href).is_file(), f"{page.name}: broken link {href}"
    html, _ = dom((site / "index.html").as_uri())
    models = {
        (d["model"]["id"], d["model"].get("revision"))
        for d in data
        if d["evaluator"] in ("word-retrieval", "sentence-retrieval")
    }
    assert len(column(html, "lb-cbd", 0)) == len(models)
    n_links = len(re.findall(r'<a href="results/', html))
    assert n_links == len(data)


@needs_chromium
def test_sorting_in_the_browser(site):
    url = (site / "index.html").as_uri()
    col = (
        1 if REAL_RESULTS else 2
    )  # the README's runs have one bucc column (bucc), the corpus three
    for direction in ("asc", "desc"):
        html, _ = dom(f"{url}#sort=lb-bucc:{col}:{direction}")
        values = [float(v) for v in column(html, "lb-bucc", col) if v]
        assert len(values) == 3 and values == sorted(values, reverse=direction == "desc")
        assert f'data-sorted="{col}:{direction}"' in html
    html, _ = dom(f"{url}#sort=lb-bucc:0:desc")
    names = column(html, "lb-bucc", 0)
    assert names == sorted(names, reverse=True)


@needs_chromium
def test_screenshot_is_not_blank_and_shows_plots(site, tmp_path):
    import matplotlib.image as mpimg
    import numpy as np

    out = Path(SHOT_DIR) if SHOT_DIR else tmp_path
    out.mkdir(parents=True, exist_ok=True)
    for page, height in (("index.html", 1000), ("cbd.html", 1100), ("bucc.html", 1800)):
        shot = out / f"report-{page.replace('.html', '')}.png"
        res = chromium(
            f"--window-size=1280,{height}", f"--screenshot={shot}", (site / page).as_uri()
        )
        assert res.returncode == 0 and shot.is_file(), res.stderr[-2000:]
        img = mpimg.imread(shot)[..., :3]
        assert img.shape[:2] == (height, 1280)
        ink = (img.mean(axis=2) < 0.9).mean()  # share of non-white pixels
        assert ink > 0.02, f"{page}: screenshot looks blank ({ink:.3f} ink)"
        if page != "index.html":
            # a plot shows colours of the Okabe-Ito palette (blue #0072B2), not just black text on white
            blue = np.all(np.abs(img - np.array([0.0, 0.447, 0.698])) < 0.08, axis=2).sum()
            assert blue > 200, f"{page}: no plot colours in the screenshot"


@needs_chromium
def test_languages_page_model_facts_and_readable_errors(site, corpus):
    data = [json.loads(p.read_text()) for p in corpus.rglob("*.json")]
    url = (site / "languages.html").as_uri()
    html, log = dom(f"{url}#sort=lang-tasks:2:desc")
    attrs = body_attrs(html)
    assert attrs.get("data-js-ready") == "1" and "data-js-errors" not in attrs, attrs
    assert "Uncaught" not in log, log[-2000:]
    # one column per model that has a score in a language; the languages are named in words
    with_langs = {
        (d["model"]["id"], d["model"].get("revision"))
        for d in data
        if d["evaluator"]
        in ("word-retrieval", "sentence-retrieval", "bucc", "bitext-retrieval", "tacc")
    }
    table = re.search(r'<table id="lang-models".*?</table>', html, re.S).group(0)
    assert len(re.findall(r"<th data-col=", table)) == 1 + len(with_langs)
    assert "German–English" in table
    values = [float(v) for v in column(html, "lang-tasks", 2) if v]
    assert values == sorted(values, reverse=True) and 'data-sorted="2:desc"' in html
    # what a reader compares models by: under each model's name, its full id on hover
    recorded = [d["model_facts"] for d in data if d.get("model_facts")]
    if recorded or not REAL_RESULTS:
        assert recorded, "the corpus results record no model facts"
        layers = {f["layers"] for f in recorded if "layers" in f}
        assert any(f"{n} layers" in table for n in layers), table[:2000]
        assert re.search(r'<th data-col="1" title="[^"]+@[^"]+">', table)
        prov, _ = dom((site / "provenance.html").as_uri())
        assert '<th data-col="4">embedding size</th>' in prov
    # the cbd page's error table shows the words and their sentences, the ids only on hover
    if not REAL_RESULTS:
        cbd, _ = dom((site / "cbd.html").as_uri())
        errors = re.search(r'<table id="errors-0".*?</table>', cbd, re.S).group(0)
        body = errors.split("<tbody>", 1)[1]
        assert "<strong>" in body and 'class="context"' in body
        assert not re.search(r">\d+:\d+-\d+:\d+-\d+", body)  # no id shown as text
        # the alee page's: the translation, its English original, and the foil it was closer to
        alee, _ = dom((site / "alee.html").as_uri())
        errors = re.search(r'<table id="errors-0".*?</table>', alee, re.S).group(0)
        assert "<strong>" in errors and re.search(r'class="context">foil \((PN|RS|AR|HS)\)', errors)
        bucc, _ = dom((site / "bucc.html").as_uri())
        errors = re.search(r'<table id="errors-0".*?</table>', bucc, re.S).group(0)
        assert "<strong>" in errors.split("<tbody>", 1)[1]  # sentences, not row ids
