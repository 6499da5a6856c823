"""Byte-pair-encoding split of one word, as SentencePiece BPE tokenizers (Llama's) split it:
the word gets a leading word-start mark and its characters are merged pair by pair, the pair
learnt first merging first. Only what the word-vector tables need: no byte fallback (a word with
a character the vocabulary lacks has no split) and no special tokens."""

from __future__ import annotations

from collections.abc import Container, Mapping

WORD_START = "\u2581"  # SentencePiece's "▁", which stands for the space before a word


def bpe_pieces(
    word: str, vocabulary: Container[str], ranks: Mapping[tuple[str, str], int]
) -> list[str]:
    """The pieces of `word` (without its word-start mark) under `ranks` (merge pair → order
    learnt); empty when one of its characters is not in `vocabulary`."""
    symbols = [WORD_START, *word]
    if not word or any(symbol not in vocabulary for symbol in symbols):
        return []
    while len(symbols) > 1:
        best_rank = best = -1
        for position in range(len(symbols) - 1):
            rank = ranks.get((symbols[position], symbols[position + 1]))
            if rank is not None and (best < 0 or rank < best_rank):
                best_rank, best = rank, position
        if best < 0:
            break
        symbols[best : best + 2] = [symbols[best] + symbols[best + 1]]
    return symbols
