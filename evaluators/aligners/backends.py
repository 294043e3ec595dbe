"""Statistical aligner adapters: forward and reverse runs of one tool each.

Each function returns the forward and reverse directional alignments as
0-based ``(src, tgt)`` sets.

* ``eflomal``  — Östling & Tiedemann (2016), the ``eflomal`` PyPI package
  (Bayesian HMM + fertility, Gibbs sampling). Its C core seeds itself from
  ``/dev/urandom`` and exposes no seed, so two runs can differ slightly; the
  ``seed`` argument is recorded but cannot make eflomal deterministic.
* ``fast_align`` — Dyer et al. (2013), the reparameterised IBM Model 2, from
  the ``sil-thot`` package (``thot.alignment.FastAlignModel``, variational
  Bayes on, p0 = 0.08, 5 EM iterations as in fast_align's defaults). EM is
  deterministic once thot's OpenMP loops run on one thread: with several, the
  order of its floating-point sums changes from run to run and so, rarely, does
  a link (4 of 147,351 links over 6,000 Bible verses), so training runs on one
  thread. (``systran-align`` also wraps fast_align but only returns an
  already-symmetrised alignment, so the directional runs needed for our own
  symmetrisation come from thot.)

Heavy imports happen inside the functions.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence

from evaluators.core.optional import require
from evaluators.core.progress import Progress, scoped
from evaluators.data.alignio import parse_links

Link = tuple[int, int]
Links = list[set[Link]]

#: fast_align's default number of EM iterations (``fast_align -I 5``).
FAST_ALIGN_ITERATIONS = 5


def _parse_pharaoh_lines(lines: list[str]) -> Links:
    return [
        parse_links(line, f" on line {n + 1} of the aligner output")[1]
        for n, line in enumerate(lines)
    ]


def eflomal_directional(
    src: Sequence[Sequence[str]], tgt: Sequence[Sequence[str]], seed: int = 0
) -> tuple[Links, Links]:
    """Run eflomal once; return ``(forward, reverse)`` link sets (both ``(src, tgt)``).

    Raises:
        EngineUnavailableError: the ``eflomal`` package is not installed.
    """
    eflomal = require("eflomal", feature="The eflomal aligner")
    if not src:
        return [], []
    # one call into eflomal's C core: nothing to count inside it, but its final line gives the time
    label = scoped("align (eflomal)")
    with (
        tempfile.TemporaryDirectory(prefix="xlbench-eflomal-") as tmp,
        Progress(len(src), label, unit="pairs", quiet_if_short=True) as bar,
    ):
        fwd_path, rev_path = os.path.join(tmp, "fwd"), os.path.join(tmp, "rev")
        aligner = eflomal.Aligner()
        aligner.align(
            [" ".join(s) for s in src],
            [" ".join(t) for t in tgt],
            links_filename_fwd=fwd_path,
            links_filename_rev=rev_path,
            quiet=True,
        )
        bar.update(len(src))
        with open(fwd_path, encoding="utf-8") as fh:
            fwd = _parse_pharaoh_lines(fh.read().splitlines())
        with open(rev_path, encoding="utf-8") as fh:
            rev = _parse_pharaoh_lines(fh.read().splitlines())
    return fwd, rev


def _thot_direction(
    src: Sequence[Sequence[str]], tgt: Sequence[Sequence[str]], iterations: int, bar: Progress
) -> Links:
    import thot.alignment as ta
    from threadpoolctl import threadpool_limits

    model = ta.FastAlignModel()
    for s, t in zip(src, tgt):
        model.add_sentence_pair(list(s), list(t))
    # One thread: thot's parallel EM sums in a thread-dependent order (see the module docstring).
    with threadpool_limits(1, user_api="openmp"):
        model.start_training()
        for _ in range(iterations):
            model.train()
            bar.update(1)
        model.end_training()
        best = model.get_best_alignments([list(s) for s in src], [list(t) for t in tgt])
        bar.update(1)
    out = []
    for _, matrix in best:
        grid = matrix.to_numpy()
        out.append({(int(i), int(j)) for i, j in zip(*grid.nonzero())})
    return out


def fast_align_directional(
    src: Sequence[Sequence[str]],
    tgt: Sequence[Sequence[str]],
    seed: int = 0,
    iterations: int = FAST_ALIGN_ITERATIONS,
) -> tuple[Links, Links]:
    """Train fast_align in both directions; return ``(forward, reverse)`` (both ``(src, tgt)``).

    Raises:
        EngineUnavailableError: the ``sil-thot`` package is not installed.
    """
    require("thot.alignment", feature="The fast_align aligner (package sil-thot)")
    if not src:
        return [], []
    # EM iterations and the decoding pass, both directions: thot's steps, counted as they end
    label = scoped("align (fast_align)")
    with Progress(2 * (iterations + 1), label, unit="passes", quiet_if_short=True) as bar:
        fwd = _thot_direction(src, tgt, iterations, bar)
        rev_t = _thot_direction(tgt, src, iterations, bar)
    rev = [{(i, j) for j, i in links} for links in rev_t]
    return fwd, rev


#: method name -> directional runner.
BACKENDS = {"eflomal": eflomal_directional, "fast_align": fast_align_directional}
