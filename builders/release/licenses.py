"""The dataset license, derived from the licenses of its inputs (pure; no I/O).

A simple ordered compatibility table: :data:`ORDER` lists SPDX ids from least to
most restrictive, and :data:`OUTBOUND` says, for each, the licenses a work
containing it may be distributed under. The dataset gets the least restrictive
license that every data input allows (the most restrictive input wins); when
no license is allowed by all of them (CC-BY-NC with GPL, GPL-2.0-only with
GPL-3.0, CC-BY-SA with ODbL ...) the build stops with a message naming the
inputs. An input of unknown license makes the result ``unknown``.

Inputs whose ``role`` is ``tool`` (an MT engine, an aligner) are listed with
their license but do not propagate: the output of a program is not a copy of
the program. Public domain is ``LicenseRef-Public-Domain`` (SPDX has no id).

>>> derive([("dictionary", "GPL-3.0-or-later"), ("bible", "LicenseRef-Public-Domain")]).spdx
'GPL-3.0-or-later'
>>> derive([("a", "GPL-2.0-or-later"), ("b", "CC-BY-SA-4.0")]).spdx
'GPL-3.0-or-later'
>>> derive([("bible", PUBLIC_DOMAIN), ("wordnet", WORDNET)]).spdx
'LicenseRef-WordNet-3.0'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evaluators.core.errors import UsageError, did_you_mean

PUBLIC_DOMAIN = "LicenseRef-Public-Domain"
WORDNET = "LicenseRef-WordNet-3.0"
UNKNOWN = "unknown"

#: Least to most restrictive. "or-later" comes before "only": it leaves the user more choice.
ORDER: tuple[str, ...] = (
    PUBLIC_DOMAIN, "CC0-1.0", "PDDL-1.0", "Unlicense",
    "MIT", "BSD-2-Clause", "BSD-3-Clause", WORDNET, "Apache-2.0",
    "CC-BY-3.0", "CC-BY-4.0", "ODC-By-1.0",
    "CC-BY-SA-3.0", "CC-BY-SA-4.0", "ODbL-1.0",
    "LGPL-2.1-or-later", "LGPL-2.1-only", "LGPL-3.0-or-later", "LGPL-3.0-only",
    "GPL-2.0-or-later", "GPL-2.0-only", "GPL-3.0-or-later", "GPL-3.0-only",
    "AGPL-3.0-or-later", "AGPL-3.0-only",
    "CC-BY-NC-4.0", "CC-BY-NC-SA-4.0",
)  # fmt: skip

_GPL3 = ("GPL-3.0-or-later", "GPL-3.0-only", "AGPL-3.0-or-later", "AGPL-3.0-only")
_GPL2 = ("GPL-2.0-or-later", "GPL-2.0-only", *_GPL3)
_LGPL3 = ("LGPL-3.0-or-later", "LGPL-3.0-only", *_GPL3)


def _from(start: str, exclude: Iterable[str] = ()) -> frozenset[str]:
    """Every license from ``start`` on in :data:`ORDER`, minus ``exclude``."""
    return frozenset(ORDER[ORDER.index(start) :]) - frozenset(exclude)


#: license -> licenses a combined work may carry.
OUTBOUND: dict[str, frozenset[str]] = {
    PUBLIC_DOMAIN: frozenset(ORDER),
    "CC0-1.0": _from("CC0-1.0"),
    "PDDL-1.0": _from("CC0-1.0"),
    "Unlicense": _from("CC0-1.0"),
    "MIT": _from("MIT"),
    "BSD-2-Clause": _from("MIT"),
    "BSD-3-Clause": _from("MIT"),
    WORDNET: _from("MIT"),
    # Apache-2.0's patent clause is incompatible with GPLv2 (FSF).
    "Apache-2.0": _from(
        "Apache-2.0", ("LGPL-2.1-or-later", "LGPL-2.1-only", "GPL-2.0-or-later", "GPL-2.0-only")
    ),
    "CC-BY-3.0": frozenset(
        {
            "CC-BY-3.0",
            "CC-BY-4.0",
            "CC-BY-SA-3.0",
            "CC-BY-SA-4.0",
            "CC-BY-NC-4.0",
            "CC-BY-NC-SA-4.0",
        }
    ),
    # CC BY 4.0 is compatible with GPLv3 (FSF's list).
    "CC-BY-4.0": frozenset(
        {"CC-BY-4.0", "CC-BY-SA-4.0", "ODbL-1.0", "CC-BY-NC-4.0", "CC-BY-NC-SA-4.0", *_GPL3}
    ),
    "ODC-By-1.0": frozenset({"ODC-By-1.0", "ODbL-1.0"}),
    "CC-BY-SA-3.0": frozenset({"CC-BY-SA-3.0", "CC-BY-SA-4.0"}),
    # CC BY-SA 4.0 -> GPLv3 is a declared one-way compatibility (Creative Commons, 2015).
    "CC-BY-SA-4.0": frozenset({"CC-BY-SA-4.0", *_GPL3}),
    "ODbL-1.0": frozenset({"ODbL-1.0"}),
    "LGPL-2.1-or-later": frozenset({"LGPL-2.1-or-later", "LGPL-2.1-only", *_LGPL3, *_GPL2}),
    "LGPL-2.1-only": frozenset({"LGPL-2.1-only", "GPL-2.0-only", *_GPL2}),
    "LGPL-3.0-or-later": frozenset(_LGPL3),
    "LGPL-3.0-only": frozenset({"LGPL-3.0-only", *_GPL3}),
    "GPL-2.0-or-later": frozenset(_GPL2),
    "GPL-2.0-only": frozenset({"GPL-2.0-only"}),
    "GPL-3.0-or-later": frozenset(_GPL3),
    "GPL-3.0-only": frozenset({"GPL-3.0-only", "AGPL-3.0-only"}),
    "AGPL-3.0-or-later": frozenset({"AGPL-3.0-or-later", "AGPL-3.0-only"}),
    "AGPL-3.0-only": frozenset({"AGPL-3.0-only"}),
    # Non-commercial clauses add a restriction no copyleft license allows.
    "CC-BY-NC-4.0": frozenset({"CC-BY-NC-4.0", "CC-BY-NC-SA-4.0"}),
    "CC-BY-NC-SA-4.0": frozenset({"CC-BY-NC-SA-4.0"}),
}

#: SPDX -> Hub card license id (https://huggingface.co/docs/hub/repositories-licenses).
HUB_IDS: dict[str, str] = {
    PUBLIC_DOMAIN: "cc0-1.0", "CC0-1.0": "cc0-1.0", "PDDL-1.0": "pddl", "Unlicense": "unlicense",
    "MIT": "mit", "BSD-2-Clause": "bsd-2-clause", "BSD-3-Clause": "bsd-3-clause", WORDNET: "other",
    "Apache-2.0": "apache-2.0", "CC-BY-3.0": "cc-by-3.0", "CC-BY-4.0": "cc-by-4.0", "ODC-By-1.0": "odc-by",
    "CC-BY-SA-3.0": "cc-by-sa-3.0", "CC-BY-SA-4.0": "cc-by-sa-4.0", "ODbL-1.0": "odbl",
    "LGPL-2.1-or-later": "lgpl-2.1", "LGPL-2.1-only": "lgpl-2.1", "LGPL-3.0-or-later": "lgpl-3.0",
    "LGPL-3.0-only": "lgpl-3.0", "GPL-2.0-or-later": "gpl-2.0", "GPL-2.0-only": "gpl-2.0",
    "GPL-3.0-or-later": "gpl-3.0", "GPL-3.0-only": "gpl-3.0", "AGPL-3.0-or-later": "agpl-3.0",
    "AGPL-3.0-only": "agpl-3.0", "CC-BY-NC-4.0": "cc-by-nc-4.0", "CC-BY-NC-SA-4.0": "cc-by-nc-sa-4.0",
    UNKNOWN: "unknown",
}  # fmt: skip


def hub_id(spdx: str) -> str:
    """Return the Hub's license id for an SPDX id (``other`` when the Hub has none).

    >>> hub_id("GPL-3.0-or-later"), hub_id("cc-by-sa-4.0"), hub_id("LicenseRef-Foo")
    ('gpl-3.0', 'cc-by-sa-4.0', 'other')
    """
    if spdx in HUB_IDS:
        return HUB_IDS[spdx]
    if spdx.lower() in HUB_IDS.values():
        return spdx.lower()
    return "other"


def known(spdx: str) -> str | None:
    """Return the table's spelling of ``spdx`` (case-insensitive), or ``None``.

    >>> known("gpl-3.0-or-later"), known("WTFPL")
    ('GPL-3.0-or-later', None)
    """
    by_lower = {k.lower(): k for k in ORDER}
    return by_lower.get(spdx.lower())


_LICENSE_REF = re.compile(r"^LicenseRef-[A-Za-z0-9.-]+$")


def check_override(spdx: str) -> str:
    """Return a ``--license`` value the card can state: an id of the table or of the Hub, or a ``LicenseRef-``.

    >>> check_override("CC-BY-4.0"), check_override("cc-by-4.0"), check_override("LicenseRef-Mine")
    ('CC-BY-4.0', 'cc-by-4.0', 'LicenseRef-Mine')

    Raises:
        UsageError: an id neither table knows (a typo would otherwise reach the card as ``other``).
    """
    if known(spdx) or spdx in HUB_IDS.values() or _LICENSE_REF.match(spdx):
        return spdx
    close = did_you_mean(spdx, [*ORDER, *sorted(set(HUB_IDS.values()))])
    raise UsageError(
        f"--license {spdx!r} is not a license id xlbench knows; use an SPDX id such as CC-BY-4.0, "
        f"MIT or GPL-3.0-or-later, or LicenseRef-<name> for a license SPDX lacks.{close}"
    )


@dataclass(frozen=True)
class Derived:
    """The dataset license and what it follows from.

    Attributes:
        spdx: SPDX id (``unknown`` when an input's license is unknown).
        derived_from: names of the data inputs it was derived from.
    """

    spdx: str
    derived_from: tuple[str, ...]


def derive(inputs: Sequence[tuple[str, str]]) -> Derived:
    """Return the least restrictive license every ``(name, spdx)`` input allows.

    >>> derive([("bible", PUBLIC_DOMAIN)]).spdx
    'LicenseRef-Public-Domain'
    >>> derive([("mine.txt", "unknown"), ("bible", PUBLIC_DOMAIN)]).spdx
    'unknown'
    >>> derive([])
    Derived(spdx='unknown', derived_from=())

    Raises:
        UsageError: no license is allowed by all inputs; names the two that conflict.
    """
    names = tuple(name for name, _ in inputs)
    if not inputs:
        return Derived(UNKNOWN, names)
    spelled: list[tuple[str, str]] = []
    for name, spdx in inputs:
        spelled_spdx = known(spdx)
        if spelled_spdx is None:
            return Derived(UNKNOWN, names)
        spelled.append((name, spelled_spdx))
    allowed = frozenset(ORDER)
    seen: list[tuple[str, str]] = []
    for name, spdx in spelled:
        narrowed = allowed & OUTBOUND[spdx]
        if not narrowed:
            clash = [(n, s) for n, s in seen if not OUTBOUND[s] & OUTBOUND[spdx]] or seen
            others = " and ".join(f"{n} is {s}" for n, s in clash)
            raise UsageError(
                f"The inputs' licenses cannot be combined: {name} is {spdx} and {others} "
                f"(no license allows both); drop one of them, or pass --license X --license-reason '...' "
                f"if you hold other rights."
            )
        allowed = narrowed
        seen.append((name, spdx))
    # At least as restrictive as the most restrictive input: PD + WordNet is WordNet's
    # license, not MIT's, although WordNet's terms allow an MIT-licensed whole.
    floor = max(ORDER.index(spdx) for _, spdx in spelled)
    at_least = [x for x in allowed if ORDER.index(x) >= floor] or list(allowed)
    return Derived(min(at_least, key=ORDER.index), names)


def license_block(
    inputs: Sequence[tuple[str, str]], override: str | None = None, reason: str | None = None
) -> dict:
    """Return the manifest's ``license`` section, applying ``--license``/``--license-reason``.

    >>> license_block([("d", "GPL-3.0-or-later")])["hub"]
    'gpl-3.0'
    >>> license_block([("d", "GPL-3.0-or-later")], "cc-by-4.0", "relicensed by the authors")["spdx"]
    'cc-by-4.0'

    Raises:
        UsageError: ``--license`` without a reason (or a reason without ``--license``);
            incompatible inputs without an override.
    """
    if override and not (reason and reason.strip()):
        raise UsageError(
            "--license needs --license-reason '...' (why the inputs' license does not apply); it goes on the card."
        )
    if reason and not override:
        raise UsageError(
            "--license-reason explains --license; pass --license X too, or drop the reason."
        )
    if override:
        check_override(override)
    try:
        derived = derive(inputs)
    except UsageError:
        if not override:
            raise
        derived = Derived("incompatible", tuple(name for name, _ in inputs))
    spdx = override or derived.spdx
    return {
        "spdx": spdx,
        "hub": hub_id(spdx),
        "derived": None if derived.spdx == "incompatible" else derived.spdx,
        "derived_from": list(derived.derived_from),
        "override_reason": reason.strip() if override and reason else None,
    }
