"""No import cycles among the project's own modules (``evaluators``, ``builders``, ``cards``, ``xlbench``).

The graph is read from the source with ``ast``, so it sees every import, not only those
that ran in one process:

- An import inside a function counts as much as one at the top. A lazy import hides a
  cycle from Python's import machinery; it does not remove the dependency in both
  directions, which is what makes two modules one concept split in two rooms.
- ``from pkg import name`` is an import of the submodule ``pkg.name`` when that is a
  module, else an import of ``pkg`` itself (its ``__init__``).
- Importing ``a.b.c`` also runs ``a/__init__`` and ``a/b/__init__``: an import from outside
  a package counts as an import of each of its enclosing packages too. A module's own
  enclosing packages are not counted for its imports of siblings (Python has already
  started them when the module runs) -- but a module that imports a NAME from one of its
  own enclosing packages (``from evaluators import __version__`` in
  ``evaluators/run/runner.py``) depends on that package's ``__init__``, and if the
  ``__init__`` imports the module back (at the top or lazily) that is a cycle.

- Imports under ``if TYPE_CHECKING:`` do not count: they never run (annotations only).

So a package ``__init__`` that imports its submodules is fine as long as none of them
imports a name from the package; shared names live in a submodule both import.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("evaluators", "builders", "cards", "xlbench")


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    found = {}
    for root in ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            if "__pycache__" not in path.parts:
                found[_module_name(path)] = path
    return found


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _is_type_checking(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` except the bodies of ``if TYPE_CHECKING:`` blocks (never run)."""
    out, todo = [], [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        if _is_type_checking(node):
            todo.extend(node.orelse)  # type: ignore[attr-defined]
            continue
        todo.extend(ast.iter_child_nodes(node))
    return out


def _targets(path: Path, name: str, modules: dict[str, Path]) -> set[str]:
    """The project modules ``name`` (at ``path``) depends on, by the rules of the module docstring."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    own = set(_parents(name))
    explicit: set[str] = set()
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            explicit.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            subs = {f"{module}.{a.name}" for a in node.names} & modules.keys()
            explicit.update(subs)
            if len(subs) < len(node.names):  # some names are attributes of ``module`` itself
                explicit.add(module)
            elif module not in own:
                explicit.add(module)  # importing pkg.sub runs pkg/__init__ first
    out: set[str] = set()
    for target in explicit:
        while target and target not in modules:  # ``import a.b.c`` of a non-module name
            target = target.rpartition(".")[0]
        if not target or target == name:
            continue
        out.add(target)
        out.update(p for p in _parents(target) if p not in own and p in modules and p != name)
    return out


def import_graph() -> dict[str, set[str]]:
    """Return ``module -> project modules it imports`` for every module of the project."""
    modules = _modules()
    return {name: _targets(path, name, modules) for name, path in modules.items()}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Return one cycle per strongly connected component with more than one module (Tarjan).

    >>> find_cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}})
    [['a', 'b', 'a']]
    >>> find_cycles({"a": {"b"}, "b": set()})
    []
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                components.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_one_cycle(graph, comp) for comp in sorted(components)]


def _one_cycle(graph: dict[str, set[str]], comp: list[str]) -> list[str]:
    """A shortest cycle through the component's first module (breadth-first), for the message."""
    members = set(comp)
    start = comp[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & members):
            if w == start:
                return [*paths[v], start]
            if w not in paths:
                paths[w] = [*paths[v], w]
                queue.append(w)
    return comp  # unreachable: a component is strongly connected


def test_the_graph_sees_lazy_and_submodule_imports():
    graph = import_graph()
    # ``from evaluators.compute import engine`` in a function body is an edge to the submodule.
    assert "evaluators.compute.engine" in graph["evaluators.run.runner"]
    assert "evaluators.core.errors" in graph["evaluators.compute.engine"]


def test_no_import_cycles():
    cycles = find_cycles(import_graph())
    assert not cycles, (
        f"{len(cycles)} import cycle(s) among the project's modules (lazy imports counted): "
        + "; ".join(" -> ".join(c) for c in cycles)
        + ". Move the shared code into the module both need (its concept's room) instead of importing back."
    )
