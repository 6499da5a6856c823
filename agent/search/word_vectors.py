"""Static word vectors for tool search: a request and a tool description compared by meaning,
with no model at run time.

`wordvectors.bin` holds an int8 vector per WordPiece token, distilled from the sentence model
all-MiniLM-L6-v2 (Apache-2.0) by bench/build_word_vectors.py; `generalvectors.bin` one per
SentencePiece-BPE token of WordLlama (MIT), a static model trained on general English
(bench/build_general_vectors.py). A text's vector is the IDF-weighted
sum of its tokens' vectors (IDF from the catalog, so words every tool shares count little).
The similarity of one request with a whole catalog is exact integer arithmetic on Python ints
used as wide registers: each of the vector's dimensions is one int holding that coordinate of
every tool in a 16-bit field, so a query costs `dims` big-int multiply-adds, not one Python
operation per tool and dimension. Deterministic: the same request gives the same similarities.
"""

from __future__ import annotations

import json
import math
import operator
import sys
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import compress, repeat
from pathlib import Path

from agent.search.bpe import WORD_START, bpe_pieces
from agent.search.text import STOP_WORDS

MAGIC = b"tabletalk-word-vectors 1"
VECTORS_FILE = Path(__file__).with_name("wordvectors.bin")
GENERAL_FILE = Path(__file__).with_name("generalvectors.bin")
MAX_TEXT_TOKENS = 256  # tokens of one text that count; the rest are ignored
PIECE_CACHE_SIZE = 8192  # words whose split is remembered per catalog
MAX_WORD_CHARS = 40  # longer "words" (hashes, pasted blobs) have no vector
_OFFSET = 128  # int8 coordinates are packed as unsigned (value + 128)
_UNIT = 127  # unit vectors are rounded to integers in [-127, 127]
_CENTRE = 1 << 15  # a tool's dot product d with the query is held as d + _CENTRE in 16 bits
# A rounded unit vector is at most 127 + ½√dims long, so |d| < _CENTRE while dims stays under
# (2 × (√_CENTRE − 127))² ≈ 11,600: a table with more dimensions is refused.
MAX_DIMS = 11_000
# The high byte of a signed byte c widened to the 16-bit field c + _CENTRE.
_HIGH_BYTE = bytes(0x80 if byte < 0x80 else 0x7F for byte in range(256))
_WEIGHT_SCALE = 16  # IDF weights are rounded to sixteenths


def _to_int(values: Iterable[int], code: str = "I") -> int:
    """Unsigned values packed into one int in fields of the array type `code` ("I": 32 bits,
    "H": 16), first value lowest."""
    packed = array(code, list(values))
    if sys.byteorder == "big":
        packed.byteswap()
    return int.from_bytes(packed.tobytes(), "little")


def _from_int(value: int, count: int, code: str = "I") -> array[int]:
    """The `count` fields of `value` (array type `code`, as in `_to_int`), lowest first."""
    fields = array(code)
    fields.frombytes(value.to_bytes(count * fields.itemsize, "little"))
    if sys.byteorder == "big":
        fields.byteswap()
    return fields


@dataclass(frozen=True)
class WordVectorTable:
    """Tokens → rows of `dims` signed bytes, stored offset by +128. Words split into WordPiece
    tokens, or by byte-pair merges when the table has `ranks` (merge pair → order learnt)."""

    dims: int
    index: dict[str, int]
    rows: bytes
    ranks: Mapping[tuple[str, str], int] | None = None

    def packed(self, token: str) -> int | None:
        """The token's row packed as one int (see module docstring), or None if unknown."""
        row = self.index.get(token)
        if row is None:
            return None
        return _to_int(list(self.rows[row * self.dims : (row + 1) * self.dims]))

    @property
    def mean_pooled(self) -> bool:
        """Whether texts are read as the model reads them: cased, every token counting once
        (a byte-pair table of a static model), rather than lower-case content words weighted
        by IDF (a table distilled from a contextual model)."""
        return self.ranks is not None

    def knows(self, word: str) -> bool:
        """Whether the table has `word` as one token (a real word, not a made-up one)."""
        return (WORD_START + word if self.ranks is not None else word) in self.index

    def pieces(self, word: str) -> list[str]:
        """The tokens of a word; empty when some part is not in the table (the model would
        read it as unknown). WordPiece: longest known prefix first, then `##` pieces."""
        if len(word) > MAX_WORD_CHARS:
            return []
        if self.ranks is not None:
            return bpe_pieces(word, self.index, self.ranks)
        found: list[str] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.index:
                    found.append(piece)
                    break
                end -= 1
            else:
                return []
            start = end
        return found


