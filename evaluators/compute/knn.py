"""k-nearest-neighbour indexes (adapters over numpy, torch and faiss) for the pure mining metrics.

Every index answers the same question: the ``kf`` nearest rows of ``y`` for each
row of ``x`` and the ``kb`` nearest rows of ``x`` for each row of ``y``, by inner
product (the callers pass unit vectors, so it is cosine). Exact indexes order
each neighbour list by (similarity desc, index asc), so they agree on ties.

``numpy`` (exact, the CPU default)
    Blocked: ``x`` is cut into row blocks whose similarity block ``(rows, m)``
    and its selection buffers fit a memory budget, so no ``n x m`` matrix ever
    exists and peak memory is one block plus the inputs. Each block serves both
    directions: its rows' top-k is final at once, its columns are merged into
    a running top-k. The BLAS (all its threads) writes each block into one
    buffer allocated once; then ``workers`` threads each select from their
    own slice of its rows (numpy releases the GIL), keeping their own running
    column top-k; they are merged at the end (top-k of a union is the top-k of
    the partial top-ks). One shared block, not one per worker, is what keeps
    the peak near the bare product's (issue #28: 3.3x the GEMM's at 20k with a
    block per worker, 1.4x now). Both directions are selected from a slice in
    one comparison pass over it (:func:`select_block`); the two-pass selection
    it replaced is kept as its reference in ``tests/oracles/knn_reference.py``.
``torch``
    The same blocked pass with ``torch.topk`` (for a CUDA device; unverified on GPU), ties
    broken by index as above; ``device="cpu"`` runs it on CPU tensors (the tests compare it
    with the numpy index under exact ties).
``faiss``
    ``IndexFlatIP`` (exact, two searches) or, with ``approximate``, HNSW
    (M = 32, efSearch = 128) or IVF (``sqrt(n)``-ish lists, nprobe 16) for
    corpora of tens of millions; approximate results are not exact, and the
    mining benchmark prints their recall against the exact index.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy
import numpy as np

from evaluators.core.errors import UsageError
from evaluators.core.optional import find, require
from evaluators.core.progress import Progress, scoped
from evaluators.metrics.csls import NUMPY
from evaluators.metrics.topk import desc_key, first_k, group_maxima, kth_largest

#: Bytes the similarity block and every worker's selection buffers may use together.
DEFAULT_BLOCK_BUDGET = 256 * 1024**2
#: Bytes per similarity entry while a block is alive: the float32 value (4), the comparison
#: mask of its selection (1) and the candidates with their sort keys (measured: mask and
#: candidates 1.1 per entry at 20k x 20k, up to 1.7 in a worker's first slice at 40k x 40k).
_BYTES_PER_ENTRY = 6
#: Rows of a worker's slice below which the block may take up to twice its budget (see block_rows_for).
_SLICE_ROWS = 448
APPROXIMATE_INDEXES = ("hnsw", "ivf")


@dataclass(frozen=True)
class Neighbours:
    """The k nearest neighbours of every query row.

    Attributes:
        sims: ``(n, k)`` cosine similarities, descending per row.
        idx: ``(n, k)`` indices into the searched corpus.
    """

    sims: np.ndarray
    idx: np.ndarray


def tidy(nb: Neighbours) -> Neighbours:
    """Re-order each row by (similarity desc, index asc) so every index agrees on ties."""
    order = np.lexsort((nb.idx, -nb.sims), axis=1)
    return Neighbours(
        np.take_along_axis(nb.sims, order, axis=1).astype(np.float32),
        np.take_along_axis(nb.idx, order, axis=1),
    )


# --------------------------------------------------------------------------- numpy


def _group_max_bound(block: np.ndarray, k: int, axis: int, width: int) -> np.ndarray:
    """A lower bound of the k-th largest value along ``axis``: the least of k group maxima.

    The groups cut the first ``width`` entries (:func:`~evaluators.metrics.topk.group_maxima`).
    A reduction over a view, much cheaper than a partition.
    """
    probe = block[:, :width] if axis == 1 else block[:width]
    return group_maxima(probe, k, k, axis).min(axis=axis)


def _column_kth_bound(block: np.ndarray, k: int, rows: int, groups: int = 64) -> np.ndarray:
    """A lower bound of each column's k-th largest value: the k-th largest of ``groups`` maxima of its first ``rows`` rows.

    With ``groups == k`` it is :func:`_group_max_bound`; more groups give a tighter bound
    (nearer the column's own k-th value) for the cost of a partition of a ``(groups, m)``
    array, which keeps a worker's first slice from taking most of its entries as column
    candidates.
    """
    probe = block[: max(k, min(rows, len(block)))]
    return kth_largest(group_maxima(probe, k, groups, axis=0), k, axis=0)


def select_block(
    s: np.ndarray,
    offset: int,
    f_sims: np.ndarray,
    f_idx: np.ndarray,
    best_sims: np.ndarray,
    best_idx: np.ndarray,
    kf: int,
    kb: int,
    row_probe: int = 16384,
    col_probe: int = 256,
) -> None:
    """Both directions' selection for block ``s`` (rows ``offset..``) in one pass over it, in place.

    The same result as the two-pass ``topk_rows`` into ``f_sims``/``f_idx`` plus ``merge_cols``
    into ``best_sims``/``best_idx`` (the same neighbours in the same order: the candidates
    differ, the top-k of each row and column by (similarity desc, index asc) cannot), but
    cheaper, because full passes over the block, not sorting its few candidates, are what
    selection costs next to the product:

    - each row's bound is the least of ``kf`` group maxima of its first ``row_probe`` columns
      (a reduction, not a partition);
    - one comparison pass with one threshold per row, the lower of the row's bound and a low
      quantile ``q`` of the running column bounds, finds every row candidate and every
      candidate of a column whose bound is at least ``q``; the few columns below ``q`` (1/256
      of them) are checked on their own sub-block;
    - candidates are ordered by one stable sort on an integer key (group, similarity desc)
      instead of a three-key lexsort: they arrive in index order (row-major pass; earlier rows
      of a column in its running state), so the stable sort breaks ties by index.

    Requires the blocks of one running state to come in increasing ``offset`` order.
    """
    c, m = s.shape
    row_bound = _group_max_bound(s, kf, 1, min(m, max(row_probe, kf)))
    col_bound = best_sims[:, kb - 1]
    if c >= kb and np.isneginf(col_bound).any():
        col_bound = np.maximum(col_bound, _column_kth_bound(s, kb, col_probe))
    q = np.partition(col_bound, m // 256)[m // 256]
    flat = np.flatnonzero(s >= np.minimum(row_bound, q)[:, None])
    rows, cols = np.divmod(flat, m)
    vals = s.ravel()[flat]
    # rows: candidates in (row, col) order; first kf of each row by (sim desc, col asc)
    keep = vals >= row_bound[rows]
    r_rows, r_cols, r_vals = rows[keep], cols[keep], vals[keep]
    order = np.argsort(desc_key(r_rows, r_vals), kind="stable")
    pick = first_k(order, np.bincount(r_rows, minlength=c), kf)
    f_sims[offset : offset + c] = r_vals[pick].reshape(c, kf)
    f_idx[offset : offset + c] = r_cols[pick].reshape(c, kf)
    # columns: bound >= q -> from the pass above; bound < q -> from their own sub-block
    keep = (vals >= col_bound[cols]) & (col_bound[cols] >= q)
    c_rows, c_cols, c_vals = rows[keep], cols[keep], vals[keep]
    low = np.flatnonzero(col_bound < q)
    if len(low):
        sub = s[:, low]
        l_rows, l_pos = np.divmod(np.flatnonzero(sub >= col_bound[low][None, :]), len(low))
        c_rows = np.concatenate((c_rows, l_rows))
        c_cols = np.concatenate((c_cols, low[l_pos]))
        c_vals = np.concatenate((c_vals, sub[l_rows, l_pos]))
    if len(c_cols) == 0:
        return
    counts = np.bincount(c_cols, minlength=m)
    touched = np.flatnonzero(counts)
    t = len(touched)
    group_of = np.empty(m, np.int64)
    group_of[touched] = np.arange(t)
    # the running state (earlier rows, sorted) first, then this block's rows in row order
    all_groups = np.concatenate((np.repeat(np.arange(t), kb), group_of[c_cols]))
    all_vals = np.concatenate((best_sims[touched].ravel(), c_vals))
    all_idx = np.concatenate((best_idx[touched].ravel(), c_rows.astype(np.int64) + offset))
    order = np.argsort(desc_key(all_groups, all_vals), kind="stable")
    pick = first_k(order, counts[touched] + kb, kb)
    best_sims[touched] = all_vals[pick].reshape(t, kb)
    best_idx[touched] = all_idx[pick].reshape(t, kb)


def blas_threads() -> int:
    """Return how many threads the BLAS would use (threadpoolctl; else ``OMP_NUM_THREADS`` or the CPU count)."""
    try:
        from threadpoolctl import threadpool_info

        counts = [p["num_threads"] for p in threadpool_info() if p.get("user_api") == "blas"]
        if counts:
            return max(1, max(counts))
    except Exception:  # noqa: BLE001 - threadpoolctl is optional; any failure means "ask the OS"
        pass
    env = os.environ.get("OMP_NUM_THREADS", "")
    return int(env) if env.isdigit() and int(env) > 0 else max(1, len(os.sched_getaffinity(0)))


def block_rows_for(m: int, workers: int, budget: int = DEFAULT_BLOCK_BUDGET) -> int:
    """Rows per similarity block so that the block and its selection buffers fit ``budget`` bytes.

    The workers share one block, each selecting from its own slice of rows. A slice pays a few
    passes over all ``m`` columns per call (column bounds, their quantile, the merge), so slices
    much under :data:`_SLICE_ROWS` rows cost more time than a taller block costs memory: the
    block then takes up to twice the budget to give each worker that many rows (at 100k x 100k,
    2 workers: 894 rows, 0.90x the CPU time of 447).

    >>> block_rows_for(100_000, 2), block_rows_for(1_000_000, 2), block_rows_for(20_000, 2)
    (894, 88, 2236)
    """
    rows = budget // max(1, m * _BYTES_PER_ENTRY)
    rows = max(rows, min(_SLICE_ROWS * workers, 2 * rows))
    return int(min(4096, max(64, rows)))


def _knn_progress(n: int, index: str) -> Progress:
    """The progress of one kNN search over ``n`` query rows (silent when it is short)."""
    return Progress(n, scoped(f"kNN search ({index})"), unit="rows", quiet_if_short=True)


def knn_numpy(
    x: np.ndarray,
    y: np.ndarray,
    kf: int,
    kb: int,
    *,
    block_rows: int | None = None,
    workers: int | None = None,
    budget: int = DEFAULT_BLOCK_BUDGET,
) -> tuple[Neighbours, Neighbours]:
    """Exact blocked kNN in both directions on the CPU (see the module docstring).

    Args:
        x: ``(n, d)`` float32 queries (unit rows).
        y: ``(m, d)`` float32 corpus (unit rows).
        kf: neighbours of each ``x`` row in ``y`` (``<= m``).
        kb: neighbours of each ``y`` row in ``x`` (``<= n``).
        block_rows: rows of ``x`` per block (default: from ``budget``).
        workers: threads (default: the BLAS thread count).
        budget: bytes the similarity block and the selection buffers may take together (up
            to twice that for slices of :data:`_SLICE_ROWS` rows: :func:`block_rows_for`).
    """
    n, m = len(x), len(y)
    workers = int(workers or blas_threads())
    rows = int(block_rows or block_rows_for(m, workers, budget))
    rows = min(rows, max(n, 1))
    # Rows of each worker's slice: at least kb (its column bound needs kb rows), at most all.
    share = max(1, -(-rows // workers))
    workers = max(1, min(workers, -(-min(rows, n) // share)))
    f_sims = np.empty((n, kf), np.float32)
    f_idx = np.empty((n, kf), np.int64)
    states = [
        (np.full((m, kb), -np.inf, np.float32), np.full((m, kb), -1, np.int64))
        for _ in range(workers)
    ]
    # One block for every worker, written in place: its pages are touched once, and memory
    # holds one block, not one per worker (each selects from its slice of rows).
    buf = np.empty((rows, m), np.float32)

    def select(w: int, start: int, block: np.ndarray) -> None:
        lo = w * share
        part = block[lo : lo + share]
        if len(part):
            b_sims, b_idx = states[w]
            select_block(
                part, start + lo, f_sims, f_idx, b_sims, b_idx, kf, kb, col_probe=len(part)
            )

    pool = ThreadPoolExecutor(workers) if workers > 1 else None
    try:
        with _knn_progress(n, "numpy") as bar:
            for start in range(0, n, rows):
                block = buf[: min(rows, n - start)]
                np.matmul(x[start : start + len(block)], y.T, out=block)
                if pool is None:
                    select(0, start, block)
                else:
                    for future in [pool.submit(select, w, start, block) for w in range(workers)]:
                        future.result()
                bar.update(len(block))
    finally:
        if pool is not None:
            pool.shutdown()
    del buf
    if workers == 1:
        b_sims, b_idx = states[0]
    else:
        vals = np.concatenate([st[0] for st in states], axis=1)
        idx = np.concatenate([st[1] for st in states], axis=1)
        # a sort within each column's few entries (workers x kb), not one over all of them
        order = np.lexsort((np.where(idx < 0, np.iinfo(np.int64).max, idx), -vals), axis=1)
        order = order[:, :kb]
        b_sims = np.take_along_axis(vals, order, axis=1)
        b_idx = np.take_along_axis(idx, order, axis=1)
    return Neighbours(f_sims, f_idx), Neighbours(b_sims, b_idx)


# --------------------------------------------------------------------------- torch


def _top_then_index(torch: Any, vals, idx, k: int):
    """The first ``k`` entries of each row by (value desc, index asc), in that order."""
    by_index = torch.argsort(idx, dim=1, stable=True)
    vals, idx = torch.gather(vals, 1, by_index), torch.gather(idx, 1, by_index)
    order = torch.sort(vals, dim=1, descending=True, stable=True).indices[:, :k]
    return torch.gather(vals, 1, order), torch.gather(idx, 1, order)


def _block_top(torch: Any, s, k: int):
    """Each row's top ``k`` of ``s`` by (value desc, column asc), as the numpy index selects.

    ``torch.topk`` leaves the choice among values equal to the k-th unspecified (it differs
    between devices and versions); rows with such a tie at the boundary are re-selected by a
    stable sort, in which equal values keep column order.
    """
    vals, idx = torch.topk(s, k, dim=1)
    tied = ((s >= vals[:, -1:]).sum(dim=1) > k).nonzero().flatten()
    if len(tied):
        sorted_vals, sorted_idx = torch.sort(s[tied], dim=1, descending=True, stable=True)
        vals[tied], idx[tied] = sorted_vals[:, :k], sorted_idx[:, :k]
    return _top_then_index(torch, vals, idx, k)


def knn_torch(x: np.ndarray, y: np.ndarray, kf: int, kb: int, chunk: int, device: str | None):
    """Blocked kNN with ``torch.topk``, the same neighbours as :func:`knn_numpy`, ties included.

    ``device`` is any torch device (``cpu`` runs the same code on CPU tensors, as the
    tests do); ``None`` means CUDA when torch sees one, else the CPU.
    """
    torch = require("torch", feature="the torch kNN index")
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    X, Y = torch.from_numpy(x).to(dev), torch.from_numpy(y).to(dev)
    m = len(y)
    f_sims, f_idx = [], []
    # running top-kb of every y row among the x rows seen so far, (m, kb), best first
    b_sims = torch.full((m, kb), float("-inf"), dtype=X.dtype, device=dev)
    b_idx = torch.full((m, kb), -1, dtype=torch.int64, device=dev)
    with _knn_progress(len(x), f"torch {dev.type}") as bar:
        for start in range(0, len(x), chunk):
            s = X[start : start + chunk] @ Y.T
            v, i = _block_top(torch, s, kf)
            f_sims.append(v.cpu())
            f_idx.append(i.cpu())
            v, i = _block_top(torch, s.T, min(kb, len(s)))
            # earlier rows first: their indices are lower, as the stable merge needs
            b_sims, b_idx = _top_then_index(
                torch, torch.cat((b_sims, v), dim=1), torch.cat((b_idx, i + start), dim=1), kb
            )
            bar.update(len(s))
    fwd = Neighbours(torch.cat(f_sims).numpy(), torch.cat(f_idx).numpy().astype(np.int64))
    bwd = Neighbours(b_sims.cpu().numpy(), b_idx.cpu().numpy().astype(np.int64))
    return tidy(fwd), tidy(bwd)


# --------------------------------------------------------------------------- faiss


def faiss_index(data: np.ndarray, approximate: bool | str = False):
    """Build a faiss inner-product index over ``data``: flat (exact), ``hnsw`` or ``ivf``.

    ``approximate=True`` means HNSW. Raises :class:`EngineUnavailableError` without faiss.
    """
    faiss = require("faiss", feature="--faiss")
    kind = "hnsw" if approximate is True else (approximate or "flat")
    if kind not in ("flat", *APPROXIMATE_INDEXES):
        raise UsageError(
            f"Unknown approximate index {kind!r}; choose one of {', '.join(APPROXIMATE_INDEXES)}."
        )
    d = data.shape[1]
    data = np.ascontiguousarray(data, dtype=np.float32)
    idx: Any  # a faiss index: HNSW, IVF or flat
    if kind == "hnsw":
        # HNSW, M=32, efSearch=128: standard settings (Johnson et al., faiss wiki); not exact.
        idx = faiss.IndexHNSWFlat(d, 32, faiss.METRIC_INNER_PRODUCT)
        idx.hnsw.efSearch = 128
    elif kind == "ivf":
        # IVF-Flat with ~4 sqrt(n) lists and nprobe 16 (faiss wiki "Guidelines to choose an index").
        nlist = int(max(1, min(len(data) // 39, 4 * np.sqrt(len(data)))))
        idx = faiss.index_factory(
            d, f"IVF{nlist},Flat", faiss.METRIC_INNER_PRODUCT
        )  # owns its quantizer
        idx.train(data)
        faiss.extract_index_ivf(idx).nprobe = min(16, nlist)
    else:
        idx = faiss.IndexFlatIP(d)
    idx.add(data)
    return idx


def knn_faiss(x: np.ndarray, y: np.ndarray, kf: int, kb: int, approximate: bool | str = False):
    """Neighbours both ways with faiss (exact flat index, or an approximate one)."""
    with _knn_progress(
        len(x) + len(y), "faiss " + ("hnsw" if approximate is True else (approximate or "flat"))
    ) as bar:
        fs, fi = faiss_index(y, approximate).search(np.ascontiguousarray(x), kf)
        bar.update(len(x))
        bs, bi = faiss_index(x, approximate).search(np.ascontiguousarray(y), kb)
        bar.update(len(y))
    return tidy(Neighbours(fs, fi.astype(np.int64))), tidy(Neighbours(bs, bi.astype(np.int64)))


def cuda_available() -> bool:
    """Return whether torch sees a CUDA device (False without torch)."""
    torch = find("torch")
    return torch is not None and bool(torch.cuda.is_available())


# --- similarity blocks for CSLS (evaluators.metrics.csls) --------------------------------


class TorchSimilarity:
    """The GPU twin of :class:`evaluators.metrics.csls.NumpySimilarity`: the same methods on torch tensors.

    Attributes:
        device: the torch device the products run on (``cuda``, ``cuda:1``).
    """

    name = "torch"

    def __init__(self, torch: Any, device: str):
        self.torch, self.device = torch, device

    def to(self, x: np.ndarray):
        """Put an array on the device."""
        return self.torch.from_numpy(x).to(self.device)

    def np(self, x) -> np.ndarray:
        """Bring a block back as a float32 numpy array."""
        return x.float().cpu().numpy()

    def mm(self, a, b):
        """``a · bᵀ``."""
        return a @ b.T

    def cat(self, parts):
        """Stack row blocks."""
        return self.torch.cat(parts)

    def topk_mean(self, sims, k: int):
        """Mean of the ``k`` largest values of each row (all of them when a row is shorter)."""
        k = min(k, sims.shape[1])
        if k <= 0:
            return np.zeros(sims.shape[0], dtype=np.float32)
        return self.np(self.torch.topk(sims, k, dim=1).values.mean(dim=1))

    def topk_values(self, sims, k: int) -> numpy.ndarray:
        """The ``k`` largest values of each row, as a numpy ``(rows, k)`` array."""
        return self.np(self.torch.topk(sims, k, dim=1).values)


def similarity_backend(device: str | None = None, backend: str | None = None):
    """Return where CSLS's similarity products run: torch on CUDA when present (or asked), else numpy.

    ``backend=None`` picks: ``device=None`` means CUDA when torch sees one; ``cpu`` (or no
    torch, or no CUDA) gives the pure numpy backend of :mod:`evaluators.metrics.csls`.
    ``backend="torch"`` asks for torch explicitly, on ``device`` (default CUDA when present,
    else the CPU: the GPU path's logic on CPU tensors); ``backend="numpy"`` for numpy.

    >>> similarity_backend("cpu").name, similarity_backend("cpu", backend="torch").device
    ('numpy', 'cpu')

    Raises:
        UsageError: an unknown backend.
        EngineUnavailableError: ``backend="torch"`` without torch installed.
    """
    if backend not in (None, "numpy", "torch"):
        raise UsageError(f"Unknown similarity backend {backend!r}; use numpy or torch.")
    if backend == "numpy":
        return NUMPY
    if backend == "torch":
        asked = require("torch", feature="the torch similarity backend")
        return TorchSimilarity(asked, device or ("cuda" if asked.cuda.is_available() else "cpu"))
    if device == "cpu":
        return NUMPY
    torch = find("torch")
    if torch is None:
        return NUMPY
    if torch.cuda.is_available() and (device is None or device.startswith("cuda")):
        return TorchSimilarity(torch, device or "cuda")
    return NUMPY
