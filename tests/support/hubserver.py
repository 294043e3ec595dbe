"""A small Hugging Face Hub-compatible HTTP server for tests, on 127.0.0.1.

It implements the endpoints that ``huggingface_hub`` 2.4 and ``datasets`` 5.2
actually call when publishing a dataset and loading it back (found by reading
the clients' source and by logging every request they make):

- ``POST /api/repos/create``                         create a repo (409 if it exists)
- ``POST /api/validate-yaml``                        check a card's YAML front matter
- ``POST /api/{type}s/{repo}/preupload/{rev}``       choose regular or LFS upload per file
- ``POST /{prefix}{repo}.git/info/lfs/objects/batch`` LFS batch API (basic transfer)
- ``PUT  /lfs/objects/{oid}`` + ``POST /lfs/verify`` LFS upload and verify
- ``POST /api/{type}s/{repo}/commit/{rev}``          NDJSON commit (one atomic snapshot)
- ``POST /api/{type}s/{repo}/tag/{rev}``, ``DELETE .../tag/{tag}``, ``GET .../refs``
- ``GET  /api/{type}s/{repo}[/revision/{rev}]``      repo info (sha, siblings, cardData)
- ``GET  /api/{type}s/{repo}/tree/{rev}[/{path}]``   tree listing, recursive, paginated by ``Link``
- ``POST /api/{type}s/{repo}/paths-info/{rev}``      info on given paths
- ``GET  /api/{type}s/{repo}/commits/{rev}``         commit history
- ``GET  /api/agent-harnesses``                    the client's agent registry (empty here)
- ``HEAD|GET /{prefix}{repo}/resolve/{rev}/{path}``  file download with ``X-Repo-Commit``,
  ``ETag``, ``Content-Length`` and ``Range``; 404s carry ``X-Error-Code``

The repository model is git-like: a commit is a full snapshot ``path -> blob``
plus its parent; branches and tags are refs to commits. Blobs live in a
temporary folder. Anything else is answered 501 and recorded in
:attr:`HubServer.unknown` (and printed to stderr) so a test can fail loudly
when a client starts calling an endpoint this server does not know.

Faults for tests: :meth:`HubServer.inject` makes the requests of a route or a
named step (:data:`STEPS`: ``upload``, ``commit``, ``tag``, ``verify``) fail N
times with a status (and ``Retry-After``), answer slowly, drop the connection
without an answer, or SIGKILL the client process; ``after=True`` carries the
request out first and then loses the answer (the commit landed, the client never
heard). :meth:`HubServer.fail_next` is the one-shot status form, and
:attr:`HubServer.tamper` serves other bytes for a path than were committed.
:meth:`HubServer.gate` gates a repo as the Hub does: its info stays public, its files and
listings answer 401 (no token) or 403 (a token without access) with ``X-Error-Code: GatedRepo``.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

import yaml

INVALID_CREDENTIALS = "Invalid credentials in Authorization header"
_LFS_SUFFIXES = (".parquet", ".arrow", ".bin", ".zst", ".gz", ".zip")
#: The Hub switches files above 10 MB to LFS even without a .gitattributes rule.
_REGULAR_MAX = 10 * 1024 * 1024
_GITATTRIBUTES = (
    b"*.parquet filter=lfs diff=lfs merge=lfs -text\n*.arrow filter=lfs diff=lfs merge=lfs -text\n"
)


def git_blob_sha1(data: bytes) -> str:
    """Return git's blob id of ``data`` (what the Hub reports as a regular file's oid).

    >>> git_blob_sha1(b"")
    'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391'
    """
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass(frozen=True)
class Blob:
    """One file in a commit: its size, git oid, and sha256 when stored with LFS."""

    size: int
    oid: str
    sha256: str
    lfs: bool


@dataclass(frozen=True)
class Commit:
    """A full snapshot of a repo's files plus its parent."""

    sha: str
    parent: str | None
    title: str
    message: str
    date: str
    files: dict[str, Blob]


@dataclass
class Repo:
    """A repo: commits by sha, branch and tag refs."""

    repo_type: str
    repo_id: str
    private: bool
    created: str
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    #: A gated repo: the tokens that accepted its conditions (``None``: not gated). Its info stays
    #: public, as on the Hub; its files and listings answer 401/403 ``GatedRepo`` to anyone else.
    gated_access: set[str] | None = None


#: Named publish/load steps -> the ``METHOD path`` regex of their requests.
STEPS = {
    "upload": r"^(PUT /lfs/objects/|POST /api/datasets/[^ ]+/preupload/)",
    "commit": r"^POST /api/datasets/[^ ]+/commit/",
    "tag": r"^POST /api/datasets/[^ ]+/tag/",
    # loading a parquet file back at a pinned commit (what verification and pinned loads do)
    "verify": r"^GET /datasets/[^ ]+/resolve/[0-9a-f]{40}/data/",
    "refs": r"^GET /api/datasets/[^ ]+/refs$",
}


