"""Pure HTML builders: every function returns a string; nothing is read or written here.

Every value that reaches a page goes through :func:`evaluators.core.untrusted.escape_html`
(imported as ``escape``): result files are untrusted input. Pages are built only here.

The pages are self-contained: CSS and the sorting script are inline, links are
relative, so the site opens from disk and can be published as it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from evaluators.core.modelfacts import FACTS, fact_label
from evaluators.core.untrusted import escape_html as escape
from evaluators.report.views import (
    BUCC_COLUMNS,
    LANGUAGE_MEANS_RULE,
    BuccRow,
    DatasetRef,
    LanguageView,
    Leaderboard,
    ModelInfo,
    ModelRef,
    facts_text,
    subset_name,
)

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1b1b1b;background:#fff}
header{background:#12355b;color:#fff;padding:10px 20px}header a{color:#fff;margin-right:16px;text-decoration:none}
header a.current{text-decoration:underline}main{padding:10px 20px 40px;max-width:1200px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0 16px}th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f2f4f7;cursor:pointer;user-select:none;vertical-align:bottom}th:first-child,td:first-child{text-align:left}
th.sorted-asc::after{content:" \\25B2"}th.sorted-desc::after{content:" \\25BC"}
td a{color:#0b57a4;text-decoration:none}td a:hover{text-decoration:underline}.ci{color:#666;font-size:12px}
.best{font-weight:bold}.note{color:#555;font-size:13px}.fig{display:inline-block;margin:6px 14px 14px 0;vertical-align:top}
.fig img{max-width:520px;border:1px solid #eee}.fig .links{font-size:12px}code{font-size:12px}
.facts,.context{color:#555;font-weight:normal;font-size:11px}table.errors td{text-align:left;max-width:360px}
tfoot td{background:#f7f8fa;font-weight:bold}td.text,table.errors th{text-align:left}
"""

#: Sortable tables: click a header; ``#sort=<table id>:<column>:<asc|desc>`` sorts on load (used by the
#: browser test); errors are counted on ``body[data-js-errors]``, readiness on ``body[data-js-ready]``,
#: loaded images as ``body[data-images]="<loaded>/<total>"``.
JS = """
(function(){
var errors=0;window.addEventListener('error',function(){errors+=1;document.body.setAttribute('data-js-errors',String(errors));});
function key(td){if(!td)return null;var v=td.getAttribute('data-sort-value');if(v===null||v==='')return null;
var f=parseFloat(v);return isNaN(f)?v.toLowerCase():f;}
function sortTable(table,col,dir){var body=table.tBodies[0];var rows=Array.prototype.slice.call(body.rows);
rows.sort(function(a,b){var x=key(a.cells[col]),y=key(b.cells[col]);if(x===null&&y===null)return 0;if(x===null)return 1;if(y===null)return -1;
var c=(typeof x===typeof y)?(x<y?-1:x>y?1:0):String(x).localeCompare(String(y));return dir==='asc'?c:-c;});
rows.forEach(function(r){body.appendChild(r);});
Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){th.classList.remove('sorted-asc','sorted-desc');
if(i===col)th.classList.add(dir==='asc'?'sorted-asc':'sorted-desc');});table.setAttribute('data-sorted',col+':'+dir);}
window.xlbenchSort=function(id,col,dir){var t=document.getElementById(id);if(t)sortTable(t,col,dir);};
document.querySelectorAll('table[data-sortable]').forEach(function(table){
Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){th.addEventListener('click',function(){
var cur=table.getAttribute('data-sorted');var dir=(cur===i+':desc')?'asc':'desc';if(i===0&&cur!==i+':asc')dir='asc';sortTable(table,i,dir);});});});
var m=/#sort=([^:]+):(\\d+):(asc|desc)/.exec(window.location.hash);if(m)window.xlbenchSort(m[1],parseInt(m[2],10),m[3]);
document.body.setAttribute('data-js-ready','1');
window.addEventListener('load',function(){var imgs=document.images,ok=0;for(var i=0;i<imgs.length;i++){if(imgs[i].complete&&imgs[i].naturalWidth>0)ok+=1;}
document.body.setAttribute('data-images',ok+'/'+imgs.length);});
})();
"""


def fmt(v: float | None, digits: int = 3) -> str:
    """Format a score for a page.

    >>> fmt(0.51234), fmt(None)
    ('0.512', '–')
    """
    return "–" if v is None else f"{v:.{digits}f}"


