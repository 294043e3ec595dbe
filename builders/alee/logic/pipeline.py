"""The alee build pipeline over injected stages: parse -> edit -> generate -> NLI -> pair.

Pure orchestration: the stages (sentence splitter, AMR parser and generator,
NLI model) arrive as plain callables, so every path is testable with scripted
stages and nothing here touches a model or a file. English is processed once;
the kept foils are paired with every target language afterwards.

Counts follow the alee paper's Table 2: per perturbation, how many sources
were tried, parsed, admitted the edit, were generated and survived NLI.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import penman

from builders.alee.logic.edits import apply_edit, edit_of
from builders.alee.logic.nli_filter import LABELS, NliDecision, decide
from builders.alee.logic.paragraphs import edit_paragraph
from evaluators.core.errors import EngineUnavailableError
from evaluators.schema import alee as S
from evaluators.schema.langs import pair_config

#: Table 2 stages, in order.
STAGES = ("sources", "parsed", "edited", "generated", "nli_kept")
Probs = dict[str, float]
NAN_PROBS: Probs = {label: math.nan for label in LABELS}


@dataclass
class Candidate:
    """One English foil on its way through the pipeline."""

    id: str
    en_orig: str
    perturbation: str
    level: str = "sentence"
    en_foil: str | None = None
    amr_orig: str = ""
    amr_foil: str = ""
    edit: str = ""
    nli_orig_foil: Probs = field(default_factory=lambda: dict(NAN_PROBS))
    nli_foil_orig: Probs = field(default_factory=lambda: dict(NAN_PROBS))
    nli_reason: str = "nli-skipped"
    #: The corpus' domain of the source, ``None`` where the input states none.
    domain: str | None = None


@dataclass
class Stages:
    """The replaceable stages.

    Attributes:
        split: text -> sentences.
        parse: sentences -> PENMAN strings (``None`` where parsing failed) with reasons.
        generate: PENMAN strings -> (sentence or ``None``, clipped, reason).
        nli: model calls ``[(premises, hypotheses), ...]`` -> each call's label
            probabilities, or ``None`` to skip NLI. A step hands every call it needs
            at once (one engine job); each call is cut into the same chunks alone.
        lexicon: WordNet relations for AR/HS (``None`` disables them).
        decide: (orig->foil, foil->orig) probabilities -> decision.
    """

    split: Callable[[str], list[str]]
    parse: Callable[[list[str]], list[tuple[str | None, str]]] | None = None
    generate: Callable[[list[str]], list[tuple[str | None, bool, str]]] | None = None
    nli: Callable[[Sequence[tuple[list[str], list[str]]]], list[list[Probs]]] | None = None
    lexicon: Any = None
    decide: Callable[[Probs, Probs], NliDecision] = decide


class Counts:
    """Per-perturbation stage counts and drop reasons (Table 2)."""

    def __init__(self, types: Sequence[str]):
        self.types = list(types)
        self.stage: dict[str, Counter] = {t: Counter() for t in types}
        self.dropped: dict[str, Counter] = {t: Counter() for t in types}
        #: Stages that ran elsewhere (foils made outside): reported as ``None``, not 0.
        self.external: tuple[str, ...] = ()

    def add(self, etype: str, stage: str, n: int = 1) -> None:
        """Count ``n`` items of ``etype`` reaching ``stage``."""
        self.stage[etype][stage] += n

    def drop(self, etype: str, reason: str) -> None:
        """Count one item of ``etype`` dropped for ``reason``."""
        self.dropped[etype][reason] += 1

    def to_dict(self) -> dict[str, Any]:
        """Return ``{type: {stage: n, ..., "dropped": {reason: n}}}`` for the manifest."""
        return {
            t: {
                **{s: None if s in self.external else self.stage[t].get(s, 0) for s in STAGES},
                "dropped": dict(sorted(self.dropped[t].items())),
            }
            for t in self.types
        }


def rng_for(seed: int, text: str, etype: str) -> np.random.Generator:
    """Return a generator that depends only on (seed, sentence, perturbation), not on order.

    >>> int(rng_for(13, "A cat sleeps.", "PN").integers(1000)) == int(rng_for(13, "A cat sleeps.", "PN").integers(1000))
    True
    """
    digest = int(hashlib.sha256(f"{etype}\0{text}".encode()).hexdigest()[:16], 16)
    return np.random.default_rng([seed, digest])


def _plain(graph: penman.Graph) -> str:
    """Encode a graph without metadata comments (what the generator reads and the dataset stores)."""
    bare = penman.Graph(graph.triples, top=graph.top, epidata=graph.epidata)
    return penman.encode(bare)


@dataclass
class SentenceFoil:
    """A generated foil of one sentence for one perturbation."""

    foil: str
    amr_orig: str
    amr_foil: str
    edit: str


def sentence_foils(
    sentences: Sequence[str], types: Sequence[str], stages: Stages, seed: int
) -> tuple[dict[tuple[str, str], SentenceFoil], dict[tuple[str, str], str], dict[str, str]]:
    """Parse, edit and generate each unique sentence once per perturbation (batched).

    Returns:
        ``(foils, failures, parse_failures)``: ``(sentence, type) -> SentenceFoil``,
        ``(sentence, type) -> failure stage:reason`` and ``sentence -> parse failure reason``.
    """
    if stages.parse is None or stages.generate is None:
        raise EngineUnavailableError(
            "AMR foils need a parse and a generate stage; none was configured (pass --foils to skip AMR)."
        )
    unique = list(dict.fromkeys(sentences))
    parsed = stages.parse(unique) if unique else []
    graphs: dict[str, penman.Graph] = {}
    parse_fail: dict[str, str] = {}
    for sent, (text, reason) in zip(unique, parsed):
        if text is None:
            parse_fail[sent] = reason
            continue
        try:
            graphs[sent] = penman.decode(text)
        except Exception:  # noqa: BLE001 - any malformed PENMAN is one recorded failure
            parse_fail[sent] = "deserialisation-error"
    failures: dict[tuple[str, str], str] = {}
    requests: list[tuple[str, str, penman.Graph]] = []
    for sent in unique:
        if sent not in graphs:
            for t in types:
                failures[(sent, t)] = f"parse:{parse_fail[sent]}"
            continue
        for t in types:
            if t in ("AR", "HS") and stages.lexicon is None:
                failures[(sent, t)] = "edit:no-lexicon"
                continue
            edited = apply_edit(graphs[sent], t, rng_for(seed, sent, t), stages.lexicon)
            if edited is None:
                failures[(sent, t)] = "edit:not-applicable"
                continue
            requests.append((sent, t, edited))
    generated = stages.generate([_plain(g) for _, _, g in requests]) if requests else []
    foils: dict[tuple[str, str], SentenceFoil] = {}
    for (sent, t, edited), (text, clipped, reason) in zip(requests, generated):
        if text is None:
            failures[(sent, t)] = f"generate:{reason}"
        elif clipped:
            failures[(sent, t)] = "generate:clipped"
        elif text.strip() == sent.strip():
            failures[(sent, t)] = "generate:unchanged"
        else:
            edit = edit_of(edited)
            foils[(sent, t)] = SentenceFoil(
                text.strip(), _plain(graphs[sent]), _plain(edited), edit.describe() if edit else ""
            )
    return foils, failures, parse_fail


def run_nli(
    stages: Stages, origs: Sequence[str], foils: Sequence[str]
) -> list[tuple[Probs, Probs, NliDecision | None]]:
    """Run NLI both ways (batched) and decide; without an NLI stage every foil passes undecided."""
    if stages.nli is None:
        return [(dict(NAN_PROBS), dict(NAN_PROBS), None) for _ in origs]
    if not origs:
        return []
    fwd, bwd = stages.nli([(list(origs), list(foils)), (list(foils), list(origs))])
    return [(a, b, stages.decide(a, b)) for a, b in zip(fwd, bwd)]


def check_each(
    stages: Stages, pairs: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], tuple[Probs, Probs, NliDecision | None]]:
    """Run NLI both ways on each ``(orig, foil)`` pair, one model call per pair and direction, in one step.

    A paragraph check was always one call of one pair (no padding with other pairs).
    """
    if stages.nli is None:
        return {p: (dict(NAN_PROBS), dict(NAN_PROBS), None) for p in pairs}
    if not pairs:
        return {}
    calls = [([o], [f]) for o, f in pairs] + [([f], [o]) for o, f in pairs]
    results = stages.nli(calls)
    n = len(pairs)
    return {
        p: (fwd[0], bwd[0], stages.decide(fwd[0], bwd[0]))
        for p, fwd, bwd in zip(pairs, results[:n], results[n:])
    }


def paragraph_checks(
    sources: Sequence[tuple[str, str]],
    split: Mapping[str, list[str]],
    types: Sequence[str],
    foils: Mapping[tuple[str, str], SentenceFoil],
    sent_nli: Mapping[tuple[str, str], tuple[Probs, Probs, NliDecision | None]],
) -> list[tuple[str, str]]:
    """Plan every paragraph check the merge may ask for: ``(paragraph, paragraph with one sentence edited)``.

    One per sentence of a multi-sentence source whose foil passed its sentence check, in
    source, type and sentence order (distinct): a superset of what
    :func:`~builders.alee.logic.paragraphs.edit_paragraph` reads, which stops at the first
    kept sentence, so that the checks run as one step.

    >>> sf = SentenceFoil("B!", "", "", "")
    >>> paragraph_checks([("p", "A. B.")], {"p": ["A.", "B."]}, ["PN"], {("B.", "PN"): sf},
    ...                  {("B.", "PN"): ({}, {}, None)})
    [('A. B.', 'A. B!')]
    """
    pairs: dict[tuple[str, str], None] = {}
    for sid, _ in sources:
        sents = split[sid]
        if len(sents) < 2:
            continue
        for t in types:
            for i, sent in enumerate(sents):
                f = foils.get((sent, t))
                decision = sent_nli[(sent, t)][2] if f is not None else None
                if f is None or (decision is not None and not decision.keep):
                    continue
                foil = sents[:i] + [f.foil] + sents[i + 1 :]
                pairs.setdefault((" ".join(sents), " ".join(foil)))
    return list(pairs)


def generate_candidates(
    sources: Sequence[tuple[str, str]], types: Sequence[str], stages: Stages, seed: int
) -> tuple[list[Candidate], Counts]:
    """Run the full English pipeline on ``(source_id, text)`` items.

    A one-sentence item gives a sentence-level foil; a multi-sentence item a
    paragraph foil by :func:`~builders.alee.logic.paragraphs.edit_paragraph`
    (sentence i from 0, validated at sentence and paragraph level).

    Each model stage is asked once per step, with everything the step needs
    (:mod:`builders.alee.stages`): parse, generate, sentence NLI (both ways), then
    the planned paragraph checks (:func:`paragraph_checks`); the merge reads their answers.
    """
    counts = Counts(types)
    split = {sid: stages.split(text) or [text] for sid, text in sources}
    all_sentences = [s for sid, _ in sources for s in split[sid]]
    foils, failures, parse_fail = sentence_foils(all_sentences, types, stages, seed)
    keyed = sorted(foils)
    checked = run_nli(stages, [k[0] for k in keyed], [foils[k].foil for k in keyed])
    sent_nli = dict(zip(keyed, checked))
    para_nli = check_each(stages, paragraph_checks(sources, split, types, foils, sent_nli))
    out: list[Candidate] = []
    for sid, text in sources:
        sents = split[sid]
        for t in types:
            counts.add(t, "sources")
            if all(s in parse_fail for s in sents):
                counts.drop(t, f"parse:{parse_fail[sents[0]]}")
                continue
            counts.add(t, "parsed")
            if all(failures.get((s, t), "").startswith(("parse:", "edit:")) for s in sents):
                counts.drop(t, "edit:not-applicable")
                continue
            counts.add(t, "edited")
            if not any((s, t) in foils for s in sents):
                reasons = [
                    failures[(s, t)]
                    for s in sents
                    if failures.get((s, t), "").startswith("generate:")
                ]
                counts.drop(t, reasons[0] if reasons else "generate:failed")
                continue
            counts.add(t, "generated")
            cand = _one_candidate(sid, text, sents, t, foils, sent_nli, para_nli)
            if cand is None:
                counts.drop(t, "nli:rejected")
                continue
            counts.add(t, "nli_kept")
            out.append(cand)
    return out, counts


def _one_candidate(sid, text, sents, t, foils, sent_nli, para_nli) -> Candidate | None:
    def edit(i: int, sentence: str):
        f = foils.get((sentence, t))
        return None if f is None else (f.foil, f)

    def check_sentence(orig: str, foil: str) -> bool:
        _, _, decision = sent_nli[(orig, t)]
        return decision is None or decision.keep

    paragraph_nli: dict[str, tuple] = {}

    def check_paragraph(orig: list[str], foil: list[str]) -> bool:
        if len(orig) == 1:
            return True
        res = para_nli[(" ".join(orig), " ".join(foil))]
        paragraph_nli["last"] = res
        return res[2] is None or res[2].keep

    result = edit_paragraph(sents, edit, check_sentence, check_paragraph)
    if result.foil is None:
        return None
    sf = result.info
    if len(sents) == 1:
        fwd, bwd, decision = sent_nli[(sents[0], t)]
        level, foil_text = "sentence", sf.foil
    else:
        fwd, bwd, decision = paragraph_nli["last"]
        level, foil_text = "paragraph", " ".join(result.foil)
    return Candidate(
        id=f"{sid}-{t}",
        en_orig=text,
        perturbation=t,
        level=level,
        en_foil=foil_text,
        amr_orig=sf.amr_orig,
        amr_foil=sf.amr_foil,
        edit=f"sentence {result.index}: {sf.edit}" if len(sents) > 1 else sf.edit,
        nli_orig_foil=fwd,
        nli_foil_orig=bwd,
        nli_reason=decision.reason if decision else "nli-skipped",
    )


def filter_given_foils(
    items: Sequence[tuple[str, str, str, str]], stages: Stages, types: Sequence[str]
) -> tuple[list[Candidate], Counts]:
    """NLI-filter foils made elsewhere: ``(id, en_orig, en_foil, type)``; level from the sentence count.

    Parse/edit/generate did not run here, so only ``sources`` and ``nli_kept`` are counted.
    """
    counts = Counts(types)
    counts.external = ("parsed", "edited", "generated")
    cands = []
    for iid, orig, foil, t in items:
        counts.add(t, "sources")
        level = "paragraph" if len(stages.split(orig)) > 1 else "sentence"
        cands.append(
            Candidate(
                id=f"{iid}-{t}",
                en_orig=orig,
                perturbation=t,
                level=level,
                en_foil=foil,
                edit="external foil",
            )
        )
    checked = run_nli(stages, [c.en_orig for c in cands], [foil for _, _, foil, _ in items])
    kept = []
    for c, (fwd, bwd, decision) in zip(cands, checked):
        c.nli_orig_foil, c.nli_foil_orig = fwd, bwd
        c.nli_reason = decision.reason if decision else "nli-skipped"
        if decision is not None and not decision.keep:
            counts.drop(c.perturbation, f"nli:{decision.reason}")
            continue
        counts.add(c.perturbation, "nli_kept")
        kept.append(c)
    return kept, counts


def _row(c: Candidate, lang: str, target: str, with_domain: bool) -> dict[str, Any]:
    row: dict[str, Any] = {
        S.ID: c.id,
        S.LANG: lang,
        S.EN_ORIG: c.en_orig,
        S.EN_FOIL: c.en_foil or "",
        S.TARGET_ORIG: target,
        S.PERTURBATION: c.perturbation,
        S.LEVEL: c.level,
        S.NLI_ORIG_FOIL: dict(c.nli_orig_foil),
        S.NLI_FOIL_ORIG: dict(c.nli_foil_orig),
        S.AMR_ORIG: c.amr_orig,
        S.AMR_FOIL: c.amr_foil,
        S.EDIT: c.edit,
    }
    # Only a build whose corpus states domains gets the column: other datasets keep their bytes.
    if with_domain:
        row[S.DOMAIN] = c.domain
    return row


def pair(
    candidates: Sequence[Candidate],
    targets: Mapping[str, Mapping[str, str]],
    english: str = "eng_Latn",
) -> tuple[dict[str, dict[str, list[dict]]], dict[str, dict[str, int]]]:
    """Pair kept English foils with each target language's translation of the original.

    Args:
        candidates: kept foils.
        targets: ``lang -> {English original: target sentence}``.
        english: the code of the English-only config.

    Returns:
        ``(tables, counts)``: ``config -> {"test": rows}`` (one config per
        language ``eng_Latn-<lang>`` plus the English-only ``eng_Latn``) and
        ``lang -> {"paired": n, "no_translation": n}``.

    >>> c = Candidate("0-PN", "It rains.", "PN", en_foil="It does not rain.")
    >>> tables, counts = pair([c], {"deu_Latn": {"It rains.": "Es regnet."}, "fra_Latn": {}})
    >>> sorted(tables), counts
    (['eng_Latn', 'eng_Latn-deu_Latn'], {'deu_Latn': {'paired': 1, 'no_translation': 0}, 'fra_Latn': {'paired': 0, 'no_translation': 1}})
    >>> tables["eng_Latn-deu_Latn"]["test"][0]["target_orig"]
    'Es regnet.'
    """
    tables: dict[str, dict[str, list[dict]]] = {}
    with_domain = any(c.domain is not None for c in candidates)
    if candidates:
        tables[english] = {"test": [_row(c, english, "", with_domain) for c in candidates]}
    counts: dict[str, dict[str, int]] = {}
    for lang, mapping in targets.items():
        rows, missing = [], 0
        for c in candidates:
            tgt = mapping.get(c.en_orig)
            if tgt is None:
                missing += 1
                continue
            rows.append(_row(c, lang, tgt, with_domain))
        counts[lang] = {"paired": len(rows), "no_translation": missing}
        if rows:
            tables[S.SCHEMA.config_name(pair_config(english, lang))] = {"test": rows}
    return tables, counts


def table2(counts: Counts, paired: Mapping[str, Mapping[str, int]]) -> dict[str, Any]:
    """Return the manifest's counts: per-type stages (Table 2) and per-language pairing."""
    per_type = counts.to_dict()
    total = {
        s: None if s in counts.external else sum(per_type[t][s] for t in counts.types)
        for s in STAGES
    }
    return {
        "per_type": per_type,
        "total": total,
        "pairing": {k: dict(v) for k, v in paired.items()},
    }
