"""Read result JSONs into plain records the pages and plots are built from.

Readers are tolerant: unknown keys are ignored, missing optional ones become
``None``; a file that is not an xlbench result (no ``scores``/``signature``) is
skipped, a file that is not JSON raises.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluators.core.errors import InputFileError
from evaluators.core.modelfacts import read_facts
from evaluators.run.results import NotAResultError, read_result, result_files, results_folder
from evaluators.tasks import family_of


@dataclass(frozen=True)
class Record:
    """One result file.

    Attributes:
        path: where the JSON was read.
        rel: its path relative to the results folder it came from (kept in the site).
        data: the whole JSON object.
    """

    path: Path
    rel: str
    data: dict[str, Any] = field(repr=False)

    @property
    def evaluator(self) -> str:
        """The evaluator name."""
        return str(self.data.get("evaluator", "unknown"))

    @property
    def family(self) -> str:
        """The dataset family (``cbd``, ``bucc``, ``alee``, ``silver`` or ``other``)."""
        fam = (self.data.get("dataset") or {}).get("family")
        return str(fam or family_of(self.evaluator) or "other")

    @property
    def dataset(self) -> dict[str, Any]:
        """The dataset block."""
        return self.data.get("dataset") or {}

    @property
    def model(self) -> dict[str, Any]:
        """The model block."""
        return self.data.get("model") or {}

    @property
    def model_facts(self) -> dict[str, int]:
        """Parameters, embedding size, layers, max tokens, as far as the result recorded them."""
        return read_facts(self.data.get("model_facts"))

    @property
    def dataset_label(self) -> str:
        """Short dataset name: the Hub id, or the last part of a local path, with its version."""
        ds = self.dataset
        name = str(ds.get("id") or "dataset")
        if ds.get("source") == "local" or name.startswith("/"):
            name = Path(name).name
        version = ds.get("version")
        return f"{name} v{version}" if version else name

    @property
    def model_label(self) -> str:
        """Model id with a short revision, and the inference backend when it is not torch."""
        m = self.model
        rev = m.get("revision")
        label = f"{m.get('id', 'model')}@{str(rev)[:12]}" if rev else str(m.get("id", "model"))
        return f"{label}+{m['backend']}" if m.get("backend") else label

    @property
    def setup(self) -> tuple[str, ...]:
        """What was computed, apart from the model: evaluator, dataset revision, the signature's parameters.

        Two results with equal setups are one leaderboard column; a second build of a
        dataset (another revision) or other parameters make another.
        """
        ds = self.dataset
        build = str(ds.get("revision") or ds.get("id") or "")
        return (self.evaluator, build, *setup_fields(self.signature))

    @property
    def main_score(self) -> float | None:
        """The main score, ``None`` if absent or not a number."""
        return _num(self.data.get("main_score"))

    @property
    def signature(self) -> str:
        """The result's signature."""
        return str(self.data.get("signature", ""))

    def entries(self, split: str | None = None) -> list[dict[str, Any]]:
        """Score entries of one split (default: every split, each tagged with ``_split``)."""
        scores = self.data.get("scores") or {}
        if split is not None:
            return [e for e in scores.get(split, []) if isinstance(e, dict)]
        return [{**e, "_split": s} for s, es in scores.items() for e in es if isinstance(e, dict)]

    def main_ci(self) -> tuple[float, float, float] | None:
        """The main score's interval ``(low, high, level)`` if the result carries one.

        Looked up on the result itself (``ci_low``/``ci_high``/``ci_level``), else on
        the entry whose ``main_score`` equals the result's main score.
        """
        for holder in [
            self.data,
            *[e for e in self.entries() if _num(e.get("main_score")) == self.main_score],
        ]:
            low, high = _num(holder.get("ci_low")), _num(holder.get("ci_high"))
            if low is not None and high is not None:
                return low, high, _num(holder.get("ci_level")) or 0.95
        return None


#: Signature fields that name the model or the run rather than the computation (a prompt is
#: the model's own: E5 and a model without prompts asked with one role share a column).
_NOT_SETUP = ("ds:", "model:", "backend:", "prompt:", "xlbench:")


def setup_fields(signature: str) -> tuple[str, ...]:
    """The ``label:value`` fields of a signature that do not name the dataset, model or xlbench version.

    >>> setup_fields('bucc|ds:b@1:ab12|model:m@cd|backend:onnx|k:4|role:query|prompt:"q: "|xlbench:0.1.0')
    ('k:4', 'role:query')
    """
    return tuple(p for p in str(signature).split("|")[1:] if not p.startswith(_NOT_SETUP))


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return None if math.isnan(v) else float(v)


def load_records(folders: list[str | os.PathLike]) -> list[Record]:
    """Read every result JSON under the given folders (recursively), sorted by path.

    Raises:
        InputFileError: a folder is missing, a ``.json`` file is not JSON, or no result was found.
    """
    out: list[Record] = []
    names = [Path(f).resolve().name for f in folders]
    for i, folder in enumerate(folders):
        root = results_folder(folder)
        # results/<folder name>/... in the site; a number keeps two folders of one name apart
        prefix = (
            (names[i] if names.count(names[i]) == 1 else f"{i + 1}-{names[i]}")
            if len(folders) > 1
            else ""
        )
        for path in result_files(root):
            try:
                result = read_result(path)
            except NotAResultError:
                continue  # another JSON file (a manifest, an export): not a result
            rel = path.relative_to(root).as_posix()
            out.append(Record(path, f"{prefix}/{rel}" if prefix else rel, result.data))
    if not out:
        raise InputFileError(
            f"No xlbench result JSON found under {', '.join(repr(str(f)) for f in folders)}; pass the --out folder of an xlbench eval run."
        )
    return out