def page(title: str, body: str, nav: list[tuple[str, str]], current: str) -> str:
    """Return a complete HTML page with the inline CSS and script."""
    cur = ' class="current"'
    links = "".join(
        f'<a href="{escape(href)}"{cur if href == current else ""}>{escape(label)}</a>'
        for label, href in nav
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head>\n"
        f"<body><header><strong>xlbench</strong> &nbsp; {links}</header><main>\n<h1>{escape(title)}</h1>\n{body}\n</main>"
        f"<script>{JS}</script></body></html>\n"
    )


def leaderboard_table(lb: Leaderboard, table_id: str) -> str:
    """A sortable models x columns table; each number links to its result JSON, its signature in the tooltip."""
    best: dict[str, float] = {}
    for _, cells in lb.rows:
        for key, given in cells.items():
            if given.score is not None:
                best[key] = max(best.get(key, given.score), given.score)
    head = '<th data-col="0">model</th>' + "".join(
        f'<th data-col="{i + 1}" title="{escape(c.score_name)}">{escape(c.evaluator)}<br><small>{escape(c.dataset)}'
        + (f"<br>{escape(c.variant)}" if c.variant else "")
        + f"<br>{escape(c.languages)}</small></th>"
        for i, c in enumerate(lb.columns)
    )
    body = []
    for model, cells in lb.rows:
        tds = [f'<td data-sort-value="{escape(model)}">{escape(model)}</td>']
        for c in lb.columns:
            cell = cells.get(c.key)
            if cell is None:
                tds.append('<td data-sort-value=""></td>')
                continue
            ci = ""
            if cell.ci is not None:
                ci = f' <span class="ci">[{fmt(cell.ci[0])}, {fmt(cell.ci[1])}]</span>'
            cls = (
                ' class="best"' if cell.score is not None and cell.score == best.get(c.key) else ""
            )
            value = "" if cell.score is None else repr(cell.score)
            tds.append(
                f'<td data-sort-value="{value}"{cls}><a href="{escape(cell.href)}" title="{escape(cell.signature)}">'
                f"{fmt(cell.score)}</a>{ci}</td>"
            )
        body.append("<tr>" + "".join(tds) + "</tr>")
    return (
        f'<table id="{escape(table_id)}" class="leaderboard" data-sortable="true" data-family="{escape(lb.family)}">'
        f"<thead><tr>{head}</tr></thead><tbody>\n" + "\n".join(body) + "\n</tbody></table>"
    )


def family_heading(title: str, page_name: str, anchor: str) -> str:
    """The index page's heading of one family, linking to the family's page."""
    return f'<h2 id="{escape(anchor)}"><a href="{escape(page_name)}">{escape(title)}</a></h2>'


def figure(stem: str, caption: str, folder: str = "plots") -> str:
    """An image (PNG) with links to its PNG and SVG files."""
    src = f"{escape(folder)}/{escape(stem)}"
    return (
        f'<figure class="fig"><img src="{src}.png" alt="{escape(caption)}" data-plot="{escape(stem)}">'
        f'<figcaption>{escape(caption)} <span class="links">(<a href="{src}.png">PNG</a>, '
        f'<a href="{src}.svg">SVG</a>)</span></figcaption></figure>'
    )


def bucc_table(rows: list[BuccRow], table_id: str) -> str:
    """BUCC precision/recall/F1 at the train-learned threshold, and the oracle labelled as such."""
    head = [*BUCC_COLUMNS, "oracle threshold"]
    ths = "".join(f'<th data-col="{i}">{escape(h)}</th>' for i, h in enumerate(head))
    out = []
    for r in rows:
        nums = [r.precision, r.recall, r.f1, r.threshold, r.oracle_f1, r.oracle_threshold]
        cells = [
            f'<td data-sort-value="{escape(r.model)}">{escape(r.model)}</td>',
            f'<td data-sort-value="{escape(r.dataset)}">{escape(r.dataset)}</td>',
            f'<td data-sort-value="{escape(r.subset)}">{escape(r.subset)}</td>',
        ]
        for i, v in enumerate(nums):
            text = fmt(v, 4 if i in (3, 5) else 3)
            if i == 2:
                text = f'<a href="{escape(r.href)}">{text}</a>'
            cells.append(f'<td data-sort-value="{"" if v is None else repr(v)}">{text}</td>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    note = (
        '<p class="note">The score is F1 at the margin threshold learned on the train split. The oracle F1 '
        "uses the threshold that is best on the test split itself: an upper bound for the threshold choice, "
        "not a comparable score.</p>"
    )
    return (
        f'<table id="{escape(table_id)}" data-sortable="true"><thead><tr>{ths}</tr></thead><tbody>\n'
        + "\n".join(out)
        + "\n</tbody></table>"
        + note
    )


