"""The general related-words lexicon of tool search: everyday words people type and the words
tool descriptions use instead, written per common tool domain, not for any one catalog."""

from __future__ import annotations

# Domains: money, weather, time, travel, media, music, law, health, maths, data, messaging,
# files, commerce, food, sports, places. Each line "a b c" of
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
