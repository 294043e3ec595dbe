"""Frames that stand for discourse connectives, not events: never PN, AR or HS targets (data).

AMR writes several sentence connectives as PropBank frames whose arguments are
whole clauses: "but", "however", "yet" become ``contrast-01``; "because",
"so", "therefore" ``cause-01``; "although" (older releases) ``concession-01``;
"except" ``except-01``; "for example" ``exemplify-01``; inferential "so"
("so you are a king?") ``infer-01``. Sources: the AMR 1.2.6 guidelines
(github.com/amrisi/amr-guidelines, ``amr.md``, the sections on discourse
connectives and on concession) and the PropBank frame files ``contrast.01``,
``cause.01``, ``concession.01``, ``except.01``, ``exemplify.01``, ``infer.01``.

Negating such a frame ("not but ...") or replacing it by an antonym or a
hypernym changes nothing or produces nonsense (on the Little Prince graphs,
10 of 176 PN and 15 of 171 HS edits did). Role swaps stay allowed: exchanging
a cause and its effect is a real change of meaning. Modal frames
(``possible-01``, ``obligate-01``) are not listed: "not possible" is a real negation.
"""

from __future__ import annotations

#: Connective frames (see the module docstring for the source of each).
DISCOURSE_FRAMES = frozenset(
    {
        "contrast-01",  # but, however, yet, whereas
        "cause-01",  # because, since, so, thus, therefore
        "concession-01",  # although, though, despite (older AMR releases; now :concession)
        "except-01",  # except, but for
        "exemplify-01",  # for example, such as
        "infer-01",  # inferential "so", "then"
    }
)