def provenance_tables(datasets: list[DatasetRef], models: list[ModelRef]) -> str:
    """Every dataset (id, version, revision, card) and model (id, revision) behind the numbers."""
    drows = []
    for d in datasets:
        card = f'<a href="{escape(d.card)}">card</a>' if d.card else "–"
        drows.append(
            f'<tr><td data-sort-value="{escape(d.id)}"><code>{escape(d.id)}</code></td><td data-sort-value="{escape(d.version)}">'
            f'{escape(d.version)}</td><td data-sort-value="{escape(d.revision)}"><code>{escape(d.revision)}</code></td>'
            f'<td data-sort-value="{escape(d.source)}">{escape(d.source or "–")}</td><td data-sort-value="">{card}</td>'
            f'<td data-sort-value="{escape(", ".join(d.evaluators))}">{escape(", ".join(d.evaluators))}</td></tr>'
        )
    mrows = []
    for m in models:
        ident = (
            f'<a href="{escape(m.link)}"><code>{escape(m.id)}</code></a>'
            if m.link
            else f"<code>{escape(m.id)}</code>"
        )
        mrows.append(
            f'<tr><td data-sort-value="{escape(m.id)}">{ident}</td><td data-sort-value="{escape(m.revision)}"><code>'
            f'{escape(m.revision)}</code></td><td data-sort-value="{escape(m.spec)}"><code>{escape(m.spec or "–")}</code></td>'
            + "".join(_fact_td(k, m.facts.get(k)) for k in FACTS)
            + f'<td data-sort-value="{escape(", ".join(m.evaluators))}">{escape(", ".join(m.evaluators))}</td></tr>'
        )
    dh = "".join(
        f'<th data-col="{i}">{escape(h)}</th>'
        for i, h in enumerate(
            ["dataset", "version", "resolved revision", "source", "card", "evaluators"]
        )
    )
    mh = "".join(
        f'<th data-col="{i}">{escape(h)}</th>'
        for i, h in enumerate(["model", "revision", "spec", *FACTS.values(), "evaluators"])
    )
    return (
        f'<h2>Datasets</h2><table id="prov-datasets" data-sortable="true"><thead><tr>{dh}</tr></thead><tbody>\n'
        + "\n".join(drows)
        + "\n</tbody></table>"
        + f'<h2>Models</h2><table id="prov-models" data-sortable="true"><thead><tr>{mh}</tr></thead><tbody>\n'
        + "\n".join(mrows)
        + "\n</tbody></table>"
    )


def _said(text: Any, context: Any) -> str:
    """A word or sentence of an error row, with the sentence a word came from beneath it."""
    out = f"<strong>{escape(str(text))}</strong>" if text else "–"
    if context and context != text:
        out += f'<br><small class="context">{escape(str(context))}</small>'
    return out


def errors_table(title: str, rows: list[dict], table_id: str) -> str:
    """The most confident wrong items of one result (from its per-item predictions).

    Rows with the predictions' text columns show the words and sentences (the item's id on
    hover); older files, without them, show the ids.
    """
    if any(r.get("query_text") for r in rows):
        return _readable_errors_table(title, rows, table_id)
    head = "".join(
        f'<th data-col="{i}">{escape(h)}</th>'
        for i, h in enumerate(["item", "subset", "retrieved", "score", "tie"])
    )
    body = "".join(
        f'<tr><td data-sort-value="{escape(str(r["item_id"]))}">{escape(str(r["item_id"]))}</td>'
        f'<td data-sort-value="{escape(str(r["subset"]))}">{escape(str(r["subset"]))}</td>'
        f'<td data-sort-value="{escape(str(r["retrieved"]))}">{escape(str(r["retrieved"]))}</td>'
        f'<td data-sort-value="{escape(repr(r["score"]))}">{fmt(r["score"], 4)}</td><td data-sort-value="{int(bool(r["tie"]))}">{"yes" if r["tie"] else ""}</td></tr>'
        for r in rows
    )
    return f'<h3>{escape(title)}</h3><table id="{escape(table_id)}" data-sortable="true"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _readable_errors_table(title: str, rows: list[dict], table_id: str) -> str:
    heads = ["item", "expected", "retrieved", "languages", "score", "tie"]
    head = "".join(f'<th data-col="{i}">{escape(h)}</th>' for i, h in enumerate(heads))
    body = []
    for r in rows:
        cells = [
            f'<td data-sort-value="{escape(str(r.get("query_text") or ""))}" title="{escape(str(r["item_id"]))}">'
            f"{_said(r.get('query_text'), r.get('query_context'))}</td>",
            f'<td data-sort-value="{escape(str(r.get("expected_text") or ""))}">'
            f"{_said(r.get('expected_text'), r.get('expected_context'))}</td>",
            f'<td data-sort-value="{escape(str(r.get("retrieved_text") or ""))}" title="{escape(str(r["retrieved"]))}">'
            f"{_said(r.get('retrieved_text'), r.get('retrieved_context'))}</td>",
            f'<td data-sort-value="{escape(str(r["subset"]))}">{escape(_subset_words(str(r["subset"]), str(r["item_id"])))}</td>',
            f'<td data-sort-value="{escape(repr(r["score"]))}">{fmt(r["score"], 4)}</td>',
            f'<td data-sort-value="{int(bool(r["tie"]))}">{"yes" if r["tie"] else ""}</td>',
        ]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<h3>{escape(title)}</h3><table id="{escape(table_id)}" class="errors" data-sortable="true">'
        f"<thead><tr>{head}</tr></thead><tbody>" + "".join(body) + "</tbody></table>"
    )