@dataclass
class Fault:
    """One injected fault; see :meth:`HubServer.inject`."""

    route: re.Pattern
    status: int | None = 500
    times: int = 1
    retry_after: float | None = None
    delay: float = 0.0
    drop: bool = False
    kill_pid: int | None = None
    after: bool = False
    hits: int = 0


class HubError(Exception):
    """An HTTP error answer: status, X-Error-Code and a message."""

    def __init__(
        self,
        status: int,
        message: str,
        code: str | None = None,
        headers: dict | None = None,
        body: dict | None = None,
    ):
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers or {}
        self.body = {"error": message, **(body or {})}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


def _front_matter(text: str) -> dict | None:
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---", 4)
    if end < 0:
        raise ValueError("front matter is not closed by '---'")
    data = yaml.safe_load(text[4:end]) or {}
    if not isinstance(data, dict):
        raise ValueError("front matter is not a mapping")
    return data


class HubServer:
    """The server state plus a ``ThreadingHTTPServer`` serving it on 127.0.0.1.

    Args:
        root: folder for blobs.
        tokens: the tokens that are accepted (``Authorization: Bearer <token>``).
        port: port to bind (0 = any free port).
        page_size: tree-listing page size (small, so pagination is exercised).
    """

    def __init__(self, root: str | Path, tokens: set[str], port: int = 0, page_size: int = 3):
        self.root = Path(root)
        (self.root / "blobs").mkdir(parents=True, exist_ok=True)
        self.tokens = set(tokens)
        self.page_size = page_size
        self.repos: dict[tuple[str, str], Repo] = {}
        self.requests: list[tuple[str, str, int]] = []
        self.unknown: list[str] = []
        self.headers_seen: list[dict[str, str]] = []
        self._faults: list[Fault] = []
        #: path in repo -> bytes served by GET resolve instead of the stored blob (a corrupting CDN)
        self.tamper: dict[str, bytes] = {}
        self._lock = threading.RLock()
        #: requests being handled now (a killed client can leave one finishing after the test moved on)
        self.in_flight = 0
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, name="hubserver", daemon=True
        )

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> HubServer:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.httpd.shutdown()
        self.httpd.server_close()

    def fail_next(self, route: str, status: int = 500) -> None:
        """Make the next request whose ``METHOD path`` matches the regex ``route`` answer ``status``."""
        self.inject(route, status=status)

    def inject(
        self,
        route: str,
        status: int | None = 500,
        times: int = 1,
        retry_after: float | None = None,
        delay: float = 0.0,
        drop: bool = False,
        kill_pid: int | None = None,
        after: bool = False,
    ) -> Fault:
        """Inject a fault into the next ``times`` requests of ``route`` (a :data:`STEPS` name or a regex).

        Args:
            route: step name (``upload``, ``commit``, ``tag``, ``verify``, ``refs``) or a regex on ``METHOD path``.
            status: HTTP status to answer (``None``: answer normally, e.g. only ``delay``).
            times: how many matching requests fail; then the fault is gone.
            retry_after: seconds sent as ``Retry-After``.
            delay: seconds to wait before answering (a slow Hub).
            drop: close the connection without any answer.
            kill_pid: SIGKILL this process (the client) instead of answering.
            after: carry the request out first, then fail/drop/kill (the answer is lost, the change is not).
        """
        fault = Fault(
            re.compile(STEPS.get(route, route)),
            status,
            times,
            retry_after,
            delay,
            drop,
            kill_pid,
            after,
        )
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        """Forget every injected fault that has not fired yet."""
        with self._lock:
            self._faults.clear()

    def _take_fault(self, key: str) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.route.search(key):
                    fault.hits += 1
                    if fault.hits >= fault.times:
                        self._faults.remove(fault)
                    return fault
        return None

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait until no request is being handled (or ``timeout``); return whether it is idle."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.in_flight == 0:
                return True
            time.sleep(0.02)
        return False

    def clear_log(self) -> None:
        """Forget the request log (not the repos), once requests still being handled are done."""
        self.wait_idle()
        with self._lock:
            self.requests.clear()
            self.unknown.clear()
            self.headers_seen.clear()

    # -- storage ----------------------------------------------------------------------------
    def _blob_path(self, sha256: str) -> Path:
        return self.root / "blobs" / sha256

    def _store(self, data: bytes) -> str:
        sha = hashlib.sha256(data).hexdigest()
        path = self._blob_path(sha)
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
        return sha

    def read_blob(self, blob: Blob) -> bytes:
        """Return a blob's content."""
        return self._blob_path(blob.sha256).read_bytes()

    def _new_commit(
        self, repo: Repo, parent: str | None, title: str, message: str, files: dict[str, Blob]
    ) -> Commit:
        date = _now()
        payload = json.dumps(
            {
                "parent": parent,
                "title": title,
                "message": message,
                "date": date,
                "n": len(repo.commits),
                "files": {p: b.oid for p, b in sorted(files.items())},
            },
            sort_keys=True,
        ).encode()
        commit = Commit(
            hashlib.sha1(payload).hexdigest(), parent, title, message, date, dict(files)
        )
        repo.commits[commit.sha] = commit
        return commit

    def get_repo(
        self, repo_type: str, repo_id: str, token: str | None, write: bool = False
    ) -> Repo:
        """Return a repo the caller may see (private ones need a valid token)."""
        repo = self.repos.get((repo_type, repo_id))
        if repo is None or (repo.private and token not in self.tokens):
            raise HubError(404, "Repository not found", "RepoNotFound")
        if write and token not in self.tokens:
            raise HubError(401, INVALID_CREDENTIALS)
        return repo

    def gate(self, repo_id: str, allowed: tuple[str, ...] = (), repo_type: str = "dataset") -> None:
        """Gate a repo: only ``allowed`` tokens read its files (``ungate`` lifts it)."""
        self.repos[(repo_type, repo_id)].gated_access = set(allowed)

    def ungate(self, repo_id: str, repo_type: str = "dataset") -> None:
        """Lift :meth:`gate`."""
        self.repos[(repo_type, repo_id)].gated_access = None

    def check_gate(self, repo: Repo, token: str | None) -> None:
        """Refuse a gated repo's files as the Hub does: 401 without a token, 403 without access."""
        if repo.gated_access is None or token in repo.gated_access:
            return
        status = 401 if token is None else 403
        message = f"Access to dataset {repo.repo_id} is restricted. You must have access to it and be authenticated to access it."
        raise HubError(status, message, "GatedRepo", headers={"X-Error-Message": message})

    def resolve(self, repo: Repo, revision: str) -> Commit:
        """Return the commit a branch, tag or (full or 7+ char) sha names."""
        rev = unquote(revision)
        for prefix, refs in (("refs/heads/", repo.branches), ("refs/tags/", repo.tags)):
            if rev.startswith(prefix) and rev[len(prefix) :] in refs:
                return repo.commits[refs[rev[len(prefix) :]]]
        if rev in repo.branches:
            return repo.commits[repo.branches[rev]]
        if rev in repo.tags:
            return repo.commits[repo.tags[rev]]
        if re.fullmatch(r"[0-9a-f]{7,40}", rev):
            hits = [c for sha, c in repo.commits.items() if sha.startswith(rev)]
            if len(hits) == 1:
                return hits[0]
        raise HubError(404, f"Invalid rev id: {rev}", "RevisionNotFound")

    # -- helpers used by tests ----------------------------------------------------------------
    def files_at(
        self, repo_id: str, revision: str = "main", repo_type: str = "dataset"
    ) -> dict[str, bytes]:
        """Return ``path -> content`` of a revision (for assertions)."""
        repo = self.repos[(repo_type, repo_id)]
        commit = self.resolve(repo, revision)
        return {p: self.read_blob(b) for p, b in commit.files.items()}

    def history(self, repo_id: str, repo_type: str = "dataset") -> list[Commit]:
        """Return the commits of ``main``, newest first."""
        repo = self.repos[(repo_type, repo_id)]
        out, sha = [], repo.branches.get("main")
        while sha:
            out.append(repo.commits[sha])
            sha = repo.commits[sha].parent
        return out


