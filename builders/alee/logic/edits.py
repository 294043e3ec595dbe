"""AMR graph edits that make one minimal semantic change (alee paper, Table 1; Sentence Smith).

Each rule is one pure function ``(Graph, rng, lexicon) -> Graph | None``:
it returns a *new* graph with exactly one edit, or ``None`` when the graph
admits no such edit. The edit is recorded in the new graph's metadata
(``alee-edit``: ``TYPE node before -> after``) so that it survives
:func:`penman.encode`; :func:`edit_of` reads it back.

Edits work on the graph's triples and keep its layout information
(``epidata``), so the edited graph encodes like the original with one change;
a graph whose edit does not re-encode to the same triples is rejected.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import penman
from penman.graph import Graph
from penman.layout import Pop

from builders.alee.logic.discourse import DISCOURSE_FRAMES
from builders.alee.spec import (
    FRAME_RE,
    NEW_FRAME_SENSE,
    PRONOUN_CONCEPTS,
    SPECIAL_FRAME_RE,
    STRUCTURAL_CONCEPTS,
)

EDIT_KEY = "alee-edit"


class Lexicon(Protocol):
    """Word relations the AR and HS rules need (WordNet in production, a dict in tests)."""

    def antonyms(self, lemma: str, pos: str) -> list[str]:
        """Return lemma antonyms of ``lemma`` with part of speech ``pos`` (``n``, ``v``, ``a``)."""
        ...

    def hypernyms(self, lemma: str, pos: str) -> list[str]:
        """Return hypernym lemmas of ``lemma`` (never its synonyms)."""
        ...

    # Optional: ``dominant_pos(lemma) -> "n" | "v" | "a" | "r" | None``, the
    # part of speech with the most sense-tagged uses; lexicons without it are
    # trusted to answer for the part of speech the graph role suggests.


@dataclass(frozen=True)
class Edit:
    """One recorded edit: which node changed and how."""

    type: str
    node: str
    before: str
    after: str

    def describe(self) -> str:
        """Return the one-line description stored in the graph and the dataset.

        >>> Edit("PN", "s", "see-01", "see-01 :polarity -").describe()
        'PN s: see-01 -> see-01 :polarity -'
        """
        return f"{self.type} {self.node}: {self.before} -> {self.after}"


def edit_of(graph: Graph) -> Edit | None:
    """Return the edit recorded in ``graph.metadata`` by a rule, or ``None``.

    >>> g = negate_polarity(penman.decode("(s / sleep-01 :ARG0 (c / cat))"), np.random.default_rng(0), None)
    >>> edit_of(g)
    Edit(type='PN', node='s', before='sleep-01', after='sleep-01 :polarity -')
    """
    text = graph.metadata.get(EDIT_KEY)
    if not text:
        return None
    head, _, change = text.partition(": ")
    etype, _, node = head.partition(" ")
    before, _, after = change.partition(" -> ")
    return Edit(etype, node, before, after)


def _concepts(g: Graph) -> dict[str, str]:
    return {t[0]: t[2] for t in g.instances() if t[2] is not None}


def _rebuild(
    g: Graph, replace: dict, insert_after: dict | None = None, edit: Edit | None = None
) -> Graph | None:
    """Return a copy of ``g`` with triples replaced/inserted, layout kept; ``None`` if it does not re-encode."""
    insert_after = insert_after or {}
    triples, epidata = [], {}
    for t in g.triples:
        new = replace.get(t, t)
        epi = list(g.epidata.get(t, []))
        if t in insert_after:
            # The inserted triple belongs to the same node: it takes over the
            # node's closing POPs so it is laid out inside that node.
            triples.append(new)
            epidata[new] = [e for e in epi if not isinstance(e, Pop)]
            extra = insert_after[t]
            triples.append(extra)
            epidata[extra] = [e for e in epi if isinstance(e, Pop)]
        else:
            triples.append(new)
            epidata[new] = epi
    metadata = dict(g.metadata)
    if edit is not None:
        metadata[EDIT_KEY] = edit.describe()
    out = Graph(triples, top=g.top, epidata=epidata, metadata=metadata)
    try:
        text = penman.encode(out)
        back = penman.decode(text)
    except Exception:  # penman raises LayoutError, DecodeError, KeyError on broken layouts
        return None
    if set(back.triples) != set(out.triples) or back.top != out.top:
        return None
    return out


def is_eventive_frame(concept: str | None) -> bool:
    """Return whether ``concept`` is a PropBank frame that is not a discourse connective.

    >>> is_eventive_frame("see-01"), is_eventive_frame("contrast-01"), is_eventive_frame("cause-01")
    (True, False, False)
    """
    return is_propbank_frame(concept) and concept not in DISCOURSE_FRAMES


def is_propbank_frame(concept: str | None) -> bool:
    """Return whether ``concept`` is a PropBank frame (``see-01``), not an AMR special frame (``-91``).

    >>> is_propbank_frame("see-01"), is_propbank_frame("have-rel-role-91"), is_propbank_frame("boy")
    (True, False, False)
    """
    if not concept:
        return False
    return bool(FRAME_RE.match(concept)) and not SPECIAL_FRAME_RE.search(concept)


def negate_polarity(
    g: Graph, rng: np.random.Generator, lexicon: Lexicon | None = None
) -> Graph | None:
    """PN: add ``:polarity -`` to one PropBank-frame predicate that has no polarity.

    AMR special frames (``have-rel-role-91``) are not PropBank predicates and
    discourse frames (``contrast-01`` for "but", :mod:`builders.alee.logic.discourse`)
    are no events: both are left alone.

    >>> g = penman.decode("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b :polarity -))")
    >>> print(penman.encode(negate_polarity(g, np.random.default_rng(0)), indent=None))
    # ::alee-edit PN w: want-01 -> want-01 :polarity -
    (w / want-01 :polarity - :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b :polarity -))
    """
    has_polarity = {t[0] for t in g.attributes(role=":polarity")}
    candidates = [t for t in g.instances() if is_eventive_frame(t[2]) and t[0] not in has_polarity]
    if not candidates:
        return None
    inst = candidates[int(rng.integers(len(candidates)))]
    edit = Edit("PN", inst[0], inst[2], f"{inst[2]} :polarity -")
    return _rebuild(g, {}, {inst: (inst[0], ":polarity", "-")}, edit)


def swap_roles(g: Graph, rng: np.random.Generator, lexicon: Lexicon | None = None) -> Graph | None:
    """RS: exchange the ``:ARG0`` and ``:ARG1`` targets of one PropBank predicate that has both.

    Inverse roles count (``(b / boy :ARG0-of (l / like-01 ...))`` gives ``l`` an
    ARG0); the swap relabels the two edges, so the layout is kept.

    >>> g = penman.decode("(c / chase-01 :ARG0 (d / dog) :ARG1 (c2 / cat))")
    >>> print(penman.encode(swap_roles(g, np.random.default_rng(0)), indent=None))
    # ::alee-edit RS c: ARG0=d ARG1=c2 -> ARG0=c2 ARG1=d
    (c / chase-01 :ARG1 (d / dog) :ARG0 (c2 / cat))
    """
    candidates = []
    concepts = _concepts(g)
    for var, concept in concepts.items():
        if not is_propbank_frame(concept):
            continue
        a0 = [t for t in g.triples if t[0] == var and t[1] == ":ARG0"]
        a1 = [t for t in g.triples if t[0] == var and t[1] == ":ARG1"]
        # Exactly one of each, with different targets: otherwise the swap is a no-op or ambiguous.
        if len(a0) == 1 and len(a1) == 1 and a0[0][2] != a1[0][2]:
            candidates.append((a0[0], a1[0]))
    if not candidates:
        return None
    e0, e1 = candidates[int(rng.integers(len(candidates)))]
    edit = Edit("RS", e0[0], f"ARG0={e0[2]} ARG1={e1[2]}", f"ARG0={e1[2]} ARG1={e0[2]}")
    replace = {e0: (e0[0], ":ARG1", e0[2]), e1: (e1[0], ":ARG0", e1[2])}
    return _rebuild(g, replace, None, edit)


#: Roles whose (non-frame) targets are adverbial: time, degree, frequency, duration.
ADVERBIAL_ROLES = frozenset({":time", ":degree", ":frequency", ":duration"})


def lexical_slots(g: Graph) -> list[tuple[tuple, str, str, str | None]]:
    """Return the concepts a lexical rule may replace: ``(instance triple, lemma, kind, sense)``.

    ``kind`` says what the graph tells about the word's part of speech:
    ``"frame"`` for PropBank frames (sense given), ``"mod"`` for concepts reached
    by ``:mod`` (adjectives, or adverbs such as "just"), ``"manner"`` for
    ``:manner`` (AMR writes manner adverbs as adjectives: ``:manner (q / quick)``),
    ``"adverbial"`` for ``:time``/``:degree``/``:frequency``/``:duration``
    ("now", "then", "very") and ``"word"`` for the rest. Structural concepts,
    pronouns, AMR special frames (``-91``), discourse frames (``contrast-01``),
    named entities (nodes with ``:name``) and names are skipped.

    >>> g = penman.decode("(s / see-01 :ARG0 (i / i) :ARG1 (p / penguin :mod (b / big)) :time (n / now))")
    >>> [(t[0], lemma, kind, sense) for t, lemma, kind, sense in lexical_slots(g)]
    [('s', 'see', 'frame', '01'), ('p', 'penguin', 'word', None), ('b', 'big', 'mod', None), ('n', 'now', 'adverbial', None)]
    """
    named = {t[0] for t in g.edges(role=":name")}
    incoming: dict[str, str] = {}
    for e in g.edges():
        role = e[1]
        if role in (":mod", ":manner") or role in ADVERBIAL_ROLES:
            incoming.setdefault(e[2], role)
    out = []
    for t in g.instances():
        concept = t[2]
        if (
            not concept
            or t[0] in named
            or concept in STRUCTURAL_CONCEPTS
            or concept in PRONOUN_CONCEPTS
        ):
            continue
        m = FRAME_RE.match(concept)
        if m:
            if SPECIAL_FRAME_RE.search(concept) or concept in DISCOURSE_FRAMES:
                continue
            out.append((t, m.group("lemma"), "frame", m.group("sense")))
        elif concept.isalpha() and concept.islower():
            role = incoming.get(t[0])
            kind = {":mod": "mod", ":manner": "manner"}.get(
                role or "", "adverbial" if role in ADVERBIAL_ROLES else "word"
            )
            out.append((t, concept, kind, None))
    return out


#: Parts of speech to query per kind of concept: AMR frames are verbs or
#: adjectives (``possible-01``), modifiers adjectives (``:mod (b / big)``),
#: manner concepts adjectives (AMR's stem of the adverb), adverbial concepts
#: adverbs (``always`` -> ``never``) and other concepts nouns or adjectives (``(o / old :domain i)``).
ANTONYM_POS: dict[str, tuple[str, ...]] = {
    "frame": ("v", "a"),
    "mod": ("a",),
    "manner": ("a",),
    "adverbial": ("r",),
    "word": ("a", "n"),
}
#: Hypernymy is defined in WordNet for nouns and verbs only; a modifier read as a
#: noun gives nonsense (``:mod (w / whole)`` -> ``construct``), so modifiers get
#: none, and neither do adverbial concepts (``:time (n / now)`` -> ``present``).
HYPERNYM_POS: dict[str, tuple[str, ...]] = {
    "frame": ("v",),
    "mod": (),
    "manner": (),
    "adverbial": (),
    "word": ("n",),
}
#: Parts of speech a kind of concept may have. When the lexicon says the lemma
#: is mostly something else (``:mod (j / just)`` is mostly the adverb "exactly",
#: not the adjective "fair"), the graph and the lexicon disagree and the concept
#: is skipped rather than guessed.
EXPECTED_POS: dict[str, frozenset[str]] = {
    "frame": frozenset({"v", "a"}),
    "mod": frozenset({"a"}),
    "manner": frozenset({"a", "r"}),
    "adverbial": frozenset({"r"}),
    "word": frozenset({"n", "a"}),
}


#: The PropBank roleset whose meaning WordNet's first sense stands for. A concept with
#: another sense number (``light-06`` "lightly", ``long-03`` "long for") means something
#: WordNet's first sense of the lemma does not, so AR and HS refuse it (issue #26).
FIRST_FRAME_SENSE = "01"


def slot_pos(
    kind: str, lemma: str, lexicon, table: dict[str, tuple[str, ...]], sense: str | None = None
) -> tuple[str, ...]:
    """The WordNet parts of speech to query for one slot (empty: skip it rather than guess).

    A frame is queried only as its first roleset (:data:`FIRST_FRAME_SENSE`); any other
    concept only in the part of speech WordNet uses the lemma most in, when the graph
    allows it (``equal`` is mostly an adjective, so never the noun "peer" -> "person").

    >>> class Lex:
    ...     def dominant_pos(self, lemma): return {"just": "r", "big": "a", "equal": "a"}.get(lemma)
    >>> slot_pos("mod", "just", Lex(), ANTONYM_POS), slot_pos("mod", "big", Lex(), ANTONYM_POS)
    ((), ('a',))
    >>> slot_pos("word", "equal", Lex(), HYPERNYM_POS), slot_pos("frame", "light", Lex(), ANTONYM_POS, "06")
    ((), ())
    """
    wanted = table[kind]
    if kind == "frame" and sense != FIRST_FRAME_SENSE:
        return ()
    dominant = getattr(lexicon, "dominant_pos", None)
    if not wanted or dominant is None:
        return wanted
    pos = dominant(_to_wordnet(lemma))
    if pos is None or pos not in EXPECTED_POS[kind]:
        return ()
    # a frame may be a verb or an adjective, a plain concept a noun or an adjective: the
    # lemma's usual part of speech decides (live-01 is the verb, never "live" vs "recorded")
    return tuple(p for p in wanted if p == pos) if kind in ("frame", "word") else wanted


def _to_wordnet(lemma: str) -> str:
    return lemma.replace("-", "_")


def _to_concept(word: str, kind: str) -> str | None:
    """Turn a WordNet lemma into an AMR concept, or ``None`` for multiword/odd lemmas."""
    word = word.lower()
    if not word.isalpha():
        return None
    return f"{word}-{NEW_FRAME_SENSE}" if kind == "frame" else word


def _replace_concept(
    g: Graph, rng: np.random.Generator, lexicon: Lexicon, etype: str, relation: str, pos_table: dict
) -> Graph | None:
    options = []
    for inst, lemma, kind, sense in lexical_slots(g):
        seen = set()
        for pos in slot_pos(kind, lemma, lexicon, pos_table, sense):
            for word in getattr(lexicon, relation)(_to_wordnet(lemma), pos):
                concept = _to_concept(word, kind)
                if concept and concept != inst[2] and concept not in seen:
                    seen.add(concept)
                    options.append((inst, concept))
    if not options:
        return None
    inst, concept = options[int(rng.integers(len(options)))]
    edit = Edit(etype, inst[0], inst[2], concept)
    return _rebuild(g, {inst: (inst[0], ":instance", concept)}, None, edit)


def replace_antonym(g: Graph, rng: np.random.Generator, lexicon: Lexicon | None) -> Graph | None:
    """AR: replace one concept by a lemma antonym of the same part of speech.

    A frame keeps a frame suffix (the new lemma's first sense, ``-01``).

    >>> class Lex:
    ...     def antonyms(self, lemma, pos): return {("increase", "v"): ["decrease"]}.get((lemma, pos), [])
    ...     def hypernyms(self, lemma, pos): return []
    >>> g = penman.decode("(i / increase-01 :ARG1 (p / price))")
    >>> print(penman.encode(replace_antonym(g, np.random.default_rng(0), Lex()), indent=None))
    # ::alee-edit AR i: increase-01 -> decrease-01
    (i / decrease-01 :ARG1 (p / price))
    """
    if lexicon is None:  # needs WordNet; the pipeline records these as edit:no-lexicon
        return None
    return _replace_concept(g, rng, lexicon, "AR", "antonyms", ANTONYM_POS)


def replace_hypernym(g: Graph, rng: np.random.Generator, lexicon: Lexicon | None) -> Graph | None:
    """HS: replace one concept by a WordNet hypernym (penguin -> bird); never a synonym.

    >>> class Lex:
    ...     def antonyms(self, lemma, pos): return []
    ...     def hypernyms(self, lemma, pos): return {("penguin", "n"): ["seabird"]}.get((lemma, pos), [])
    >>> g = penman.decode("(s / swim-01 :ARG0 (p / penguin))")
    >>> print(penman.encode(replace_hypernym(g, np.random.default_rng(0), Lex()), indent=None))
    # ::alee-edit HS p: penguin -> seabird
    (s / swim-01 :ARG0 (p / seabird))
    """
    if lexicon is None:  # needs WordNet; the pipeline records these as edit:no-lexicon
        return None
    return _replace_concept(g, rng, lexicon, "HS", "hypernyms", HYPERNYM_POS)


Rule = Callable[[Graph, np.random.Generator, "Lexicon | None"], "Graph | None"]

#: perturbation -> rule (the rule table is data).
RULES: dict[str, Rule] = {
    "PN": negate_polarity,
    "RS": swap_roles,
    "AR": replace_antonym,
    "HS": replace_hypernym,
}


def apply_edit(
    g: Graph, etype: str, rng: np.random.Generator, lexicon: Lexicon | None
) -> Graph | None:
    """Apply the rule of perturbation ``etype`` (one of :data:`RULES`).

    >>> apply_edit(penman.decode("(c / cat)"), "PN", np.random.default_rng(0), None) is None
    True

    Raises:
        KeyError: unknown perturbation.
    """
    return RULES[etype](g, rng, lexicon)


def admissible(
    g: Graph, lexicon: Lexicon | None, types: Sequence[str] = tuple(RULES)
) -> dict[str, bool]:
    """Return, per perturbation, whether ``g`` admits that edit (for edit statistics).

    >>> admissible(penman.decode("(s / sleep-01 :ARG0 (c / cat))"), None, ("PN", "RS"))
    {'PN': True, 'RS': False}
    """
    out = {}
    for etype in types:
        if etype in ("AR", "HS") and lexicon is None:
            raise ValueError("AR and HS statistics need a lexicon")
        out[etype] = apply_edit(g, etype, np.random.default_rng(0), lexicon) is not None
    return out