def load_table(path: Path) -> WordVectorTable | None:
    """The table in `path`, or None when it is missing or not a table of this format."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    magic, _, rest = raw.partition(b"\n")
    header_line, _, rows = rest.partition(b"\n")
    if magic != MAGIC:
        return None
    try:
        header = json.loads(header_line)
        dims = int(header["dims"])
        tokens = [str(token) for token in header["tokens"]]
        ranks = None
        if header.get("split") == "bpe":
            same = {token: token for token in tokens}  # one str object per token: ~6 MB less
            pairs = (str(merge).split(" ") for merge in header["merges"])
            ranks = {
                (same.get(left, left), same.get(right, right)): rank
                for rank, (left, right) in enumerate(pairs)
            }
    except (ValueError, KeyError, TypeError):
        return None
    if not 0 < dims <= MAX_DIMS or len(rows) != dims * len(tokens):
        return None
    offset = bytes((byte + _OFFSET) & 0xFF for byte in range(256))
    return WordVectorTable(
        dims, {token: i for i, token in enumerate(tokens)}, rows.translate(offset), ranks
    )


@cache
def word_vectors() -> WordVectorTable | None:
    """The shipped table, read once per process (None if the file is missing or unreadable)."""
    return load_table(VECTORS_FILE)


@cache
def general_vectors() -> WordVectorTable | None:
    """The shipped general-English table (WordLlama), read once per process, or None."""
    return load_table(GENERAL_FILE)


class CatalogVectors:
    """The vectors of a fixed list of texts (a catalog's tools), and the cosine similarity of a
    query with each of them.

    Column j is the int sum_i c_ij * 2**(16 i) of coordinate j of every tool's unit vector
    (scaled to 127; negative coordinates borrow from the next field, which is exact integer
    arithmetic), so _CENTRE in each field plus sum_j q_j * column_j holds d_i + _CENTRE in
    field i, d_i being tool i's dot product with the query: each in [0, 2**16), so the
    fields read back unsigned with no carry between them, whatever the intermediate sums.
    """

    def __init__(
        self, texts: Sequence[Sequence[str]], table: WordVectorTable, unseen: float = 1.0
    ) -> None:
        """`texts`: each tool's lower-case words (name words and description). `unseen`: the
        weight of a request token no text uses, as a share of the rarest token's IDF (a word
        outside every description is more often incidental than telling)."""
        self.table = table
        self.count = len(texts)
        self._piece_cache: dict[str, list[str]] = {}
        self._catalog_words = frozenset(word for words in texts for word in words)
        pieces = [self._pieces(words) for words in texts]
        document_frequency: dict[str, int] = {}
        for tokens in pieces:
            for token in set(tokens):
                document_frequency[token] = document_frequency.get(token, 0) + 1
        self._weights = {
            token: 1 if table.mean_pooled else self._weight(frequency)
            for token, frequency in document_frequency.items()
        }
        self._unseen_weight = 1 if table.mean_pooled else max(1, round(unseen * self._weight(0)))
        packed: dict[str, int | None] = {}
        vectors = [self._unit(self._sum(tokens, packed)) for tokens in pieces]
        dims = table.dims
        self._has_vector = [vector is not None for vector in vectors]
        self._with_vector = sum(self._has_vector)
        matrix = array("b")  # every coordinate is in [-127, 127]: one signed byte each
        zero = [0] * dims
        for vector in vectors:
            matrix.extend(vector or zero)
        rows = matrix.tobytes()
        self._centres = _to_int([_CENTRE] * self.count, "H")
        field = bytearray(2 * self.count)  # little-endian 16-bit fields of c + _CENTRE
        self._columns = []
        for j in range(dims):
            low = rows[j::dims]
            field[0::2] = low
            field[1::2] = low.translate(_HIGH_BYTE)
            self._columns.append(int.from_bytes(field, "little") - self._centres)

    def _pieces(self, words: Sequence[str]) -> list[str]:
        """The table tokens of a text's content words (at most MAX_TEXT_TOKENS)."""
        tokens: list[str] = []
        cache = self._piece_cache
        for word in words:
            pieces = cache.get(word)
            if pieces is None:
                if len(cache) >= PIECE_CACHE_SIZE:
                    cache.clear()
                skip = not self.table.mean_pooled and (
                    word in STOP_WORDS or len(word) < 2 or not any(c.isalpha() for c in word)
                )
                pieces = cache[word] = [] if skip else self.table.pieces(word)
            tokens.extend(pieces)
            if len(tokens) >= MAX_TEXT_TOKENS:
                return tokens[:MAX_TEXT_TOKENS]
        return tokens

    def _weight(self, frequency: int) -> int:
        idf = math.log(1.0 + (self.count - frequency + 0.5) / (frequency + 0.5))
        return max(1, round(idf * _WEIGHT_SCALE))

    def _sum(self, tokens: Sequence[str], packed: dict[str, int | None]) -> list[int] | None:
        """IDF-weighted sum of the tokens' vectors (integer coordinates), None if none has one."""
        total = weights = 0
        for token in tokens:
            if token in packed:
                vector = packed[token]
            else:
                vector = packed[token] = self.table.packed(token)
            if vector is None:
                continue
            weight = self._weights.get(token, self._unseen_weight)
            total += weight * vector
            weights += weight
        if not weights:
            return None
        return [value - _OFFSET * weights for value in _from_int(total, self.table.dims)]

    @staticmethod
    def _unit(vector: list[int] | None) -> list[int] | None:
        """The vector scaled to length 127 and rounded (None for no or a zero vector)."""
        if vector is None:
            return None
        norm = math.sqrt(sum(value * value for value in vector))
        if norm == 0:
            return None
        return [round(_UNIT * value / norm) for value in vector]

    def _dot_fields(self, words: Sequence[str]) -> tuple[int, int] | None:
        """(packed fields, base): field i minus base is tool i's dot product with the query
        (units of 127²); None when no query word has a vector or the catalog is empty."""
        # A request word counts only if the catalog uses it or the table knows it whole: the
        # pieces of a made-up word ('xyzzy' → x ##y ##zz ##y) carry no meaning of their own.
        known = [
            word
            for word in words
            if self.table.mean_pooled or word in self._catalog_words or self.table.knows(word)
        ]
        query = self._unit(self._sum(self._pieces(known), {}))
        if query is None or not self.count:
            return None
        total = self._centres
        for coordinate, column in zip(query, self._columns, strict=True):
            if coordinate:
                total += coordinate * column
        return total, _CENTRE

    def similarities(self, words: Sequence[str]) -> list[float] | None:
        """Cosine similarity (about ±0.01) of the query's words with each text, in catalog
        order (0 for a text without vector); None when no query word has a vector."""
        found = self._dot_fields(words)
        if found is None:
            return None
        total, base = found
        scale = float(_UNIT * _UNIT)
        return [
            (field - base) / scale if has else 0.0
            for field, has in zip(_from_int(total, self.count, "H"), self._has_vector, strict=True)
        ]

    def standout(
        self, words: Sequence[str], floor: float, min_cosine: float = -1.0
    ) -> list[tuple[int, float]]:
        """(catalog index, z) of the texts whose cosine with the query is more than `floor`
        standard deviations above the catalog's mean cosine (z being how many) and over
        `min_cosine`, in catalog order. Measured against the catalog rather than on one
        absolute scale, so a request whose words are all a little far from every tool still
        finds the nearest ones, and a long request near many tools lifts only those that stand
        out; `min_cosine` keeps a request near nothing (gibberish) from lifting anything.
        Mean and spread are taken over the texts that have a vector (at least two)."""
        return [(index, z) for index, z, _ in self.standing(words, floor, min_cosine)]

    def standing(
        self, words: Sequence[str], floor: float, min_cosine: float = -1.0
    ) -> list[tuple[int, float, float]]:
        """(catalog index, z, cosine) of the texts `standout` names (see there)."""
        found = self._dot_fields(words)
        if found is None or self._with_vector < 2:
            return []
        total, base = found
        fields = _from_int(total, self.count, "H")
        # Texts without a vector have a dot product of exactly 0, so they add nothing here.
        dots = sum(fields) - base * self.count
        squares = sum(map(operator.mul, fields, fields)) - (2 * dots + base * self.count) * base
        mean = dots / self._with_vector
        variance = squares / self._with_vector - mean * mean
        if variance <= 0:
            return []
        spread = math.sqrt(variance)
        cut = max(math.floor(mean + floor * spread), math.floor(min_cosine * _UNIT * _UNIT))
        hits = self._over(fields, base, cut)
        unit = float(_UNIT * _UNIT)
        return [(index, (dot - mean) / spread, dot / unit) for index, dot in hits]

    def _over(self, fields: array[int], base: int, cut: int) -> list[tuple[int, int]]:
        """(catalog index, dot product) of the texts with a vector whose dot product with the
        query (units of 127²) is over `cut`; `fields` hold each dot product plus `base`."""
        over = compress(range(self.count), map(operator.gt, fields, repeat(cut + base)))
        has_vector = self._has_vector
        return [(index, fields[index] - base) for index in over if has_vector[index]]