def _subset_words(subset: str, item_id: str = "") -> str:
    """A prediction row's subset in words: the languages in the item's direction, then the rest.

    An item id tagged ``tgt_src`` / ``tgt2src`` (the retrieval evaluators' reverse direction)
    asks from the pair's second language.

    >>> _subset_words("eng_Latn-deu_Latn.layer2"), _subset_words("eng_Latn-deu_Latn", "7:tgt_src:r0")
    ('English→German · layer2', 'German→English')
    """
    text, _, rest = subset.partition(".")
    pair, slash, split = text.partition("/")
    if re.search(r":(tgt_src|tgt2src)(:|$)", item_id) and pair.count("-") == 1:
        pair = "-".join(reversed(pair.split("-")))
    return subset_name(pair + slash + split) + (f" · {rest}" if rest else "")


def model_head(label: str, info: ModelInfo | None, col: int) -> str:
    """A model's column heading: its short name, its facts beneath, its full id and revision on hover."""
    name, full = (info.name, info.full) if info else (label, label)
    facts = facts_text(info.facts) if info else ""
    small = f'<br><small class="facts">{escape(facts)}</small>' if facts else ""
    return f'<th data-col="{col}" title="{escape(full)}">{escape(name)}{small}</th>'


def language_tables(view: LanguageView, infos: Mapping[str, ModelInfo]) -> str:
    """The per-language page: languages x models (means, each model's mean and rank), then every task.

    Missing cells are shown as missing and left out of every mean, which the page says.
    """
    models = view.models
    head = '<th data-col="0">language</th>' + "".join(
        model_head(m, infos.get(m), i + 1) for i, m in enumerate(models)
    )
    rows = []
    for lang, name in view.languages:
        cells = [f'<td data-sort-value="{escape(name)}">{escape(name)}</td>']
        for m in models:
            have, total = view.counts[(lang, m)]
            value = view.means[(lang, m)]
            text = f'<span title="mean of {have} of {total} tasks">{fmt(value)}</span>'
            cells.append(_num_td(value, text if value is not None else "–"))
        rows.append("<tr>" + "".join(cells) + "</tr>")
    foot = (
        '<tr class="mean"><td>mean over languages</td>'
        + "".join(_num_td(view.overall[m], fmt(view.overall[m])) for m in models)
        + '</tr><tr class="rank"><td>rank</td>'
        + "".join(_num_td(view.rank[m], str(view.rank[m] or "–")) for m in models)
        + "</tr>"
    )
    parts = [
        '<p class="note">Every task whose results name their languages, one row per language '
        f"(pair). Means: {escape(LANGUAGE_MEANS_RULE)}. – : missing. Hover a model for its full id "
        "and revision.</p>",
        f'<table id="lang-models" class="leaderboard" data-sortable="true"><thead><tr>{head}</tr></thead><tbody>\n'
        + "\n".join(rows)
        + f"\n</tbody><tfoot>{foot}</tfoot></table>",
        "<h2>Every task, by language</h2>",
    ]
    head = '<th data-col="0">language</th><th data-col="1">task</th>' + "".join(
        model_head(m, infos.get(m), i + 2) for i, m in enumerate(models)
    )
    rows = []
    for lang, name in view.languages:
        for t in view.tasks_of(lang):
            label = f"{t.evaluator} · {t.dataset}"
            cells = [
                f'<td data-sort-value="{escape(name)}">{escape(name)}</td>',
                f'<td class="text" data-sort-value="{escape(label)}">{escape(label)}</td>',
            ]
            cells += [_num_td(view.scores.get((lang, t.key, m))) for m in models]
            rows.append("<tr>" + "".join(cells) + "</tr>")
    parts.append(
        f'<table id="lang-tasks" data-sortable="true"><thead><tr>{head}</tr></thead><tbody>\n'
        + "\n".join(rows)
        + "\n</tbody></table>"
    )
    return "\n".join(parts)


