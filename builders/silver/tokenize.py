r"""The reference tokenisation of SilverAlign: split off punctuation, then split on whitespace.

Köksal et al. (2022) compare whitespace tokens of the translation of a sentence
and of each alternative (``sent.split()`` in their ``which_words_changed``),
after padding 32 punctuation characters with spaces (notebook 4, cell 9:
``re.sub(r'([{}])'.format("”“!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~"), r' \1 ', x)``).
:class:`Tokenizer` reproduces that and returns character spans, so that a source
word can be substituted *in the original string* (the MT engine then sees exactly
the text it translated for the base sentence, apart from the one substituted word).
``tests/oracles/silveralign_reference.py`` holds the authors' code, run unmodified
against this one.

Schemes:

- ``punct`` (default): each of the authors' 32 characters (ASCII punctuation
  except ``'`` and ``\``, plus ``“ ”``) is a token of its own; the rest splits on
  whitespace. So ``well-known`` is ``well - known``, ``3.5`` is ``3 . 5``, while
  ``don't``, ``¿Dónde`` and ``«hola»`` stay one token, as in the authors' data.
- ``whitespace``: tokens are maximal runs of non-space characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evaluators.core.errors import UsageError

#: The characters the authors pad with spaces (notebook 4, cell 9), in their order.
AUTHORS_PUNCTUATION = '”“!"#$%&()*+,-./:;<=>?@[]^_`{|}~'
_P = re.escape(AUTHORS_PUNCTUATION)
_PATTERNS = {
    "punct": re.compile(rf"[{_P}]|[^\s{_P}]+"),
    "whitespace": re.compile(r"\S+"),
}
SCHEMES = tuple(_PATTERNS)


@dataclass(frozen=True)
class Tokenizer:
    """A deterministic word tokenizer that keeps character offsets.

    Attributes:
        scheme: ``punct`` or ``whitespace`` (see the module docstring).
        lowercase: lowercase every token (offsets still refer to the original text).
    """

    scheme: str = "punct"
    lowercase: bool = False

    def __post_init__(self) -> None:
        if self.scheme not in _PATTERNS:
            raise UsageError(
                f"Unknown tokenizer scheme {self.scheme!r}; choose one of {', '.join(SCHEMES)}."
            )

    @property
    def signature(self) -> str:
        """Short description for manifests: ``punct`` or ``punct+lower``.

        >>> Tokenizer("whitespace", lowercase=True).signature
        'whitespace+lower'
        """
        return self.scheme + ("+lower" if self.lowercase else "")

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Return the ``(start, end)`` character offsets of every token.

        >>> Tokenizer().spans("I love pizza.")
        [(0, 1), (2, 6), (7, 12), (12, 13)]
        """
        return [m.span() for m in _PATTERNS[self.scheme].finditer(text)]

    def tokenize(self, text: str) -> list[str]:
        r"""Return the tokens of ``text``.

        >>> Tokenizer().tokenize('He said: "don\'t go," twice.')
        ['He', 'said', ':', '"', "don't", 'go', ',', '"', 'twice', '.']
        >>> Tokenizer().tokenize("¿Dónde? well-known 3.5")
        ['¿Dónde', '?', 'well', '-', 'known', '3', '.', '5']
        >>> Tokenizer("whitespace").tokenize("Dijo: hola.")
        ['Dijo:', 'hola.']
        """
        toks = [text[s:e] for s, e in self.spans(text)]
        return [t.lower() for t in toks] if self.lowercase else toks


def is_word(token: str) -> bool:
    """Return True when a token contains a letter or digit (punctuation is never substituted).

    >>> is_word("pizza"), is_word("3.5"), is_word(","), is_word("--")
    (True, True, False, False)
    """
    return any(ch.isalnum() for ch in token)


def substitute(text: str, span: tuple[int, int], word: str) -> str:
    """Return ``text`` with the characters of ``span`` replaced by ``word``.

    >>> substitute("I love pizza.", (2, 6), "hate")
    'I hate pizza.'
    """
    start, end = span
    return text[:start] + word + text[end:]
