"""A benchmark suite as data: pinned datasets and the evaluators that score them.

A suite file (JSON) names a suite (name, version, description, citation), its datasets and
its entries. A dataset is a Hub repo at a tag or commit sha, or a build recipe (a family and
its builder's parameters) together with the content id its build must produce, so a suite of
offline builds is the same bytes on any machine. An entry is an evaluator, one of the suite's
datasets and the evaluator's parameters. :func:`parse_suite` checks every name and parameter
against the registries and declarations (an unknown evaluator, family or parameter is one
sentence), so a suite that loads is one that can run.

Builders' parameters are checked through ``recipe_params`` (``family -> [Params, BuildOptions]``),
which the ``builders`` side passes in: the evaluators never import the builders.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluators.core.errors import UsageError, XlbenchError, did_you_mean
from evaluators.core.params import make_params, split_values
from evaluators.schema import FAMILIES
from evaluators.tasks import TASKS, get_task

#: What an entry may need beyond the package: the network (a Hub dataset, online MT), the optional
#: shared data folder (``${shared}`` in a recipe), or models that are not pip-installable.
NEEDS = ("internet", "shared-data", "models")
#: The placeholder of a recipe value that lies in the shared data folder.
SHARED = "${shared}"
#: The placeholder of a recipe value beside the suite file (a suite shipped with its inputs).
HERE = "${suite}"
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_HEX = re.compile(r"^[0-9a-f]{12,64}$")
_SUITE_KEYS = ("name", "version", "description", "citation", "datasets", "entries")
_DATASET_KEYS = ("family", "hub", "revision", "recipe", "content_id", "needs", "note")
_ENTRY_KEYS = ("id", "evaluator", "dataset", "params", "needs", "note")

#: ``family -> [builder Params class, build options class]`` (``None``: recipes are not checked,
#: e.g. without the build extra).
RecipeParams = Callable[[str], Sequence[type]] | None
#: Build options a recipe cannot set (the runner does; ``license`` and its reason are content).
_RUNNER_CHOOSES = ("out", "overwrite", "version", "changelog")


@dataclass(frozen=True)
class SuiteDataset:
    """One dataset of a suite.

    Attributes:
        name: its name in the suite (entries refer to it; the folder under ``OUT/datasets``).
        family: the dataset family.
        hub: the Hub repo id (``None`` for a recipe).
        revision: the Hub tag or commit sha.
        recipe: the builder's parameters (``None`` for a Hub dataset), as ``(name, value)`` pairs.
        content_id: the content id the build must produce (a hex prefix of 12 to 64 characters);
            ``None`` only for a recipe that needs the internet or models, whose build no machine
            here reproduced (online MT changes): its id is recorded by a run, not checked.
        needs: what it needs beyond the package (:data:`NEEDS`).
        note: one line for ``suite show``.
        builder_values: every parameter of the family's builder, the recipe's value else its
            default, when the suite was loaded with the builders' declarations (empty otherwise):
            the plan's cost estimate reads sizes the recipe leaves at their defaults from it.
    """

    name: str
    family: str
    hub: str | None = None
    revision: str | None = None
    recipe: tuple[tuple[str, Any], ...] | None = None
    content_id: str | None = None
    needs: tuple[str, ...] = ()
    note: str | None = None
    builder_values: tuple[tuple[str, Any], ...] = dataclasses.field(
        default=(), compare=False, repr=False
    )

    @property
    def source(self) -> str:
        """``"hub"`` or ``"recipe"``."""
        return "hub" if self.hub else "recipe"

    def recipe_values(self, shared: str | os.PathLike | None = None) -> dict[str, Any]:
        """Return the builder's keywords, ``${shared}`` replaced by the shared data folder.

        (``${suite}``, the suite file's folder, is replaced when the file is loaded.)
        """
        return {key: _expand(value, shared) for key, value in self.recipe or ()}


@dataclass(frozen=True)
class SuiteEntry:
    """One evaluator on one dataset with its parameters.

    Attributes:
        id: the entry's column name (default ``evaluator:dataset``).
        evaluator: the evaluator name.
        dataset: the name of one of the suite's datasets.
        family: the evaluator's dataset family.
        params: the evaluator's parameters as ``(name, value)`` pairs.
        needs: what it needs beyond the package, its dataset's needs included.
        note: one line for ``suite show``.
    """

    id: str
    evaluator: str
    dataset: str
    family: str
    params: tuple[tuple[str, Any], ...] = ()
    needs: tuple[str, ...] = ()
    note: str | None = None

    def param_values(self) -> dict[str, Any]:
        """The parameters as keywords (lists for tuples, as JSON wrote them)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.params}


