"""The thin writer behind ``xlbench report``: copy results, draw figures, write pages.

Everything is built in a temporary folder next to ``--out`` and moved into place
at the end, so a failed report leaves nothing half-written.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evaluators.core.errors import OutputError, UsageError, XlbenchError, cannot_write
from evaluators.core.fileio import (
    clean_stale,
    make_temp_dir,
    removed_if_failed,
    rename_exchange,
    rename_noreplace,
)
from evaluators.core.untrusted import safe_file_name
from evaluators.data.dsref import content_id
from evaluators.data.folder import MANIFEST
from evaluators.report import html, markdown, plots, views
from evaluators.report.records import Record, load_records
from evaluators.run.predictions import predictions_path, read_predictions
from evaluators.run.results import REPORT_MARKER
from evaluators.suites.summary import summary_markdown
from evaluators.tasks import FAMILY_TITLES, metadata_of

#: The per-language view's page (language x model across every task that has languages).
LANGUAGES_PAGE = "languages.html"
#: Most confident wrong items listed per result when per-item predictions exist.
WORST_ITEMS = 15


def _check_out(out: Path, overwrite: bool, records: list[Record]) -> None:
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {str(out)!r} is a file; pass a folder for the site.")
    if not out.is_dir() or not any(out.iterdir()) or (out / REPORT_MARKER).is_file():
        return
    if not overwrite:
        raise UsageError(
            f"--out {str(out)!r} exists and is not an xlbench report; pass an empty or new folder."
        )
    # --overwrite replaces a folder that is not a report, but never the results it reports on
    # or a dataset: the site takes the folder's place.
    held = [r.path for r in records if out.resolve() in r.path.resolve().parents]
    if held or (out / MANIFEST).is_file():
        what = f"the result {str(held[0])!r}" if held else "a dataset (manifest.json)"
        raise UsageError(
            f"--out {str(out)!r} holds {what}, which the site would replace; pass another --out."
        )


def _copy_results(records: list[Record], site: Path) -> dict[str, str]:
    href = {}
    for r in records:
        dest = site / "results" / r.rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(r.path, dest)
        pred = predictions_path(r.path)
        if pred.is_file():
            shutil.copy2(pred, predictions_path(dest))
        href[r.rel] = f"results/{r.rel}"
    return href


def _own_card(folder: object, revision: object) -> Path | None:
    """The README.md of ``folder`` if the folder is the very build a result scored, else ``None``.

    A result names its folder (``dataset.path``) but is untrusted: only a built dataset whose
    content id equals the result's revision is the dataset, and its card is meant to be read.
    Any other path (a home folder, another build, a symlinked card) is never copied.
    """
    if not folder or not revision:
        return None
    card = Path(str(folder)) / "README.md"
    try:
        if card.is_symlink() or not card.is_file() or not (card.parent / "manifest.json").is_file():
            return None
        return card if content_id(card.parent) == str(revision) else None
    except (OSError, XlbenchError):
        return None


def _copy_cards(
    records: list[Record], site: Path, datasets: list[views.DatasetRef]
) -> list[views.DatasetRef]:
    """Copy local dataset cards (README.md of the dataset folder) into the site and link them."""
    paths = {}
    for r in records:
        for ds in views._datasets_of(r):
            folder = ds.get("path") or (
                ds.get("id") if str(ds.get("id", "")).startswith("/") else None
            )
            key = (str(ds.get("id", "")), str(ds.get("revision") or "unresolved"))
            if key not in paths:
                paths[key] = _own_card(folder, ds.get("revision"))
    out = []
    for d in datasets:
        src = paths.get((d.id, d.revision))
        if d.card is None and src is not None:
            name = safe_file_name(f"{Path(d.id).name}@{d.revision[:12]}") + ".md"
            (site / "cards").mkdir(exist_ok=True)
            shutil.copy2(src, site / "cards" / name)
            d = views.DatasetRef(
                d.id, d.version, d.revision, d.source, f"cards/{name}", d.evaluators
            )
        out.append(d)
    return out


def _worst(
    records: list[Record], href: dict[str, str]
) -> dict[str, list[tuple[Record, list[dict]]]]:
    out: dict[str, list[tuple[Record, list[dict]]]] = {}
    for r in records:
        pred = predictions_path(r.path)
        if not pred.is_file():
            continue
        rows = [p for p in read_predictions(pred) if not p["correct"]]
        rows.sort(key=lambda p: -(p["score"] if p["score"] == p["score"] else float("-inf")))
        out.setdefault(r.family, []).append((r, rows[:WORST_ITEMS]))
    return out


def build_site(
    folders: list[str | os.PathLike],
    out: str | os.PathLike,
    fmt: str = "html",
    overwrite: bool = False,
    suite: Mapping[str, Any] | None = None,
) -> Path:
    """Build the report of every result under ``folders`` into ``out``; return the index page.

    With ``suite`` (a suite run's ``summary.json``), the index opens with the suite's
    leaderboard (name, version, dataset revisions, family means, overall rank) and the
    Markdown form starts with it.

    Raises:
        InputFileError: a folder is missing or holds no result.
        UsageError: ``out`` is a file or a non-empty folder that is not a report, or ``fmt`` is unknown.
        OutputError: the site cannot be written.
    """
    if fmt not in ("html", "md"):
        raise UsageError(f"--format must be html or md, got {fmt!r}.")
    records = load_records(list(folders))
    target = Path(out)
    _check_out(target, overwrite, records)
    with removed_if_failed(target):  # a failed report leaves no empty folders either
        tmp = _temp_site(target)
        try:
            index = _write(records, tmp, fmt, suite)
            (tmp / REPORT_MARKER).write_text("built by xlbench report\n", encoding="utf-8")
            if target.exists():
                rename_exchange(tmp, target)  # the old site is never gone before the new one is in
                shutil.rmtree(tmp, ignore_errors=True)  # now the old site
            else:
                rename_noreplace(tmp, target)
        except OSError as err:
            shutil.rmtree(tmp, ignore_errors=True)
            raise OutputError(
                cannot_write(f"the report to {str(target)!r}", err, "pass a writable --out")
            ) from err
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return target / index


def _temp_site(target: Path) -> Path:
    """Make the temporary folder the site is built in, beside ``target``.

    Its name carries this process's PID, so what a killed report left is removed by the next one.

    Raises:
        OutputError: the parent folder cannot be written.
    """
    temps = (f".{target.name}.tmp-", f".{target.name}.old-")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        clean_stale(target.parent, temps)
        return make_temp_dir(temps[0], target.parent)
    except OSError as err:
        raise OutputError(
            f"Cannot write the report next to {str(target)!r} ({err.strerror}); pass a writable --out."
        ) from err


def _page_names(families: list[str]) -> dict[str, str]:
    """``family -> page file``: one safe, distinct name each (a family is a string from a result file).

    >>> _page_names(["cbd", "../x", "index", "a/b", "a b"])
    {'cbd': 'cbd.html', '../x': '___x.html', 'index': 'index-2.html', 'a/b': 'a_b.html', 'a b': 'a_b-2.html'}
    """
    taken = {"index.html", "provenance.html", LANGUAGES_PAGE}
    out = {}
    for fam in families:
        base = safe_file_name(fam)
        name, n = f"{base}.html", 1
        while name in taken:
            n += 1
            name = f"{base}-{n}.html"
        taken.add(name)
        out[fam] = name
    return out


def _family_showing(records: list[Record], view: str) -> str:
    """The family of the results whose evaluator's metadata sets the boolean ``view`` (e.g. BUCC's table)."""
    fams = sorted({r.family for r in records if getattr(metadata_of(r.evaluator), view, False)})
    return fams[0] if fams else "other"


def _figures(
    records: list[Record], pdir: Path, bucc: list[views.BuccRow], table_fam: str
) -> dict[str, list[tuple[str, str]]]:
    """Draw every figure into ``pdir``; return ``family -> [(file stem, caption)]``."""
    figs: dict[str, list[tuple[str, str]]] = {}
    fam_of_ev = {r.evaluator: r.family for r in records}
    for p in views.layer_plots(records):
        figs.setdefault(fam_of_ev.get(p.evaluator, "other"), []).append(
            (plots.layer_plot(p, pdir), p.title)
        )
    for h in views.heatmaps(records):
        figs.setdefault(fam_of_ev.get(h.name.split("__")[0], "other"), []).append(
            (plots.heatmap_plot(h, pdir), h.title)
        )
    for ds in sorted({b.dataset for b in bucc}):
        rows = [b for b in bucc if b.dataset == ds]
        figs.setdefault(table_fam, []).append(
            (plots.bucc_plot(rows, pdir, ds), f"BUCC precision/recall/F1 · {ds}")
        )
    for s in views.scatters(records):
        figs.setdefault(_family_showing(records, "silver_gold_scatter"), []).append(
            (plots.scatter_plot(s, pdir), s.title)
        )
    return figs


def _write(
    records: list[Record], site: Path, fmt: str, suite: Mapping[str, Any] | None = None
) -> str:
    href = _copy_results(records, site)
    boards = views.leaderboards(records, href)
    bucc = views.bucc_rows(records, href)
    datasets, models = views.provenance(records)
    datasets = _copy_cards(records, site, datasets)
    table_fam = _family_showing(records, "threshold_table")
    figs = _figures(records, site / "plots", bucc, table_fam)
    languages = views.language_view(records)
    infos = views.model_infos(records)
    if suite:
        suite = views.suite_with_models(dict(suite), records)
    if fmt == "md":
        flat = [(f"plots/{stem}.png", cap) for fam in figs.values() for stem, cap in fam]
        head = summary_markdown(suite) + "\n" if suite else ""
        (site / "report.md").write_text(
            head + markdown.summary(boards, bucc, datasets, models, flat, languages, infos),
            encoding="utf-8",
        )
        return "report.md"
    pages = _page_names([lb.family for lb in boards])
    nav = (
        [("Leaderboard", "index.html")]
        + [(lb.family, pages[lb.family]) for lb in boards]
        + ([("Languages", LANGUAGES_PAGE)] if languages is not None else [])
        + [("Provenance", "provenance.html")]
    )
    body = []
    if suite:
        body.append(html.suite_leaderboard(suite, {f"results/{k}": v for k, v in href.items()}))
    body += [
        '<p class="note">Each number links to its result JSON; hover it for the signature. Click a column '
        "header to sort. Bold: best in the column.</p>"
    ]
    for lb in boards:
        body.append(html.family_heading(lb.title, pages[lb.family], lb.family))
        body.append(html.leaderboard_table(lb, f"lb-{lb.family}"))
    (site / "index.html").write_text(
        html.page("xlbench leaderboard", "\n".join(body), nav, "index.html"), encoding="utf-8"
    )
    worst = _worst(records, href)
    for lb in boards:
        parts = [html.leaderboard_table(lb, f"lb-{lb.family}")]
        if lb.family == table_fam and bucc:
            parts += ["<h2>Precision, recall and F1</h2>", html.bucc_table(bucc, "bucc-prf")]
        if figs.get(lb.family):
            parts.append("<h2>Figures</h2>")
            parts += [html.figure(stem, cap) for stem, cap in figs[lb.family]]
        for i, (r, err_rows) in enumerate(worst.get(lb.family, [])):
            if err_rows:
                parts.append(
                    html.errors_table(
                        f"Most confident errors · {r.evaluator} · {r.model_label}",
                        err_rows,
                        f"errors-{i}",
                    )
                )
        title = FAMILY_TITLES.get(lb.family, lb.family)
        (site / pages[lb.family]).write_text(
            html.page(title, "\n".join(parts), nav, pages[lb.family]), encoding="utf-8"
        )
    if languages is not None:
        (site / LANGUAGES_PAGE).write_text(
            html.page("Languages", html.language_tables(languages, infos), nav, LANGUAGES_PAGE),
            encoding="utf-8",
        )
    (site / "provenance.html").write_text(
        html.page("Provenance", html.provenance_tables(datasets, models), nav, "provenance.html"),
        encoding="utf-8",
    )
    return "index.html"
