"""Text helpers for tool search: identifier splitting, tokenising, stop words and a Porter stemmer.

Standard library only, so the ranker's index needs nothing beyond rapidfuzz at run time.
"""

from __future__ import annotations

import re
from functools import lru_cache

STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing done down during each either
    else etc ever every few for from further get gets give given go going got had has have
    having he her here hers herself him himself his how i if in into is it its itself just
    let lets like ll make may me might mine more most much must my myself need needs no nor
    not now of off on once one only or other our ours ourselves out over own please re s same
    shall she should so some such t than that the their theirs them themselves then there
    these they this those through to too under until up upon us use used using ve very via
    want wants was way we were what whatever when where whether which while who whom whose why
    will with within without would yes yet you your yours yourself yourselves able tell show
    help know find
    hi hello hey thanks thank kindly okay ok sure maybe perhaps possible something anything
    someone somebody looking assist assistance interested interesting curious wondering wonder
    really actually currently
    """.split()
)
"""English function words plus request filler ("please", "help", "show me", "find", "I'm
looking for", "I'm interested in") that says nothing about which tool fits: 'show', 'find',
'get' and 'help' open nearly every request (and half of all tool names), and 'interested'
would otherwise match 'interest' rates, so matching on them only adds noise."""

MAX_QUERY_CHARS = 500
"""Longer tool-search queries are refused: a capability is a few words, and a pasted page
would match nothing and read as "no tool exists"."""

_IDENT_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_WORD = re.compile(r"[A-Za-z0-9]+")


def split_identifier(text: str) -> list[str]:
    """Lower-cased parts of an identifier or phrase: camelCase, snake_case, kebab-case,
    dotted and `server__tool` names and digit runs all split (`getHTTPStatus2` → get, http, status, 2)."""
    parts: list[str] = []
    for chunk in _WORD.findall(text):
        parts.extend(piece.lower() for piece in _IDENT_PART.findall(chunk))
    return parts


def words(text: str) -> list[str]:
    """Lower-cased words of free text, with camelCase words split like identifiers."""
    return split_identifier(text)


def name_tokens(name: str) -> list[str]:
    """The words of a tool name plus each underscore/dot-free chunk joined whole
    (`exportCsv` → export, csv, exportcsv) so a query that writes the name as one word still hits."""
    tokens = split_identifier(name)
    for chunk in _WORD.findall(name):
        joined = chunk.lower()
        if joined not in tokens and len(split_identifier(chunk)) > 1:
            tokens.append(joined)
    return tokens


def content_terms(tokens: list[str], *, keep_stop_words: bool = False) -> list[str]:
    """Stemmed terms of `tokens` without stop words, single letters and bare numbers."""
    terms: list[str] = []
    for token in tokens:
        if token.isdigit() or len(token) < 2:
            continue
        if not keep_stop_words and token in STOP_WORDS:
            continue
        terms.append(stem(token))
    return terms


# --- Porter stemmer (M. F. Porter, 1980), written from the published algorithm ---------------

_VOWELS = frozenset("aeiou")


def _is_consonant(word: str, i: int) -> bool:
    char = word[i]
    if char in _VOWELS:
        return False
    if char == "y":
        return i == 0 or not _is_consonant(word, i - 1)
    return True


def _measure(stem_part: str) -> int:
    """Number of vowel-consonant sequences in `stem_part` (Porter's m)."""
    count = 0
    previous_vowel = False
    for i in range(len(stem_part)):
        consonant = _is_consonant(stem_part, i)
        if consonant and previous_vowel:
            count += 1
        previous_vowel = not consonant
    return count


def _has_vowel(stem_part: str) -> bool:
    return any(not _is_consonant(stem_part, i) for i in range(len(stem_part)))


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _is_consonant(word, len(word) - 1)


def _cvc(word: str) -> bool:
    if len(word) < 3:
        return False
    return (
        _is_consonant(word, len(word) - 3)
        and not _is_consonant(word, len(word) - 2)
        and _is_consonant(word, len(word) - 1)
        and word[-1] not in "wxy"
    )


_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
    ("izer", "ize"), ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"),
    ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"),
    ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"),
    ("iviti", "ive"), ("biliti", "ble"), ("logi", "log"),
)  # fmt: skip
_STEP3 = (
    ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"),
    ("ful", ""), ("ness", ""),
)  # fmt: skip
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion",
    "ou", "ism", "ate", "iti", "ous", "ive", "ize",
)  # fmt: skip


def _replace_longest(word: str, rules: tuple[tuple[str, str], ...], min_measure: int) -> str:
    for suffix, replacement in sorted(rules, key=lambda rule: -len(rule[0])):
        if word.endswith(suffix):
            base = word[: -len(suffix)]
            return base + replacement if _measure(base) > min_measure else word
    return word


# Words whose final "s" is not a plural; Porter would merge "news" with "new" ("New York").
_STEM_EXCEPTIONS = {
    "news": "news",
    "species": "species",
    "series": "series",
    "gas": "gas",
    "bus": "bus",
}


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Porter stem of a lower-case word (`calculations` → `calcul`); words of 1-2 letters pass unchanged."""
    if len(word) <= 2 or not word.isalpha():
        return word
    if word in _STEM_EXCEPTIONS:
        return _STEM_EXCEPTIONS[word]
    # Step 1a
    if word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("ies"):
        word = word[:-2]
    elif word.endswith("ss"):
        pass
    elif word.endswith("s"):
        word = word[:-1]
    # Step 1b
    tidy = False
    if word.endswith("eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
    elif word.endswith("ed") and _has_vowel(word[:-2]):
        word, tidy = word[:-2], True
    elif word.endswith("ing") and _has_vowel(word[:-3]):
        word, tidy = word[:-3], True
    if tidy:
        if word.endswith(("at", "bl", "iz")):
            word += "e"
        elif _double_consonant(word) and word[-1] not in "lsz":
            word = word[:-1]
        elif _measure(word) == 1 and _cvc(word):
            word += "e"
    # Step 1c
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    word = _replace_longest(word, _STEP2, 0)
    word = _replace_longest(word, _STEP3, 0)
    # Step 4
    for suffix in sorted(_STEP4, key=len, reverse=True):
        if word.endswith(suffix):
            base = word[: -len(suffix)]
            if _measure(base) > 1 and (suffix != "ion" or base.endswith(("s", "t"))):
                word = base
            break
    # Step 5
    if word.endswith("e"):
        base = word[:-1]
        if _measure(base) > 1 or (_measure(base) == 1 and not _cvc(base)):
            word = base
    if _measure(word) > 1 and _double_consonant(word) and word.endswith("l"):
        word = word[:-1]
    return word
