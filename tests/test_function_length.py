"""No function over 80 lines without a reason stated in a comment (issue 17).

A function longer than :data:`MAX_LINES` (from its ``def`` line to its last line) must say
why in a comment containing ``Long on purpose`` among the first five lines of its body
(right after the signature, before or after the docstring's first line), e.g. a flat
declaration of argparse flags or a mapping table of messages.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("builders", "evaluators", "cards", "xlbench")
MAX_LINES = 80
MARKER = "Long on purpose"


def _signature_end(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The last line of the signature (the line of its closing ``:``, as far as ast tells)."""
    ends = [fn.lineno]
    ends += [a.end_lineno or a.lineno for a in ast.walk(fn.args) if isinstance(a, ast.arg)]
    ends += [d.end_lineno or d.lineno for d in fn.args.defaults + fn.args.kw_defaults if d]
    if fn.returns is not None:
        ends.append(fn.returns.end_lineno or fn.returns.lineno)
    return max(ends)


def long_functions(source: str, max_lines: int = MAX_LINES) -> list[tuple[str, int, int]]:
    """``(name, first line, length)`` of each function over ``max_lines`` without a reason comment."""
    lines = source.splitlines()
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        length = (node.end_lineno or node.lineno) - node.lineno + 1
        if length <= max_lines:
            continue
        end = _signature_end(node)
        head = lines[node.lineno - 1 : end + 5]
        if not any(MARKER in line and line.lstrip().startswith("#") for line in head):
            out.append((node.name, node.lineno, length))
    return out


def _files() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def test_no_long_function_without_a_reason():
    offenders = [
        f"{path.relative_to(ROOT).as_posix()}:{line} {name} ({length} lines)"
        for path in _files()
        for name, line, length in long_functions(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, (
        f"functions over {MAX_LINES} lines without a '# {MARKER}: <why>' comment in their first "
        "lines; split them along their steps or say why they are long:\n" + "\n".join(offenders)
    )


def _body(n: int) -> str:
    return "".join(f"    x{i} = {i}\n" for i in range(n))


@pytest.mark.parametrize(
    "source, flagged",
    [
        ("def f():\n" + _body(79), []),  # 80 lines: at the limit
        ("def f():\n" + _body(80), [("f", 1, 81)]),
        ("def f():\n    # Long on purpose: a flat table.\n" + _body(80), []),
        ('def f():\n    """Doc."""\n    # Long on purpose: a flat table.\n' + _body(80), []),
        (
            "def f(\n    a: int,\n    b: int,\n) -> None:\n    # Long on purpose: flags.\n"
            + _body(80),
            [],
        ),
        (
            "def f():\n" + _body(10) + "    # Long on purpose: too late.\n" + _body(80),
            [("f", 1, 92)],
        ),
        ("class C:\n    def m(self):\n" + _body(80).replace("    ", "        "), [("m", 2, 81)]),
        ('def f():\n    s = "Long on purpose"\n' + _body(80), [("f", 1, 82)]),
    ],
)
def test_long_functions_counts_and_reads_the_reason(source, flagged):
    assert long_functions(source) == flagged
