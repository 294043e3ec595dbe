"""Imports you can see: the schema declares its columns without importing ``datasets``.

``datasets`` (seconds) and ``pyarrow`` load when a table's ``features`` are first asked for
or rows are written, not when a command merely reads a family's names and config rules.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    return set(out.stdout.split())


def test_the_schema_imports_neither_datasets_nor_pyarrow():
    loaded = _loaded_after(
        "from evaluators.schema import FAMILIES, get_family\n"
        "assert get_family('silver').config_name('eng_Latn-spa_Latn', 'details')"
    )
    assert "datasets" not in loaded and "pyarrow" not in loaded


def test_features_are_built_on_first_use_and_match_the_declaration():
    from datasets import Features, List, Value

    from evaluators.schema import silver

    features = silver.SCHEMA.main.features
    assert isinstance(features, Features) and list(features) == list(silver.COLUMNS)
    assert features[silver.SURE] == List(List(Value("int32")))
    assert silver.SCHEMA.main.features is features  # built once
