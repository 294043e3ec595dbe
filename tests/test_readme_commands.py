"""Every command the README and docs print runs as written (issue #29).

Each ``xlbench ...`` / ``python -m builders|evaluators ...`` command of a fenced
``bash`` block is parsed by the CLI's own argparse parser (the subcommand and every
option exist, required options are present); each ``make`` target exists in the
Makefile; each script or test path a command names exists. ``make help`` lists every
target of the Makefile. The blocks ``make docs-check`` runs are each followed by the
output they print, and a stale figure in that output fails the comparison.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _load_docs_check():
    spec = importlib.util.spec_from_file_location(
        "xlbench_docs_check", ROOT / "tests" / "support" / "docs_check.py"
    )
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


DC = _load_docs_check()


def _shell_commands() -> list[tuple[str, list[str]]]:
    out = []
    for path in DOCS:
        for block in DC.blocks(path):
            if block.lang in DC.SHELL:
                where = f"{path.relative_to(ROOT)}:{block.line}"
                out += [(where, cmd) for cmd in DC.commands(block)]
    return out


COMMANDS = _shell_commands()


def _makefile_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([a-z][a-z%-]*):", text, flags=re.M))


def _xlbench_argv(cmd: list[str]) -> list[str] | None:
    """The arguments after ``xlbench`` of a command that runs the xlbench CLI, else ``None``."""
    prog = Path(cmd[0]).name
    if prog == "xlbench":
        return cmd[1:]
    if prog == "xlbench-eval":
        return ["eval", *cmd[1:]]
    if prog.startswith("python") and cmd[1:3] in (["-m", "builders"], ["-m", "xlbench"]):
        return cmd[3:]
    if prog.startswith("python") and cmd[1:3] == ["-m", "evaluators"]:
        return ["eval", *cmd[3:]]
    return None


@functools.cache
def _parser():
    from builders.cli import build_parser

    return build_parser()  # every builder and evaluator, as `xlbench --help` sees them


def _parse_error(argv: list[str]) -> str | None:
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            _parser().parse_args(argv)
    except SystemExit as exit_:
        if exit_.code not in (0, None):  # --help / --version exit 0
            return err.getvalue().strip().splitlines()[-1]
    return None


def test_the_docs_hold_commands_to_check():
    progs = {Path(c[0]).name for _, c in COMMANDS}
    assert {"xlbench", "make"} <= progs, progs
    assert sum(_xlbench_argv(c) is not None for _, c in COMMANDS) >= 30


@pytest.mark.parametrize(
    "where,cmd",
    [(w, c) for w, c in COMMANDS if _xlbench_argv(c) is not None],
    ids=lambda v: v if isinstance(v, str) else " ".join(v)[:60],
)
def test_each_xlbench_command_parses(where, cmd):
    argv = _xlbench_argv(cmd)
    assert argv is not None
    error = _parse_error(argv)
    assert error is None, f"{where}: `{' '.join(cmd)}` is refused by the CLI: {error}"


def test_each_make_target_exists():
    from evaluators.tasks import TASKS

    targets = _makefile_targets()
    evaluators = set(TASKS.names()) if hasattr(TASKS, "names") else set(TASKS)
    for where, cmd in COMMANDS:
        if Path(cmd[0]).name != "make":
            continue
        for word in cmd[1:]:
            if word.startswith("-") or "=" in word:
                continue
            known = word in targets or (
                word.startswith("eval-") and word.removeprefix("eval-") in evaluators
            )
            assert known, f"{where}: `make {word}` is not a Makefile target"


def test_each_script_and_test_path_exists():
    for where, cmd in COMMANDS:
        prog = Path(cmd[0]).name
        if not prog.startswith("python") or len(cmd) < 2:
            continue
        if cmd[1] == "-m" and cmd[2:3] == ["pytest"]:
            paths = [w.split("::")[0] for w in cmd[3:] if not w.startswith("-") and "/" in w]
        elif cmd[1].endswith(".py"):
            paths = [cmd[1]]
        else:
            continue
        for p in paths:
            assert (ROOT / p).exists(), f"{where}: `{' '.join(cmd)}` names {p}, which is missing"


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_help_lists_every_target():
    shown = subprocess.run(
        ["make", "-s", "-f", str(ROOT / "Makefile"), "help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    listed = {line.split()[0] for line in shown.splitlines() if line.strip()}
    missing = sorted(_makefile_targets() - listed)
    assert not missing, f"`make help` omits {missing}: give each a '## one line' comment"
    assert all(len(line.split(None, 1)) == 2 for line in shown.splitlines() if line.strip())


def test_checked_blocks_are_followed_by_their_output():
    checked = [(p, b) for p in DOCS for b in DC.blocks(p) if b.checked]
    assert checked, "README.md marks no block for make docs-check"
    for path, block in checked:
        assert block.lang in (*DC.SHELL, "python"), f"{path}:{block.line}"
        assert DC.expected_after(DC.blocks(path), block) is not None, (
            f"{path}:{block.line}: a docs-check block needs the ```text block of what it prints"
        )


def test_docs_check_catches_a_stale_figure():
    readme = [b for b in DC.blocks(ROOT / "README.md") if b.checked]
    shown = DC.expected_after(DC.blocks(ROOT / "README.md"), readme[0]).body
    # What the command would print today if one figure moved by 0.001 or an id changed:
    number = re.search(r"\d\.\d{4}", shown)
    assert number, "the first checked block shows no 4-decimal figure"
    moved = f"{float(number.group()) + 0.001:.4f}"
    stale = shown[: number.start()] + moved + shown[number.end() :]
    assert DC.compare(shown, shown) == []
    assert DC.compare(shown, stale) != []
    ids = re.search(r"[0-9a-f]{12}", shown)
    if ids:
        changed = shown.replace(ids.group(), "0" * 12)
        assert DC.compare(shown, changed) != []
