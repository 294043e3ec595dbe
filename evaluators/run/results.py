"""Evaluator results: one JSON per (evaluator, dataset@revision, model@revision, effective parameters).

Shaped like mteb's per-task JSON: ``scores`` maps a split to a list of entries,
each with its ``subset`` (language pair, layer, perturbation ...), its
``main_score`` and any other metrics. :func:`load_results` reads a folder of
them back into one polars DataFrame.

The keys of a result JSON (:class:`EvalResult`):

``evaluator``
    the evaluator name (``word-retrieval`` ...).
``dataset``
    ``{id, source, requested, revision, version, family, path, name}``: ``id`` is the
    Hub repo id or, for a local folder, the card's dataset name; ``revision`` the
    Hub commit sha or the folder's content id; ``path`` the folder (local only).
    File-based evaluators store ``{id, source: "file"|"files", revision, ...}``.
``model``
    ``{id, revision, revision_source, spec, name}``; ``revision_source`` is
    ``"weights"`` (digest of the weight files), ``"hub"`` (commit sha), ``"user"``
    (given explicitly) or ``"encoder"`` (the adapter's own, e.g. a seed or a file hash).
``model_facts``
    what a reader compares models by, as the encoder exposed them (:mod:`evaluators.core.modelfacts`):
    ``parameters``, ``embedding_dim``, ``layers``, ``max_tokens``, each only when known. Outside the
    signature, the request key and the file name; absent from results written before it existed.
``parameters``
    the EFFECTIVE parameters (after clamping to the data), which the signature is built from.
``requested_parameters``
    the parameters as asked for (differs from ``parameters`` where clamped).
``scores``
    ``split -> [entry]``; every entry has ``subset`` and ``main_score``.
``main_score``, ``main_score_name``
    the aggregated main score and what it is.
``signature``
    the one-line sacreBLEU-style signature (:mod:`evaluators.run.signature`).
``params_hash``
    a short hash of the effective parameters (part of the file name).
``request_key``
    a hash of (evaluator, dataset@revision, model@revision, requested parameters):
    a grid run skips a cell whose ``request_key`` is already in ``--out``.
``wall_time_s``, ``evaluator_version``, ``xlbench_version``, ``git_commit``, ``timestamp``, ``library_versions``
    provenance.
``notes``, ``artifacts``
    sentences for the reader; paths of the plots written.
``ci_low``, ``ci_high``, ``ci_level``, ``ci_resamples``
    the bootstrap interval of ``main_score`` (``None`` with ``--bootstrap 0`` or without per-item rows).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import logging
import os
import platform
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from evaluators import __version__
from evaluators.core.errors import InputFileError, OutputError, UsageError, cannot_write
from evaluators.core.fileio import atomic_write_text, temp_name
from evaluators.core.gitstate import git_commit_state
from evaluators.core.untrusted import md_cell, safe_file_name

log = logging.getLogger("xlbench")

_LIBS = ("numpy", "torch", "transformers", "datasets", "huggingface-hub", "polars", "pyarrow")


def library_versions() -> dict[str, str]:
    """Return the installed versions of the libraries that can change a score."""
    out = {"python": platform.python_version()}
    for name in _LIBS:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def git_commit(path: str | os.PathLike | None = None) -> str | None:
    """Return the commit of the xlbench checkout (``<sha>-dirty`` with uncommitted changes), or ``None`` outside git.

    The same record as a build's manifest (:func:`evaluators.core.gitstate.git_commit_state`).
    """
    return git_commit_state(path)


def utc_now() -> str:
    """Return the current UTC time in ISO 8601 with seconds."""
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


@dataclass
class EvalResult:
    """The result of one evaluator run."""

    evaluator: str
    dataset: dict[str, Any]
    model: dict[str, Any]
    parameters: dict[str, Any]
    scores: dict[str, list[dict[str, Any]]]
    main_score: float | None
    main_score_name: str
    signature: str
    wall_time_s: float = 0.0
    evaluator_version: str = __version__
    xlbench_version: str = __version__
    git_commit: str | None = None
    timestamp: str = ""
    library_versions: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    artifacts: list[str] = field(default_factory=list)
    requested_parameters: dict[str, Any] = field(default_factory=dict)
    params_hash: str = ""
    request_key: str = ""
    ci_low: float | None = None
    ci_high: float | None = None
    ci_level: float | None = None
    ci_resamples: int | None = None
    model_facts: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-ready dict."""
        return asdict(self)

    def stem(self) -> str:
        """Return ``<evaluator>__<dataset>@<rev>__<model>@<rev>__<params hash>`` with unsafe characters replaced."""
        return file_stem(
            self.evaluator,
            self.dataset,
            self.model,
            self.params_hash or params_hash(self.parameters),
        )

    def file_name(self) -> str:
        """Return the result file name: :meth:`stem` plus ``.json``."""
        return self.stem() + ".json"


