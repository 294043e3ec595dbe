"""The README's and docs' commands, read as a user reads them, and ``make docs-check``.

Two jobs share one reading of the Markdown:

* :func:`commands` extracts every command of the fenced ``bash`` blocks (continuation
  lines joined, comments, heredoc bodies and ``for`` loops unwrapped) for
  ``tests/test_readme_commands.py``, which checks each ``xlbench`` / ``python -m`` /
  ``make`` command against the CLI's own parser and the Makefile's targets.
* ``python tests/support/docs_check.py [README.md ...]`` (``make docs-check``) runs every
  block marked ``<!-- docs-check -->`` end to end, offline, in a scratch folder, and
  compares what it prints with the ``text`` block that follows it in the file. A line
  must match in full, except that decimals may differ by :data:`TOLERANCE` (they are
  printed rounded to 4 places) and ``…`` stands for any text (timings, paths). Ids,
  integers and words compare exactly, so a stale table or a changed dataset id fails.

In a checked block ``xlbench`` and ``python`` are this interpreter (``python -m builders``):
the block runs the code of this checkout, whichever ``xlbench`` is on the PATH.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

#: Marker line before a block that ``make docs-check`` runs.
MARKER = "<!-- docs-check -->"
#: Largest difference allowed between a printed decimal and the README's (4 printed places).
TOLERANCE = 1e-4
#: Fenced block languages that hold shell commands.
SHELL = ("bash", "sh", "shell", "console")
_FENCE = re.compile(r"^```([A-Za-z0-9_-]*)\s*$")
_FLOAT = re.compile(r"-?\d+\.\d+")
_VAR = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
_HEREDOC = re.compile(r"<<-?\s*['\"]?([A-Za-z_]+)['\"]?")


@dataclass(frozen=True)
class Block:
    """One fenced block of a Markdown file."""

    path: str
    line: int  # 1-based line of the opening fence
    lang: str
    body: str
    checked: bool  # preceded by MARKER


def blocks(path: str | os.PathLike) -> list[Block]:
    """Return the fenced blocks of a Markdown file, in order, marked or not."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i].strip())
        if not m:
            i += 1
            continue
        start, body = i, []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i])
            i += 1
        before = [x.strip() for x in lines[:start] if x.strip()]
        checked = bool(before) and before[-1] == MARKER
        out.append(Block(str(path), start + 1, m.group(1), "\n".join(body), checked))
        i += 1
    return out


def _split_compound(line: str) -> list[str]:
    """Split at ``;``, ``&&``, ``||`` and ``|`` outside quotes.

    >>> _split_compound("a 'x|y' | b && c; d")
    ["a 'x|y' ", ' b ', ' c', ' d']
    """
    parts, current, quote, i = [], "", None, 0
    while i < len(line):
        ch = line[i]
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in ";|&":
            parts.append(current)
            current = ""
            i += 2 if line[i : i + 2] in ("&&", "||") else 1
            continue
        current += ch
        i += 1
    return [*parts, current]