@dataclass(frozen=True)
class Suite:
    """A versioned benchmark suite (see the module docstring).

    Attributes:
        name: the suite's name (``xlbench suite run NAME``).
        version: its semantic version (a changed dataset or parameter is a new version).
        description: one paragraph.
        citation: what to cite (BibTeX or a line).
        datasets: its datasets, in file order.
        entries: its entries, in file order.
        path: the file it was read from.
    """

    name: str
    version: str
    description: str
    citation: str
    datasets: tuple[SuiteDataset, ...]
    entries: tuple[SuiteEntry, ...]
    path: str | None = None

    def dataset(self, name: str) -> SuiteDataset:
        """Return the dataset called ``name``."""
        return next(d for d in self.datasets if d.name == name)

    def families(self) -> list[str]:
        """The families of the entries, in registry order."""
        present = {e.family for e in self.entries}
        return [f for f in FAMILIES if f in present]

    @property
    def offline(self) -> bool:
        """Whether every entry runs from the package alone (no internet, shared data or extra models)."""
        return not any(e.needs for e in self.entries)


def _expand(value: Any, shared: Any, here: Any = None) -> Any:
    if isinstance(value, str):
        if shared is not None:
            value = value.replace(SHARED, str(shared))
        return value.replace(HERE, str(here)) if here is not None else value
    if isinstance(value, list | tuple):
        return [_expand(v, shared, here) for v in value]
    return value


def _freeze(value: Any) -> Any:
    return tuple(_freeze(v) for v in value) if isinstance(value, list) else value


