"""The configuration grid: aligner x tokenizer x vocabulary sweep, and its labels."""

from __future__ import annotations

from typing import Any


def configurations(args: Any) -> list[dict]:
    """Return the (method, tokenizer, vocab, group) configurations, deduplicated, in run order."""
    out: list[dict] = []
    seen = set()

    def add(method: Any, tok: Any, vocab: Any, group: Any) -> Any:
        vocab = None if tok == "word" else vocab
        key = (method, tok, vocab)
        if key in seen:
            for c in out:
                if (c["method"], c["tokenizer"], c["vocab"]) == key:
                    c["groups"].append(group)
            return
        seen.add(key)
        out.append({"method": method, "tokenizer": tok, "vocab": vocab, "groups": [group]})

    for m in args.methods:
        add(m, "word", None, "aligner")
    for tok in args.tokenizers:
        add(args.tokenizer_method, tok, args.vocab_size, "tokenizer")
    for v in args.sweep:
        add(args.tokenizer_method, args.sweep_tokenizer, v, "sweep")
    if args.sweep:
        add(args.tokenizer_method, args.sweep_tokenizer, args.vocab_size, "sweep")
    return out


def config_label(c: dict) -> str:
    """Short label of a configuration.

    >>> config_label({"method": "eflomal", "tokenizer": "bpe", "vocab": 8000})
    'eflomal/bpe-8000'
    """
    return f"{c['method']}/{c['tokenizer']}" + (f"-{c['vocab']}" if c["vocab"] else "")
