"""Benchmark suites: pinned datasets and the evaluators that score them, as data.

``spec`` reads and checks a suite file (the shipped ones are the ``*.json`` beside it),
``run`` resolves, verifies and scores it, ``summary`` makes its leaderboard.
"""