# -- request handling ------------------------------------------------------------------------
_TYPES = {"models": "model", "datasets": "dataset", "spaces": "space"}
_REPO = r"(?P<repo>[^/]+/[^/]+?)"
_API = rf"^/api/(?P<types>models|datasets|spaces)/{_REPO}"
_ROUTES: list[tuple[str, str, str]] = [
    ("POST", r"^/api/repos/create$", "create_repo"),
    ("POST", r"^/api/validate-yaml$", "validate_yaml"),
    ("GET", r"^/api/agent-harnesses$", "agent_harnesses"),
    ("POST", r"^/api/whoami-v2$", "whoami"),
    ("GET", r"^/api/whoami-v2$", "whoami"),
    ("POST", _API + r"/preupload/(?P<rev>[^/]+)$", "preupload"),
    ("POST", _API + r"/commit/(?P<rev>[^/]+)$", "commit"),
    ("POST", _API + r"/tag/(?P<rev>[^/]+)$", "create_tag"),
    ("DELETE", _API + r"/tag/(?P<tag>[^/]+)$", "delete_tag"),
    ("GET", _API + r"/refs$", "refs"),
    ("GET", _API + r"/commits/(?P<rev>[^/]+)$", "commits"),
    ("GET", _API + r"/revision/(?P<rev>[^/]+)$", "info"),
    ("GET", _API + r"$", "info"),
    ("GET", _API + r"/tree/(?P<rev>[^/]+)(?:/(?P<path>.*))?$", "tree"),
    ("POST", _API + r"/paths-info/(?P<rev>[^/]+)$", "paths_info"),
    (
        "POST",
        r"^/(?:(?P<types>datasets|spaces)/)?" + _REPO + r"\.git/info/lfs/objects/batch$",
        "lfs_batch",
    ),
    ("PUT", r"^/lfs/objects/(?P<oid>[0-9a-f]{64})$", "lfs_put"),
    ("POST", r"^/lfs/verify$", "lfs_verify"),
    (
        "GET",
        r"^/(?:(?P<types>datasets|spaces)/)?" + _REPO + r"/resolve/(?P<rev>[^/]+)/(?P<path>.+)$",
        "resolve",
    ),
    (
        "HEAD",
        r"^/(?:(?P<types>datasets|spaces)/)?" + _REPO + r"/resolve/(?P<rev>[^/]+)/(?P<path>.+)$",
        "resolve",
    ),
]
_COMPILED = [(m, re.compile(p), name) for m, p, name in _ROUTES]