class NotAResultError(InputFileError):
    """A readable JSON file that is not an xlbench result (readers of a folder skip it)."""


#: The keys every result JSON has; a JSON without one of them is not a result.
RESULT_KEYS = ("evaluator", "scores", "signature")


@dataclass(frozen=True)
class StoredResult:
    """A result JSON read back (:func:`read_result`): typed fields, plus the whole object.

    The file is untrusted input: the named fields are checked for their type,
    ``data`` holds every key as read (for the fields this record does not name).

    Attributes:
        path: the file.
        evaluator: the evaluator name.
        dataset: ``{id, source, revision, ...}`` (see the module docstring).
        model: ``{id, revision, ...}``.
        parameters: the effective parameters.
        scores: ``split -> [entry]``.
        signature: the one-line signature.
        main_score: the aggregated main score (``None`` when there is none).
        main_score_name: what the main score is.
        request_key: the hash a grid run skips a cell by (``""`` in older results).
        data: the whole JSON object.
    """

    path: Path
    evaluator: str
    dataset: dict[str, Any]
    model: dict[str, Any]
    parameters: dict[str, Any]
    scores: dict[str, list[dict[str, Any]]]
    signature: str
    main_score: float | None
    main_score_name: str
    request_key: str
    data: dict[str, Any]

    def to_eval_result(self) -> EvalResult:
        """Return the :class:`EvalResult` this file was written from (keys it does not know are left out)."""
        names = {f.name for f in dataclasses.fields(EvalResult)}
        return EvalResult(**{k: v for k, v in self.data.items() if k in names})


def results_folder(folder: str | os.PathLike) -> Path:
    """``folder`` as a path, checked to be a folder (where ``xlbench eval --out`` writes results).

    Raises:
        InputFileError: it does not exist, or it is a file (a result JSON passed for its folder).
    """
    if not isinstance(folder, (str, os.PathLike)):
        raise UsageError(
            f"A results folder is a path (the --out folder of an xlbench eval run); got "
            f"{type(folder).__name__} {folder!r:.80}."
        )
    root = Path(folder)
    if root.is_file():
        raise InputFileError(
            f"{str(root)!r} is a file, not a results folder; pass the --out folder of an xlbench eval run."
        )
    if not root.is_dir():
        raise InputFileError(
            f"Results folder {str(root)!r} does not exist; pass the --out folder of an xlbench eval run."
        )
    return root


#: The file that marks a folder as a report site (``xlbench report`` writes it, and replaces only such a folder).
REPORT_MARKER = ".xlbench-report"


def result_files(root: Path) -> list[Path]:
    """The ``.json`` files below ``root``, sorted, without the copies a report site written there holds."""
    sites = {marker.parent for marker in root.rglob(REPORT_MARKER)}
    return [p for p in sorted(root.rglob("*.json")) if not sites.intersection(p.parents)]


def read_result(path: str | os.PathLike) -> StoredResult:
    """Read one result JSON: THE reader of result files (reports, comparisons, grid resume, ``--threshold-from``).

    Raises:
        InputFileError: the file is missing, unreadable or not JSON.
        NotAResultError: it is JSON but not an xlbench result (a key of :data:`RESULT_KEYS` is
            missing, or a field has the wrong type).
    """
    p = Path(path)
    if p.is_dir():
        raise InputFileError(
            f"{str(p)!r} is a folder, not a result file; pass one result JSON written by xlbench eval."
        )
    if not p.is_file():
        raise InputFileError(
            f"Result file {str(p)!r} does not exist; pass a result JSON written by xlbench eval."
        )
    if p.suffix == ".parquet":  # the predictions beside a result, passed for the result
        raise InputFileError(
            f"{str(p)!r} is a Parquet file (per-item predictions), not a result; pass the result "
            "JSON beside it."
        )
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputFileError(
            f"{str(p)!r} is not a readable JSON file ({err}); remove it or fix it."
        ) from err
    missing = [k for k in RESULT_KEYS if k not in data] if isinstance(data, dict) else RESULT_KEYS
    if missing:
        raise NotAResultError(
            f"{str(p)!r} is not an xlbench result (no {', '.join(repr(k) for k in missing)}); "
            f"pass a result JSON written by xlbench eval."
        )
    typed = {
        "evaluator": (data["evaluator"], str),
        "dataset": (data.get("dataset") or {}, dict),
        "model": (data.get("model") or {}, dict),
        "parameters": (data.get("parameters") or {}, dict),
        "scores": (data["scores"], dict),
        "signature": (data["signature"], str),
        "main_score_name": (data.get("main_score_name") or "", str),
        "request_key": (data.get("request_key") or "", str),
    }
    wrong = [k for k, (v, kind) in typed.items() if not isinstance(v, kind)]
    if "scores" not in wrong and not _scores_shaped(data["scores"]):
        wrong.append("scores")
    main = data.get("main_score")
    if main is not None and (isinstance(main, bool) or not isinstance(main, (int, float))):
        wrong.append("main_score")
    if wrong:
        raise NotAResultError(
            f"{str(p)!r} is not an xlbench result ({', '.join(wrong)} of the wrong type or shape); "
            f"pass a result JSON written by xlbench eval."
        )
    values = {k: v for k, (v, _) in typed.items()}
    return StoredResult(path=p, main_score=main, data=data, **values)


