"""Host tiny datasets on the loopback Hub (tests/support/hubserver.py) the way the real Hub stores them.

Parquet files under ``<config>/<split>-00000-of-00001.parquet`` (or any path) and a README whose
YAML ``configs:`` block maps configs and splits to files, as ``datasets`` reads them.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml


def parquet_bytes(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def jsonl_bytes(rows: Sequence[Mapping[str, Any]]) -> bytes:
    import json

    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def readme(
    configs: Mapping[str, Mapping[str, str]], license: str | None = None, gated: bool = False
) -> bytes:
    """A card whose ``configs`` block maps ``config -> split -> path``."""
    meta: dict[str, Any] = {
        "configs": [
            {"config_name": c, "data_files": [{"split": s, "path": p} for s, p in splits.items()]}
            for c, splits in configs.items()
        ]
    }
    if license:
        meta["license"] = license
    if gated:
        meta["extra_gated_prompt"] = "Accept the terms."
    return ("---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n# test dataset\n").encode()


def host(repo: str, files: Mapping[str, bytes], token: str, message: str = "add data") -> str:
    """Create ``repo`` (dataset) if needed, commit ``files``; return the commit sha."""
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi(token=token)
    api.create_repo(repo, repo_type="dataset", exist_ok=True)
    ops = [CommitOperationAdd(path, io.BytesIO(data)) for path, data in files.items()]
    info = api.create_commit(repo, ops, commit_message=message, repo_type="dataset")
    return info.oid
