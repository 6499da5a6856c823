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

# --- general lexicon ----------------------------------------------------------------------
# Everyday words people type and the words tool descriptions use instead. Written per common
# tool domain (money, weather, time, travel, media, music, law, health, maths, data, messaging,
# files, commerce, food, sports, places), not for any one catalog. Each line "a b c" of
# SYNONYM_LINES makes its words synonyms of each other; each line "a b: x y" of RELATED_LINES
# lets a query word on the left also match the words on the right (one direction, weaker).

SYNONYM_LINES = """
delete remove erase
create add insert
edit modify update change alter
search lookup
fetch retrieve obtain
display view
list enumerate
begin start launch
cancel abort
buy purchase
price cost
picture image photo
movie film
car vehicle automobile
doctor physician
lawyer attorney
email mail
big large huge
small little tiny
trip journey travel
shares stock equity
salary wage income
worth value
average mean
forecast prediction projection
weight mass
calculate compute calc
nearby near close closest nearest
city town
country nation
ranking standings
player athlete
team club
rich wealthy
hospital clinic
kid child children
customer client
employee staff worker
company business firm organization
document doc
folder directory
link url
record row entry
column field attribute
statistics stats metrics
chart graph plot diagram
news headlines
schedule timetable agenda
meeting appointment
concert gig
song track
color colour
kilometers km
miles mi
discard undo revert
bookmark favorite
website site webpage homepage
therapist counselor counsellor
psychiatrist psychologist
job vacancy opening position
resume cv
apartment flat
house home
film video clip
podcast episode
novel book
lyrics lyric
recipe dish
tweet twitter
quote quotation
joke pun
game match
score result
coupon discount deal voucher
vacation holiday
hotel accommodation lodging
taxi cab ride
bike bicycle
translate translation
language tongue
"""

