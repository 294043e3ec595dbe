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
