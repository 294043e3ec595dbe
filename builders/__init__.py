"""xlbench builders: make versioned evaluation datasets and publish them to the Hub."""

from evaluators import __version__

__all__ = ["__version__"]
