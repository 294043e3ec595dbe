"""What a suite run plans before building or scoring: reuse, build, Hub, or skip with the reason."""

from __future__ import annotations

import pytest

from evaluators.core.errors import UsageError
from evaluators.suites.run import plan_suite
from evaluators.suites.spec import parse_suite


def _suite():
    return parse_suite(
        {
            "name": "p",
            "version": "1.0.0",
            "description": "d",
            "datasets": {
                "local": {"family": "bucc", "recipe": {"lang": "deu-eng"}, "content_id": "a" * 12},
                "shared": {"family": "bucc", "recipe": {"bucc_dir": "${shared}/b"}, "content_id": "b" * 12},
                "hub": {"family": "bucc", "hub": "org/b", "revision": "v1.0.0"},
                "online": {"family": "alee", "recipe": {"bible": True}, "needs": ["models", "internet"]},
            },
            "entries": [
                {"evaluator": "bucc", "dataset": "local"},
                {"evaluator": "bucc", "dataset": "shared"},
                {"evaluator": "bucc", "dataset": "hub"},
                {"evaluator": "tacc", "dataset": "online"},
            ],
        }
    )  # fmt: skip


def test_needs_this_machine_lacks_are_skipped_with_the_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("XLBENCH_SHARED_DATA", str(tmp_path / "absent"))
    (tmp_path / "out" / "datasets" / "local").mkdir(parents=True)
    plan = plan_suite(_suite(), ["random"], tmp_path / "out")
    actions = {s.dataset.name: s.action for s in plan.datasets}
    assert actions == {"local": "reuse", "shared": "skip", "hub": "skip", "online": "skip"}
    assert plan.skipped == {
        "bucc:shared": "needs the shared data folder (set XLBENCH_SHARED_DATA to it)",
        "bucc:hub": "needs the internet (pass --with internet where it is reachable)",
        "tacc:online": "needs the internet (pass --with internet where it is reachable); "
        "needs models that pip does not install (pass --with models once they are installed)",
    }
    assert "1 cells to score" in plan.text()


def test_what_the_machine_offers_is_used(tmp_path, monkeypatch):
    monkeypatch.setenv("XLBENCH_SHARED_DATA", str(tmp_path))
    plan = plan_suite(_suite(), ["random"], tmp_path / "out", allow=["internet", "models"])
    actions = {s.dataset.name: s.action for s in plan.datasets}
    assert actions == {"local": "build", "shared": "build", "hub": "hub", "online": "build"}
    assert plan.skipped == {}
    no_builder = plan_suite(_suite(), ["random"], tmp_path / "out", can_build=False)
    assert "needs the build extra" in no_builder.skipped["bucc:local"]


def test_bad_models_and_needs_are_refused(tmp_path):
    with pytest.raises(UsageError, match="one or more model specs"):
        plan_suite(_suite(), [], tmp_path)
    with pytest.raises(UsageError, match="--with 'gpu' is not a need"):
        plan_suite(_suite(), ["random"], tmp_path, allow=["gpu"])
    with pytest.raises(UsageError, match="--with 'gpu' is not a need"):
        plan_suite(_suite(), ["random"], tmp_path, allow="gpu")  # one need, not its letters


def test_one_need_may_come_as_a_string(tmp_path):
    one = plan_suite(_suite(), ["random"], tmp_path / "out", allow="internet")
    listed = plan_suite(_suite(), ["random"], tmp_path / "out", allow=["internet"])
    assert one.skipped == listed.skipped
