"""What a corpus states about an English source that alee rows keep: its level and its domain.

BOUQuET says whether a segment is a sentence or a paragraph; WMT24++, BOUQuET and FLORES+
name its domain (:mod:`builders.corpora.named`). The TACC breakdowns by level and by domain
read them from the rows, so the corpus' own values are kept rather than guessed: a source
whose corpus states nothing keeps the level its sentence count gives and no domain.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from builders.alee.logic.pipeline import Candidate

#: The corpus ``meta`` keys a row keeps (builders/corpora/base.py ``Row.meta``).
FACTS = ("level", "domain")


def source_facts(items: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, dict[str, str]]:
    """Return English text -> the facts its corpus row states, from ``(text, meta)`` in reading order.

    The first row of a text wins, as it does for the text's translation
    (:func:`builders.alee.build.read_corpora`); texts whose row states no fact are left out.

    >>> source_facts([("A. B.", {"level": "paragraph", "domain": "news", "split": "dev"}),
    ...               ("A.", {"split": "dev"}), ("A. B.", {"level": "sentence"})])
    {'A. B.': {'level': 'paragraph', 'domain': 'news'}}
    """
    out: dict[str, dict[str, str]] = {}
    seen: set[str] = set()
    for text, meta in items:
        if text in seen:
            continue
        seen.add(text)
        stated = {k: str(meta[k]) for k in FACTS if meta.get(k) is not None}
        if stated:
            out[text] = stated
    return out


def with_facts(
    candidates: Sequence[Candidate], facts: Mapping[str, Mapping[str, str]]
) -> list[Candidate]:
    """Return the candidates with their source's stated level and domain (the others unchanged).

    >>> c = Candidate("0-PN", "It rains. It pours.", "PN", level="paragraph")
    >>> [(x.level, x.domain) for x in with_facts([c], {"It rains. It pours.": {"level": "sentence", "domain": "news"}})]
    [('sentence', 'news')]
    >>> with_facts([c], {})[0] is c
    True
    """
    out = []
    for c in candidates:
        stated = facts.get(c.en_orig)
        if not stated:
            out.append(c)
            continue
        out.append(
            dataclasses.replace(
                c, level=stated.get("level", c.level), domain=stated.get("domain", c.domain)
            )
        )
    return out