def _strip_comment(line: str) -> str:
    """Drop a ``#`` comment (outside quotes, at the start or after a space)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def _logical_lines(body: str) -> list[str]:
    """Join ``\\`` continuations, drop comments and heredoc bodies."""
    out, pending, heredoc = [], "", None
    for raw in body.splitlines():
        if heredoc is not None:
            heredoc = None if raw.strip() == heredoc else heredoc
            continue
        line = _strip_comment(raw)
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        doc = _HEREDOC.search(line)
        if doc:
            heredoc, line = doc.group(1), line[: doc.start()]
        if line.strip():
            out.append(line.strip())
    return out


def _simple_commands(line: str, values: dict[str, str]) -> list[list[str]]:
    """Split one logical line into simple commands (``for`` bodies unwrapped, variables filled in)."""
    out = []
    for part in _split_compound(line):
        if part.strip() in ("", "do", "done"):
            continue
        filled = _VAR.sub(lambda m: values.get(m.group(1), f"VAR_{m.group(1)}"), part)
        try:
            cmd = shlex.split(filled)
        except ValueError:
            continue
        while cmd and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", cmd[0]):  # VAR=value prefixes
            name, _, value = cmd.pop(0).partition("=")
            values[name] = value
        if cmd[:1] == ["for"] and len(cmd) > 3:  # for VAR in FIRST ...: the body runs with FIRST
            values[cmd[1]] = cmd[3]
            continue
        while cmd and cmd[0] in ("do", "then", "env", "nice", "time", "export"):
            cmd.pop(0)
            while cmd and (cmd[0].startswith("-") or "=" in cmd[0] or cmd[0].isdigit()):
                name, _, value = cmd.pop(0).partition("=")
                values[name] = value
        if cmd and cmd != ["done"]:
            out.append(cmd)
    return out


def commands(block: Block) -> list[list[str]]:
    """Return every simple command of a shell block as argv lists.

    >>> b = Block("x", 1, "bash", "D=data; for m in a b; do xlbench eval bucc --model $m; done\\n"
    ...           "make demo   # comment\\nxlbench build cbd \\\\\\n  --lang eng-deu --out $D/x", False)
    >>> commands(b)
    [['xlbench', 'eval', 'bucc', '--model', 'a'], ['make', 'demo'], ['xlbench', 'build', 'cbd', '--lang', 'eng-deu', '--out', 'data/x']]
    """
    values: dict[str, str] = {}
    out = []
    for line in _logical_lines(block.body):
        out += _simple_commands(line, values)
    return out


def expected_after(all_blocks: list[Block], block: Block) -> Block | None:
    """Return the ``text`` block that follows ``block`` (what it prints), or ``None``."""
    later = [b for b in all_blocks if b.line > block.line]
    return later[0] if later and later[0].lang == "text" else None


def compare(expected: str, printed: str) -> list[str]:
    """Return one message per line of ``expected`` that ``printed`` does not reproduce.

    >>> compare("score 0.9417 id 49149b70a0d7 (…)", "score 0.94172 id 49149b70a0d7 (12.5s)")
    []
    >>> compare("score 0.9417", "score 0.9520")
    ['line 1: score 0.9417 -> score 0.9520']
    >>> compare("rows 300", "rows 301")
    ['line 1: rows 300 -> rows 301']
    """
    want = [x.rstrip() for x in expected.splitlines() if x.strip()]
    got = [x.rstrip() for x in printed.splitlines() if x.strip()]
    problems = []
    for i, line in enumerate(want):
        seen = got[i] if i < len(got) else "(nothing)"
        if not _line_matches(line, seen):
            problems.append(f"line {i + 1}: {line} -> {seen}")
    if len(got) > len(want):
        problems.append(f"{len(got) - len(want)} more printed lines than the README shows")
    return problems


def _line_matches(want: str, got: str) -> bool:
    pattern, numbers, pos = "", [], 0
    for m in re.finditer(r"…|-?\d+\.\d+", want):
        pattern += re.escape(want[pos : m.start()])
        if m.group() == "…":
            pattern += ".*?"
        else:
            pattern += r"(-?\d+\.\d+)"
            numbers.append(float(m.group()))
        pos = m.end()
    pattern += re.escape(want[pos:])
    found = re.fullmatch(pattern, got)
    if not found:
        return False
    return all(abs(float(g) - w) <= TOLERANCE + 1e-12 for g, w in zip(found.groups(), numbers))


def _prelude(root: Path) -> str:
    """Shell functions that make ``xlbench`` and ``python`` this interpreter on this checkout."""
    py = shlex.quote(sys.executable)
    return (
        f"set -euo pipefail\nexport PYTHONPATH={shlex.quote(str(root))}\n"
        "export LANG=C.UTF-8 LC_ALL=C.UTF-8 PYTHONHASHSEED=0 HF_HUB_OFFLINE=1\n"
        f'xlbench() {{ {py} -m builders "$@"; }}\npython() {{ {py} "$@"; }}\n'
    )


def run_block(block: Block, root: Path, work: Path) -> tuple[str, float]:
    """Run one checked block in ``work``; return its stdout and seconds. Python blocks run as a script."""
    if block.lang == "python":
        script = _prelude(root) + f"python - <<'XLBENCH_DOCS_EOF'\n{block.body}\nXLBENCH_DOCS_EOF\n"
    else:
        script = _prelude(root) + block.body + "\n"
    start = time.perf_counter()
    done = subprocess.run(["bash", "-c", script], cwd=work, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"exit {done.returncode}: {done.stderr[-1500:]}")
    return done.stdout, seconds


def check(paths: list[str], root: Path) -> int:
    """Run every checked block of ``paths``; print one line per block; return the exit code."""
    failures, total = 0, 0.0
    with tempfile.TemporaryDirectory(prefix="xlbench-docs-check-") as tmp:
        for path in paths:
            found = blocks(path)
            for block in (b for b in found if b.checked):
                where = f"{path}:{block.line}"
                want = expected_after(found, block)
                try:
                    printed, seconds = run_block(block, root, Path(tmp))
                except RuntimeError as err:
                    print(f"FAIL {where}: the block failed, {err}")
                    failures += 1
                    continue
                total += seconds
                problems = compare(want.body, printed) if want else ["no ```text block follows it"]
                status = "FAIL" if problems else "ok  "
                print(f"{status} {where} ({seconds:.0f} s)")
                for p in problems:
                    print(f"       {p}")
                failures += bool(problems)
    print(f"docs-check: {failures} failing block(s), {total:.0f} s of commands")
    return 1 if failures else 0


if __name__ == "__main__":
    here = Path(__file__).resolve().parents[2]
    files = sys.argv[1:] or [str(here / "README.md")]
    sys.exit(check([str(Path(f).resolve()) for f in files], here))
