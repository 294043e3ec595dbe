"""``xlbench validate`` and ``xlbench publish``: versioned datasets on the Hugging Face Hub.

Publishing a built folder as version ``X.Y.Z``:

1. validate the folder (no network call before it passes);
2. read the repo's refs: a tag ``vX.Y.Z`` that already exists is final, so the
   same content again is loaded back, verified and reported "unchanged", and
   different content (rows, manifest without its run-specific parts, or only
   the card) is refused; a version older than the newest published one is refused;
3. carry the older versions' changelog entries over from the published
   ``manifest.json`` and rewrite the card's changelog section (in a staging
   copy: the local folder is never modified);
4. upload card + parquet + manifest in ONE commit on ``main`` whose message
   names the version (files of the previous version that are gone are deleted
   in the same commit); when ``main`` already holds exactly these files (an
   earlier run committed them and then failed), that commit is reused;
5. load THAT commit back by its sha with ``datasets.load_dataset`` and compare
   every split's row count and row digest with the folder;
6. only then tag it ``vX.Y.Z`` (the last step, so a tag only ever marks
   content that was loaded back and matched) and check the tag resolves to it.

After any single fault (a dropped connection, a kill, a 5xx, at upload,
commit, verify or tag), the repo is either as before or holds an untagged
commit on ``main``; the same command run again finishes the publication.
Reads, tags and commits are retried on 429 (honouring ``Retry-After``), 5xx
and dropped connections, a bounded number of times; a commit is repeated only
after checking that ``main`` did not move (the Hub may apply a commit and lose
the answer).

The token comes from ``HF_TOKEN`` or the ``huggingface_hub`` login and is
never written or printed.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from builders.release.artifact import fault_point
from builders.release.validate import CARD, MANIFEST, FolderReport, table_digest, validate_folder
from evaluators.core.errors import (
    RemoteError,
    RevisionError,
    SchemaError,
    UsageError,
    ValidationError,
    XlbenchError,
)
from evaluators.core.fileio import clean_stale, make_temp_dir
from evaluators.core.hashing import sha256_file
from evaluators.data.hubclient import HubClient, check_repo_id, find_token, scrub
from evaluators.schema.meta import Manifest, stable_manifest

log = logging.getLogger("xlbench.publish")

VALIDATE_EPILOG = """examples:
  xlbench validate out/bucc-deu_Latn-eng_Latn
  xlbench validate out/cbd-eng_Latn-deu_Latn && echo ok

Prints a JSON summary (configs, rows, row digests) on stdout; exit 1 names the
config and the problem of the first failed check."""

PUBLISH_EPILOG = """examples:
  xlbench publish out/bucc-deu_Latn-eng_Latn --repo my-org/xlbench-bucc --dry-run
  HF_TOKEN=hf_... xlbench publish out/bucc-deu_Latn-eng_Latn --repo my-org/xlbench-bucc --yes
  xlbench publish out/cbd-eng_Latn-deu_Latn --repo my-org/xlbench-cbd --private --yes

The version is the folder's (xlbench build --version); the commit is loaded back
and verified, then tagged v<version>. Published versions are immutable (rows and
card): rebuild with a new --version and --changelog to change them. After a
failure, run the same command again: it resumes from what the repo holds.
Prints a JSON report (commit sha, tag, verified splits) on stdout."""


# -- pure helpers -------------------------------------------------------------------------------
def version_key(version: str) -> tuple[int, ...]:
    """Return a sortable key of a ``MAJOR.MINOR.PATCH`` version (a leading ``v`` is allowed).

    >>> version_key("v1.10.0") > version_key("1.9.3")
    True
    """
    return tuple(int(p) for p in version.lstrip("v").split("."))


def version_tags(tags: dict[str, str]) -> list[str]:
    """Return the ``vX.Y.Z`` tags, oldest first.

    >>> version_tags({"v1.1.0": "b", "v1.0.0": "a", "draft": "c", "v1.0": "d"})
    ['v1.0.0', 'v1.1.0']
    """
    return sorted((t for t in tags if re.fullmatch(r"v\d+\.\d+\.\d+", t)), key=version_key)


def merge_changelog(
    local: list[dict[str, Any]], remote: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Return the changelog of a new version: the local entries plus older remote ones, newest first.

    A version's own entry always comes from the folder being published; the
    remote manifest only contributes entries of other versions.

    >>> merge_changelog([{"version": "1.1.0", "changes": "fix"}],
    ...                 [{"version": "1.0.0", "changes": "first"}, {"version": "1.1.0", "changes": "old"}])
    [{'version': '1.1.0', 'changes': 'fix'}, {'version': '1.0.0', 'changes': 'first'}]
    """
    mine = {e["version"] for e in local}
    merged = list(local) + [e for e in remote if e.get("version") not in mine]
    return sorted(merged, key=lambda e: version_key(str(e["version"])), reverse=True)


