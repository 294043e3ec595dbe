"""Subword segmentation for aligner experiments (SilverAlign, Köksal et al. 2022, section 5).

One tokenizer is trained with HF ``tokenizers`` on the source and target
sides together (a *shared* vocabulary of the given size), words are split into
subwords (never across word boundaries), the aligner runs on subwords and the
result is mapped back: a word pair is linked when any of their subwords are.

Kinds: ``word`` (no segmentation), ``bpe``, ``wordpiece``, ``unigram``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from evaluators.core.errors import UsageError

Link = tuple[int, int]
KINDS = ("word", "bpe", "wordpiece", "unigram")


def map_links_to_words(
    links: Iterable[Link], src_word_ids: Sequence[int], tgt_word_ids: Sequence[int]
) -> set[Link]:
    """Map subword links back to word links (linked if any of their pieces are).

    Args:
        links: ``(src_piece, tgt_piece)`` pairs.
        src_word_ids: for each source piece, the index of its word.
        tgt_word_ids: for each target piece, the index of its word.

    >>> sorted(map_links_to_words({(0, 0), (1, 0), (2, 2)}, [0, 0, 1], [0, 1, 1]))
    [(0, 0), (1, 1)]
    """
    return {(src_word_ids[i], tgt_word_ids[j]) for i, j in links}


class Segmenter:
    """A trained shared subword tokenizer over pre-split words.

    Build with :func:`train_segmenter`; :meth:`segment` returns the pieces of a
    word sequence and, for each piece, its word index.
    """

    def __init__(self, kind: str, tokenizer=None, vocab_size: int | None = None):
        self.kind = kind
        self.tokenizer = tokenizer
        self.vocab_size = vocab_size

    def segment(self, words: Sequence[str]) -> tuple[list[str], list[int]]:
        """Return ``(pieces, word_ids)`` for one sentence of words."""
        if self.tokenizer is None or not words:
            return list(words), list(range(len(words)))
        enc = self.tokenizer.encode(list(words), is_pretokenized=True, add_special_tokens=False)
        pieces, ids = [], []
        for tok, wid in zip(enc.tokens, enc.word_ids):
            if wid is None:
                continue
            pieces.append(tok)
            ids.append(wid)
        # A word the model cannot cover (unknown characters) must still exist as a piece.
        covered = set(ids)
        for w in range(len(words)):
            if w not in covered:
                pieces.append(words[w])
                ids.append(w)
        return pieces, ids


def train_segmenter(kind: str, sentences: Iterable[Sequence[str]], vocab_size: int) -> Segmenter:
    """Train a shared subword model of ``kind`` on pre-split sentences.

    Raises:
        UsageError: unknown kind or a vocabulary size below 2.
    """
    if kind not in KINDS:
        raise UsageError(f"Unknown tokenizer kind {kind!r}; choose one of {', '.join(KINDS)}.")
    if kind == "word":
        return Segmenter("word")
    if vocab_size < 2:
        raise UsageError(f"Vocabulary size must be at least 2 for {kind}; got {vocab_size}.")
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    corpus = [" ".join(s) for s in sentences]
    trainer: trainers.Trainer
    if kind == "bpe":
        tok = Tokenizer(models.BPE(unk_token="[UNK]"))
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size, special_tokens=["[UNK]"], show_progress=False
        )
    elif kind == "wordpiece":
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        # tokenizers gives its "##x" pieces ids in hash-map order, and merges of equal count are
        # ranked by id, so the vocabulary changed from run to run (huggingface/tokenizers#1794).
        # Declared up front in sorted order, those pieces get fixed ids, and training is repeatable.
        trainer = trainers.WordPieceTrainer(
            vocab_size=vocab_size,
            special_tokens=["[UNK]", *continuing_pieces(corpus)],
            show_progress=False,
        )
    else:
        tok = Tokenizer(models.Unigram())
        trainer = trainers.UnigramTrainer(
            vocab_size=vocab_size, special_tokens=["[UNK]"], unk_token="[UNK]", show_progress=False
        )
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.train_from_iterator(corpus, trainer=trainer)
    if kind == "wordpiece":
        # The declared pieces are "added tokens" of the trained tokenizer, which encoding would
        # match in raw text: keep only the WordPiece model over the same vocabulary.
        tok = Tokenizer(models.WordPiece(tok.get_vocab(), unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return Segmenter(kind, tok, vocab_size)


def continuing_pieces(corpus: Iterable[str]) -> list[str]:
    """The ``##``-pieces WordPiece training creates: every character after a word's first, sorted.

    >>> continuing_pieces(["ab ba", "c"])
    ['##a', '##b']
    """
    return sorted({"##" + ch for line in corpus for word in line.split() for ch in word[1:]})
