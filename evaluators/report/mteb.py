"""mteb interoperability: export xlbench results in mteb's format, and run xlbench data in ``mteb.evaluate``.

Export (:func:`export_results`, ``xlbench export mteb RESULTS_DIR --out DIR``)
writes ``DIR/results/<model with / as __>/<revision>/<task>.json`` plus a
``model_meta.json``, the layout of mteb's results repository and ``ResultCache``.
One task file per xlbench result; one score entry per subset; layers (and
alignment methods) become subsets (``eng_Latn-deu_Latn.layer8``); only the split
that is the score is written (``test``: BUCC's ``train`` split only learns the
threshold); ``languages`` holds mteb's ``deu-Latn`` codes. Per subset, mteb's
``main_score`` equals the xlbench entry's score. mteb's task-level score is the
*mean over subsets*, so for per-layer evaluators it is the mean over layers, not
xlbench's best-layer main score.

Reverse direction (:func:`bucc_task`, :func:`cbd_task`): an xlbench BUCC-style
folder or a contextual-dictionary (cbd) folder exposed as an mteb
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
import json
import math
import os
import re
import shutil
from pathlib import Path
from typing import Any

from evaluators.core.errors import OutputError, UsageError
from evaluators.core.fileio import clean_stale, make_temp_dir, removed_if_failed
from evaluators.core.untrusted import safe_file_name
from evaluators.data.source import open_source
from evaluators.encoders import load_encoder
from evaluators.report.records import Record, load_records
from evaluators.run.task import MtebExport, MtebPivot
from evaluators.schema import bucc as bucc_schema
from evaluators.schema import cbd as cbd_schema
from evaluators.tasks import TASKS, metadata_of

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


def task_name(data: dict[str, Any]) -> str:
    """Return the mteb task name of a result: ``xlbench-<evaluator>-<dataset>``.

    >>> task_name({"evaluator": "bucc", "dataset": {"id": "/tmp/out/bucc-deu", "source": "local"}})
    'xlbench-bucc-bucc-deu'
    """
    ds = data.get("dataset") or {}
    name = str(ds.get("id") or "dataset")
    if ds.get("source") == "local" or name.startswith("/"):
        name = Path(name).name
    return re.sub(
        r"[^A-Za-z0-9_.-]+",
        "-",
        f"xlbench-{data.get('evaluator', 'unknown')}-{name.split('/')[-1]}",
    )


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
        # mteb's placeholder for an unknown revision: its DataFrame drops rows whose revision is None
        meta = {
            "name": str(model.get("id") or "model"),
            "revision": model.get("revision") or "no_revision_available",
            "framework": ["xlbench"],
            "loader": None,
        }
        (path.parent / "model_meta.json").write_text(
            json.dumps(meta, indent=2) + "\n", encoding="utf-8"
        )
    for rel, _, _ in written:
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp / rel, dest)
        meta_file = tmp / rel.parent / "model_meta.json"
        if meta_file.exists():  # shared by the model's task files: moved with the first one
            os.replace(meta_file, dest.parent / "model_meta.json")


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
    written: list[tuple[Path, dict[str, Any], dict[str, Any]]] = []
    for r in records:
        try:
            obj = task_result(r.data)
        except UsageError:
            continue
        mdir, rdir = _model_dir(r.model)
        task_file = f"{safe_file_name(obj['task_name'])}.json"
        written.append((Path("results") / mdir / rdir / task_file, obj, r.model))
    if not written:
        raise UsageError(
            "None of the results can be exported to mteb (no supported evaluator with a scored subset)."
        )
    names = [w[0] for w in written]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise UsageError(
            f"Two results map to the same mteb file {sorted(dup)[0].as_posix()!r} (same model, revision, "
            "evaluator and dataset name); export them into separate folders."
        )
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
                f"Cannot write mteb results to {str(target)!r} ({err.strerror or err}); free some space "
                f"or pass a writable --out."
            ) from err
    return [target / rel for rel, _, _ in written]


# ---------------------------------------------------------------------------- xlbench data as mteb tasks


def _bitext_task(name: str, description: str, revision: str, subsets: dict[str, Any], split: str):
    """Build an ``AbsTaskBitextMining`` instance over in-memory ``subset -> {sentence1, sentence2, gold}``."""
    from mteb.abstasks.task_metadata import TaskMetadata
    from mteb.abstasks.text.bitext_mining import AbsTaskBitextMining

    langs = {sub: languages_of(sub) for sub in subsets}
    metadata = TaskMetadata(
        name=name,
        dataset={"path": name, "revision": revision},
        description=description,
        reference="https://github.com/xlbench/xlbench",
        type="BitextMining",
        category="t2t",
        modalities=["text"],
        eval_splits=[split],
        eval_langs=langs,
        main_score="f1",
        date=None,
        domains=None,
        task_subtypes=None,
        license=None,
        annotations_creators=None,
        dialect=None,
        sample_creation=None,
        bibtex_citation="",
    )
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
        f"xlbench-bucc-{Path(ref.id).name}",
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
        f"xlbench-cbd-{Path(ref.id).name}",
        "xlbench contextual-dictionary sentence pairs (line i translates line i).",
        ref.revision,
        subsets,
        split,
    )


class MtebEncoder:
    """Wrap an xlbench encoder (``load_encoder`` spec) for ``mteb.evaluate``.

    Sentence embeddings come from ``Encoder.sentence_embeddings`` with the given
    pooling and layer; mteb computes the cosine similarity.
    """

    def __init__(self, spec: str, pooling: str = "model", layer: int = -1, **options: Any) -> None:
        from mteb.models.model_meta import ModelMeta

        self.encoder = load_encoder(spec, **options)
        self.pooling, self.layer = pooling, layer
        self.mteb_model_meta = ModelMeta(
            loader=None,
            name=self.encoder.model_id
            if "/" in self.encoder.model_id
            else f"xlbench/{self.encoder.model_id}",
            revision=str(self.encoder.revision),
            release_date=None,
            languages=None,
            n_parameters=None,
            memory_usage_mb=None,
            max_tokens=None,
            embed_dim=None,
            license=None,
            open_weights=None,
            public_training_code=None,
            public_training_data=None,
            framework=[],
            similarity_fn_name="cosine",  # type: ignore[arg-type]  # mteb accepts the enum's value
            use_instructions=False,
            training_datasets=None,
        )

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
        """Encode the texts of an mteb dataloader."""
        import numpy as np

        texts: list[str] = []
        for batch in inputs:
            texts.extend(batch["text"])
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return self.encoder.sentence_embeddings(texts, pooling=self.pooling, layer=self.layer)

    def similarity(self, embeddings1, embeddings2):
        """Cosine similarity matrix (mteb's helper)."""
        from mteb.similarity_functions import cos_sim

        return cos_sim(embeddings1, embeddings2)

    def similarity_pairwise(self, embeddings1, embeddings2):
        """Pairwise cosine similarity (mteb's helper)."""
        from mteb.similarity_functions import pairwise_cos_sim

        return pairwise_cos_sim(embeddings1, embeddings2)