def _scores_shaped(scores: dict[str, Any]) -> bool:
    """Whether ``scores`` is ``split -> [entry]`` with every entry a JSON object.

    >>> _scores_shaped({"test": [{"subset": "all", "main_score": 0.5}]}), _scores_shaped({"test": "x"})
    (True, False)
    """
    return all(
        isinstance(entries, list) and all(isinstance(e, dict) for e in entries)
        for entries in scores.values()
    )


def params_hash(parameters: dict[str, Any], n: int = 8) -> str:
    """Return a short hash of a parameters dict (key order ignored).

    >>> params_hash({"n": 1, "k": 2}) == params_hash({"k": 2, "n": 1})
    True
    """
    text = json.dumps(parameters, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:n]


def file_stem(evaluator: str, dataset: dict[str, Any], model: dict[str, Any], phash: str) -> str:
    """Return the safe file stem shared by a result JSON and its plots."""
    ds = f"{dataset.get('id', 'dataset')}@{(dataset.get('revision') or 'local')[:12]}"
    mdl = f"{model.get('id', 'model')}@{(model.get('revision') or 'unknown')[:12]}"
    if model.get("backend"):  # an ONNX result never takes the name of the torch one
        mdl += f"+{model['backend']}"
    return safe_file_name(f"{evaluator}__{ds}__{mdl}__{phash}", max_len=230)


#: Keys that differ between two runs that computed the same thing (``model_facts`` describe the
#: model, and a result written before they were recorded is the same computation).
_PROVENANCE = (
    "model_facts",
    "wall_time_s",
    "timestamp",
    "git_commit",
    "library_versions",
    "artifacts",
    "evaluator_version",
    "xlbench_version",
)


#: Keys of ``dataset`` that say where it was read, not what it is: its identity is its id and
#: revision (content id or commit sha), so the same folder read from two paths is the same result.
_LOCATION = ("path",)