def _keys(data: Any, allowed: tuple[str, ...], where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise UsageError(f"{where} must be a JSON object; got {type(data).__name__}.")
    unknown = [k for k in data if k not in allowed]
    if unknown:
        raise UsageError(
            f"{where} has an unknown key {unknown[0]!r}; valid: {', '.join(allowed)}."
            + did_you_mean(unknown[0], allowed)
        )
    return data


def _text(data: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> str | None:
    value = data.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{where} needs {key!r} as a non-empty string; got {value!r:.60}.")
    return value


def _needs(data: Mapping[str, Any], where: str) -> tuple[str, ...]:
    needs = data.get("needs", [])
    if isinstance(needs, str):
        needs = [needs]
    if not isinstance(needs, list) or any(n not in NEEDS for n in needs):
        raise UsageError(
            f"{where}: 'needs' must be a list of {', '.join(NEEDS)}; got {needs!r:.80}."
        )
    return tuple(dict.fromkeys(needs))


def _dataset(name: str, data: Any, where: str, recipe_params: RecipeParams) -> SuiteDataset:
    where = f"{where}, dataset {name!r}"
    if not _NAME.match(name):
        raise UsageError(f"{where}: a dataset name is lower-case letters, digits, '.', '_' or '-'.")
    data = _keys(data, _DATASET_KEYS, where)
    family = _text(data, "family", where)
    if family not in FAMILIES:
        raise UsageError(
            f"{where}: unknown dataset family {family!r}; known: {', '.join(FAMILIES)}."
            + did_you_mean(str(family), FAMILIES)
        )
    needs = _needs(data, where)
    note = _text(data, "note", where, required=False)
    content = _text(data, "content_id", where, required=False)
    if content is not None and not _HEX.match(content):
        raise UsageError(
            f"{where}: content_id must be 12 to 64 lower-case hex digits; got {content!r:.70}."
        )
    if ("hub" in data) == ("recipe" in data):
        raise UsageError(
            f"{where} needs exactly one of 'hub' (with 'revision') or 'recipe' (with 'content_id')."
        )
    if "hub" in data:
        hub = _text(data, "hub", where)
        revision = _text(data, "revision", where)
        return SuiteDataset(
            name,
            str(family),
            hub,
            revision,
            None,
            content,
            tuple(dict.fromkeys(("internet", *needs))),
            note,
        )
    recipe = data["recipe"]
    if not isinstance(recipe, dict):
        raise UsageError(f"{where}: 'recipe' must be an object of the builder's parameters.")
    if content is None and not {"internet", "models"} & set(needs):
        raise UsageError(
            f"{where}: a recipe needs the 'content_id' its build must produce (build it once to learn it)."
        )
    taken = [k for k in recipe if k in _RUNNER_CHOOSES]
    if taken:
        raise UsageError(
            f"{where}: a recipe cannot set {taken[0]!r}; the suite runner chooses the output folder and version."
        )
    values = (
        _check_recipe(recipe_params(str(family)), recipe, where)
        if recipe_params is not None
        else ()
    )
    if any(SHARED in json.dumps(v) for v in recipe.values()):
        needs = tuple(dict.fromkeys((*needs, "shared-data")))
    frozen = tuple((k, _freeze(v)) for k, v in recipe.items())
    return SuiteDataset(name, str(family), None, None, frozen, content, needs, note, values)


def _check_recipe(
    classes: Sequence[type], recipe: Mapping[str, Any], where: str
) -> tuple[tuple[str, Any], ...]:
    """Check a recipe's values against the builder's declarations (its Params, then the build options).

    Returns the builder's parameters (its Params: the recipe's values, else the defaults).

    Raises:
        UsageError: an unknown name, or a value its declaration refuses.
    """
    values = {k: _freeze(_expand(v, "/shared", "/suite")) for k, v in recipe.items()}
    shares, unknown = split_values(classes, values)
    try:
        if unknown:  # the family's own Params names the valid ones
            make_params(classes[0], {unknown[0]: None})
        made = [make_params(cls, share) for cls, share in zip(classes, shares)]
    except XlbenchError as err:
        raise UsageError(f"{where}: {err}") from None
    return tuple((f.name, getattr(made[0], f.name)) for f in dataclasses.fields(made[0]))


def _entry(i: int, data: Any, where: str, datasets: dict[str, SuiteDataset]) -> SuiteEntry:
    where = f"{where}, entry {i + 1}"
    data = _keys(data, _ENTRY_KEYS, where)
    name = _text(data, "evaluator", where)
    if name not in TASKS:
        raise UsageError(
            f"{where}: unknown evaluator {name!r}; valid: {', '.join(TASKS.names())}."
            + did_you_mean(str(name), TASKS.names())
        )
    evaluator = get_task(str(name))
    meta = evaluator.meta
    if meta.model == "none" or meta.dataset == "none":
        raise UsageError(
            f"{where}: {name} does not score a model on a dataset, so it cannot be a suite entry."
        )
    ds_name = _text(data, "dataset", where)
    if ds_name not in datasets:
        raise UsageError(
            f"{where}: unknown dataset {ds_name!r}; the suite's datasets: {', '.join(datasets) or 'none'}."
            + did_you_mean(str(ds_name), datasets)
        )
    dataset = datasets[str(ds_name)]
    if meta.family != dataset.family:
        raise UsageError(
            f"{where}: {name} scores {meta.family} datasets, but {ds_name} is a {dataset.family} dataset."
        )
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise UsageError(f"{where}: 'params' must be an object of {name}'s parameters.")
    try:
        make_params(evaluator.params, {k: _freeze(v) for k, v in params.items()})
    except XlbenchError as err:
        raise UsageError(f"{where} ({name}): {err}") from None
    needs = tuple(dict.fromkeys((*dataset.needs, *_needs(data, where))))
    entry_id = _text(data, "id", where, required=False) or f"{name}:{ds_name}"
    frozen = tuple((k, _freeze(v)) for k, v in params.items())
    note = _text(data, "note", where, required=False) or dataset.note
    return SuiteEntry(entry_id, str(name), str(ds_name), str(meta.family), frozen, needs, note)


def parse_suite(data: Any, where: str = "suite", recipe_params: RecipeParams = None) -> Suite:
    """Check a suite's parsed JSON and return the :class:`Suite`.

    Args:
        data: the parsed JSON.
        where: how messages name the file.
        recipe_params: ``family -> [builder Params, build options]``: recipes are checked against them.

    Raises:
        UsageError: a missing or unknown key, an unknown evaluator, dataset or family, an
            unknown or invalid parameter (of an evaluator or a builder), a duplicate entry id.
    """
    data = _keys(data, _SUITE_KEYS, where)
    name = str(_text(data, "name", where))
    if not _NAME.match(name):
        raise UsageError(
            f"{where}: a suite name is lower-case letters, digits, '.', '_' or '-'; got {name!r}."
        )
    where = f"suite {name}"
    version = str(_text(data, "version", where))
    if not re.match(r"^\d+\.\d+\.\d+$", version):
        raise UsageError(f"{where}: version must be MAJOR.MINOR.PATCH; got {version!r}.")
    raw = data.get("datasets")
    if not isinstance(raw, dict) or not raw:
        raise UsageError(f"{where} needs 'datasets': an object of named datasets.")
    datasets = {k: _dataset(k, v, where, recipe_params) for k, v in raw.items()}
    entries_raw = data.get("entries")
    if not isinstance(entries_raw, list) or not entries_raw:
        raise UsageError(f"{where} needs 'entries': a list of evaluator, dataset and params.")
    entries = tuple(_entry(i, e, where, datasets) for i, e in enumerate(entries_raw))
    ids = [e.id for e in entries]
    dup = next((i for i in ids if ids.count(i) > 1), None)
    if dup is not None:
        raise UsageError(f"{where}: two entries are called {dup!r}; give one an 'id'.")
    return Suite(
        name,
        version,
        str(_text(data, "description", where)),
        str(_text(data, "citation", where, required=False) or ""),
        tuple(datasets.values()),
        entries,
    )


def suite_folder() -> Path:
    """The folder of the shipped suite files."""
    return Path(__file__).resolve().parent


def suite_names() -> list[str]:
    """The shipped suites, sorted."""
    return sorted(p.stem for p in suite_folder().glob("*.json"))


def load_suite(name_or_path: str | os.PathLike, recipe_params: RecipeParams = None) -> Suite:
    """Read and check a shipped suite by name, or a suite file by path.

    Raises:
        UsageError: an unknown suite name, an unreadable file, or anything :func:`parse_suite` refuses.
    """
    text = str(name_or_path)
    shipped = suite_names()
    if text in shipped:
        path = suite_folder() / f"{text}.json"
    elif text.endswith(".json") or os.sep in text or Path(text).exists():
        path = Path(text)  # an existing path is read as the file it names, whatever its name
    else:
        raise UsageError(
            f"Unknown suite {text!r}; shipped: {', '.join(shipped)} (or pass a suite .json file).{did_you_mean(text, shipped)}"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise UsageError(
            f"Cannot read the suite file {str(path)!r} ({err.strerror}); check the path."
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise UsageError(
            f"The suite file {str(path)!r} is not valid JSON ({err}); fix it."
        ) from None
    suite = parse_suite(data, f"suite file {path.name}", recipe_params)
    here = path.resolve().parent
    datasets = tuple(
        dataclasses.replace(
            d, recipe=tuple((k, _freeze(_expand(v, None, here))) for k, v in d.recipe)
        )
        if d.recipe
        else d
        for d in suite.datasets
    )
    return dataclasses.replace(suite, datasets=datasets, path=str(path))