RELATED_LINES = """
rain snow storm sunny cloudy windy hot cold warm chilly muggy humid: weather forecast temperature humidity
temperature: weather
smog pollution: air quality
aqi: air quality index
co2 carbon: emissions carbon footprint
commute driving drive: car vehicle route traffic
yen euro euros dollar dollars usd eur gbp pound pounds peso pesos rupee rupees: currency exchange
exchange: currency
ticker nasdaq nyse: stock
invest investing: investment portfolio return
loan mortgage: interest payment
earn earned profit gain: return profit
sue sued suing: lawsuit
court trial judge: case law
crime felony: criminal crime
cinema theater theatre: movie
actor actress starring: movie actor
tune melody: music melody
singer band artist: music concert
gig live: concert
lyrics words: lyrics song
election politics: news
plane airline airport fly: flight
room stay lodging motel: hotel book
vacation holiday itinerary: travel trip
eat dinner lunch breakfast cuisine: restaurant food
plant vegetarian vegan: vegan vegetarian diet
cook cooking bake baking: recipe cooking
ingredient ingredients dish: recipe
groceries supermarket: grocery store
nutrition protein carbs: nutritional calories
patient nurse: hospital medical
sick ill illness disease symptom symptoms: health medical
overweight obese: bmi body mass index weight
workout exercise: fitness
gaussian bell: normal distribution
median: average
trend: regression
differentiate slope: derivative
integral: integrate area curve
factorise factorize factor: prime factors
divisor: gcd divisor
percent percentage: rate
chance odds likelihood: probability
coin flip flips toss tosses: probability binomial
dice die roll: dice probability
poker cards: card deck
hour clock: time
month week weekday: date calendar
dataset datasets: data table
today now: current
people inhabitants: population
gdp economy economic: gdp
king queen monarch ruler ruled led: leader monarch president
invented inventor discovered: discovery discoverer invention
gallery: museum
artwork painting: art painting
statue: sculpture
tower skyscraper tall: building height
peak peaks: mountains
playground: park
navigate directions way: route directions
far: distance
address street: location
fixture fixtures: match schedule
soccer: football
football: soccer
elo: rating
rich: net worth
text sms chat: message
upload attach attached: file attachment
save dump: export download
spreadsheet excel: csv
pdf: document
sort arrange: order sort
review opinion positive negative: sentiment
translate: translation language
summarize summarise: summary
rgb: color
password login signin: authentication account
repo github git: repository
bug: issue
deploy ship: deployment release
alarm notify: alert notification
remind: reminder
todo: task
bill billing pay: invoice payment
refund: payment
shop: order purchase
shipping: delivery
psychiatrist psychologist counselor counsellor therapy mental anxiety depression stress: therapist mental health
dentist dental teeth tooth: dentist dental
rent renting rental landlord tenant: rent rental apartment house property
realtor estate: real estate property house
mortgage: home loan
hiring hire career careers employment employer recruiter interview: job jobs career
salary: pay income
spanish french german russian chinese japanese korean italian portuguese arabic hindi english: language translate translation
pronounce pronunciation vocabulary grammar phrase phrases: language learn
hack hacked hacker malware virus phishing scam fraud breach vulnerability vulnerabilities: security scan safety
secure safe safety trustworthy: security
monetize affiliate earnings: money revenue income
money cash: finance money payment
budget budgeting expenses spending: budget finance expense
tax taxes: tax finance
crypto bitcoin ethereum blockchain: cryptocurrency crypto
tweet tweets twitter instagram tiktok facebook hashtag hashtags followers influencer influencers: social media
post posts caption captions: social media content
meme memes funny: joke humor
listen listening playlist album albums: music song
band bands rapper: music artist
episode episodes: podcast show
novel novels author authors reading read: book books
poem poems poetry: poetry writing
essay essays paragraph rewrite rephrase proofread: writing text
grammar spelling: writing check
story stories tale: story writing
prompt prompts: prompt
summarise summary tldr: summarize summary
telescope nasa astronaut astronauts planet planets galaxy galaxies asteroid orbit mars moon: space astronomy
star stars constellation: astronomy space
earthquake earthquakes tsunami volcano: earthquake disaster
hurricane tornado flood: weather disaster
animal animals pet pets dog dogs cat cats puppy kitten: pet animal
vet veterinarian: pet animal
plant plants garden gardening flower flowers: garden plant
kids toddler toddlers preschool: children kids education
student students homework exam exams study studying school: education learning course
class classes lesson lessons tutorial tutorials teach teaching: course learning education
university college degree: education university
quiz trivia: quiz game
chess puzzle puzzles: game puzzle
videogame videogames gaming gamer console: game games
football basketball baseball hockey tennis golf cricket nba nfl fifa premier: sports game team
scores score standings: sports results
workout workouts gym fitness yoga running: fitness exercise
diet dieting calorie calories: nutrition diet food
medicine medication medications drug drugs pill pills prescription: medicine drug pharmacy
symptom symptoms diagnosis disease diseases: health medical
trial trials: clinical
hotel hotels airbnb: hotel accommodation booking
flights airfare airline airlines: flight travel
destination destinations sightseeing tourist tourists attractions: travel trip attractions
visa passport: travel
parking park: parking car
uber lyft taxi: ride transportation
train trains bus buses subway metro: transit transportation
map maps: map location directions
nearby near around: nearby location
zip zipcode postcode: location address
shopping shop store stores: shopping product store
buy buying purchase purchasing: shop product price
deals deal bargain bargains cheap cheapest: discount price deal
compare comparison versus vs: compare comparison
product products item items gadget gadgets laptop laptops phone phones: product shopping
fashion clothes clothing outfit outfits dress shoes: fashion clothing
makeup cosmetics skincare beauty: beauty cosmetics
furniture decor: home furniture
repair fix broken: repair
car cars automobile automobiles dealer dealership: car vehicle
recipe recipes cook cooking bake baking meal meals: recipe food
drink drinks cocktail cocktails wine beer: drink beverage
coffee tea: drink
restaurant restaurants dining dine: restaurant food
weather forecast: weather
image images photo photos picture pictures: image photo
draw drawing illustration illustrations logo logos art: image design
design designs designer: design
video videos youtube: video
movie movies film films cinema: movie film
tv television series show shows: tv show
anime manga comic comics: anime comic
translate translating translator: translate language
email emails inbox gmail outlook: email
calendar schedule scheduling appointment appointments: calendar event
meeting meetings: meeting calendar
remind reminders reminder: reminder
note notes notebook: note
task tasks todo todos: task todo
document documents doc docs file files: document file
pdf pdfs: pdf document
spreadsheet spreadsheets excel sheet sheets csv: spreadsheet table data
chart charts graph graphs plot plots visualize visualization diagram diagrams: chart graph diagram visualization
database databases sql query queries: database query
code coding program programming developer script scripts: code programming
bug bugs error errors debug debugging: debug error
website websites site sites webpage webpages url urls link links domain: website web page url
seo ranking keywords keyword: seo keyword
ads ad advertising advertisement advertisements campaign: ads advertising marketing
marketing: marketing
company companies business businesses startup startups: company business
stock stocks shares market markets invest investing investment investments portfolio: stock finance investment
price prices cost costs expensive: price cost
currency currencies exchange: currency exchange
bank banking: bank finance
law laws legal lawyer lawyers attorney court: law legal
religion religious prayer pray faith god bible quran islam islamic muslim: religion
history historical ancient war wars: history
news latest headlines today: news
research paper papers journal journals academic scholar scientific study studies article articles: research paper academic
wikipedia encyclopedia definition define meaning: knowledge definition
word words: word
count counting: count number
calculate calculation math maths equation equations formula: calculate math
unit units convert conversion: convert conversion unit
time timezone: time zone
date dates: date calendar
age: age
birthday birthdays: birthday date
gift gifts present presents: gift shopping
wedding weddings party parties event events: event
ticket tickets: ticket booking event
concert concerts festival festivals show: concert event music
volunteer volunteering charity donate donation donations: charity donation
environment climate sustainability sustainable green: climate environment
energy solar electricity: energy
"""


MAX_QUERY_CHARS = 500
"""Longer tool-search queries are refused: a capability is a few words, and a pasted page
would match nothing and read as "no tool exists"."""


def _parse_lexicon() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    synonyms: dict[str, list[str]] = {}
    for line in SYNONYM_LINES.strip().splitlines():
        group = line.split()
        for word in group:
            synonyms.setdefault(word, []).extend(other for other in group if other != word)
    related: dict[str, list[str]] = {}
    for line in RELATED_LINES.strip().splitlines():
        left, right = line.split(":")
        for word in left.split():
            related.setdefault(word, []).extend(right.split())
    return (
        {word: tuple(dict.fromkeys(others)) for word, others in synonyms.items()},
        {word: tuple(dict.fromkeys(others)) for word, others in related.items()},
    )


SYNONYMS, RELATED = _parse_lexicon()

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
