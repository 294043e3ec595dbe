"""Library logs stay off stderr unless ``-v`` (issue 26, item 6).

28 of 30 stderr lines of a Hub evaluation were httpx's ``INFO HTTP Request``; ``datasets``
drew split bars on publish and transformers printed its load report from the API. One
function decides (:func:`evaluators.core.progress.quiet_libraries`), called where the command
line sets up logging and where the API starts.
"""

from __future__ import annotations

import logging

import pytest

from builders.cli import main
from evaluators.core.progress import CHATTY_LOGGERS, QUIET_ENV


@pytest.fixture
def fresh_process(monkeypatch):
    """Undo what an earlier quiet call did in this process (logger levels, environment)."""
    for name in CHATTY_LOGGERS:
        monkeypatch.setattr(logging.getLogger(name), "level", logging.NOTSET)
    for var in QUIET_ENV:
        monkeypatch.setenv(var, "x")  # recorded, so the test's value is undone afterwards
        monkeypatch.delenv(var)
    logging.getLogger("xlbench").setLevel(logging.NOTSET)


def _eval(tmp_path, *flags: str) -> list[str]:
    src = tmp_path / "s.txt"
    src.write_text("The dog runs .\nA cat sleeps .\n", encoding="utf-8")
    argv = [*flags, "eval", "bitext-retrieval", "--src", str(src), "--tgt", str(src)]
    assert main([*argv, "--model", "random", "--out", str(tmp_path / "out")]) == 0
    return argv


def _library_lines(caplog) -> list[str]:
    caplog.clear()
    logging.getLogger("httpx").info(
        'HTTP Request: GET https://huggingface.co/api "HTTP/1.1 200 OK"'
    )
    logging.getLogger("huggingface_hub").info("fetching")
    logging.getLogger("xlbench").info("our own line")
    return [r.name for r in caplog.records]


def test_the_command_line_keeps_library_logs_quiet(fresh_process, tmp_path, caplog, capsys):
    caplog.set_level(logging.INFO)
    _eval(tmp_path)
    assert _library_lines(caplog) == ["xlbench"]
    import os

    assert os.environ["HF_DATASETS_DISABLE_PROGRESS_BARS"] == "1"
    assert os.environ["TRANSFORMERS_VERBOSITY"] == "error"
    capsys.readouterr()


def test_verbose_shows_them(fresh_process, tmp_path, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    _eval(tmp_path, "-v")
    assert _library_lines(caplog) == ["httpx", "huggingface_hub", "xlbench"]
    capsys.readouterr()


def test_the_api_is_quiet_unless_xlbench_logs_at_debug(fresh_process, tmp_path, caplog):
    from evaluators.run.runner import evaluate

    src = tmp_path / "s.txt"
    src.write_text("The dog runs .\nA cat sleeps .\n", encoding="utf-8")
    caplog.set_level(logging.INFO)
    evaluate("bitext-retrieval", model="random", src=str(src), tgt=str(src))
    assert _library_lines(caplog) == ["xlbench"]


def test_a_user_setting_wins(fresh_process, monkeypatch, tmp_path, caplog, capsys):
    monkeypatch.setenv("TRANSFORMERS_VERBOSITY", "info")
    caplog.set_level(logging.INFO)
    _eval(tmp_path)
    import os

    assert os.environ["TRANSFORMERS_VERBOSITY"] == "info"
    capsys.readouterr()


def test_transformers_load_reports_are_off_once_quiet(fresh_process):
    tlog = pytest.importorskip("transformers.utils.logging")
    from evaluators.core.progress import quiet_libraries

    before = tlog.get_verbosity()
    try:
        tlog.set_verbosity_warning()
        quiet_libraries()
        assert tlog.get_verbosity() == logging.ERROR  # the load report is a warning
    finally:
        tlog.set_verbosity(before)
