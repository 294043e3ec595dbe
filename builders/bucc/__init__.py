"""BUCC-style bitext mining datasets: official BUCC files or corpora constructed from parallel text."""
