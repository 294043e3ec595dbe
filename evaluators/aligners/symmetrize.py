"""Symmetrisation of two directional word alignments (pure).

Koehn's heuristics (Koehn, Och & Marcu 2003; the pseudo-code in Koehn's
"Statistical Machine Translation", section 4.5.3, and the Moses ``symal``
manual): start from the intersection of the forward and reverse alignments,
grow into neighbouring points of the union that cover a so far unaligned word,
then optionally add the remaining union points of each direction ("final"),
with "final-and" demanding that *both* words are still unaligned.

Both inputs are sets of 0-based ``(src, tgt)`` pairs in the same orientation:
the reverse (target-to-source) run's links are already flipped back to
``(src, tgt)``.

The order of visits follows the pseudo-code (source word by source word, then
target word; neighbours in the order left, up, right, down, then diagonals);
points added during a pass are visible for the rest of that pass, and passes
repeat until nothing changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

Link = tuple[int, int]

#: The four direct neighbours, then the four diagonal ones (Koehn's ``neighboring``).
NEIGHBOURS_GROW: tuple[Link, ...] = ((-1, 0), (0, -1), (1, 0), (0, 1))
NEIGHBOURS_DIAG: tuple[Link, ...] = NEIGHBOURS_GROW + ((-1, -1), (-1, 1), (1, -1), (1, 1))


def intersection(fwd: Iterable[Link], rev: Iterable[Link]) -> set[Link]:
    """Links found in both directions (high precision).

    >>> sorted(intersection({(0, 0), (1, 1)}, {(0, 0), (1, 2)}))
    [(0, 0)]
    """
    return set(fwd) & set(rev)


def union(fwd: Iterable[Link], rev: Iterable[Link]) -> set[Link]:
    """Links found in either direction (high recall).

    >>> sorted(union({(0, 0), (1, 1)}, {(0, 0), (1, 2)}))
    [(0, 0), (1, 1), (1, 2)]
    """
    return set(fwd) | set(rev)


def _grow(fwd: set[Link], rev: set[Link], neighbours: tuple[Link, ...]) -> set[Link]:
    both = fwd | rev
    alignment = fwd & rev
    if not both:
        return alignment
    src_len = max(i for i, _ in both) + 1
    tgt_len = max(j for _, j in both) + 1
    src_aligned = {i for i, _ in alignment}
    tgt_aligned = {j for _, j in alignment}
    changed = True
    while changed:
        changed = False
        for e in range(src_len):
            for f in range(tgt_len):
                if (e, f) not in alignment:
                    continue
                for de, df in neighbours:
                    point = (e + de, f + df)
                    if (
                        point in both
                        and point not in alignment
                        and (point[0] not in src_aligned or point[1] not in tgt_aligned)
                    ):
                        alignment.add(point)
                        src_aligned.add(point[0])
                        tgt_aligned.add(point[1])
                        changed = True
    return alignment


def _final(alignment: set[Link], direction: set[Link], both_unaligned: bool) -> set[Link]:
    src_aligned = {i for i, _ in alignment}
    tgt_aligned = {j for _, j in alignment}
    for point in sorted(direction):
        e_free, f_free = point[0] not in src_aligned, point[1] not in tgt_aligned
        if point not in alignment and (
            (e_free and f_free) if both_unaligned else (e_free or f_free)
        ):
            alignment.add(point)
            src_aligned.add(point[0])
            tgt_aligned.add(point[1])
    return alignment


def grow(fwd: Iterable[Link], rev: Iterable[Link]) -> set[Link]:
    """Intersection grown into direct (non-diagonal) neighbours from the union.

    >>> sorted(grow({(0, 0), (1, 1)}, {(0, 0), (0, 1)}))
    [(0, 0), (0, 1), (1, 1)]
    >>> sorted(grow({(0, 0), (1, 1)}, {(0, 0)}))
    [(0, 0)]
    """
    return _grow(set(fwd), set(rev), NEIGHBOURS_GROW)


def grow_diag(fwd: Iterable[Link], rev: Iterable[Link]) -> set[Link]:
    """Intersection grown into direct and diagonal neighbours from the union.

    >>> sorted(grow_diag({(0, 0), (1, 1)}, {(0, 0)}))
    [(0, 0), (1, 1)]
    """
    return _grow(set(fwd), set(rev), NEIGHBOURS_DIAG)


def grow_diag_final(fwd: Iterable[Link], rev: Iterable[Link]) -> set[Link]:
    """grow-diag, then add forward then reverse points that cover an unaligned word.

    >>> sorted(grow_diag_final({(0, 0), (2, 2), (2, 3)}, {(0, 0), (2, 2)}))
    [(0, 0), (2, 2), (2, 3)]
    """
    fwd, rev = set(fwd), set(rev)
    alignment = _grow(fwd, rev, NEIGHBOURS_DIAG)
    alignment = _final(alignment, fwd, both_unaligned=False)
    return _final(alignment, rev, both_unaligned=False)


def grow_diag_final_and(fwd: Iterable[Link], rev: Iterable[Link]) -> set[Link]:
    """grow-diag, then add forward then reverse points whose words are both unaligned.

    >>> sorted(grow_diag_final_and({(0, 0), (2, 2), (2, 4)}, {(0, 0), (3, 5)}))
    [(0, 0), (2, 2), (3, 5)]
    """
    fwd, rev = set(fwd), set(rev)
    alignment = _grow(fwd, rev, NEIGHBOURS_DIAG)
    alignment = _final(alignment, fwd, both_unaligned=True)
    return _final(alignment, rev, both_unaligned=True)


def forward_only(fwd: Iterable[Link], rev: Iterable[Link]) -> set[Link]:
    """The forward (source-to-target) alignment alone.

    >>> sorted(forward_only({(0, 1)}, {(1, 1)}))
    [(0, 1)]
    """
    return set(fwd)


def reverse_only(fwd: Iterable[Link], rev: Iterable[Link]) -> set[Link]:
    """The reverse (target-to-source) alignment alone, in ``(src, tgt)`` orientation.

    >>> sorted(reverse_only({(0, 1)}, {(1, 1)}))
    [(1, 1)]
    """
    return set(rev)


#: name -> function; the names are those of fast_align's ``atools -c``.
SYMMETRIZERS: dict[str, Callable[[Iterable[Link], Iterable[Link]], set[Link]]] = {
    "intersect": intersection,
    "union": union,
    "grow": grow,
    "grow-diag": grow_diag,
    "grow-diag-final": grow_diag_final,
    "grow-diag-final-and": grow_diag_final_and,
    "forward": forward_only,
    "reverse": reverse_only,
}
#: Accepted aliases.
ALIASES = {
    "intersection": "intersect",
    "gdfa": "grow-diag-final-and",
    "gdf": "grow-diag-final",
    "gd": "grow-diag",
}


def symmetrize(
    fwd: Iterable[Link], rev: Iterable[Link], method: str = "grow-diag-final-and"
) -> set[Link]:
    """Combine forward and reverse alignments with the named heuristic.

    >>> sorted(symmetrize({(0, 0), (1, 1)}, {(0, 0)}, "intersection"))
    [(0, 0)]

    Raises:
        KeyError: unknown method (callers turn it into a UsageError).
    """
    return SYMMETRIZERS[ALIASES.get(method, method)](fwd, rev)
