"""The report reads what it knows about an evaluator from the evaluator's metadata.

No module of ``evaluators/report/`` names an evaluator: chance levels, layer curves,
heatmaps, tables, families and the mteb mapping come from :class:`~evaluators.run.task.TaskMetadata`
and the registry, so adding an evaluator never touches the report.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from evaluators.report import views
from evaluators.report.records import Record
from evaluators.tasks import TASKS, family_of, metadata_of

REPORT = Path(__file__).resolve().parents[3] / "evaluators" / "report"


def _string_literals(path: Path) -> list[tuple[int, str]]:
    return _string_literals_of(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", sorted(REPORT.glob("*.py")), ids=lambda p: p.name)
def test_no_report_module_names_an_evaluator(path):
    names = set(TASKS.names())
    found = [(line, s) for line, s in _string_literals(path) if s in names]
    assert not found, f"{path.name} switches on evaluator names {found}: declare it in TaskMetadata"


def test_the_literal_check_sees_a_name():
    assert (1, "bucc") in _string_literals_of('x = "bucc"\n')


def _string_literals_of(text: str) -> list[tuple[int, str]]:
    tree = ast.parse(text)
    return [
        (n.lineno, n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def _record(evaluator: str, entries: list[dict]) -> Record:
    data = {"evaluator": evaluator, "scores": {"test": entries}, "signature": "s"}
    return Record(Path(f"{evaluator}.json"), f"{evaluator}.json", data)


def test_chance_of_a_layer_curve_comes_from_the_metadata():
    entries = [{"subset": "eng_Latn-deu_Latn", "layer": 0, "n": 50, "s_weak_src_tgt": 0.5}]
    # word-retrieval declares its chance as one correct among n candidates (it used to declare none).
    assert metadata_of("word-retrieval").chance_one_in_n
    (plot,) = views.layer_plots([_record("word-retrieval", entries)])
    assert plot.chance == pytest.approx(1 / 50)
    # An evaluator that declares no chance gets no chance line.
    f1 = [{"subset": "eng_Latn-deu_Latn", "layer": 0, "method": "argmax", "f1": 0.5}]
    (plot,) = views.layer_plots([_record("embedding-aligner", f1)])
    assert plot.chance is None and [s.style for s in plot.series] == ["argmax"]


def test_unknown_evaluators_are_left_out_of_metadata_views():
    rec = _record("someone-elses", [{"subset": "x", "layer": 0, "main_score": 1.0}])
    assert views.layer_plots([rec]) == [] and views.heatmaps([rec]) == []
    assert rec.family == "other" and family_of("someone-elses") is None


@pytest.mark.parametrize("name", TASKS.names())
def test_the_family_a_result_is_filed_under_is_the_registrys(name):
    assert _record(name, []).family == TASKS.entry(name).extra["family"]