def render_changelog(entries: list[dict[str, Any]]) -> str:
    """Return the card's changelog list (the same format as ``cards/templates/dataset.md.j2``).

    >>> print(render_changelog([{"version": "1.1.0", "date": "2026-11-30", "changes": "more verses", "rows": 80}]))
    - **1.1.0** (2026-11-30): more verses (80 rows)
    <BLANKLINE>
    """
    lines = []
    for e in entries:
        rows = f" ({e['rows']} rows)" if e.get("rows") is not None else ""
        lines.append(f"- **{e['version']}** ({e.get('date', '?')}): {e.get('changes', '')}{rows}\n")
    return "\n".join(lines)


def replace_section(text: str, title: str, body: str) -> str:
    r"""Replace the body of the markdown section ``## <title>`` (up to the next ``## ``).

    >>> replace_section("# T\n\n## Changelog\n\n- old\n\n## Citation\nx\n", "Changelog", "- new\n")
    '# T\n\n## Changelog\n\n- new\n\n## Citation\nx\n'

    Raises:
        SchemaError: the section is missing.
    """
    head = f"\n## {title}\n"
    start = text.find(head)
    if start < 0:
        raise SchemaError(
            f"The card has no '## {title}' section; rebuild the folder with 'xlbench build'."
        )
    start += len(head)
    end = text.find("\n## ", start)
    end = len(text) if end < 0 else end + 1
    return text[:start] + "\n" + body.rstrip("\n") + "\n\n" + text[end:]


def card_without_changelog(text: str) -> str:
    r"""Return a card without its changelog list (rewritten at each publish), for comparing two cards.

    >>> card_without_changelog("# T\n\n## Changelog\n\n- 1.1.0\n- 1.0.0\n\n## Citation\nx\n")
    '# T\n\n## Changelog\n\n\n\n## Citation\nx\n'
    """
    try:
        return replace_section(text, "Changelog", "")
    except SchemaError:
        return text


# -- local content ------------------------------------------------------------------------------
def _local_oids(report: FolderReport) -> dict[str, str]:
    """Return ``path -> sha256`` of the folder's parquet files (what the Hub reports for LFS files)."""
    return {p: sha256_file(report.folder / p) for p in report.files if p.endswith(".parquet")}


def published_manifest(report: FolderReport, remote_changelog: list[dict[str, Any]]) -> dict:
    """Return the manifest dict that publishing ``report`` over ``remote_changelog`` uploads.

    The folder's own changelog entry (its row count added) plus the remote
    entries of other versions, newest first; the rest is the folder's manifest.
    """
    manifest = report.manifest
    rows = sum(sum(s.values()) for s in report.configs.values())
    local = [dict(e) for e in manifest.changelog]
    if not any(e.get("version") == manifest.version for e in local):
        local.append(
            {
                "version": manifest.version,
                "date": time.strftime("%Y-%m-%d", time.gmtime()),
                "changes": "no changelog line given",
            }
        )
    for e in local:
        if e.get("version") == manifest.version:
            e.setdefault("rows", rows)
    out_manifest = manifest.to_dict()
    out_manifest["changelog"] = merge_changelog(local, remote_changelog)
    Manifest.from_dict(out_manifest)  # still a valid manifest
    return out_manifest


