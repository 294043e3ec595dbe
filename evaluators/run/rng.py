"""The random streams of a run: one seeded stream per purpose, defined here and nowhere else.

Scoring draws from ``default_rng(seed)``; everything else that needs randomness
(plots, bootstrap intervals) draws from its own stream, ``default_rng([seed, STREAM])``,
so that turning plots or intervals on or off never moves a score (numpy's
``SeedSequence`` makes ``[seed, a]`` and ``[seed, b]`` independent).
"""

from __future__ import annotations

import numpy as np

#: Second seed component of the plotting rng of one result: ``default_rng([seed, PLOT_STREAM])``.
PLOT_STREAM = 0x9E37
#: Third seed component of the plotting rng of a grid (several results in one figure):
#: ``default_rng([seed, PLOT_STREAM, GRID_PLOT])``.
GRID_PLOT = 1
#: Second seed component of the bootstrap's rng: ``default_rng([seed, BOOTSTRAP_STREAM])``.
BOOTSTRAP_STREAM = 0xB007


def scoring_rng(seed: int) -> np.random.Generator:
    """Return the scoring stream of ``seed``.

    >>> float(scoring_rng(13).random()) == float(np.random.default_rng(13).random())
    True
    """
    return np.random.default_rng(seed)


def plot_rng(seed: int) -> np.random.Generator:
    """Return the plotting stream of one result."""
    return np.random.default_rng([seed, PLOT_STREAM])


def grid_plot_rng(seed: int) -> np.random.Generator:
    """Return the plotting stream of a grid's combined figures."""
    return np.random.default_rng([seed, PLOT_STREAM, GRID_PLOT])


def bootstrap_rng(seed: int) -> np.random.Generator:
    """Return the bootstrap stream (confidence intervals, F1 spreads).

    >>> a, b = bootstrap_rng(0).random(), scoring_rng(0).random()
    >>> bool(a != b)
    True
    """
    return np.random.default_rng([seed, BOOTSTRAP_STREAM])