def suite_leaderboard(summary: Mapping[str, Any], href: Mapping[str, str] | None = None) -> str:
    """A suite's leaderboard (``summary.json``): its header, one row per model, then every entry.

    The header names the suite, its version and every dataset's revision; the first table has
    the family means, the overall mean and the rank; the second every entry's main score, each
    linking to its result when ``href`` (``result path -> site link``) has it. Missing cells are
    shown as missing and said to be excluded from the means.
    """
    suite = summary["suite"]
    fams = list(summary["families"])
    entries = list(summary["entries"])
    links = dict(href or {})
    parts = [
        f'<h2 id="suite">Suite {escape(suite["name"])} v{escape(suite["version"])}</h2>',
        '<table id="suite-datasets"><thead><tr><th>dataset</th><th>family</th><th>source</th>'
        "<th>revision</th></tr></thead><tbody>",
    ]
    for d in summary["datasets"]:
        rev = d.get("revision") or "not resolved"
        parts.append(
            f"<tr><td>{escape(d['name'])}</td><td>{escape(d['family'])}</td>"
            f'<td>{escape(d.get("hub") or "recipe")}</td><td><code title="{escape(rev)}">{escape(rev[:12])}</code></td></tr>'
        )
    parts.append("</tbody></table>")
    with_facts = any(r.get("facts") for r in summary["models"])
    facts = list(FACTS.values()) if with_facts else []
    head = "".join(f"<th>{escape(h)}</th>" for h in ("rank", "model", *facts, *fams, "overall"))
    rows = []
    for r in summary["models"]:
        cells = [_num_td(r["rank"], str(r["rank"] or "–")), _suite_model_td(r)]
        if with_facts:
            cells += [_fact_td(k, (r.get("facts") or {}).get(k)) for k in FACTS]
        cells += [_num_td(r["family_means"].get(f)) for f in fams]
        cells.append(_num_td(r["overall"]))
        rows.append("<tr>" + "".join(cells) + "</tr>")
    parts.append(
        f'<table id="suite-leaderboard" data-sortable="true"><thead><tr>{head}</tr></thead><tbody>\n'
        + "\n".join(rows)
        + "\n</tbody></table>"
    )
    head = "<th>model</th>" + "".join(
        f"<th>{escape(e['evaluator'])}<br><small>{escape(e['dataset'])}</small></th>"
        for e in entries
    )
    rows = []
    for r in summary["models"]:
        cells = [_suite_model_td(r)]
        for e in entries:
            score = r["scores"].get(e["id"])
            link = links.get(r.get("results", {}).get(e["id"], ""))
            text = fmt(score) if not link else f'<a href="{escape(link)}">{fmt(score)}</a>'
            cells.append(_num_td(score, text))
        rows.append("<tr>" + "".join(cells) + "</tr>")
    parts.append(
        f'<table id="suite-entries" data-sortable="true"><thead><tr>{head}</tr></thead><tbody>\n'
        + "\n".join(rows)
        + "\n</tbody></table>"
    )
    notes = [f"Means: {escape(summary['means'])}. – : missing."]
    notes += [
        f"{escape(e['id'])} skipped: {escape(e['skipped'])}" for e in entries if e.get("skipped")
    ]
    parts.append('<p class="note">' + "<br>".join(notes) + "</p>")
    return "\n".join(parts)


def _suite_model_td(row: Mapping[str, Any]) -> str:
    """A suite row's model: its short name (the spec when the results gave none), its identity on hover."""
    name = str(row.get("display") or row["model"])
    hover = " ".join(str(x) for x in (row.get("full") or row.get("model_id"), row["model"]) if x)
    return f'<td data-sort-value="{escape(name)}" title="{escape(hover)}">{escape(name)}</td>'


def _fact_td(key: str, value: int | None) -> str:
    return _num_td(value, fact_label(key, value))


def _num_td(value: Any, text: str | None = None) -> str:
    sort = "" if value is None else repr(value)
    shown = text if text is not None else (fmt(value, 4) if isinstance(value, float) else "–")
    return f'<td data-sort-value="{escape(sort)}">{shown}</td>'