def _prepare(
    report: FolderReport, repo_id: str, remote_manifest: dict | None, staging: Path
) -> tuple[dict[str, Any], str, dict]:
    """Write the card and manifest to upload into ``staging``; return (adds, changelog line, manifest dict)."""
    manifest = report.manifest
    out_manifest = published_manifest(report, (remote_manifest or {}).get("changelog") or [])
    entries = out_manifest["changelog"]
    text = json.dumps(out_manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    card = (report.folder / CARD).read_text(encoding="utf-8")
    card = replace_section(card, "Changelog", render_changelog(entries))
    card = card.replace(f"<org>/{manifest.name}", repo_id)
    (staging / CARD).write_text(card, encoding="utf-8")
    (staging / MANIFEST).write_text(text, encoding="utf-8")
    adds: dict[str, Any] = {CARD: str(staging / CARD), MANIFEST: str(staging / MANIFEST)}
    for p in report.files:
        if p.endswith(".parquet"):
            adds[p] = str(report.folder / p)
    own = next(e for e in entries if e["version"] == manifest.version)
    return adds, str(own.get("changes", "")), out_manifest


def _same_version_content(client, repo_id: str, tag_sha: str, report: FolderReport) -> list[str]:
    """Return what differs between the folder and the published tag (empty when identical).

    Parquet files are compared by sha256, the manifest by its stable part
    (:func:`evaluators.schema.meta.stable_manifest`, the one the local content id uses:
    the changelog text counts, dates and run statistics do not), the card without
    its changelog list (rewritten at each publish).
    """
    remote = client.files(repo_id, tag_sha)
    local = _local_oids(report)
    diffs = []
    remote_parquet = {p: f.oid for p, f in remote.items() if p.endswith(".parquet")}
    for p in sorted(set(local) | set(remote_parquet)):
        if local.get(p) != remote_parquet.get(p):
            diffs.append(p)
    text = client.read_text(repo_id, MANIFEST, tag_sha)
    published = None if text is None else json.loads(text)
    # the folder's manifest as publishing it over that tag would write it (the tag's older
    # changelog entries carried over), compared like the local content id compares manifests
    if published is None or stable_manifest(published) != stable_manifest(
        published_manifest(report, published.get("changelog") or [])
    ):
        diffs.append(MANIFEST)
    card = client.read_text(repo_id, CARD, tag_sha)
    mine = (
        (report.folder / CARD)
        .read_text(encoding="utf-8")
        .replace(f"<org>/{report.manifest.name}", repo_id)
    )
    if card is None or card_without_changelog(card) != card_without_changelog(mine):
        diffs.append(CARD)
    return diffs


def _immutable(repo_id: str, tag: str, sha: str, diffs: list[str]):
    """Return the RevisionError refusing to change a published version."""
    if diffs == [CARD]:
        return RevisionError(
            f"{repo_id} already has {tag} (commit {sha[:12]}) with the same rows but a different card (README.md); "
            f"published versions are immutable, so rebuild with a new --version (e.g. a patch version) and a "
            f"--changelog line to publish the card change."
        )
    return RevisionError(
        f"{repo_id} already has {tag} (commit {sha[:12]}) with different content ({', '.join(diffs[:3])}); "
        f"published versions are immutable, so rebuild with a new --version and --changelog."
    )


def _instead(message: str, note: str) -> str:
    """Replace the generic advice at the end of a failure message by what the repo now holds.

    >>> _instead("creating tag v1: the Hub failed (HTTP 503); wait a minute and run it again.", "run it again to tag it.")
    'creating tag v1: the Hub failed (HTTP 503); run it again to tag it.'
    >>> _instead("x@abc config c/s: loaded back 1 rows.", "run it again.")
    'x@abc config c/s: loaded back 1 rows; run it again.'
    """
    head, sep, _ = message.rpartition("; ")
    return f"{head if sep else message.rstrip('.')}; {note}"


def clean_publish_temps() -> list[Path]:
    """Remove ``xlbench-publish-*``/``xlbench-verify-*`` temp folders of dead processes; return them."""
    return clean_stale(tempfile.gettempdir(), ("xlbench-publish-", "xlbench-verify-"))


# -- publish ------------------------------------------------------------------------------------
def publish(
    folder: str,
    repo_id: str,
    private: bool = False,
    dry_run: bool = False,
    token: str | None = None,
) -> dict[str, Any]:
    """Publish a built folder as a tagged version; return the JSON-ready report.

    The protocol never leaves a version tag on content that was not loaded
    back and matched: commit on ``main``, load THAT commit back by its sha and
    compare rows and digests, and only then create the tag (the last step).
    Any fault leaves either the repo as it was, or a verified-or-not commit on
    ``main`` without the tag; a rerun finds that commit (same files), skips the
    upload, verifies and tags it. A tag that already exists with the same
    content is loaded back and verified again before "unchanged" is reported.

    Raises:
        ValidationError: the folder fails validation (before any network call).
        UsageError: no token.
        RemoteError: the Hub refused or failed; the message names the step and what ``main`` holds.
        RevisionError: the version is already published with other content, or is older than the newest.
    """
    check_repo_id(repo_id)
    report = validate_folder(folder)
    version, tag = report.version, f"v{report.version}"
    token = token or find_token()
    if token is None and not dry_run:
        raise UsageError(
            "No Hugging Face token: set HF_TOKEN or run 'hf auth login' before publishing."
        )
    clean_publish_temps()
    client = HubClient(token)
    out: dict[str, Any] = {
        "repo": repo_id,
        "endpoint": client.endpoint,
        "name": report.name,
        "family": report.family,
        "version": version,
        "tag": tag,
        "configs": report.configs,
        "private": private,
    }
    state = client.state(repo_id)
    tags = state.tags if state else {}
    if tag in tags:
        return _already_tagged(client, repo_id, tag, tags[tag], report, dry_run, out)
    _check_forward(repo_id, tags, version, tag)
    staging = make_temp_dir("xlbench-publish-")
    try:
        adds, deletes, changes, landed, remote_manifest = _plan(
            client, repo_id, state, report, version, staging
        )
        message = f"Publish {report.name} {tag}"
        out.update(
            files=sorted(adds),
            deletes=deletes,
            commit_message=message,
            previous=(remote_manifest or {}).get("version"),
            changelog=changes,
        )
        if dry_run:
            out.update(status="dry-run", message=_plan_message(repo_id, tag, state, adds, landed))
            return out
        sha = _land(client, repo_id, state, private, (adds, deletes, message, changes), landed, out)
        out["verified"] = _verify_and_tag(client, repo_id, tag, sha, report, changes)
        out.update(
            status="published",
            commit=sha,
            message=f"published {repo_id} {tag} at commit {sha} (verified).",
        )
        return out
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _plan_message(repo_id: str, tag: str, state, adds: dict, landed) -> str:
    """What a dry run would do."""
    if landed:
        return f"main already holds this content (commit {landed[:12]}); would verify it and tag {tag}."
    return f"would {'create ' + repo_id + ' and ' if state is None else ''}commit {len(adds)} files, verify and tag {tag}."


def _land(client, repo_id: str, state, private: bool, commit: tuple, landed, out: dict) -> str:
    """The commit on ``main`` to verify: an earlier run's with this content, or a new one."""
    if landed:
        log.warning(
            "%s: main already holds this content at %s (an earlier run committed it); verifying and tagging it",
            repo_id,
            landed[:12],
        )
        out["previous"] = None
        out["resumed"] = True
        return landed
    adds, deletes, message, changes = commit
    client.create_repo(repo_id, private)
    parent = state.main if state else None
    if parent is None:
        fresh = client.state(repo_id)  # None only if the repo vanished since create_repo
        parent = fresh.main if fresh else None
    return client.commit(repo_id, adds, deletes, message, changes, parent)


def _already_tagged(
    client, repo_id: str, tag: str, sha: str, report: FolderReport, dry_run: bool, out: dict
) -> dict[str, Any]:
    """The version's tag exists: same content is loaded back and verified again, other content refused."""
    diffs = _same_version_content(client, repo_id, sha, report)
    if diffs:
        raise _immutable(repo_id, tag, sha, diffs)
    if dry_run:
        out.update(
            status="dry-run",
            commit=sha,
            message=f"{tag} is already published with the same content; would load it back and verify it.",
        )
        return out
    try:
        out["verified"] = verify(client, repo_id, tag, sha, report)
    except RemoteError as err:
        # the tag is someone's published version: report, never withdraw it here
        raise RemoteError(
            _instead(
                str(err),
                f"{tag} exists with the same files but did not load back correctly, so it is NOT reported "
                f"as published: check the repo on the Hub, then run the same command again.",
            )
        ) from None
    out.update(
        status="unchanged",
        commit=sha,
        message=f"{tag} is already published with the same content (loaded back and verified now); nothing to do.",
    )
    return out


def _check_forward(repo_id: str, tags: dict[str, str], version: str, tag: str) -> None:
    """Refuse a version older than the newest tag: versions only move forward."""
    newer = [t for t in version_tags(tags) if version_key(t) > version_key(version)]
    if newer:
        raise RevisionError(
            f"{repo_id} already has {newer[-1]}, newer than {tag}; versions only move forward, so rebuild with "
            f"--version above {newer[-1][1:]}."
        )


def _plan(client, repo_id: str, state, report: FolderReport, version: str, staging):
    """Stage the files and compare with ``main``.

    Returns the files to add, the data files to delete, the changelog line, the ``main`` commit
    that already holds exactly this content (an earlier run's, or ``None``) and the remote manifest.
    """
    remote_manifest = None
    if state and state.main:
        text = client.read_text(repo_id, MANIFEST, state.main)
        remote_manifest = json.loads(text) if text else None
    adds, changes, _ = _prepare(report, repo_id, remote_manifest, staging)
    deletes = []
    landed = None
    if state and state.main:
        remote_files = client.files(repo_id, state.main)
        deletes = sorted(p for p in remote_files if p.startswith("data/") and p not in adds)
        # an earlier run committed exactly this (and then failed to verify or tag): reuse that commit
        if (remote_manifest or {}).get("version") == version and client.holds(
            repo_id, state.main, adds, deletes
        ):
            landed = state.main
    return adds, deletes, changes, landed, remote_manifest


def _verify_and_tag(
    client, repo_id: str, tag: str, sha: str, report: FolderReport, changes: str
) -> dict[str, Any]:
    """Load commit ``sha`` back and match it, then tag it (the last step); return the verification."""
    try:
        verified = verify(client, repo_id, sha, sha, report)
    except RemoteError as err:
        raise RemoteError(
            _instead(
                str(err),
                f"main holds commit {sha[:12]} but it was NOT tagged {tag}, so run the same command again "
                f"to verify and tag it.",
            )
        ) from None
    try:
        client.tag(repo_id, tag, sha, f"{report.name} {tag}: {changes}")
        resolved = client.resolve(repo_id, tag)
    except RemoteError as err:
        raise RemoteError(
            _instead(
                str(err),
                f"commit {sha[:12]} on main is verified but not tagged {tag} yet, so run the same command again to tag it.",
            )
        ) from None
    if resolved != sha:
        raise RevisionError(
            f"{repo_id}: tag {tag} resolves to {resolved[:12]}, not the verified commit {sha[:12]}; another publish "
            f"ran at the same time, so check the repo before retrying."
        )
    return verified


def verify(client, repo_id: str, revision: str, sha: str, report: FolderReport) -> dict[str, Any]:
    """Load ``revision`` back with ``datasets`` and compare every split's rows and digest with the folder.

    Raises:
        RemoteError: ``revision`` does not resolve to ``sha``, a split is missing, or its rows differ.
    """
    resolved = client.resolve(repo_id, revision)
    if resolved != sha:
        raise RemoteError(
            f"{repo_id}: {revision} resolves to {resolved[:12]}, not {sha[:12]}; check for a concurrent publish."
        )
    where = revision if revision != sha else sha[:12]
    checked: dict[str, Any] = {}
    cache = make_temp_dir("xlbench-verify-")
    try:
        for config, splits in sorted(report.configs.items()):
            fault_hook("verify")
            loaded = client.load_config(repo_id, config, sha, str(cache))
            if sorted(loaded) != sorted(splits):
                raise RemoteError(
                    f"{repo_id}@{where} config {config}: splits {sorted(loaded)} loaded back, expected {sorted(splits)}."
                )
            for split, rows in sorted(splits.items()):
                table = loaded[split].with_format("arrow")[:]
                digest = table_digest(table)
                if table.num_rows != rows or digest != report.digests[config][split]:
                    raise RemoteError(
                        f"{repo_id}@{where} config {config}/{split}: loaded back {table.num_rows} rows (digest {digest[:12]}), "
                        f"expected {rows} (digest {report.digests[config][split][:12]})."
                    )
                checked[f"{config}/{split}"] = {"rows": rows, "digest": digest}
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return checked


def fault_hook(step: str) -> None:
    """SIGKILL this process at ``step`` when ``XLBENCH_FAULT_AT`` names it (a test hook, see builders.release.artifact)."""
    fault_point(step)


# -- CLI ----------------------------------------------------------------------------------------
def _print_json(data: dict[str, Any]) -> None:
    print(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=str))