def _handler(hub: HubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
            pass  # the request log lives in hub.requests

        # one method per verb, all dispatched through _dispatch
        def do_GET(self) -> None:  # noqa: N802 - stdlib naming
            self._dispatch("GET")

        def do_HEAD(self) -> None:  # noqa: N802
            self._dispatch("HEAD")

        def do_POST(self) -> None:  # noqa: N802
            self._dispatch("POST")

        def do_PUT(self) -> None:  # noqa: N802
            self._dispatch("PUT")

        def do_DELETE(self) -> None:  # noqa: N802
            self._dispatch("DELETE")

        # ---------------------------------------------------------------------------------
        def _body(self) -> bytes:
            if getattr(self, "_cached_body", None) is not None:
                return self._cached_body
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                data = self.rfile.read(length)
            elif self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                parts = []
                while True:
                    size = int(self.rfile.readline().strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline()
                        break
                    parts.append(self.rfile.read(size))
                    self.rfile.readline()
                data = b"".join(parts)
            else:
                data = b""
            self._cached_body = data
            return data

        def _json(self) -> dict:
            try:
                return json.loads(self._body() or b"{}")
            except json.JSONDecodeError as err:
                raise HubError(400, f"body is not JSON: {err}") from err

        def _token(self) -> str | None:
            auth = self.headers.get("Authorization", "")
            return auth[7:] if auth.startswith("Bearer ") else None

        def _send(
            self,
            status: int,
            body: bytes = b"",
            headers: dict | None = None,
            ctype: str = "application/json",
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            for k, v in (headers or {}).items():
                self.send_header(k, str(v))
            if "Content-Length" not in (headers or {}):
                self.send_header("Content-Length", str(len(body)))
            if not self._answer_lost:
                self._log(status)  # before the answer leaves: a client never outruns the log
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            self._status = status

        def _log(self, status: int) -> None:
            """Record this request once, with the status it is answered with."""
            if not self._logged:
                self._logged = True
                with hub._lock:
                    hub.requests.append((self.command, self.path, status))

        def _send_json(
            self,
            status: int,
            obj: object,
            headers: dict | None = None,
            ctype: str = "application/json",
        ) -> None:
            self._send(status, json.dumps(obj).encode(), headers, ctype)

        def _dispatch(self, method: str) -> None:
            with hub._lock:
                hub.in_flight += 1
            try:
                self._dispatch_counted(method)
            finally:
                with hub._lock:
                    hub.in_flight -= 1

        def _dispatch_counted(self, method: str) -> None:
            self._status = 0
            self._logged = self._answer_lost = False
            self._cached_body = None
            split = urlsplit(self.path)
            self.query = parse_qs(split.query)
            path = split.path
            with hub._lock:
                hub.headers_seen.append(dict(self.headers.items()))
            try:
                # Consume the body first so a keep-alive connection stays in sync on errors.
                if method in ("POST", "PUT"):
                    self._body()
                fault = hub._take_fault(f"{method} {path}")
                if fault is not None and fault.delay:
                    time.sleep(fault.delay)
                    if fault.status is None and not fault.drop and fault.kill_pid is None:
                        fault = None  # only slow: answer normally
                if fault is not None and not fault.after:
                    if self._fire(fault):
                        return
                    fault = None
                real_wfile = self.wfile
                if fault is not None:
                    self.wfile = io.BytesIO()  # carry the request out, then lose its answer
                    self._answer_lost = True
                try:
                    self._route(method, path)
                finally:
                    self.wfile = real_wfile
                    self._answer_lost = False
                if fault is not None:
                    self._fire(fault)
                    return
            except HubError as err:
                headers = dict(err.headers)
                if err.code:
                    headers["X-Error-Code"] = err.code
                headers.setdefault("X-Error-Message", err.message)
                self._send_json(err.status, err.body, headers)
            except Exception as err:  # a server bug: answer 500 and say so loudly
                print(f"hubserver: ERROR on {method} {self.path}: {err!r}", file=sys.stderr)
                hub.unknown.append(f"ERROR {method} {self.path}: {err!r}")
                self._send_json(500, {"error": repr(err)})
            self._log(self._status)

        def _fire(self, fault: Fault) -> bool:
            """Answer as ``fault`` says; return whether the request is finished (no real answer)."""
            if fault.kill_pid is not None:
                os.kill(fault.kill_pid, signal.SIGKILL)
                fault.drop = True
            if fault.drop:
                self.close_connection = True
                self._status = -1
                self._log(-1)
                return True
            if fault.status is None:
                return False
            headers = {"X-Error-Message": "injected fault"}
            if fault.retry_after is not None:
                headers["Retry-After"] = f"{fault.retry_after:g}"
            self._send_json(fault.status, {"error": "injected fault"}, headers)
            return True

        def _route(self, method: str, path: str) -> None:
            token = self._token()
            if token is not None and token not in hub.tokens:
                raise HubError(
                    401, INVALID_CREDENTIALS, headers={"X-Error-Message": INVALID_CREDENTIALS}
                )
            for verb, regex, name in _COMPILED:
                match = regex.match(path)
                if verb == method and match:
                    groups = {k: v for k, v in match.groupdict().items()}
                    if "types" in groups:
                        groups["repo_type"] = _TYPES.get(groups.pop("types") or "models", "model")
                    with hub._lock:
                        getattr(self, "h_" + name)(token=token, **groups)
                    return
            with hub._lock:
                hub.unknown.append(f"{method} {self.path}")
            print(f"hubserver: UNKNOWN REQUEST {method} {self.path}", file=sys.stderr)
            raise HubError(501, f"hubserver does not implement {method} {path}")

        # -- endpoints ---------------------------------------------------------------------
        def h_agent_harnesses(self, token: str | None) -> None:
            # huggingface_hub fetches this registry to tag its user agent; an empty one detects nothing
            self._send_json(200, {"standardEnvVars": [], "harnesses": {}})

        def h_whoami(self, token: str | None) -> None:
            if token is None:
                raise HubError(
                    401, INVALID_CREDENTIALS, headers={"X-Error-Message": INVALID_CREDENTIALS}
                )
            self._send_json(
                200, {"type": "user", "name": "tester", "auth": {"type": "access_token"}}
            )

        def h_create_repo(self, token: str | None) -> None:
            if token not in hub.tokens:
                raise HubError(
                    401, INVALID_CREDENTIALS, headers={"X-Error-Message": INVALID_CREDENTIALS}
                )
            body = self._json()
            repo_type = body.get("type") or "model"
            name, org = body.get("name"), body.get("organization")
            if not name or not re.fullmatch(r"[A-Za-z0-9][\w.-]*", name):
                raise HubError(400, f"invalid repo name {name!r}")
            repo_id = f"{org}/{name}" if org else f"tester/{name}"
            prefix = "" if repo_type == "model" else f"{repo_type}s/"
            url = f"{hub.url}/{prefix}{repo_id}"
            if (repo_type, repo_id) in hub.repos:
                # like the Hub, a 409 still names the repo's url (create_repo(exist_ok=True) reads it)
                raise HubError(409, "You already created this repo", body={"url": url})
            repo = Repo(
                repo_type,
                repo_id,
                body.get("visibility") == "private" or bool(body.get("private")),
                _now(),
            )
            sha = hub._store(_GITATTRIBUTES)
            blob = Blob(len(_GITATTRIBUTES), git_blob_sha1(_GITATTRIBUTES), sha, False)
            first = hub._new_commit(repo, None, "initial commit", "", {".gitattributes": blob})
            repo.branches["main"] = first.sha
            hub.repos[(repo_type, repo_id)] = repo
            self._send_json(200, {"url": url, "name": repo_id, "id": repo_id})

        def h_validate_yaml(self, token: str | None) -> None:
            body = self._json()
            try:
                data = _front_matter(body.get("content", ""))
            except (ValueError, yaml.YAMLError) as err:
                self._send_json(
                    400,
                    {"errors": [{"message": f"Invalid YAML in README.md: {err}"}], "warnings": []},
                )
                return
            errors = []
            if data is not None and body.get("repoType") == "dataset":
                for cfg in data.get("configs", []) or []:
                    if not isinstance(cfg, dict) or "config_name" not in cfg:
                        errors.append({"message": f'"configs" entry {cfg!r} has no config_name'})
            if errors:
                self._send_json(400, {"errors": errors, "warnings": []})
                return
            warnings = [] if data else [{"message": "empty or missing yaml metadata in repo card"}]
            self._send_json(200, {"errors": [], "warnings": warnings})

        def h_preupload(self, token: str | None, repo_type: str, repo: str, rev: str) -> None:
            r = hub.get_repo(repo_type, repo, token, write=True)
            commit = hub.resolve(r, rev)
            out = []
            for f in self._json().get("files", []):
                sample = base64.b64decode(f.get("sample", ""))
                lfs = (
                    f["path"].endswith(_LFS_SUFFIXES) or f["size"] > _REGULAR_MAX or b"\0" in sample
                )
                current = commit.files.get(f["path"])
                oid = None
                if current is not None:
                    oid = current.sha256 if current.lfs else current.oid
                out.append(
                    {
                        "path": f["path"],
                        "uploadMode": "lfs" if lfs else "regular",
                        "shouldIgnore": False,
                        "oid": oid,
                    }
                )
            self._send_json(200, {"files": out, "commitOid": commit.sha})

        def h_lfs_batch(self, token: str | None, repo_type: str, repo: str) -> None:
            hub.get_repo(repo_type, repo, token, write=True)
            body = self._json()
            if body.get("operation") != "upload":
                raise HubError(400, "only the upload operation is supported")
            objects = []
            for obj in body.get("objects", []):
                entry = {"oid": obj["oid"], "size": obj["size"]}
                if not hub._blob_path(obj["oid"]).exists():
                    entry["actions"] = {
                        "upload": {"href": f"{hub.url}/lfs/objects/{obj['oid']}"},
                        "verify": {"href": f"{hub.url}/lfs/verify", "header": {}},
                    }
                objects.append(entry)
            self._send_json(
                200, {"transfer": "basic", "objects": objects}, ctype="application/vnd.git-lfs+json"
            )

        def h_lfs_put(self, token: str | None, oid: str) -> None:
            data = self._body()
            if hashlib.sha256(data).hexdigest() != oid:
                raise HubError(400, "uploaded content does not match its oid")
            hub._store(data)
            self._send(200)

        def h_lfs_verify(self, token: str | None) -> None:
            body = self._json()
            path = hub._blob_path(body.get("oid", ""))
            if not path.exists() or path.stat().st_size != body.get("size"):
                raise HubError(404, "object not found")
            self._send_json(200, {"success": True})

        def h_commit(self, token: str | None, repo_type: str, repo: str, rev: str) -> None:
            r = hub.get_repo(repo_type, repo, token, write=True)
            branch = unquote(rev)
            if branch not in r.branches:
                raise HubError(404, f"Invalid rev id: {branch}", "RevisionNotFound")
            head = r.commits[r.branches[branch]]
            files = dict(head.files)
            header = None
            for line in self._body().splitlines():
                if not line.strip():
                    continue
                item = json.loads(line)
                key, value = item["key"], item["value"]
                if key == "header":
                    header = value
                    parent = value.get("parentCommit")
                    if parent and not head.sha.startswith(parent):
                        raise HubError(
                            412, "A commit has happened since. Please refresh and try again."
                        )
                elif key == "file":
                    data = base64.b64decode(value["content"])
                    files[value["path"]] = Blob(
                        len(data), git_blob_sha1(data), hub._store(data), False
                    )
                elif key == "lfsFile":
                    path = hub._blob_path(value["oid"])
                    if not path.exists():
                        raise HubError(
                            422, f"LFS object {value['oid']} of {value['path']} was never uploaded"
                        )
                    size = path.stat().st_size
                    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{value['oid']}\nsize {size}\n"
                    files[value["path"]] = Blob(
                        size, git_blob_sha1(pointer.encode()), value["oid"], True
                    )
                elif key == "deletedFile":
                    if value["path"] not in files:
                        raise HubError(404, "A file with this name doesn't exist", "EntryNotFound")
                    del files[value["path"]]
                elif key == "deletedFolder":
                    prefix = value["path"].rstrip("/") + "/"
                    for p in [p for p in files if p.startswith(prefix)]:
                        del files[p]
                else:
                    raise HubError(400, f"unknown commit operation {key!r}")
            if header is None:
                raise HubError(400, "commit has no header line")
            commit = hub._new_commit(
                r, head.sha, header["summary"], header.get("description", ""), files
            )
            r.branches[branch] = commit.sha
            prefix = "" if repo_type == "model" else f"{repo_type}s/"
            self._send_json(
                200,
                {
                    "success": True,
                    "commitOid": commit.sha,
                    "commitUrl": f"{hub.url}/{prefix}{repo}/commit/{commit.sha}",
                    "pullRequestUrl": None,
                },
            )

        def h_create_tag(self, token: str | None, repo_type: str, repo: str, rev: str) -> None:
            r = hub.get_repo(repo_type, repo, token, write=True)
            commit = hub.resolve(r, rev)
            tag = self._json().get("tag")
            if not tag:
                raise HubError(400, "no tag name")
            if tag in r.tags:
                raise HubError(
                    409,
                    f"Tag {tag} already exists",
                    headers={"X-Error-Message": "Tag already exists"},
                )
            r.tags[tag] = commit.sha
            self._send_json(200, {"success": True})

        def h_delete_tag(self, token: str | None, repo_type: str, repo: str, tag: str) -> None:
            r = hub.get_repo(repo_type, repo, token, write=True)
            if unquote(tag) not in r.tags:
                raise HubError(404, f"Tag {tag} not found", "RevisionNotFound")
            del r.tags[unquote(tag)]
            self._send_json(200, {"success": True})

        def h_refs(self, token: str | None, repo_type: str, repo: str) -> None:
            r = hub.get_repo(repo_type, repo, token)

            def refs(kind: str, items: dict[str, str]) -> list[dict]:
                return [
                    {"name": n, "ref": f"refs/{kind}/{n}", "targetCommit": s}
                    for n, s in sorted(items.items())
                ]

            out = {
                "branches": refs("heads", r.branches),
                "converts": [],
                "tags": refs("tags", r.tags),
            }
            if self.query.get("include_prs"):
                out["pullRequests"] = []
            self._send_json(200, out)

        def h_commits(self, token: str | None, repo_type: str, repo: str, rev: str) -> None:
            r = hub.get_repo(repo_type, repo, token)
            commit, out = hub.resolve(r, rev), []
            while commit is not None:
                out.append(
                    {
                        "id": commit.sha,
                        "title": commit.title,
                        "message": commit.message,
                        "date": commit.date,
                        "authors": [{"user": "tester"}],
                    }
                )
                commit = r.commits.get(commit.parent) if commit.parent else None
            self._send_json(200, out)

        def h_info(self, token: str | None, repo_type: str, repo: str, rev: str = "main") -> None:
            r = hub.get_repo(repo_type, repo, token)
            commit = hub.resolve(r, rev)
            card = None
            if "README.md" in commit.files:
                try:
                    card = _front_matter(hub.read_blob(commit.files["README.md"]).decode("utf-8"))
                except (ValueError, yaml.YAMLError):
                    card = None
            blobs = bool(self.query.get("blobs"))
            siblings = []
            for p, b in sorted(commit.files.items()):
                s: dict = {"rfilename": p}
                if blobs:
                    s.update(size=b.size, blobId=b.oid)
                    if b.lfs:
                        s["lfs"] = {"size": b.size, "sha256": b.sha256, "pointerSize": 134}
                siblings.append(s)
            self._send_json(
                200,
                {
                    "_id": hashlib.md5(repo.encode()).hexdigest()[:24],
                    "id": r.repo_id,
                    "author": r.repo_id.split("/")[0],
                    "sha": commit.sha,
                    "private": r.private,
                    "gated": False,
                    "disabled": False,
                    "downloads": 0,
                    "likes": 0,
                    "tags": [],
                    "createdAt": r.created,
                    "lastModified": commit.date,
                    "cardData": card,
                    "siblings": siblings,
                    "usedStorage": sum(b.size for b in commit.files.values()),
                },
            )

        def _entry(self, commit: Commit, path: str, expand: bool) -> dict:
            if path in commit.files:
                b = commit.files[path]
                out: dict = {"type": "file", "oid": b.oid, "size": b.size, "path": path}
                if b.lfs:
                    out["lfs"] = {"oid": b.sha256, "size": b.size, "pointerSize": 134}
            else:
                inner = sorted(p for p in commit.files if p.startswith(path + "/"))
                oid = hashlib.sha1(
                    "\n".join(commit.files[p].oid for p in inner).encode()
                ).hexdigest()
                out = {"type": "directory", "oid": oid, "size": 0, "path": path}
            if expand:
                out["lastCommit"] = {"id": commit.sha, "title": commit.title, "date": commit.date}
            return out

        def h_tree(
            self, token: str | None, repo_type: str, repo: str, rev: str, path: str | None = None
        ) -> None:
            r = hub.get_repo(repo_type, repo, token)
            hub.check_gate(r, token)
            commit = hub.resolve(r, rev)
            base = unquote(path or "").strip("/")
            recursive = self.query.get("recursive", ["false"])[0].lower() in ("1", "true")
            expand = self.query.get("expand", ["false"])[0].lower() in ("1", "true")
            prefix = base + "/" if base else ""
            if base and base in commit.files:
                raise HubError(404, f"{base} is a file, not a folder", "EntryNotFound")
            if base and not any(p.startswith(prefix) for p in commit.files):
                raise HubError(404, f"Entry not found: {base}", "EntryNotFound")
            names: set[str] = set()
            for p in commit.files:
                if not p.startswith(prefix):
                    continue
                parts = p[len(prefix) :].split("/")
                for depth in range(1, len(parts) + 1 if recursive else 2):
                    names.add(prefix + "/".join(parts[:depth]))
            entries = [self._entry(commit, n, expand) for n in sorted(names)]
            start = int(self.query.get("cursor", ["0"])[0])
            page = entries[start : start + hub.page_size]
            headers = {}
            if start + hub.page_size < len(entries):
                q = {k: v[0] for k, v in self.query.items()}
                q["cursor"] = str(start + hub.page_size)
                query = "&".join(f"{k}={quote(v)}" for k, v in q.items())
                headers["Link"] = f'<{hub.url}{urlsplit(self.path).path}?{query}>; rel="next"'
            self._send_json(200, page, headers)

        def h_paths_info(self, token: str | None, repo_type: str, repo: str, rev: str) -> None:
            r = hub.get_repo(repo_type, repo, token)
            hub.check_gate(r, token)
            commit = hub.resolve(r, rev)
            ctype = self.headers.get("Content-Type", "")
            if ctype.startswith("application/json"):
                body = self._json()
                paths, expand = body.get("paths", []), bool(body.get("expand"))
            else:
                form = parse_qs(self._body().decode())
                paths = form.get("paths", [])
                expand = form.get("expand", ["False"])[0].lower() in ("1", "true")
            out = []
            for p in paths if isinstance(paths, list) else [paths]:
                p = p.strip("/")
                if p in commit.files or any(f.startswith(p + "/") for f in commit.files):
                    out.append(self._entry(commit, p, expand))
            self._send_json(200, out)

        def h_resolve(
            self, token: str | None, repo_type: str, repo: str, rev: str, path: str
        ) -> None:
            r = hub.get_repo(repo_type, repo, token)
            hub.check_gate(r, token)
            commit = hub.resolve(r, rev)
            path = unquote(path)
            blob = commit.files.get(path)
            if blob is None:
                raise HubError(
                    404, "Entry not found", "EntryNotFound", headers={"X-Repo-Commit": commit.sha}
                )
            data = hub.tamper.get(path) or hub.read_blob(blob)
            etag = f'"{blob.sha256 if blob.lfs else blob.oid}"'
            headers = {"X-Repo-Commit": commit.sha, "ETag": etag, "Accept-Ranges": "bytes"}
            if blob.lfs:
                headers["X-Linked-Etag"] = etag
                headers["X-Linked-Size"] = str(len(data))
            status = 200
            rng = self.headers.get("Range")
            if rng:
                m = re.fullmatch(r"bytes=(\d*)-(\d*)", rng.strip())
                if not m:
                    raise HubError(416, f"bad range {rng}")
                a, b = m.groups()
                if a == "":
                    start, end = max(0, len(data) - int(b)), len(data) - 1
                else:
                    start, end = int(a), min(int(b) if b else len(data) - 1, len(data) - 1)
                if start >= len(data) and len(data) > 0:
                    raise HubError(
                        416,
                        "range not satisfiable",
                        headers={"Content-Range": f"bytes */{len(data)}"},
                    )
                headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
                data, status = data[start : end + 1], 206
            ctype = (
                "text/plain; charset=utf-8"
                if path.endswith((".md", ".json", ".txt"))
                else "application/octet-stream"
            )
            self._send(status, data, headers, ctype)

    return Handler


if __name__ == "__main__":  # a standalone loopback Hub for trying `xlbench publish` by hand
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description="Serve a loopback Hugging Face Hub on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--token", action="append", required=True, help="an accepted token (repeatable)"
    )
    parser.add_argument("--root", default=None, help="blob folder (default: a temp dir)")
    opts = parser.parse_args()
    server = HubServer(
        opts.root or tempfile.mkdtemp(prefix="hubserver-"),
        set(opts.token),
        port=opts.port,
        page_size=1000,
    )
    print(
        f"serving {server.url} (blobs in {server.root}); export HF_ENDPOINT={server.url} HF_HUB_DISABLE_XET=1",
        file=sys.stderr,
    )
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        server.stop()
