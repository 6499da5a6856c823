"""The byte-pair split the general word-vector table needs: merges in the order learnt, and the
shipped table splitting words as WordLlama's own tokenizer does."""

from __future__ import annotations

from agent.search.bpe import WORD_START, bpe_pieces
from agent.search.word_vectors import general_vectors

VOCABULARY = {WORD_START, "l", "o", "w", "▁l", "ow", "▁low", "lo"}


def test_the_pair_learnt_first_merges_first():
    first_word_start = {("▁", "l"): 0, ("o", "w"): 1, ("▁l", "ow"): 2, ("l", "o"): 3}
    assert bpe_pieces("low", VOCABULARY, first_word_start) == ["▁low"]
    first_lo = {("l", "o"): 0, ("▁", "l"): 1, ("o", "w"): 2, ("▁l", "ow"): 3}
    assert bpe_pieces("low", VOCABULARY, first_lo) == ["▁", "lo", "w"]


def test_a_word_with_a_character_the_vocabulary_lacks_has_no_split():
    assert bpe_pieces("löw", VOCABULARY, {("o", "w"): 0}) == []
    assert bpe_pieces("", VOCABULARY, {}) == []


def test_the_shipped_table_splits_words_as_wordllamas_tokenizer():
    # Splits as tokenizers' Tokenizer gives them for WordLlama's tokenizer file (the build
    # checks every word of this repository's docs and bench data the same way).
    table = general_vectors()
    assert table is not None
    assert table.pieces("waves") == ["▁waves"]
    assert table.pieces("Liabilities") == ["▁Li", "abilities"]
    assert table.pieces("GlaxoSmithKline") == ["▁Gla", "x", "o", "Smith", "K", "line"]
    assert table.knows("beach") and not table.knows("xyzzy")
