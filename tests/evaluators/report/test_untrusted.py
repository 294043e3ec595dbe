"""Result files are untrusted input: no field of a result JSON can write outside --out or add markup.

Every string field of real result JSONs (grouped by block) is replaced by hostile strings —
a relative path that climbs out, an absolute path, ``..``, and HTML — and the HTML report,
the Markdown report and the mteb export are built from them. Nothing may appear outside
the output folder, no raw markup in any page, and the Markdown renders without it.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from evaluators.core.errors import UsageError
from evaluators.report.mteb import export_results
from evaluators.report.site import build_site

HTML = '"><img src=x onerror=alert(1)>'
PAYLOADS = {
    "climb": "../../PWNED",
    "absolute": "{abs}/PWNED",
    "html": HTML + "|x\n## c",
}
#: Blocks of a result JSON; every string leaf in the block gets the payload.
GROUPS = ("evaluator", "dataset", "model", "parameters", "scores", "other", "file name")
#: Real results the report draws figures from: per-layer curves (cbd), heatmap and table (bucc).
BASES = ("cbd/word-retrieval__*seed0__*.json", "bucc/bucc__*seed0__*.json")


def _replace_strings(value: Any, payload: str) -> Any:
    if isinstance(value, str):
        return payload
    if isinstance(value, list):
        return [_replace_strings(v, payload) for v in value]
    if isinstance(value, dict):
        return {k: _replace_strings(v, payload) for k, v in value.items()}
    return value


def _poison(data: dict[str, Any], group: str, payload: str) -> dict[str, Any]:
    out = dict(data)
    if group in ("evaluator", "dataset", "model", "parameters"):
        out[group] = _replace_strings(out[group], payload)
    elif group == "scores":
        scores = _replace_strings(out["scores"], payload)
        scores[payload] = scores.get("test", [])  # a split named by the payload, too
        out["scores"] = scores
    elif group == "other":
        skip = {"evaluator", "dataset", "model", "parameters", "scores"}
        out.update({k: _replace_strings(v, payload) for k, v in out.items() if k not in skip})
    return out


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def _no_raw_markup(folder: Path) -> None:
    for page in folder.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "<img src=x " not in text, page  # the payload's tag, not the site's own figures
    for md in folder.rglob("*.md"):
        markdown_it = pytest.importorskip("markdown_it")
        rendered = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table")
        html = rendered.render(md.read_text(encoding="utf-8"))
        assert "<img src=x " not in html, md


@pytest.mark.parametrize("payload", list(PAYLOADS), ids=list(PAYLOADS))
@pytest.mark.parametrize("group", GROUPS)
def test_no_field_of_a_result_writes_outside_out_or_adds_markup(corpus, tmp_path, group, payload):
    text = PAYLOADS[payload].format(abs=tmp_path / "abs")
    if group == "file name" and "/" in text:
        pytest.skip("a file name cannot hold a separator")
    results = tmp_path / "results"
    results.mkdir()
    for i, pattern in enumerate(BASES):
        src = next(corpus.glob(pattern))
        data = _poison(json.loads(src.read_text()), group, text)
        name = f"{text}-{i}.json" if group == "file name" else src.name
        (results / name).write_text(json.dumps(data), encoding="utf-8")
    deep = tmp_path / "a" / "b"
    before = _tree(tmp_path)
    build_site([results], deep / "site")
    if payload == "html":  # the Markdown pages share the figures (file names) with the site
        build_site([results], deep / "md", fmt="md")
    try:
        export_results([results], deep / "mteb")
    except UsageError:
        pass  # nothing exportable (an unknown evaluator) is a clean refusal
    after = _tree(tmp_path) - before
    inside = ("a/b/site", "a/b/md", "a/b/mteb")
    outside = sorted(p for p in after - {"a", "a/b"} if not p.startswith(inside))
    assert outside == [], outside
    hidden = [p for p in after if p.split("/")[-1].startswith(".")]  # the temp files' names
    assert [p.split("/")[-1] for p in hidden] in (
        [".xlbench-report"],
        [".xlbench-report"] * 2,
    ), hidden
    _no_raw_markup(deep)


def test_a_card_is_copied_only_from_the_build_the_result_scored(corpus, tmp_path):
    """``dataset.path`` naming another folder's README.md (a home folder, another build) copies nothing."""
    results = tmp_path / "results"
    results.mkdir()
    src = next(corpus.glob(BASES[0]))
    secret = tmp_path / "home"
    secret.mkdir()
    (secret / "README.md").write_text("SECRET-NOTES", encoding="utf-8")
    (secret / "manifest.json").write_text("{}", encoding="utf-8")
    data = json.loads(src.read_text())
    good_path = data["dataset"]["path"]
    data["dataset"]["path"] = str(secret)
    (results / "a.json").write_text(json.dumps(data), encoding="utf-8")
    site = build_site([results], tmp_path / "site").parent
    assert not any("SECRET" in p.read_text() for p in site.rglob("*.md"))
    assert not (site / "cards").exists()
    # the folder the result really scored still gets its card copied
    data["dataset"]["path"] = good_path
    (results / "a.json").write_text(json.dumps(data), encoding="utf-8")
    site = build_site([results], tmp_path / "site2").parent
    assert len(list((site / "cards").glob("*.md"))) == 1


def test_export_never_leaves_out_for_a_dot_model(corpus, tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    src = next(corpus.glob(BASES[1]))
    data = json.loads(src.read_text())
    data["model"]["id"], data["model"]["revision"] = "..", ".."
    (results / "r.json").write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "x" / "mteb"
    (path,) = export_results([results], out)
    assert path.resolve().is_relative_to(out.resolve() / "results")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results", "x"]
    shutil.rmtree(out)


def test_markdown_tables_keep_a_pipe_inside_its_cell():
    """Issue 26 item 6: the CLI's ranking put signatures (``a|b|c``) raw into its own table."""
    from evaluators.run.runner import ranking_table

    class R:
        main_score = 0.5
        model = {"id": "m|x"}
        dataset = {"id": "d\nnext line"}
        signature = "bucc|ds:d@1:ab|model:m@cd|k:4|xlbench:0.1.0"

    table = ranking_table([R()])
    lines = table.splitlines()
    assert len(lines) == 3  # header, rule, one row: the newline stayed inside the cell
    assert all(len(re.findall(r"(?<!\\)\|", line)) == 5 for line in lines)
    markdown_it = pytest.importorskip("markdown_it")
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(table)
    assert html.count("<td>") == 4 and "bucc|ds:d@1:ab|model:m@cd|k:4" in html
