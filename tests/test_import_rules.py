"""The import rules of docs/architecture.md, read from the source with ``ast``.

1. ``evaluators`` never imports ``builders`` or ``cards`` (a third party installs the evaluators alone).
2. ``evaluators.schema`` imports nothing else from this repo but ``evaluators.core.errors``.
3. Pure modules (``evaluators/metrics/``, the schema, every family's ``logic.py`` or ``logic/``
   package, silver's tokenisers) import no adapters, models, network or filesystem code.

Imports inside functions count as much as top-level ones: a lazy ``import torch`` in a metric
still makes the metric depend on a model library.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

#: Modules a pure module must not import: adapters and model wrappers of this repo, model and
#: kNN libraries, the Hub and the network, the filesystem and processes.
FORBIDDEN_IN_PURE = (
    "builders.adapters",
    "builders.release.artifact",
    "builders.release.publish",
    "evaluators.encoders",
    "evaluators.data.hub",
    "evaluators.data.textio",
    "evaluators.data.alignio",
    "evaluators.core.cache_dir",
    "evaluators.plots",
    "torch",
    "transformers",
    "sentence_transformers",
    "faiss",
    "matplotlib",
    "onnxruntime",
    "onnx",
    "huggingface_hub",
    "requests",
    "urllib",
    "http",
    "socket",
    "os",
    "pathlib",
    "shutil",
    "glob",
    "tempfile",
    "subprocess",
    "multiprocessing",
    "amrlib",
    "nltk",
    "deep_translator",
)

#: Known violations that a pending move removes (module -> forbidden imports it still has).
#: The test below fails when an entry is no longer needed, so this list can only shrink.
KNOWN: dict[str, set[str]] = {
    # The one Pharaoh codec sits in alignio beside its file readers; the codec moves to a pure module.
    "builders.cbd.logic": {"evaluators.data.alignio"},
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of every module ``path`` imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.add(module)
            # `from evaluators import plots` imports the submodule evaluators.plots.
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _files(*folders: str) -> list[Path]:
    return sorted(
        p
        for folder in folders
        for p in (REPO / folder).rglob("*.py")
        if "__pycache__" not in p.parts
    )


def _pure_files() -> list[Path]:
    pure = _files("evaluators/metrics", "evaluators/schema")
    for family in sorted(p for p in (REPO / "builders").iterdir() if (p / "spec.py").is_file()):
        pure += sorted(family.glob("logic*.py")) + sorted(family.glob("tokenize.py"))
        if (family / "logic").is_dir():
            pure += _files(str((family / "logic").relative_to(REPO)))
    return sorted(set(pure))


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(REPO)) for p in paths]


def test_the_rules_see_the_modules_they_govern():
    names = {_module_name(p) for p in _pure_files()}
    assert {
        "evaluators.metrics.alignment",
        "evaluators.schema.langs",
        "builders.cbd.logic",
    } <= names
    assert {
        "builders.silver.logic",
        "builders.silver.tokenize",
        "builders.alee.logic.edits",
    } <= names
    assert "builders.alee.logic.pipeline" in names
    # The parser resolves relative imports and from-imports of submodules.
    here = _imports(REPO / "evaluators" / "schema" / "__init__.py")
    assert "evaluators.schema.langs" in here


EVALUATOR_FILES = _files("evaluators")


@pytest.mark.parametrize("path", EVALUATOR_FILES, ids=_ids(EVALUATOR_FILES))
def test_evaluators_never_import_builders_or_cards(path):
    bad = sorted(m for m in _imports(path) if _under(m, "builders") or _under(m, "cards"))
    assert not bad, (
        f"{path.relative_to(REPO)} imports {bad}; evaluators must install and run without builders/cards"
    )


SCHEMA_FILES = _files("evaluators/schema")


@pytest.mark.parametrize("path", SCHEMA_FILES, ids=_ids(SCHEMA_FILES))
def test_schema_imports_nothing_else_from_the_repo(path):
    own = ("builders", "cards", "evaluators", "tests", "bench")
    bad = sorted(
        m
        for m in _imports(path)
        if any(_under(m, o) for o in own)
        and not (_under(m, "evaluators.schema") or _under(m, "evaluators.core.errors"))
    )
    assert not bad, (
        f"{path.relative_to(REPO)} imports {bad}; the schema is the shared contract and depends on nothing"
    )


PURE_FILES = _pure_files()


@pytest.mark.parametrize("path", PURE_FILES, ids=_ids(PURE_FILES))
def test_pure_modules_import_no_adapters_models_network_or_files(path):
    name = _module_name(path)
    bad = {m for m in _imports(path) for f in FORBIDDEN_IN_PURE if _under(m, f)}
    bad = {next(f for f in FORBIDDEN_IN_PURE if _under(m, f)) for m in bad}
    allowed = KNOWN.get(name, set())
    assert not bad - allowed, (
        f"{path.relative_to(REPO)} is a pure module but imports {sorted(bad - allowed)}; "
        "move that code to an adapter (builders/adapters/, evaluators/encoders/) and pass values in"
    )
    stale = allowed - bad
    assert not stale, (
        f"KNOWN lists {sorted(stale)} for {name}, which no longer imports them; drop the entry"
    )
