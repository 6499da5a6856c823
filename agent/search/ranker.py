"""Keyword ranking of a tool catalog: BM25F over name, keywords and description, with typo,
abbreviation, synonym and phrase handling; built once per catalog, well under a millisecond
per query on a thousand tools."""

from __future__ import annotations

import heapq
import json
import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from pathlib import Path

from rapidfuzz import process
from rapidfuzz.distance import OSA

from agent.search.lexicon import RELATED, SYNONYMS
from agent.search.text import (
    STOP_WORDS,
    content_terms,
    name_tokens,
    split_identifier,
    stem,
    words,
)
from agent.search.word_vectors import CatalogVectors, general_vectors, word_vectors


@dataclass(frozen=True)
class RankerParams:
    """The ranker's weights. The defaults were fitted on the dev splits of bench/data only
    (bench/tune_search.py); the holdout splits check them."""

    name_weight: float = 1.5  # BM25F field weights
    keyword_weight: float = 2.0
    description_weight: float = 1.33
    name_b: float = 0.3  # length normalisation per field
    keyword_b: float = 0.3
    description_b: float = 0.56
    k1: float = 1.2  # the shared saturation constant
    fuzzy: float = 0.7  # a typo-corrected term counts this much of an exact one
    prefix: float = 0.6  # an unknown word that starts a catalog word ('stat' → 'statistics')
    synonym: float = 0.6  # an abbreviation or synonym ('db' → 'database', 'film' → 'movie')
    related: float = 0.53  # a related word ('rain' → 'weather', 'sued' → 'lawsuit')
    phrase: float = 0.25  # two query terms adjacent in a field, per unit of their mean IDF
    name_coverage: float = 0.5  # all of a tool name's words asked for, per unit of mean IDF
    neighbour: float = 0.2  # a word near in meaning (neighbours.json), times its similarity
    vector: float = 3.0  # static word vectors (wordvectors.bin), per standard deviation over:
    vector_floor: float = 1.0  # standard deviations over the catalog's mean cosine to clear
    vector_min_cosine: float = 0.3  # the cosine under which vectors order but do not vouch
    vector_vouch: float = 2.0  # what vectors vouch for (the score's scale), per standard deviation
    vector_unseen: float = 0.5  # a request token no tool uses, as a share of the top IDF
    general: float = 6.0  # general-English vectors (generalvectors.bin): order only, per
    general_floor: float = 2.0  # standard deviation over this many over the catalog's mean


EXPANSION_CACHE_SIZE = 4096  # query words remembered per ranker
MAX_QUERY_WORDS = 64  # distinct content words of a query that are scored; the rest are ignored

# Short forms people type for words tools spell out; general, not tied to any one catalog.
ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "del": ("delete",), "rm": ("remove", "delete"), "db": ("database",),
    "tbl": ("table",), "col": ("column",), "cols": ("columns",), "qty": ("quantity",),
    "num": ("number",), "info": ("information", "details"), "stats": ("statistics",),
    "config": ("configuration", "settings"), "repo": ("repository",), "msg": ("message",),
    "img": ("image",), "pic": ("picture", "image"), "docs": ("documents", "documentation"),
    "auth": ("authentication", "login"), "dir": ("directory", "folder"), "env": ("environment",),
    "app": ("application",), "max": ("maximum",), "min": ("minimum",), "avg": ("average", "mean"),
    "addr": ("address",), "desc": ("description", "describe"), "pwd": ("password",),
    "dl": ("download",), "src": ("source",), "dest": ("destination",),
    "org": ("organization",), "prefs": ("preferences", "settings"), "id": ("identifier", "key"),
    "usa": ("united", "states"), "uk": ("united", "kingdom"), "nyc": ("new", "york"),
    "er": ("emergency", "hospital"), "ai": ("artificial", "intelligence"),
    "ml": ("machine", "learning"),
}  # fmt: skip


