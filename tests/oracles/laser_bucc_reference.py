"""LASER's BUCC text handling, transcribed: ``mine_bitexts.py --unify`` and ``tasks/bucc/bucc.py``.

Transcribed from facebookresearch/LASER@74bc6ae7 (BSD licence): ``TextLoadUnify``
(each distinct line mined once), and ``bucc.py``'s text -> id map (a text that
repeats on its side maps to no id, so its candidates are dropped), candidate
scores per id pair, ``BuccOptimize`` and ``BuccExtract``. Mining itself is
``mining_reference.reference_mine`` (LASER's mine mode). Shares no code with
:mod:`evaluators.metrics.mining`; ``test_laser_bucc.py`` also runs LASER's files.
"""

from __future__ import annotations


def text_load_unify(lines):
    """Return ``(inds, sents)``: each line's index into the distinct sentences, and those sentences."""
    inds, sents, sent2ind = [], [], {}
    for line in lines:
        new_ind = len(sent2ind)
        inds.append(sent2ind.setdefault(line, new_ind))
        if inds[-1] == new_ind:
            sents.append(line)
    return inds, sents


def sent2id(ids, sentences):
    """``bucc.py``: text -> id, with every repeated text removed."""
    out, repeated = {}, set()
    for id_, sent in zip(ids, sentences):
        if sent in out:
            repeated.add(sent)
        else:
            out[sent] = id_
    for sent in repeated:
        del out[sent]
    return out


def candidate_scores(candidates, src_sent2id, trg_sent2id):
    """``bucc.py``: ``(score, src_text, trg_text)`` candidates -> ``{(src_id, trg_id): score}``."""
    candidate2score = {}
    for score, src, trg in candidates:
        if src in src_sent2id and trg in trg_sent2id:
            key = (src_sent2id[src], trg_sent2id[trg])
            candidate2score[key] = max(score, candidate2score.get(key, score))
    return candidate2score


def bucc_optimize(candidate2score, gold):
    items = sorted(candidate2score.items(), key=lambda x: -x[1])
    ngold = len(gold)
    nextract = ncorrect = 0
    threshold = 0
    best_f1 = 0
    for i in range(len(items)):
        nextract += 1
        if items[i][0] in gold:
            ncorrect += 1
        if ncorrect > 0:
            precision = ncorrect / nextract
            recall = ncorrect / ngold
            f1 = 2 * precision * recall / (precision + recall)
            if f1 > best_f1:
                best_f1 = f1
                threshold = (items[i][1] + items[i + 1][1]) / 2
    return threshold


def bucc_extract(cand2score, th):
    return {pair for pair, score in cand2score.items() if score >= th}
