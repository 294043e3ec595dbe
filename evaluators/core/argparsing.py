"""The argument parser of both command lines: an error is one line naming the fix, not the usage block."""

from __future__ import annotations

import argparse


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line naming the fix, not the usage block.

    ``xlbench build cbd --lang`` prints
    ``xlbench build cbd: error: argument --lang: expected one argument; see 'xlbench build cbd --help'.``
    and exits 2. Subcommand parsers inherit the class (``add_subparsers`` uses it).
    """

    def error(self, message: str):  # noqa: D102 - argparse's hook
        text = " ".join(message.split()).rstrip(".")
        self.exit(2, f"{self.prog}: error: {text}; see '{self.prog} --help'.\n")


__all__ = ["OneLineParser"]