def run_validate(args: argparse.Namespace) -> int:
    """``xlbench validate``: print the folder summary; failures raise ValidationError (exit 1)."""
    report = validate_folder(args.folder)
    _print_json({"status": "ok", **report.summary()})
    print(
        f"ok: {report.folder} ({report.family} v{report.version}, {len(report.configs)} configs)",
        file=sys.stderr,
    )
    return 0


def run_publish(args: argparse.Namespace) -> int:
    """``xlbench publish``: validate, upload in one commit, tag, verify; print the JSON report."""
    check_repo_id(args.repo)
    # one INFO line per HTTP request would drown the report; -v brings them back
    for name in ("httpx", "httpx2", "httpcore", "httpcore2"):
        logging.getLogger(name).setLevel(logging.NOTSET if args.verbose else logging.WARNING)
    if not args.dry_run and not args.yes:
        validate_folder(args.folder)
        raise UsageError(
            f"Publishing to {args.repo} creates an immutable version; add --yes to confirm (or --dry-run to see the plan)."
        )
    token = find_token()
    try:
        result = publish(
            args.folder, args.repo, private=args.private, dry_run=args.dry_run, token=token
        )
    except XlbenchError as err:
        # belt and braces: no message leaves this function with the token in it
        raise type(err)(scrub(str(err), token)) from None
    _print_json(result)
    print(result["message"], file=sys.stderr)
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Add ``validate`` and ``publish`` to the top-level ``xlbench`` subcommands."""
    p = sub.add_parser(
        "validate",
        help="check a built dataset folder before publishing",
        description="Check that a built folder's card, manifest and parquet files agree and follow the family's contract.",
        epilog=VALIDATE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("folder", help="a folder written by 'xlbench build'")
    p.set_defaults(_hub_run=run_validate)
    p = sub.add_parser(
        "publish",
        help="publish a built dataset folder to the Hugging Face Hub as a tagged version",
        description="Validate a built folder, upload it in one commit, tag it v<version> and load it back to verify.",
        epilog=PUBLISH_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("folder", help="a folder written by 'xlbench build'")
    p.add_argument("--repo", required=True, help="dataset repo id, org/name (created if missing)")
    p.add_argument(
        "--private", action="store_true", help="create the repo as private (ignored if it exists)"
    )
    p.add_argument(
        "--dry-run", action="store_true", help="validate and show the plan; upload nothing"
    )
    p.add_argument(
        "--yes", action="store_true", help="confirm publishing (required unless --dry-run)"
    )
    p.set_defaults(_hub_run=run_publish)


__all__ = ["ValidationError", "add_parsers", "publish", "validate_folder", "verify"]
