"""Offline sentence splitting: pysbd (rule-based, no data files); NLTK punkt if its data is present."""

from __future__ import annotations

from functools import lru_cache

from evaluators.core.errors import EngineUnavailableError

SPLITTERS = ("pysbd", "punkt")


@lru_cache(maxsize=4)
def _pysbd(language: str):
    import pysbd

    return pysbd.Segmenter(language=language, clean=False)


def split_sentences(text: str, splitter: str = "pysbd", language: str = "en") -> list[str]:
    """Split ``text`` into sentences (stripped, empty ones dropped).

    >>> split_sentences("He left. She stayed, sadly. Then it rained.")
    ['He left.', 'She stayed, sadly.', 'Then it rained.']

    Raises:
        EngineUnavailableError: ``punkt`` requested but its data is not installed.
        ValueError: unknown splitter.
    """
    if splitter == "pysbd":
        parts = _pysbd(language).segment(text)
    elif splitter == "punkt":
        import nltk

        try:
            parts = nltk.sent_tokenize(text, language={"en": "english"}.get(language, language))
        except LookupError as err:
            raise EngineUnavailableError(
                "NLTK punkt data is not installed; run 'python -m nltk.downloader punkt_tab' or use --splitter pysbd."
            ) from err
    else:
        raise ValueError(f"unknown splitter {splitter!r}; choose one of {SPLITTERS}")
    return [p.strip() for p in parts if p.strip()]