def same_result(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Return whether two result dicts hold the same computation (provenance, timings and paths ignored).

    >>> r = {"dataset": {"id": "d", "revision": "abc", "path": "/a/d"}, "main_score": 0.5}
    >>> same_result(r, {**r, "dataset": {**r["dataset"], "path": "/b/d"}})
    True
    >>> same_result(r, {**r, "dataset": {**r["dataset"], "revision": "abd"}})
    False
    """

    def strip(d: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in d.items() if k not in _PROVENANCE}
        if isinstance(out.get("dataset"), dict):
            out["dataset"] = {k: v for k, v in out["dataset"].items() if k not in _LOCATION}
        return out

    return json.dumps(strip(a), sort_keys=True, default=str) == json.dumps(
        strip(b), sort_keys=True, default=str
    )


def check_writable(out_dir: str | os.PathLike) -> Path:
    """Check, before any scoring, that result files can be written under ``out_dir``.

    Folders created for the probe are removed again, so a run that fails later
    (or never starts) leaves nothing behind.

    Raises:
        OutputError: the folder cannot be created or written.
    """
    out = Path(out_dir)
    created: list[Path] = []
    probe = out
    while not probe.exists() and probe != probe.parent:
        created.append(probe)
        probe = probe.parent
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe_file = out / temp_name(".probe-")  # named by its owner: clean_stale_writes sweeps it
        os.close(os.open(probe_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        os.unlink(probe_file)
    except OSError as err:
        raise OutputError(
            f"Cannot write results to {str(out)!r} ({err.strerror}); pass a writable --out folder."
        ) from err
    finally:
        for folder in created:
            try:
                folder.rmdir()
            except OSError:
                break
    return out


def finalize(result: EvalResult) -> EvalResult:
    """Fill the provenance fields (timestamp, git commit, library versions)."""
    result.timestamp = result.timestamp or utc_now()
    result.git_commit = result.git_commit or git_commit()
    result.library_versions = result.library_versions or library_versions()
    return result


def check_result_slot(
    result: EvalResult, out_dir: str | os.PathLike, overwrite: bool = False
) -> bool:
    """Check, before a cell writes any file, that its result may take its name in ``out_dir``.

    Returns whether the slot is taken by an earlier complete result (the same computation, or
    a different one being replaced with ``overwrite``). A file there that is not readable JSON
    (a truncated write, an empty file) is an incomplete cell: it is replaced, said in one log line.

    Raises:
        OutputError: a DIFFERENT result, or a JSON file that is not a result, has this name
            (without ``overwrite``).
    """
    path = Path(out_dir) / result.file_name()
    if not path.is_file():
        return False
    try:
        old = read_result(path).data
    except NotAResultError as err:
        if overwrite:
            return False
        raise OutputError(
            f"{str(path)!r} exists and is not an xlbench result ({err}); remove it, pass --overwrite "
            f"or another --out."
        ) from err
    except InputFileError:
        log.info("recomputing %s: the file is incomplete (not readable JSON)", path)
        return False
    if overwrite or same_result(old, result.to_dict()):
        return True
    raise OutputError(
        f"{str(path)!r} already holds a different result for the same evaluator, dataset, model and "
        f"parameters; pass --overwrite to replace it, or another --out."
    )


def save_result(result: EvalResult, out_dir: str | os.PathLike, overwrite: bool = False) -> Path:
    """Write ``result`` as JSON into ``out_dir`` atomically and return the path.

    An existing file of the same name holding the same computation is left as
    it is; one holding a DIFFERENT result is refused unless ``overwrite``; an
    incomplete one (not readable JSON) is replaced (:func:`check_result_slot`).

    Raises:
        OutputError: the folder cannot be created or written, or a different
            result already has this name.
    """
    out = Path(out_dir)
    path = out / result.file_name()
    if not overwrite and check_result_slot(result, out):
        return path
    text = json.dumps(result.to_dict(), indent=2, ensure_ascii=False, sort_keys=False) + "\n"
    try:
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)  # mode from the umask, like any other file
    except OSError as err:
        raise OutputError(
            cannot_write(f"results to {str(out)!r}", err, "pass a writable --out folder")
        ) from err
    return path


def load_results(folder: str | os.PathLike) -> Any:
    """Read every result JSON under ``folder`` into one polars DataFrame.

    One row per score entry, with columns ``evaluator``, ``dataset``,
    ``dataset_revision``, ``model``, ``model_revision``, ``split``, ``signature``
    and every key of the entry (``subset``, ``layer``, metrics ...).

    Raises:
        InputFileError: the folder does not exist or holds no result file.
    """
    import polars as pl

    root = results_folder(folder)
    rows: list[dict[str, Any]] = []
    for path in result_files(root):
        try:
            result = read_result(path)
        except InputFileError:
            continue  # not a result (or unreadable): a results folder may hold other JSON files
        base = {
            "evaluator": result.evaluator,
            "dataset": result.dataset.get("id"),
            "dataset_revision": result.dataset.get("revision"),
            "model": result.model.get("id"),
            "model_revision": result.model.get("revision"),
            "signature": result.signature,
            "file": str(path),
        }
        for split, entries in result.scores.items():
            for entry in entries:
                rows.append({**base, "split": split, **entry})
    if not rows:
        raise InputFileError(f"No xlbench result JSON found under {str(root)!r}.")
    return pl.DataFrame(rows, infer_schema_length=None)


def markdown_table(
    headers: Sequence[str], rows: Sequence[Sequence[object]], floatfmt: str = "{:.4f}"
) -> str:
    """Render a GitHub Markdown table.

    >>> print(markdown_table(["layer", "acc"], [[0, 0.5], [1, 0.75]]))
    | layer | acc |
    | --- | --- |
    | 0 | 0.5000 |
    | 1 | 0.7500 |
    """

    def cell(v: object) -> str:
        if isinstance(v, float):
            return floatfmt.format(v)
        return md_cell(v)  # a "|" in a signature must not split the row

    lines = [
        "| " + " | ".join(md_cell(h) for h in headers) + " |",
        "| " + " | ".join("---" for _ in headers) + " |",
    ]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