def _by_stem(table: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """The same table keyed by Porter stem, so 'shares' finds the entry for 'share' and back."""
    keyed: dict[str, list[str]] = {}
    for word, others in table.items():
        keyed.setdefault(stem(word), []).extend(others)
    return {key: tuple(dict.fromkeys(others)) for key, others in keyed.items()}


NEIGHBOURS_FILE = Path(__file__).with_name("neighbours.json")


@cache
def neighbours() -> dict[str, list[tuple[str, float]]]:
    """Stem → (stem of a word near in meaning, cosine similarity), from the static table that
    bench/build_neighbours.py distils from a sentence-embedding model; read once per process.
    A missing or unreadable table leaves the ranker without it."""
    try:
        table = json.loads(NEIGHBOURS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    # [stem, similarity] pairs stay JSON lists: converting ~70k of them doubles the load time.
    return table if isinstance(table, dict) else {}


_ABBREVIATIONS = _by_stem(ABBREVIATIONS)
_SYNONYMS = _by_stem(SYNONYMS)
_RELATED = _by_stem(RELATED)


@dataclass(frozen=True)
class SearchDoc:
    """One searchable tool: its name, its one-sentence description and extra search words."""

    name: str
    description: str
    keywords: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScoredDoc:
    """A ranked tool: its name, score (> 0, higher is better) and position in the catalog."""

    name: str
    score: float
    index: int


@dataclass(frozen=True)
class _Alternative:
    term: str
    weight: float


def _doc_tokens(doc: SearchDoc) -> tuple[list[str], list[str], list[str]]:
    """Lower-case words of a doc's name (with joined chunks), keywords and description."""
    keywords: list[str] = []
    for phrase in doc.keywords:
        keywords.extend(words(phrase))
    return name_tokens(doc.name), keywords, words(doc.description)


class KeywordRanker:
    """Scores a fixed catalog of tools against short requests; build once, call `rank` often.

    Scoring is BM25F (IDF from the catalog) over three weighted fields (name words split from
    camelCase/snake_case/`server__tool`, keywords, description), on Porter-stemmed words without
    stop words. On top: a query word the catalog does not know maps to same-initial catalog words
    one or two edits away (typos; not for a word the word-vector table knows whole), else to
    catalog words it starts; general abbreviations, synonyms and related words
    (lexicon.SYNONYM_LINES/RELATED_LINES) also match at a discount, each query word scoring
    through its best alternative only; two query words found next to each other in a tool earn a
    phrase bonus; a query holding every word of a tool's name earns a name bonus; static word
    vectors add a meaning score (see `scores` for how order and confidence are kept apart).
    Deterministic; equal scores keep catalog order.
    """

    def __init__(self, docs: Sequence[SearchDoc], params: RankerParams | None = None) -> None:
        self.params = params or RankerParams()
        self._tables = (
            (self.params.synonym, _ABBREVIATIONS),
            (self.params.synonym, _SYNONYMS),
            (self.params.related, _RELATED),
        )
        self.docs: tuple[SearchDoc, ...] = tuple(docs)
        tokens = [_doc_tokens(doc) for doc in self.docs]
        fields = [tuple(content_terms(part) for part in doc_tokens) for doc_tokens in tokens]
        self._postings: dict[str, list[tuple[int, float]]] = {}
        self._idf: dict[str, float] = {}
        self._bigrams: dict[tuple[str, str], list[tuple[int, float]]] = {}
        self._name_terms: list[frozenset[str]] = [
            frozenset(content_terms(split_identifier(doc.name))) for doc in self.docs
        ]
        self._build(fields)
        self._surface_to_terms = self._surface_forms(tokens)
        self._surfaces: list[str] = sorted(self._surface_to_terms)
        self._expansions: dict[str, tuple[_Alternative, ...]] = {}

    # --- index -------------------------------------------------------------------------

    def _build(self, fields: list[tuple[list[str], ...]]) -> None:
        count = len(fields) or 1
        average = [
            max(1.0, sum(len(doc_fields[i]) for doc_fields in fields) / count) for i in range(3)
        ]
        p = self.params
        weights = (p.name_weight, p.keyword_weight, p.description_weight)
        spreads = (p.name_b, p.keyword_b, p.description_b)
        k1 = p.k1
        pseudo_tf: dict[str, dict[int, float]] = {}
        bigram_weight: dict[tuple[str, str], dict[int, float]] = {}
        for index, doc_fields in enumerate(fields):
            for field_no, terms in enumerate(doc_fields):
                if not terms:
                    continue
                norm = 1.0 - spreads[field_no] + spreads[field_no] * len(terms) / average[field_no]
                for term in terms:
                    per_doc = pseudo_tf.setdefault(term, {})
                    per_doc[index] = per_doc.get(index, 0.0) + weights[field_no] / norm
                for pair in zip(terms, terms[1:], strict=False):
                    per_doc = bigram_weight.setdefault(pair, {})
                    per_doc[index] = max(per_doc.get(index, 0.0), weights[field_no])
        total = len(fields)
        for term, per_doc in pseudo_tf.items():
            df = len(per_doc)
            idf = math.log(1.0 + (total - df + 0.5) / (df + 0.5))
            self._idf[term] = idf
            self._postings[term] = [
                (index, idf * tf * (k1 + 1.0) / (tf + k1)) for index, tf in sorted(per_doc.items())
            ]
        for pair, per_doc in bigram_weight.items():
            self._bigrams[pair] = sorted(per_doc.items())

    def _surface_forms(
        self, tokens: list[tuple[list[str], list[str], list[str]]]
    ) -> dict[str, set[str]]:
        """Every lower-case catalog word (unstemmed) → the index terms it stems to."""
        forms: dict[str, set[str]] = {}
        seen: set[str] = set()
        for doc_tokens in tokens:
            for part in doc_tokens:
                for word in part:
                    if word in seen:
                        continue
                    seen.add(word)
                    if word in STOP_WORDS or word.isdigit():
                        continue
                    term = stem(word)
                    if term in self._postings:
                        forms.setdefault(word, set()).add(term)
        return forms

    @cached_property
    def _near(self) -> dict[str, dict[str, float]]:
        """Word stem → catalog terms near it in meaning, both ways round: the term's neighbours
        lead to it (document side) and the word's own neighbours do (query side). Built at the
        first query, so a turn that never searches does not read the neighbour table."""
        table = neighbours()
        near: dict[str, dict[str, float]] = {}
        for term in self._postings:
            for other, similarity in table.get(term, ()):
                best = near.setdefault(other, {})
                best[term] = max(best.get(term, 0.0), float(similarity))
        return near

    @cached_property
    def _vectors(self) -> CatalogVectors | None:
        """The catalog's static vectors (name words, keywords, description), built at the first
        query that uses them; None without the table or with the vector weight at 0."""
        table = word_vectors() if self.params.vector > 0 else None
        return (
            None if table is None else CatalogVectors(self._texts, table, self.params.vector_unseen)
        )

    @cached_property
    def _general_vectors(self) -> CatalogVectors | None:
        """The catalog's general-English vectors, like `_vectors` (None without the table or
        with the `general` weight at 0)."""
        table = general_vectors() if self.params.general > 0 else None
        if table is None:
            return None
        texts = [
            [*split_identifier(doc.name), *" ".join(doc.keywords).split(), *doc.description.split()]
            for doc in self.docs
        ]
        return CatalogVectors(texts, table)

    @cached_property
    def _texts(self) -> list[list[str]]:
        """Each tool's lower-case words for the vectors: name words, keywords, description."""
        return [
            split_identifier(doc.name)
            + [word for phrase in doc.keywords for word in words(phrase)]
            + words(doc.description)
            for doc in self.docs
        ]

    # --- query -------------------------------------------------------------------------

    def _expand(self, word: str) -> tuple[_Alternative, ...]:
        """What one query word may match: itself, else near-spellings/prefixes; plus synonyms."""
        cached = self._expansions.get(word)
        if cached is None:
            if len(self._expansions) >= EXPANSION_CACHE_SIZE:
                self._expansions.clear()
            cached = self._expansions[word] = self._expand_uncached(word)
        return cached

    def clear_cache(self) -> None:
        """Forget cached word expansions (benchmarks use it to time cold queries)."""
        self._expansions.clear()

    def _expand_uncached(self, word: str) -> tuple[_Alternative, ...]:
        alternatives: dict[str, float] = {}
        term = stem(word)
        if term in self._postings:
            alternatives[term] = 1.0
        else:
            for other in [] if self._is_known_word(word) else self._near_spellings(word):
                for candidate in self._surface_to_terms[other]:
                    alternatives[candidate] = max(
                        alternatives.get(candidate, 0.0), self.params.fuzzy
                    )
            if not alternatives:
                for other in self._prefixed(word):
                    for candidate in self._surface_to_terms[other]:
                        alternatives.setdefault(candidate, self.params.prefix)
        for weight, table in self._tables:
            for other in table.get(term, ()):
                candidate = stem(other)
                if candidate in self._postings and weight > alternatives.get(candidate, 0.0):
                    alternatives[candidate] = weight
        if self.params.neighbour > 0:
            near = {other: float(value) for other, value in neighbours().get(term, ())}
            for candidate, similarity in self._near.get(term, {}).items():
                near[candidate] = max(near.get(candidate, 0.0), similarity)
            for candidate, similarity in near.items():
                weight = self.params.neighbour * similarity
                if candidate in self._postings and weight > alternatives.get(candidate, 0.0):
                    alternatives[candidate] = weight
        return tuple(_Alternative(t, w) for t, w in alternatives.items())

    def _is_known_word(self, word: str) -> bool:
        """Whether the word-vector table knows `word` whole: a real word ('wave'), not a typo
        to correct into a catalog word one edit away ('wav')."""
        vectors = self._vectors
        return vectors is not None and vectors.table.knows(word)

    def _near_spellings(self, word: str) -> list[str]:
        """Catalog words with the same first letter within one edit (two from 8 letters up),
        a swap of neighbours counting as one edit; only the closest are kept."""
        if len(word) < 3 or word.isdigit():
            return []
        limit = 1 if len(word) < 8 else 2
        matches = process.extract(
            word, self._surfaces, scorer=OSA.distance, score_cutoff=limit, limit=16
        )
        matches = [match for match in matches if match[0][0] == word[0]]
        best = min((distance for _, distance, _ in matches), default=None)
        return [other for other, distance, _ in matches if distance == best][:8]

    def _prefixed(self, word: str) -> list[str]:
        """Catalog words that start with `word` (at least 4 letters), at most 8."""
        if len(word) < 4:
            return []
        found: list[str] = []
        position = bisect_left(self._surfaces, word)
        while position < len(self._surfaces) and len(found) < 8:
            other = self._surfaces[position]
            if not other.startswith(word):
                break
            found.append(other)
            position += 1
        return found

    def _query_groups(self, query: str) -> list[tuple[_Alternative, ...]]:
        """One group of alternatives per distinct content word of the query, in query order
        (the first MAX_QUERY_WORDS only, so a pasted document cannot stall the search)."""
        groups: list[tuple[_Alternative, ...]] = []
        seen: set[str] = set()
        for word in words(query):
            if word in STOP_WORDS or word.isdigit() or len(word) < 2 or word in seen:
                continue
            if len(seen) >= MAX_QUERY_WORDS:
                break
            seen.add(word)
            group = self._expand(word)
            if group:
                groups.append(group)
        return groups

    def scores(self, query: str) -> dict[int, float]:
        """Score of every matching doc (catalog index → score > 0); docs not listed score 0.

        Ordering and confidence are judged apart: the order is that of every signal, and the
        scale is set so the best score is the best *vouched* one, where the vector channel
        vouches only for tools whose cosine clears `vector_min_cosine`. So vectors can
        reorder tools freely, while a request only vaguely near some tools reads as weak, and
        one that nothing vouches for finds nothing."""
        totals, confidence = self._ordered(query)
        if not totals or confidence <= 0:
            return {}
        top = max(totals.values())
        if confidence >= top:
            return totals
        factor = confidence / top
        return {index: value * factor for index, value in totals.items()}

    def _ordered(self, query: str) -> tuple[dict[int, float], float]:
        """Every matching doc's ordering score, and the best score the signals vouch for."""
        groups = self._query_groups(query)
        totals: dict[int, float] = {}
        for group in groups:
            if len(group) == 1:
                alternative = group[0]
                for index, value in self._postings[alternative.term]:
                    totals[index] = totals.get(index, 0.0) + alternative.weight * value
                continue
            best: dict[int, float] = {}
            for alternative in group:
                for index, value in self._postings[alternative.term]:
                    weighted = alternative.weight * value
                    if weighted > best.get(index, 0.0):
                        best[index] = weighted
            for index, value in best.items():
                totals[index] = totals.get(index, 0.0) + value
        if totals:
            self._add_phrase_bonus(groups, totals)
            self._add_name_bonus(groups, totals)
        unvouched = self._add_vector_scores(query, totals)
        confidence = max(
            (value - unvouched.get(index, 0.0) for index, value in totals.items()), default=0.0
        )
        return totals, confidence

    def _add_vector_scores(self, query: str, totals: dict[int, float]) -> dict[int, float]:
        """Tools whose description stands out as near the request in meaning (static word
        vectors: cosine more than `vector_floor` standard deviations over the catalog's mean)
        gain `vector` per standard deviation beyond the floor; the rest gain nothing. Returns
        the part of each gain the vectors do not vouch for: all of it under `vector_min_cosine`,
        else what exceeds `vector_vouch` per standard deviation. The general-English vectors
        add `general` per deviation over `general_floor` and vouch for nothing: they are a
        little near many tools, so they order but never make a request look answered."""
        p = self.params
        query_words = words(query)[: MAX_QUERY_WORDS * 4]
        unvouched: dict[int, float] = {}
        vectors = self._vectors
        if vectors is not None:
            floor = p.vector_floor
            for index, z, cosine in vectors.standing(query_words, floor):
                gain = p.vector * (z - floor)
                totals[index] = totals.get(index, 0.0) + gain
                vouched = p.vector_vouch * (z - floor) if cosine >= p.vector_min_cosine else 0.0
                if gain > vouched:
                    unvouched[index] = gain - vouched
        general = self._general_vectors
        if general is not None:
            chunks = query.split()[: MAX_QUERY_WORDS * 4]  # as the model reads it: cased
            for index, z, _ in general.standing(chunks, p.general_floor):
                gain = p.general * (z - p.general_floor)
                totals[index] = totals.get(index, 0.0) + gain
                unvouched[index] = unvouched.get(index, 0.0) + gain
        return unvouched

    def _add_phrase_bonus(
        self, groups: list[tuple[_Alternative, ...]], totals: dict[int, float]
    ) -> None:
        for left, right in zip(groups, groups[1:], strict=False):
            for first in left:
                for second in right:
                    postings = self._bigrams.get((first.term, second.term))
                    if not postings:
                        continue
                    idf = (self._idf[first.term] + self._idf[second.term]) / 2.0
                    factor = self.params.phrase * idf * min(first.weight, second.weight)
                    for index, field_weight in postings:
                        if index in totals:
                            totals[index] += factor * field_weight / self.params.name_weight

    def _add_name_bonus(
        self, groups: list[tuple[_Alternative, ...]], totals: dict[int, float]
    ) -> None:
        asked = {
            alternative.term
            for group in groups
            for alternative in group
            if alternative.weight >= 1.0
        }
        if not asked:
            return
        for index in list(totals):
            name_terms = self._name_terms[index]
            if name_terms and name_terms <= asked:
                idf = sum(self._idf[term] for term in name_terms) / len(name_terms)
                totals[index] += self.params.name_coverage * idf

    def rank(self, query: str, limit: int = 5) -> list[ScoredDoc]:
        """The best `limit` tools for `query`, best first; only tools with score > 0 appear, so an
        empty or unmatched query gives an empty list. Equal scores keep catalog order."""
        if limit <= 0:
            return []
        totals = self.scores(query)
        best = heapq.nsmallest(limit, totals.items(), key=lambda item: (-item[1], item[0]))
        return [
            ScoredDoc(self.docs[index].name, score, index) for index, score in best if score > 0
        ]


@lru_cache(maxsize=4)
def shared_ranker(docs: tuple[SearchDoc, ...]) -> KeywordRanker:
    """The process's ranker for this exact catalog: conversations over the same tools share one,
    so only the first search over a catalog builds its word neighbours and tool vectors (about a
    quarter of a second at 1,000 tools). Safe to share: a ranker only caches what it derives."""
    return KeywordRanker(docs)
