"""The online services of ``deep-translator``, rate-limited, with retries and clear refusals."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from evaluators.core.errors import (
    EngineUnavailableError,
    RemoteError,
    UsageError,
    truncate,
)
from evaluators.core.optional import require
from evaluators.schema.langs import iso3, to_card_language

log = logging.getLogger("xlbench.mt")


# --- deep-translator (online) --------------------------------------------------------

#: deep-translator service name -> (class name, environment variable holding its API key or "").
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
    """Return the language code deep-translator's services expect.

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
class OnlineTranslator:
    """A deep-translator service with a rate limit, retries with backoff and clear errors.

    Attributes:
        service: deep-translator service name (``google`` ...).
        pair: canonical languages.
        rate: at most this many requests per second (Google allows about 5).
        retries: attempts after the first failure; waits ``backoff * 2**i`` seconds.
        factory: builds the deep-translator object (tests inject a fake).
        sleep: ``time.sleep`` (tests inject a recorder).
    """

    service: str
    pair: tuple[str, str]
    rate: float = 4.0
    retries: int = 4
    backoff: float = 2.0
    factory: Callable | None = None
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    online: bool = True

    def __post_init__(self) -> None:
        if self.service not in DEEP_TRANSLATOR:
            raise UsageError(
                f"Unknown online service {self.service!r}; choose one of {', '.join(DEEP_TRANSLATOR)}."
            )
        if self.rate <= 0:
            raise UsageError(f"--mt-rate must be positive (requests per second), got {self.rate}.")
        self._client: Any = None
        self._last: float | None = None
        self.requests = 0

    @property
    def name(self) -> str:
        """The service name (``google`` ...)."""
        return self.service

    @property
    def version(self) -> str:
        """``deep-translator==<version>``: the service itself is unversioned (see the card's limitations)."""
        try:
            return f"deep-translator=={metadata.version('deep-translator')}"
        except metadata.PackageNotFoundError:
            return "deep-translator"

    def _make_client(self):
        if self.factory is not None:
            return self.factory(
                source=deep_translator_code(self.pair[0]), target=deep_translator_code(self.pair[1])
            )
        deep_translator = require("deep_translator", feature="Online MT (package deep-translator)")
        cls_name, key_env = DEEP_TRANSLATOR[self.service]
        kwargs = {}
        if key_env:
            key = os.environ.get(key_env)
            if not key:
                raise EngineUnavailableError(
                    f"The {self.service} service needs an API key in the {key_env} environment variable; "
                    f"set it or use --mt google."
                )
            kwargs["api_key"] = key
        cls = getattr(deep_translator, cls_name)
        return cls(
            source=deep_translator_code(self.pair[0]),
            target=deep_translator_code(self.pair[1]),
            **kwargs,
        )

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
                log.warning(
                    "%s refused a request (%s); retry %d/%d",
                    self.service,
                    type(err).__name__,
                    attempt + 1,
                    self.retries,
                )
                continue
            if result is None:
                last = RuntimeError("empty response")
                continue
            return result
        raise RemoteError(
            f"The {self.service} translation service refused the request after {self.retries + 1} attempts "
            f"({type(last).__name__}: {truncate(str(last), 100)}); wait and rerun the same command: "
            f"sentences already translated are cached and will not be requested again."
        )

    def translate_batch(self, texts: Sequence[str]) -> list[str]:
        """Translate texts one request each (deep-translator strips line breaks, so no joining)."""
        return [self.translate_one(t) if t.strip() else "" for t in texts]
