"""Read and write word-alignment files in the formats public tools use.

Formats (``fmt``):

* ``pharaoh`` — one line per sentence, links ``i-j`` (sure) and ``i?j`` or
  ``ipj`` (possible); an empty line is a sentence without links.
* ``id`` — ``id<TAB>links`` lines. Several lines with the same id are merged,
  so SilverAlign's ``gold.txt`` (``sent_idx<TAB>i-j``, sentences without a
  silver link have no line) is this format too.
* ``naacl`` — the WPT/NAACL 2003 format, one link per line:
  ``sent src tgt [S|P]`` (no letter = sure). Sentence numbers start at 1 in
  that format; they become keys ``0, 1, ...`` unless a sentence 0 occurs.
  Word indices are 1-based by definition and 0 means NULL: :func:`resolve_base`
  drops (and counts) NULL links and never guesses another base.

Sentences are identified by string *keys*: the line number (0-based) for
``pharaoh`` files, the id for ``id`` files. Indices are returned exactly as
written; :func:`resolve_base` turns them 0-based (for Pharaoh files through
:func:`detect_base`, which refuses to guess). Possible sets always include the
sure links (S ⊆ P). :func:`parse_links` is the one Pharaoh codec of xlbench
(the cbd builder's gold reader uses it too).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from evaluators.core.errors import InputFileError, UsageError, truncate
from evaluators.data.textio import read_lines

Link = tuple[int, int]
FORMATS = ("auto", "pharaoh", "id", "naacl")

_LINK_RE = re.compile(r"^(\d+)([-?p])(\d+)$")
_NAACL_RE = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)(?:\s+([SP]))?(?:\s+\S+)?\s*$")


@dataclass
class AlignmentFile:
    """Alignments of a corpus keyed by sentence.

    Attributes:
        keys: sentence keys in file order.
        sure: per key, the sure links.
        possible: per key, the possible links (sure ones included).
        fmt: the format that was read.
        path: where it came from.
    """

    keys: list[str]
    sure: list[set[Link]]
    possible: list[set[Link]]
    fmt: str
    path: str = ""
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, tuple[set[Link], set[Link]]]:
        """Return ``key -> (sure, possible)``."""
        return {k: (s, p) for k, s, p in zip(self.keys, self.sure, self.possible)}

    @property
    def n_links(self) -> int:
        """Number of distinct possible links (sure included)."""
        return sum(len(p) for p in self.possible)


def parse_links(text: str, where: str = "") -> tuple[set[Link], set[Link]]:
    """Parse one Pharaoh line into ``(sure, possible)``; possible includes sure.

    >>> sure, possible = parse_links("0-0 1p2 3?3")
    >>> sorted(sure), sorted(possible)
    ([(0, 0)], [(0, 0), (1, 2), (3, 3)])

    Raises:
        InputFileError: a token is not ``i-j``, ``ipj`` or ``i?j``.
    """
    sure: set[Link] = set()
    possible: set[Link] = set()
    for item in text.split():
        m = _LINK_RE.match(item)
        if not m:
            raise InputFileError(
                f"Bad alignment link {truncate(item, 30)}{where}: expected i-j (sure) or ipj / i?j (possible) "
                f"with non-negative integers."
            )
        link = (int(m.group(1)), int(m.group(3)))
        possible.add(link)
        if m.group(2) == "-":
            sure.add(link)
    return sure, possible


def _sniff(lines: list[str]) -> str:
    content = [ln for ln in lines if ln.strip()]
    if not content:
        return "pharaoh"
    if all(_NAACL_RE.match(ln) for ln in content[:50]) and not any(
        "-" in ln for ln in content[:50]
    ):
        return "naacl"
    if all("\t" in ln for ln in content):
        return "id"
    return "pharaoh"


def parse_alignment_lines(lines: Sequence[str], fmt: str = "auto", path: str = "") -> AlignmentFile:
    r"""Parse alignment lines in ``fmt`` (``auto`` sniffs it).

    >>> f = parse_alignment_lines(["0\t1-1", "2\t0-0 3p3", "0\t2-2"])
    >>> f.fmt, f.keys, [sorted(s) for s in f.sure]
    ('id', ['0', '2'], [[(1, 1), (2, 2)], [(0, 0)]])
    >>> [sorted(p) for p in parse_alignment_lines(["1 1 1 S", "1 2 3 P", "2 1 1"]).possible]
    [[(1, 1), (2, 3)], [(1, 1)]]

    Raises:
        InputFileError: unknown format or a malformed line (the message names the line).
    """
    if fmt not in FORMATS:
        raise InputFileError(
            f"Unknown alignment format {fmt!r}; choose one of {', '.join(FORMATS)}."
        )
    name = f" in {path}" if path else ""
    if fmt == "auto":
        fmt = _sniff(list(lines))
    if fmt == "pharaoh":
        keys, sure, possible = [], [], []
        for n, line in enumerate(lines):
            if "\t" in line:
                raise InputFileError(
                    f"Line {n + 1}{name} has a TAB ({truncate(line, 40)}): use --format id for id<TAB>links files."
                )
            s, p = parse_links(line, f" on line {n + 1}{name}")
            keys.append(str(n))
            sure.append(s)
            possible.append(p)
        return AlignmentFile(keys, sure, possible, fmt, path)
    merged: dict[str, tuple[set[Link], set[Link]]] = {}
    if fmt == "id":
        for n, line in enumerate(lines):
            if not line.strip():
                continue
            key, tab, rest = line.partition("\t")
            if not tab or not key.strip():
                raise InputFileError(
                    f"Line {n + 1}{name} is not 'id<TAB>links' ({truncate(line, 40)}); "
                    f"plain Pharaoh files need --format pharaoh."
                )
            s, p = parse_links(rest, f" on line {n + 1}{name}")
            entry = merged.setdefault(key.strip(), (set(), set()))
            entry[0].update(s)
            entry[1].update(p)
    else:  # naacl
        rows = []
        for n, line in enumerate(lines):
            if not line.strip():
                continue
            m = _NAACL_RE.match(line)
            if not m:
                raise InputFileError(
                    f"Line {n + 1}{name} is not NAACL 'sent src tgt [S|P]' ({truncate(line, 40)})."
                )
            rows.append((int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4) or "S"))
        offset = 0 if any(r[0] == 0 for r in rows) else 1
        for sent, i, j, kind in rows:
            entry = merged.setdefault(str(sent - offset), (set(), set()))
            entry[1].add((i, j))
            if kind == "S":
                entry[0].add((i, j))
    keys = list(merged)
    return AlignmentFile(
        keys, [merged[k][0] for k in keys], [merged[k][1] for k in keys], fmt, path
    )


def open_lines(path: str | os.PathLike, what: str) -> list[str]:
    """Read a UTF-8 text file (BOM tolerated) into lines; a final newline starts no extra line.

    Args:
        path: the file.
        what: what the file holds, for the error message ("alignment file").

    Raises:
        InputFileError: the file is missing, a directory, unreadable or not UTF-8.
    """
    label = what[:1].upper() + what[1:]
    return read_lines(path, what=label, missing=f"{label} {{path}} does not exist; check the path.")


def read_alignments(path: str | os.PathLike, fmt: str = "auto") -> AlignmentFile:
    """Read an alignment file (see the module docstring for formats).

    Raises:
        InputFileError: missing/unreadable file or malformed content.
    """
    return parse_alignment_lines(open_lines(path, "alignment file"), fmt, str(path))


def tokens(text: str) -> list[str]:
    r"""Split text on Unicode whitespace, the way alignment gold files count tokens.

    Every whitespace character separates tokens, the ideographic space U+3000 of
    Japanese and Chinese text included (``str.split()`` semantics).

    >>> tokens("日本\u3000語 a\tb")
    ['日本', '語', 'a', 'b']
    """
    return text.split()


def read_parallel_text(path: str | os.PathLike) -> tuple[list[list[str]], list[list[str]]]:
    """Read a ``src ||| tgt`` file (one pair per line) into whitespace token lists (see :func:`tokens`).

    Raises:
        InputFileError: missing file or a line without exactly one ``|||``.
    """
    src, tgt = [], []
    for n, line in enumerate(open_lines(path, "parallel text")):
        parts = line.split("|||")
        if len(parts) != 2:
            raise InputFileError(
                f"Line {n + 1} of {str(path)!r} is not 'source ||| target' ({truncate(line, 40)})."
            )
        src.append(tokens(parts[0]))
        tgt.append(tokens(parts[1]))
    return src, tgt


def detect_base(
    links: Iterable[Iterable[Link]],
    src_lens: Sequence[int] | None = None,
    tgt_lens: Sequence[int] | None = None,
    *,
    what: str = "the alignment file",
    flag: str = "--index-base",
) -> tuple[int, str]:
    """Decide whether links are 0- or 1-based; return ``(base, reason)``.

    Rules, in order: an index equal to the sentence length (lengths known)
    means 1-based; an index 0 means 0-based; with lengths known and neither
    seen, 0-based (partial silver links often skip both first and last
    words); no links at all means 0-based (it does not matter). Without
    lengths and without an index 0 the base cannot be decided (a 0-based file
    that never aligns word 0 looks 1-based): that is an error, never a guess.

    >>> detect_base([{(0, 1)}])[0]
    0
    >>> detect_base([{(2, 1)}], [2], [5])[0]
    1
    >>> detect_base([{(1, 1)}], [3], [3])
    (0, 'assumed 0-based: no index 0 and no index equal to the sentence length')

    Args:
        links: per sentence, its links as written.
        src_lens: per sentence, the number of source tokens (``None``: unknown).
        tgt_lens: per sentence, the number of target tokens.
        what: the file, for messages ("the gold file 'g.txt'").
        flag: the option that sets this file's base, for messages.

    Raises:
        InputFileError: an index 0 and an index equal to the sentence length
            both occur, an index exceeds the length (no base fits), or the
            base cannot be decided without lengths.
    """
    sets = [set(s) for s in links]
    n_links = sum(len(s) for s in sets)
    has_zero = any(i == 0 or j == 0 for s in sets for i, j in s)
    at_len = None
    if src_lens is not None and tgt_lens is not None:
        for k, (s, ls, lt) in enumerate(zip(sets, src_lens, tgt_lens)):
            for i, j in sorted(s):
                if i > ls or j > lt:
                    raise InputFileError(
                        f"Link {i}-{j} of sentence {k} in {what} is out of range for {ls} source and {lt} target "
                        f"tokens in either index base; check that the alignment and text files match."
                    )
                if (i == ls or j == lt) and at_len is None:
                    at_len = (k, i, j)
    if at_len is not None:
        if has_zero:
            k, i, j = at_len
            raise InputFileError(
                f"Indices of {what} are 0-based (an index 0 occurs) but link {i}-{j} of sentence {k} equals the "
                f"sentence length; the alignment does not fit its text."
            )
        return (
            1,
            f"1-based: link {at_len[1]}-{at_len[2]} of sentence {at_len[0]} equals the sentence length",
        )
    if has_zero:
        return 0, "0-based: index 0 occurs"
    if n_links == 0:
        return 0, "no links"
    if src_lens is not None and tgt_lens is not None:
        return 0, "assumed 0-based: no index 0 and no index equal to the sentence length"
    raise InputFileError(
        f"Cannot decide whether {what} is 0- or 1-based: none of its {n_links} links uses index 0; "
        f"pass {flag} 0 or 1, or --text with the sentences so their lengths decide."
    )


def check_range(
    afile: AlignmentFile,
    src_lens: Sequence[int],
    tgt_lens: Sequence[int],
    what: str = "the alignment file",
) -> None:
    """Check 0-based links against sentence lengths (``afile.keys[n]`` has ``src_lens[n]`` tokens).

    Raises:
        InputFileError: a link points past the end of its sentence (the message names
            the file and the sentence).
    """
    for k, p, ls, lt in zip(afile.keys, afile.possible, src_lens, tgt_lens):
        for i, j in sorted(p):
            if i < 0 or j < 0 or i >= ls or j >= lt:
                raise InputFileError(
                    f"Link {i}-{j} (0-based) of sentence {k} in {what} is out of range: that sentence has {ls} "
                    f"source and {lt} target tokens; check that the alignment and text files match."
                )


def resolve_base(
    afile: AlignmentFile,
    requested: str = "auto",
    src_lens: Sequence[int] | None = None,
    tgt_lens: Sequence[int] | None = None,
    *,
    what: str = "the alignment file",
    flag: str = "--index-base",
) -> tuple[AlignmentFile, int, str]:
    """Return ``afile`` with 0-based indices, the base it was read in and why.

    NAACL files are 1-based by definition (0 = NULL): NULL links are dropped and
    counted in ``notes``, whatever ``auto`` would guess; a NAACL file with a
    ``0 0`` link is 0-based in NAACL layout and needs ``requested="0"``.
    Pharaoh and id files follow ``requested`` or :func:`detect_base`.

    Args:
        afile: the file as read.
        requested: ``auto``, ``0`` or ``1``.
        src_lens: per key of ``afile``, source token counts (``None``: unknown).
        tgt_lens: per key, target token counts.
        what: the file, for messages ("the gold file 'g.txt'").
        flag: the option that sets this file's base, for messages.

    Raises:
        InputFileError: the base cannot be decided, a declared base does not fit,
            or a link is out of range of its sentence.
        UsageError: ``requested`` is not ``auto``, ``0`` or ``1``.
    """
    if requested not in ("auto", "0", "1"):
        raise UsageError(f"Index base {requested!r} is not auto, 0 or 1; pass {flag} auto, 0 or 1.")
    if afile.fmt == "naacl" and requested != "0":
        for k, p in zip(afile.keys, afile.possible):
            if (0, 0) in p and requested == "auto":
                raise InputFileError(
                    f"Sentence {k} of {what} links word 0 to word 0, which means nothing in NAACL (1-based, "
                    f"0 = NULL): the file is 0-based; pass {flag} 0 to read it so."
                )
        n_null = sum(1 for p in afile.possible for i, j in p if i == 0 or j == 0)

        def drop(links: set[Link]) -> set[Link]:
            return {(i - 1, j - 1) for i, j in links if i != 0 and j != 0}

        out = AlignmentFile(
            list(afile.keys),
            [drop(s) for s in afile.sure],
            [drop(p) for p in afile.possible],
            afile.fmt,
            afile.path,
            [*afile.notes, f"{n_null} NULL links dropped"],
        )
        reason = f"1-based (NAACL), {n_null} NULL links dropped"
        base = 1
    else:
        if requested == "auto":
            base, reason = detect_base(afile.possible, src_lens, tgt_lens, what=what, flag=flag)
        else:
            base, reason = int(requested), "given"
        out = shift(afile, base, what=what, flag=flag)
    if src_lens is not None and tgt_lens is not None:
        check_range(out, src_lens, tgt_lens, what)
    return out, base, reason


def shift(
    afile: AlignmentFile, base: int, *, what: str = "", flag: str = "--index-base"
) -> AlignmentFile:
    """Return ``afile`` with indices converted from ``base`` to 0-based.

    Raises:
        InputFileError: a 1-based file holds an index 0.
    """
    if base == 0:
        return afile
    for k, p in zip(afile.keys, afile.possible):
        if any(i == 0 or j == 0 for i, j in p):
            shown = (what[:1].upper() + what[1:]) if what else (afile.path or "The alignment")
            raise InputFileError(
                f"{shown} was declared 1-based but sentence {k} has index 0; pass {flag} 0 or auto."
            )

    def dec(links: set[Link]) -> set[Link]:
        return {(i - 1, j - 1) for i, j in links}

    return AlignmentFile(
        list(afile.keys),
        [dec(s) for s in afile.sure],
        [dec(p) for p in afile.possible],
        afile.fmt,
        afile.path,
        list(afile.notes),
    )


def format_links(
    sure: Iterable[Link], possible: Iterable[Link] = (), one_based: bool = False
) -> str:
    """Format links as a Pharaoh line (sorted; possible-only links as ``ipj``).

    >>> format_links({(1, 0), (0, 0)}, {(2, 2)})
    '0-0 1-0 2p2'
    >>> format_links({(0, 0)}, one_based=True)
    '1-1'
    """
    sure = set(sure)
    off = 1 if one_based else 0
    items = [(i, j, "-") for i, j in sure] + [(i, j, "p") for i, j in set(possible) - sure]
    return " ".join(f"{i + off}{sep}{j + off}" for i, j, sep in sorted(items))


def write_alignments(
    path: str | os.PathLike,
    sure: Sequence[Iterable[Link]],
    possible: Sequence[Iterable[Link]] | None = None,
    keys: Sequence[str] | None = None,
    one_based: bool = False,
) -> None:
    """Write Pharaoh lines (or ``id<TAB>links`` lines when ``keys`` is given).

    Raises:
        InputFileError: the file cannot be written.
    """
    possible = possible if possible is not None else [()] * len(sure)
    lines = []
    for n, (s, p) in enumerate(zip(sure, possible)):
        line = format_links(s, p, one_based)
        lines.append(f"{keys[n]}\t{line}" if keys is not None else line)
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("".join(ln + "\n" for ln in lines))
    except OSError as err:
        raise InputFileError(f"Cannot write alignments to {str(path)!r} ({err.strerror}).") from err
