"""Built-in demo / gold crawl: invented pages whose right answers are known.

Thresholds come from labels, per doc type, so the desk ships a crawl with a written
answer key: each case names its pages, the label an editor should give and the
machine-checkable promises (`checks`) the pipeline must keep. Every promise was
computed with the project's own extractor settings and fingerprint methods and is
re-verified by tests/core/test_democrawl.py, for several seeds.

Pure: no Django. Same seed → the same pages and a byte-identical WARC (record ids and
dates come from the seed, never from the clock). All text is invented here.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import unicodedata
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from html import escape
from io import BytesIO
from pathlib import Path
from typing import BinaryIO, TextIO
from urllib.parse import quote

GENERATOR = "dedup-desk democrawl v1"
LABELS = ("duplicate", "near-duplicate", "revision", "distinct", "unsure")
EXTRACTION_EXPECTATIONS = ("ok", "empty", "blocked", "too_short")

# How the promises in `checks` were computed (the pipeline tests must do the same).
MAIN_TEXT_EXTRACTOR = (
    "trafilatura.extract(html, fast=True, include_comments=False, include_tables=True, "
    "deduplicate=False) on the body decoded with the page's encoding; None counts as ''"
)
FULL_TEXT_EXTRACTOR = "trafilatura.html2txt(html, clean=False)"
CHECK_KEYS: dict[str, str] = {
    "method": "fingerprint method key for the text and distance checks "
    "(default simhash64-words-sha256-v1)",
    "same_raw_sha256": "every pair: SHA-256 of the raw bodies equal (true) or not (false)",
    "exact_main_text": "every pair: main texts equal after the method's normalization",
    "main_distance_max": "every pair: Hamming distance of the main-text SimHashes <= value",
    "main_distance_min": "every pair: Hamming distance of the main-text SimHashes >= value",
    "full_distance_max": "every pair: Hamming distance of the full-text SimHashes <= value",
    "full_distance_min": "every pair: Hamming distance of the full-text SimHashes >= value",
    "numbers_differ": "every pair: the numbers (\\d+([.,]\\d+)*) in the main texts differ",
    "reorder_words_distance_zero": "every pair: words-method distance 0, shingle3-method > 0",
    "main_text_contained": "every pair: the shorter normalized main text is a substring "
    "of the longer one",
    "no_fingerprint": "every page: the main text fingerprints as insufficient_features",
    "extraction_status": "every page: the extraction status the pipeline must record",
    "main_tokens_max": "every page: at most this many reference-method tokens in the main text",
    "passage_channel": "every pair: a stored candidate pair lists the passage channel (true), "
    "or no stored pair does (false)",
    "passage_containment_pct_min": "every pair: the larger passage containment (percent of "
    "one text's passages found in the other) >= value",
}

REFERENCE = "simhash64-words-sha256-v1"
SHINGLE = "simhash64-shingle3-sha256-v1"
CJK = "simhash64-cjkbigram-sha256-v1"

_BASE_TIME = datetime(2026, 3, 2, 6, 0, tzinfo=UTC)
_ID_NAMESPACE = uuid.UUID("6f1c2d0e-5a7b-4c1e-9d3f-2b8a7e4c9d10")
_REASONS = {200: "OK", 403: "Forbidden", 429: "Too Many Requests"}


@dataclass(frozen=True)
class DemoPage:
    id: str
    url: str
    site: str
    doc_type: str
    fetched_at: datetime
    http_status: int
    headers: list[tuple[str, str]]
    body: bytes
    encoding: str
    expect_extraction: str


@dataclass(frozen=True)
class DemoCase:
    case: str
    title: str
    pages: tuple[str, ...]
    expected_label: str
    reason: str
    checks: dict[str, object]


# --------------------------------------------------------------------------------------
# Invented vocabularies. A topic gives the cast (places, things, officials, groups), a
# few headlines and topic sentences; generic sentences are filled from the cast, so two
# articles share grammar but not substance.
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Topic:
    key: str
    section: str
    places: tuple[str, ...]
    things: tuple[str, ...]
    officials: tuple[str, ...]
    groups: tuple[str, ...]
    headlines: tuple[str, ...]
    specific: tuple[str, ...]


_EN_TOPICS: tuple[_Topic, ...] = (
    _Topic(
        "harbour",
        "Local",
        ("the north quay", "Saltmarsh Harbour", "the old fish market", "Pier Seven"),
        ("the new ferry terminal", "a second breakwater", "the container crane upgrade"),
        ("harbour master Ines Okafor", "port authority chair Daniel Reyes"),
        ("fishing crews", "ferry passengers", "dock workers"),
        (
            "Ferry terminal plan for {place} wins final approval",
            "Breakwater works at {place} to begin after years of delay",
        ),
        (
            "The tide tables show that the inner channel silts up twice as fast as it did a "
            "decade ago.",
            "Skippers say the evening ferry is often cancelled when the wind turns to the "
            "north-east.",
            "The harbour still handles timber, salt and a small amount of frozen fish every week.",
            "A temporary pontoon will be moored beside the lifeboat station while the piles "
            "are replaced.",
            "Divers inspected the foundations in January and found cracks in three of the "
            "oldest concrete blocks.",
            "The fish auction will move to a heated hall at the end of the quay during the works.",
            "Cargo volumes fell last year after a shipping line moved its weekly service to "
            "a deeper port.",
            "Seals have been seen resting on the slipway, and a wildlife group has asked for "
            "quiet hours.",
            "Night shifts are ruled out because the cranes would light up the bedrooms of "
            "the houses opposite.",
            "The ticket office will stay open in a portable cabin near the bus turning circle.",
        ),
    ),
    _Topic(
        "library",
        "Education",
        ("the Eastfield branch library", "the reading room on Mill Street", "Hollow Lane"),
        ("the longer opening hours", "the new homework club", "the mobile book van"),
        ("chief librarian Priya Raman", "education councillor Tom Whitaker"),
        ("parents of primary pupils", "retired readers", "evening students"),
        (
            "{place} to stay open until nine on weekdays",
            "Homework club at {place} doubles its places",
        ),
        (
            "Loans of picture books rose by a quarter after the children's corner was repainted.",
            "The reading room now lends laptops for up to two weeks to anyone with a library card.",
            "Volunteers run a Saturday morning session where teenagers help older people "
            "with their phones.",
            "The roof over the local history archive leaked during the storms and several "
            "maps had to be dried.",
            "A quiet study area with forty desks will replace the old music collection on "
            "the first floor.",
            "Late fees were abolished last autumn, and most overdue books came back within "
            "a month.",
            "The book van visits six villages that lost their own libraries when the "
            "schools merged.",
            "Staff say the busiest hour is now between four and five, when pupils arrive "
            "from school.",
            "A language cafe meets on Thursday evenings and has grown from eight to thirty "
            "regulars.",
            "Donated board games have become so popular that the library started a waiting list.",
        ),
    ),
    _Topic(
        "rail",
        "Transport",
        ("Cedar Road station", "the western branch line", "the level crossing at Brookfield"),
        ("the new timetable", "longer platforms", "the electric trains"),
        ("rail operator spokesperson Lena Fischer", "transport minister Oskar Nyberg"),
        ("commuters", "cyclists", "season ticket holders"),
        (
            "New timetable brings trains every 15 minutes to {place}",
            "Commuters at {place} face three weekends of closures",
        ),
        (
            "The first train now leaves at ten past five so that hospital staff can reach "
            "the early shift.",
            "Bicycle spaces on each carriage will rise from four to ten when the new units arrive.",
            "Signal failures caused more than half of last winter's delays on the branch line.",
            "Replacement buses will run every twenty minutes and stop outside each closed station.",
            "The footbridge at the eastern end will be fitted with lifts and wider stairs.",
            "Passenger numbers have recovered to about ninety percent of the level seen "
            "before the closures.",
            "Ticket machines that accept cards only will be installed at the smaller stations.",
            "The overhead wires are expected to cut journey times by around six minutes.",
            "A crossing keeper still lowers the gates by hand at the busiest road junction "
            "on the line.",
            "Season tickets will cost slightly less for those who travel three days a week.",
        ),
    ),
    _Topic(
        "flood",
        "Weather",
        ("the riverside estate", "Willow Meadows", "the lower town"),
        ("the flood barrier", "the new pumping station", "the early warning sirens"),
        ("environment officer Ruth Adeyemi", "emergency planner Marco Bellini"),
        ("homeowners", "farmers", "insurance brokers"),
        (
            "Flood barrier for {place} tested ahead of spring tides",
            "Sirens to warn {place} of rising river levels",
        ),
        (
            "The river rose almost two metres in a single night during the February storms.",
            "Sandbags are stored in a depot behind the fire station and can be collected "
            "around the clock.",
            "Several cellars in the lower streets were pumped out three times in one month.",
            "Farmers lost winter wheat on low fields that stayed under water for almost two weeks.",
            "The gauge at the old mill sends a reading to the control room every fifteen minutes.",
            "Insurers have started asking owners for proof of flood doors before renewing "
            "policies.",
            "Meteorologists expect wetter winters and shorter, heavier bursts of rain in "
            "the region.",
            "Volunteers walked the embankment with torches to look for seepage during the "
            "last high tide.",
            "The barrier can be closed in forty minutes by a crew of four trained operators.",
            "School buses were rerouted twice last week because the ford on the valley road "
            "was closed.",
        ),
    ),
    _Topic(
        "market",
        "Business",
        ("the covered market", "Baker's Row", "the Saturday square"),
        ("the night market", "the cheaper stall rents", "the new cold store"),
        ("market manager Hannah Kowalski", "chamber of commerce head Samuel Osei"),
        ("stallholders", "bakers", "small grocers"),
        (
            "Night market returns to {place} with forty stalls",
            "Stall rents cut to keep traders at {place}",
        ),
        (
            "Flour prices rose sharply in the autumn, and several bakers shortened their "
            "opening hours.",
            "The cheese stall has been run by the same family for three generations.",
            "Card payments now make up about two thirds of sales on a typical Saturday.",
            "A shared cold store means traders no longer have to take unsold fish home at night.",
            "Street food vans will be allowed to park on the square on the first Friday of "
            "each month.",
            "Empty stalls were offered free for a month to young people starting their "
            "first business.",
            "The roof of the market hall was cleaned and the glass panels were replaced in "
            "January.",
            "Traders complained that the new parking charges keep older customers away.",
            "An apprentice baker won a regional prize for a rye loaf made with local grain.",
            "The flower seller says tulips from nearby greenhouses have sold out every week "
            "this spring.",
        ),
    ),
    _Topic(
        "observatory",
        "Science",
        ("the hilltop observatory", "Ravens Hill", "the university campus"),
        ("the restored telescope", "the planetarium show", "the dark sky reserve"),
        ("astronomer Keiko Tanaka", "observatory director Felix Aldana"),
        ("amateur astronomers", "school groups", "night photographers"),
        (
            "Restored telescope at {place} opens to the public",
            "Dark sky status sought for {place}",
        ),
        (
            "The brass telescope was built more than a century ago and had not been used "
            "since the nineteen-eighties.",
            "Streetlights on the hill road will be dimmed after midnight to reduce the glow "
            "on the horizon.",
            "On clear nights visitors can see the rings of Saturn and the moons of Jupiter.",
            "The dome had to be repaired by hand because the original gears are no longer made.",
            "A student measured the brightness of the sky every night for a year as part "
            "of her thesis.",
            "Meteor watches in August attract families who bring blankets and flasks of tea.",
            "The planetarium seats sixty people and shows are given in three languages.",
            "Amateur observers helped to confirm a variable star that professional surveys "
            "had missed.",
            "Cloud cover limits public viewing to about one night in three during the winter.",
            "The mirror was recoated in a laboratory abroad and returned in a padded crate.",
        ),
    ),
    _Topic(
        "rowing",
        "Sport",
        ("the boathouse on the canal", "Kingfisher Reach", "the regatta course"),
        ("the spring regatta", "the youth training programme", "the new racing shells"),
        ("head coach Agnes Moreau", "club captain Viktor Hale"),
        ("junior rowers", "veteran crews", "coaches"),
        (
            "Spring regatta at {place} draws record entry",
            "Youth rowing programme at {place} expands",
        ),
        (
            "Crews train at dawn because the canal is busy with narrowboats later in the day.",
            "The women's eight finished second at the national championships last summer.",
            "Two of the new racing shells were bought with money raised at a winter quiz night.",
            "Coaches follow the boats on bicycles along the towpath and shout instructions "
            "through a megaphone.",
            "The boathouse floor was raised after it flooded twice in three years.",
            "Juniors must pass a swimming test in cold water before they are allowed in a "
            "single scull.",
            "The regatta course is marked with orange buoys that are laid by volunteers the "
            "night before.",
            "Veteran crews include a retired surgeon who started rowing at the age of sixty.",
            "Ergometer sessions replace outings when the wind makes the water too rough.",
            "The club hopes to host a European junior event within the next five years.",
        ),
    ),
    _Topic(
        "solar",
        "Environment",
        ("the former airfield", "Greystone Farm", "the industrial park"),
        ("the solar farm", "the community battery", "the rooftop panel scheme"),
        ("energy cooperative chair Beatrice Lund", "planning officer Arjun Mehta"),
        ("tenants", "dairy farmers", "local electricians"),
        (
            "Solar farm on {place} approved despite objections",
            "Community battery planned for {place}",
        ),
        (
            "The panels will be mounted high enough for sheep to graze underneath them.",
            "Members of the cooperative receive a small share of the profits every year.",
            "The battery can supply about four hundred homes for two hours after sunset.",
            "Objectors worry about glare for pilots using the small airstrip nearby.",
            "A hedge of native shrubs will be planted along the road to screen the site.",
            "Electricians are being trained to install panels on the roofs of council flats.",
            "On sunny afternoons the village already produces more power than it uses.",
            "The connection to the grid was delayed by a shortage of transformers.",
            "Skylarks nest on the old runway, so construction will pause from April to July.",
            "Tenants in the pilot scheme saw their bills fall by roughly a fifth.",
        ),
    ),
    _Topic(
        "clinic",
        "Health",
        ("the health centre on Station Road", "the district hospital", "Oakwood"),
        ("the evening clinic", "the walk-in service", "the new ambulance base"),
        ("practice manager Elif Demir", "senior nurse Patrick Ng"),
        ("older patients", "young families", "shift workers"),
        (
            "Evening clinic opens at {place} to cut waiting times",
            "Walk-in service for {place} extended to weekends",
        ),
        (
            "Patients can now book blood tests online instead of queuing at the reception desk.",
            "The waiting time for a routine appointment has fallen from three weeks to nine days.",
            "Two retired nurses returned part-time to help with the vaccination sessions.",
            "A pharmacist will sit in the clinic on Mondays to review long-term prescriptions.",
            "The ambulance base will shorten response times for villages in the hills.",
            "Parking at the centre is limited, so a shuttle bus will run from the market square.",
            "Doctors say many evening visits are from people who cannot leave work during the day.",
            "An interpreter service is available by telephone in more than twenty languages.",
            "The old dental surgery next door will be turned into three consulting rooms.",
            "A physiotherapist will run a weekly class for people recovering from hip operations.",
        ),
    ),
    _Topic(
        "theatre",
        "Culture",
        ("the Empire Theatre", "Fountain Street", "the old cinema hall"),
        ("the restored stage", "the new rehearsal rooms", "the winter season"),
        ("artistic director Rosa Delgado", "trust chairman Henrik Solberg"),
        ("amateur actors", "season ticket holders", "local musicians"),
        (
            "Curtain rises again at {place} after restoration",
            "Rehearsal rooms at {place} open to community groups",
        ),
        (
            "The velvet seats were removed one by one and sent to a workshop for new springs.",
            "Painters uncovered a ceiling mural of dancing figures hidden under layers of "
            "cream paint.",
            "The orchestra pit was deepened so that a full string section fits below the stage.",
            "A youth company rehearses a musical on Tuesday nights and performs it each spring.",
            "Ticket prices for students stay at five euros for every show this season.",
            "The fly tower still uses ropes and sandbags, operated by two volunteer stagehands.",
            "A puppet festival in November will fill the foyer with marionettes from "
            "twelve countries.",
            "Costumes from past productions are lent to schools for their end-of-year plays.",
            "The box office reopened with a queue that stretched past the bakery on the corner.",
            "Heating the auditorium in winter costs more than the whole lighting budget.",
        ),
    ),
    _Topic(
        "housing",
        "Politics",
        ("the former brewery site", "Linden Park", "the east side estate"),
        ("the affordable flats", "the tenant cooperative", "the timber-frame housing"),
        ("housing officer Miriam Achterberg", "mayor Jonas Whitlock"),
        ("young couples", "private landlords", "families on the waiting list"),
        (
            "Two hundred affordable flats planned for {place}",
            "Tenant cooperative takes over homes at {place}",
        ),
        (
            "Rents in the new blocks will be capped at a third of average local earnings.",
            "The waiting list for social housing has grown to more than four thousand names.",
            "The brewery chimney will be kept as a landmark in the middle of a shared courtyard.",
            "Each flat gets a balcony large enough for a table and two chairs.",
            "Builders will use timber frames made in a factory, which shortens the time on site.",
            "Ground floor units are reserved for a nursery, a launderette and a bicycle "
            "repair shop.",
            "Landlords argue that the cap will discourage private investment in older streets.",
            "Tenants in the cooperative elect a committee that decides on repairs and "
            "garden rules.",
            "Heat pumps and roof panels should keep energy bills low even in cold winters.",
            "The first residents are expected to collect their keys in the autumn of next year.",
        ),
    ),
    _Topic(
        "forest",
        "Environment",
        ("Blackwood Forest", "the quarry ridge", "the valley nature reserve"),
        ("the replanting scheme", "the new walking trail", "the beaver enclosure"),
        ("forest ranger Oona Kelleher", "reserve warden Ibrahim Castell"),
        ("hikers", "dog walkers", "landowners"),
        (
            "Thirty thousand oaks to be planted at {place}",
            "Beavers return to {place} after four centuries",
        ),
        (
            "Spruce trees killed by bark beetles are being felled and left to rot as habitat.",
            "Schoolchildren collected acorns in the autumn and grew seedlings in their classrooms.",
            "A boardwalk will carry the trail across the wettest part of the bog.",
            "The beavers built their first dam within a week of being released.",
            "Deer fences protect the young trees until they are tall enough to survive browsing.",
            "Rangers count owls at night by playing recorded calls and listening for replies.",
            "The old quarry has flooded and now attracts dragonflies and nesting kingfishers.",
            "Dogs must be kept on a lead between March and July while ground birds nest.",
            "Fallen logs are left across streams to slow the water after heavy rain.",
            "A small car park with charging points will be built at the forest gate.",
        ),
    ),
)

_EN_GENERIC = (
    "{Official} said on {weekday} that {thing} would be ready before the end of {month}.",
    "The plan was first discussed {num} years ago, but the money was only found this spring.",
    "Many {group} say they have heard similar promises before and want a firm timetable.",
    "According to figures released this week, about {big} people pass through {place} every day.",
    "The council set aside {money} million for the work, roughly {pct} percent more than "
    "the first estimate.",
    "Critics argue that {thing} will mostly benefit visitors rather than {group}.",
    "At a packed public meeting near {place}, residents asked who would pay if costs rose again.",
    "{Official} admitted that the schedule was tight but insisted the contractors had "
    "enough staff.",
    "A survey of {num3} households found that most supported {thing}, although many "
    "worried about noise.",
    "Some {group} have already changed their routines and now leave earlier to avoid delays.",
    "Engineers will spend the next {num} weeks checking the ground around {place}.",
    "Local businesses hope that {thing} will bring more customers in the quieter months.",
    "Opposition members called for an independent review of the budget before any "
    "contract is signed.",
    "{Official} promised to publish monthly progress reports on the council website.",
    "In a written statement, the regional office described {thing} as a long overdue investment.",
    "Similar projects in neighbouring towns took longer than planned, which has made "
    "{group} cautious.",
    "Traffic near {place} will be diverted for at least {num} days while materials are delivered.",
    "The next public consultation is planned for {month}, and written comments can be "
    "sent until then.",
    "Several {group} told this newspaper that they welcomed the news but worried about the timing.",
    "An earlier proposal to move {thing} further away was rejected because of the higher cost.",
    "Officials expect the finished work to last at least {num4} years with regular maintenance.",
    "Rain delayed the preparatory survey by almost a week, according to people familiar "
    "with the schedule.",
    "A spokesperson for the {group} said they would meet again after the first month.",
    "{Official} thanked the {group} for their patience and said the worst disruption was over.",
)

_EN_AUTHORS = (
    "Ana Petrov",
    "James Whitfield",
    "Noor Haddad",
    "Clara Jensen",
    "Tomasz Nowak",
    "Grace Mbeki",
    "Luis Ortega",
    "Yuki Sato",
)
_EN_COMMENTERS = ("quayside_reader", "M. Turner", "old_town_resident", "Jo", "bellweather")
_EN_COMMENTS = (
    "Heard this before. I will believe it when I see it.",
    "Good news at last, thanks for reporting it.",
    "Who is going to pay for all of this?",
    "My street was not even mentioned in the plan.",
    "Finally some progress after all these years.",
)
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
_MONTHS = ("April", "May", "June", "September", "October", "November")

_NEWS_RELATED = (
    "Council approves budget for road repairs",
    "Schools prepare for spring exams",
    "Bus fares to stay frozen until summer",
    "Museum reopens after roof repairs",
    "New bakery opens on the high street",
    "Park cafe changes hands",
    "Festival organisers look for volunteers",
    "Hospital car park to be extended",
)
_WIRE_RELATED = (
    "Markets steady ahead of central bank meeting",
    "Regional airports report busy winter",
    "Grain harvest forecast revised upward",
    "Shipping rates ease after winter peak",
    "Tourism numbers recover in coastal regions",
)

# Forum posts: first person, one hobby per topic.
_FORUM_TOPICS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "sourdough",
        "Sourdough starter smells of nail varnish after a week, normal?",
        (
            "I feed the starter once a day with equal weights of rye flour and water.",
            "The jar sits on top of the fridge, which is the warmest place in my kitchen.",
            "After about five days it doubled, but now it has a sharp smell and lots of "
            "liquid on top.",
            "My last loaf came out flat and dense even though the dough rose overnight.",
            "I tried adding a spoon of honey as someone suggested, which made no real difference.",
            "The crust was fine but the crumb had big holes near the top and was gummy underneath.",
            "I bake in a cast iron pot with the lid on for the first twenty minutes.",
            "Next time I want to try a longer cold proof in the fridge.",
        ),
    ),
    (
        "cycling",
        "Winter commute by bike: which lights actually last?",
        (
            "My commute is eleven kilometres each way, mostly on an unlit path along the canal.",
            "The front light I bought in October already dies after about forty minutes in "
            "the cold.",
            "I charge it every evening, so I suspect the battery rather than my routine.",
            "Studded tyres made a huge difference on the icy bridge near the lock.",
            "A colleague swears by a dynamo hub, but rebuilding my wheel sounds expensive.",
            "Rain trousers help, although my shoes still get soaked on the worst days.",
            "Drivers seem to notice a flashing rear light sooner than a steady one.",
            "I carry a spare inner tube and a tiny pump in a bag under the saddle.",
        ),
    ),
    (
        "tomatoes",
        "Balcony tomatoes: leaves curling and turning yellow",
        (
            "I grow four cherry tomato plants in large pots on a south-facing balcony.",
            "The lower leaves started to curl upwards last week and some have yellow patches.",
            "I water every morning, more often when the afternoon sun is strong.",
            "The compost is a peat-free mix from the garden centre with some added grit.",
            "I pinch out the side shoots, but maybe I have been too aggressive with it.",
            "Fruit is setting well, and the first trusses are already turning orange.",
            "A neighbour suggested a feed high in potassium once the flowers appear.",
            "Pigeons keep landing on the railing, so I put a net over the top pots.",
        ),
    ),
    (
        "radio",
        "Restoring my grandfather's valve radio, hum on every station",
        (
            "The set is a wooden table radio from the nineteen-fifties with four valves.",
            "I replaced the old paper capacitors first, following a guide from the club "
            "newsletter.",
            "It now plays loudly, but there is a deep hum on every station and even "
            "between stations.",
            "The smoothing capacitor in the power supply looks original and slightly swollen.",
            "I always discharge everything and work with one hand before touching the chassis.",
            "The dial cord snapped while I was cleaning, and restringing it took a whole evening.",
            "Medium wave reception is decent, but long wave is almost silent.",
            "I would like to keep it looking original, so new parts go under the chassis.",
        ),
    ),
    (
        "birds",
        "Counting garden birds for the spring survey, first results",
        (
            "I counted birds in my garden for one hour every morning during the survey week.",
            "Blackbirds and robins turned up every day, usually near the compost heap.",
            "A pair of long-tailed tits visited the fat balls twice, which was a first for me.",
            "The feeder by the window attracts greenfinches, but only when the cat is inside.",
            "I noted the weather too, because fewer birds came on the windy mornings.",
            "A sparrowhawk swept through on Wednesday and the garden was empty for an hour.",
            "My children made a chart on the fridge with a tick for every species.",
            "Next year I want to add a small pond and see whether it changes the counts.",
        ),
    ),
)
_FORUM_GENERIC = (
    "I have been at this for about {num} years now, mostly at weekends.",
    "Has anyone else run into the same thing, and how did you solve it?",
    "For context, I live in a small flat with very little storage space.",
    "I read through the older threads here but could not find quite the same problem.",
    "Any advice is welcome, especially from people who have been doing this for longer.",
    "I will post an update next week if the change makes a difference.",
    "Last {weekday} I changed one thing at a time so that I could tell what helped.",
    "Budget matters a bit, so I would rather fix what I have than buy new gear.",
    "Thanks in advance, this forum has already saved me a lot of trouble.",
    "I kept notes in a little book, so I can share more details if that helps.",
)
_FORUM_USERS = ("rye_and_shine", "canalcommuter", "balconygrower", "valvehead", "wren_watch")
_FORUM_REPLIES = (
    "Same here, it settled down after a couple of weeks.",
    "Try changing only one thing at a time.",
    "Photos would help a lot.",
    "I had exactly this last year, patience is the answer.",
    "Check the old threads from last winter, there is a long one about this.",
)

# Products: name, SKU, price in cents, category, specs, description sentences.
_PRODUCTS: tuple[tuple[str, str, int, str, tuple[tuple[str, str], ...], tuple[str, ...]], ...] = (
    (
        "Brushed Steel Kettle 1.7 l",
        "KT-2041",
        4990,
        "Kitchen",
        (("Capacity", "1.7 l"), ("Power", "2200 W"), ("Weight", "1.1 kg")),
        (
            "A concealed element boils a full kettle in about four minutes and switches off "
            "automatically.",
            "The water window on both sides shows the level from either hand.",
            "A removable limescale filter in the spout can be rinsed under the tap.",
            "The handle stays cool, and the lid opens with a soft push of a button.",
            "The base has a cord store underneath, so the cable never trails across the worktop.",
            "Boil-dry protection cuts the power if the kettle is switched on while empty.",
        ),
    ),
    (
        "Trail Backpack 28 l",
        "BP-3310",
        8900,
        "Outdoor",
        (("Volume", "28 l"), ("Weight", "980 g"), ("Back length", "44-52 cm")),
        (
            "The ventilated back panel keeps a gap between the pack and your shirt on warm climbs.",
            "A zipped front pocket holds a map, a snack and a phone within easy reach.",
            "Side pockets take a one-litre bottle each and have elastic tops.",
            "The rain cover packs into its own pouch at the bottom of the bag.",
            "Hip belt pockets are large enough for a compact camera or a pair of gloves.",
            "Reflective tabs on the shoulder straps help you be seen on the road home.",
        ),
    ),
    (
        "Folding Desk Lamp",
        "LM-1187",
        3450,
        "Home office",
        (("Light output", "450 lm"), ("Colour temperature", "2700-6500 K"), ("Cable", "1.5 m")),
        (
            "The arm folds flat so the lamp fits into a drawer when the desk is cleared.",
            "Five brightness steps and three colour tones are set with a touch strip.",
            "A USB port in the base charges a phone while you work.",
            "The diffuser spreads the light evenly and avoids a hot spot on the page.",
            "The weighted base keeps the lamp steady even with the arm fully extended.",
            "A memory function remembers the last setting when the lamp is switched on.",
        ),
    ),
    (
        "Wireless Headphones H2",
        "HP-5520",
        11900,
        "Audio",
        (("Battery", "up to 40 h"), ("Charging", "USB-C"), ("Weight", "250 g")),
        (
            "Active noise cancelling quietens engine hum on trains and planes.",
            "Ten minutes of charging gives about four hours of playback.",
            "The ear cushions use soft memory foam covered in breathable fabric.",
            "A transparency mode lets you hear announcements without taking them off.",
            "The headband folds so the headphones fit into the included hard case.",
            "Two devices can be connected at once, for example a laptop and a phone.",
        ),
    ),
    (
        "Burr Coffee Grinder",
        "CG-0930",
        7490,
        "Kitchen",
        (("Grind settings", "31"), ("Bean hopper", "250 g"), ("Motor", "150 W")),
        (
            "Conical steel burrs grind evenly from fine espresso to coarse filter coffee.",
            "The timer dial measures a dose for one to twelve cups.",
            "A slow motor keeps the beans cool and the kitchen quiet in the morning.",
            "The grounds container has a snug lid and a spout that does not spill.",
            "The upper burr lifts out by hand for cleaning without any tools.",
            "A safety switch stops the motor when the hopper is removed.",
        ),
    ),
    (
        "Packable Rain Jacket",
        "RJ-4402",
        6400,
        "Clothing",
        (("Waterproof rating", "10,000 mm"), ("Weight", "310 g"), ("Sizes", "XS-XXL")),
        (
            "The jacket packs into its own chest pocket and clips onto a harness loop.",
            "Taped seams and a storm flap keep out wind-driven rain.",
            "Underarm zips let out heat on steep walks and fast cycling.",
            "The hood adjusts at the back so it turns with your head.",
            "Elastic cuffs seal around gloves without letting water run down the sleeves.",
            "A longer back hem keeps you dry when you sit on a wet bench.",
        ),
    ),
    (
        "Oak Cutting Board",
        "CB-2218",
        2990,
        "Kitchen",
        (("Size", "40 x 28 cm"), ("Thickness", "3 cm"), ("Wood", "European oak")),
        (
            "Each board is cut from a single piece of oak and oiled by hand.",
            "A juice groove around the edge catches liquid from roasts and fruit.",
            "Rubber feet keep the board from sliding on a smooth worktop.",
            "The reverse side is flat and ready for bread or cheese.",
            "Wash by hand and oil it now and then to keep the grain from drying.",
            "Small knots and colour changes are natural and make every board different.",
        ),
    ),
    (
        "Insulated Bottle 750 ml",
        "WB-7705",
        2490,
        "Outdoor",
        (("Capacity", "750 ml"), ("Keeps cold", "24 h"), ("Keeps hot", "12 h")),
        (
            "Double steel walls keep water cold on a hot day and tea warm on a winter walk.",
            "The wide mouth takes ice cubes and is easy to clean with a brush.",
            "A powder-coated finish gives a firm grip even with wet hands.",
            "The loop lid screws tight and does not leak in a bag.",
            "No metallic taste is left in the drink, even after a full day.",
            "The bottle fits most car cup holders and bicycle cages.",
        ),
    ),
)
_PRODUCT_GENERIC = (
    "The {name} is designed for everyday use and built to last for years.",
    "It comes with a {num}-year guarantee and free returns within 30 days.",
    "Customers often pair it with other items from our {category} range.",
    "Every unit is checked by hand before it leaves our warehouse.",
    "Packaging is plastic-free and made from recycled cardboard.",
    "Spare parts remain available for at least {num4} years after purchase.",
)
_SHOP_RELATED = (
    "Ceramic Mug, Blue",
    "Linen Tea Towel",
    "Stainless Lunch Box",
    "Merino Hiking Socks",
    "Bamboo Desk Organiser",
    "Travel Adapter",
)

# Vietnamese (written with full diacritics; stored NFC, one page NFD, one in cp1258).
_VI_TOPICS: tuple[_Topic, ...] = (
    _Topic(
        "metro",
        "Giao thông",
        ("phường An Khánh", "nút giao Ngã Tư Mới", "đường Hoa Sữa"),
        ("tuyến tàu điện số 3", "nhà ga ngầm trung tâm", "bãi đỗ xe trung chuyển"),
        ("ông Nguyễn Văn Hải, giám đốc ban quản lý dự án", "bà Trần Thị Mai"),
        ("người đi làm", "tiểu thương", "cư dân ven tuyến"),
        ("Tuyến tàu điện qua {place} dự kiến chạy thử cuối năm", "Người dân {place} chờ nhà ga"),
        (
            "Mỗi đoàn tàu gồm bốn toa và có thể chở hơn một nghìn hành khách vào giờ cao điểm.",
            "Các nhà ga trên cao đều có thang máy dành cho người khuyết tật và xe đẩy trẻ em.",
            "Tiếng ồn khi tàu chạy thử được đo ở nhiều điểm dọc tuyến và đều dưới mức cho phép.",
            "Vé lượt sẽ được bán tại quầy và qua ứng dụng trên điện thoại di động.",
            "Xe buýt gom khách sẽ nối các khu dân cư với những nhà ga gần nhất.",
            "Nhiều cửa hàng dọc tuyến đã phải tạm đóng cửa vì hàng rào công trường.",
        ),
    ),
    _Topic(
        "coffee",
        "Kinh tế",
        ("xã Tân Phú", "huyện Ea Lành", "cánh đồng Bàu Sen"),
        ("vụ cà phê mới", "hệ thống tưới nhỏ giọt", "kho sấy nông sản"),
        ("ông Phạm Văn Tài, trưởng phòng nông nghiệp huyện", "bà Hoàng Thị Lan"),
        ("nông dân", "các hợp tác xã", "thương lái"),
        (
            "Giá cà phê tăng, nông dân {place} phấn khởi",
            "Tưới nhỏ giọt giúp {place} tiết kiệm nước",
        ),
        (
            "Năm nay trời mưa muộn nên nhiều vườn cà phê ra hoa không đều.",
            "Hệ thống tưới nhỏ giọt giúp tiết kiệm gần một nửa lượng nước so với cách tưới cũ.",
            "Thương lái trả giá cao hơn cho cà phê được hái chín và phơi trên giàn.",
            "Nhiều hộ đã trồng xen sầu riêng và bơ để giảm rủi ro khi giá xuống thấp.",
            "Kho sấy mới giúp hạt cà phê không bị ẩm mốc trong những ngày mưa kéo dài.",
            "Các hợp tác xã đang học cách ghi nhật ký canh tác để xuất khẩu sang châu Âu.",
        ),
    ),
    _Topic(
        "school",
        "Giáo dục",
        ("trường tiểu học Hòa Bình", "phường Phú Mỹ", "khu tập thể Thành Công"),
        ("dãy phòng học mới", "thư viện điện tử", "chương trình bữa trưa bán trú"),
        ("cô Đỗ Thu Hà, hiệu trưởng nhà trường", "ông Vũ Đức Thắng"),
        ("phụ huynh", "giáo viên", "học sinh lớp năm"),
        ("{place} khánh thành dãy phòng học mới", "Học sinh {place} có thư viện điện tử"),
        (
            "Mỗi lớp học mới đều có quạt trần, bảng chống lóa và cửa sổ lớn đón ánh sáng tự nhiên.",
            "Trước đây nhiều lớp phải học ca ba vì trường thiếu phòng.",
            "Thư viện điện tử có hơn hai nghìn đầu sách và được mở cửa cả vào cuối tuần.",
            "Phụ huynh thay nhau trực ở cổng trường vào giờ tan học để giữ trật tự.",
            "Bữa trưa bán trú được nấu ngay tại trường với rau lấy từ các hợp tác xã gần đó.",
            "Giáo viên trẻ được tập huấn cách dạy tiếng Anh qua trò chơi và bài hát.",
        ),
    ),
    _Topic(
        "tourism",
        "Du lịch",
        ("bãi biển Cát Vàng", "phố cổ Hội Xuân", "đảo Hòn Mây"),
        ("lễ hội đèn lồng", "tuyến xe buýt du lịch", "bến thuyền mới"),
        ("ông Lương Quốc Bảo, giám đốc sở du lịch", "bà Ngô Thị Thanh"),
        ("du khách", "chủ nhà hàng", "hướng dẫn viên"),
        ("Lễ hội đèn lồng ở {place} hút khách dịp cuối tuần", "{place} mở tuyến xe buýt du lịch"),
        (
            "Vào đêm rằm, cả khu phố tắt đèn điện và chỉ thắp đèn lồng giấy nhiều màu.",
            "Các hộ dân mở nhà cổ cho khách tham quan và kể chuyện về nghề làm gốm.",
            "Giá phòng nghỉ tăng gần gấp đôi vào những ngày cuối tuần trong mùa hè.",
            "Bến thuyền mới giúp du khách ra đảo an toàn hơn khi biển động.",
            "Nhiều nhà hàng đã in thực đơn bằng ba thứ tiếng và niêm yết giá rõ ràng.",
            "Rác thải nhựa trên bãi biển giảm hẳn sau khi các quầy nước ngừng phát ống hút.",
        ),
    ),
    _Topic(
        "health",
        "Sức khỏe",
        ("trạm y tế phường Tân Định", "bệnh viện đa khoa khu vực", "xã Phước Lộc"),
        ("phòng khám ngoài giờ", "đợt tiêm chủng mở rộng", "xe cấp cứu mới"),
        ("bác sĩ Trịnh Văn Khoa", "bà Đinh Thị Hồng, giám đốc trung tâm y tế"),
        ("người cao tuổi", "các gia đình có con nhỏ", "điều dưỡng"),
        ("{place} mở phòng khám ngoài giờ", "Người cao tuổi ở {place} được khám miễn phí"),
        (
            "Phòng khám ngoài giờ mở cửa đến chín giờ tối từ thứ hai đến thứ sáu.",
            "Người bệnh có thể đặt lịch hẹn qua điện thoại để không phải xếp hàng từ sáng sớm.",
            "Nhiều người cao tuổi được phát hiện tăng huyết áp trong đợt khám sàng lọc.",
            "Xe cấp cứu mới được trang bị máy thở và có thể đến các xã vùng sâu nhanh hơn.",
            "Điều dưỡng đến tận nhà để hướng dẫn chăm sóc người bệnh nằm lâu.",
            "Trạm y tế đã có thêm tủ lạnh chuyên dụng để bảo quản vắc xin.",
        ),
    ),
    _Topic(
        "canal",
        "Môi trường",
        ("kênh Nhiêu Lộc Mới", "công viên Bờ Hồ", "khu phố Bình Minh"),
        ("dự án nạo vét kênh", "chương trình phân loại rác tại nguồn", "hàng cây xanh mới"),
        ("ông Bùi Quang Huy, phó giám đốc công ty môi trường", "bà Cao Thị Yến"),
        ("tình nguyện viên", "hộ dân ven kênh", "sinh viên"),
        ("Nạo vét {place}, nước kênh trong trở lại", "{place} thí điểm phân loại rác tại nguồn"),
        (
            "Trước khi nạo vét, mùi hôi từ con kênh khiến nhiều hộ phải đóng cửa cả ngày.",
            "Mỗi sáng chủ nhật, hàng trăm tình nguyện viên nhặt rác dọc bờ kênh.",
            "Các hộ dân được phát hai thùng rác màu xanh và màu cam để phân loại.",
            "Cá đã quay trở lại ở nhiều đoạn kênh sau khi nước được làm sạch.",
            "Hàng cây xanh mới được tưới nước bằng xe bồn vào những tháng nắng nóng.",
            "Rác hữu cơ được ủ thành phân bón cho các vườn rau trong khu phố.",
        ),
    ),
    _Topic(
        "football",
        "Thể thao",
        ("sân vận động Phú Thọ Mới", "xã Long Hòa", "nhà văn hóa thiếu nhi"),
        ("giải bóng đá thiếu niên", "sân cỏ nhân tạo mới", "lớp bơi miễn phí mùa hè"),
        ("huấn luyện viên Lê Hoàng Nam", "ông Tạ Minh Đức"),
        ("các cầu thủ nhí", "phụ huynh", "cổ động viên"),
        ("Giải bóng đá thiếu niên khởi tranh tại {place}", "{place} có sân cỏ nhân tạo mới"),
        (
            "Ba mươi hai đội bóng đến từ các xã trong huyện đã đăng ký tham gia giải.",
            "Các trận đấu diễn ra vào chiều thứ bảy để học sinh không phải nghỉ học.",
            "Sân cỏ nhân tạo mới có hệ thống đèn chiếu sáng để tập luyện buổi tối.",
            "Nhiều em nhỏ lần đầu được mặc áo đấu có in tên và số của mình.",
            "Lớp bơi miễn phí giúp trẻ em vùng sông nước biết cách tự cứu mình.",
            "Cổ động viên mang trống và cờ đến sân, tạo không khí như một ngày hội.",
        ),
    ),
)
_VI_GENERIC = (
    "Theo {official}, {thing} sẽ được hoàn thành trước cuối tháng {m}.",
    "Nhiều {group} cho biết họ đã chờ đợi {thing} trong suốt {num} năm qua.",
    "Tổng kinh phí dự kiến khoảng {money} tỷ đồng, cao hơn {pct}% so với ước tính ban đầu.",
    "Tại buổi họp với người dân ở {place}, nhiều ý kiến đề nghị công khai tiến độ hằng tháng.",
    "Một số {group} bày tỏ lo ngại về tiếng ồn và bụi trong thời gian thi công.",
    "Giai đoạn đầu tập trung vào khu vực {place}, giai đoạn hai chưa được phê duyệt.",
    "Các kỹ sư sẽ mất khoảng {num} tuần để khảo sát nền đất quanh {place}.",
    "Chính quyền địa phương hứa sẽ đăng báo cáo tiến độ trên cổng thông tin điện tử.",
    "Một khảo sát với {num3} hộ gia đình cho thấy phần lớn người dân ủng hộ {thing}.",
    "Trước đó, phương án di dời {thing} ra xa khu dân cư đã bị bác bỏ vì chi phí quá cao.",
    "Các tuyến đường quanh {place} sẽ được phân luồng trong ít nhất {num} ngày.",
    "Đợt lấy ý kiến tiếp theo dự kiến diễn ra vào tháng {m2}, người dân có thể gửi góp ý "
    "bằng văn bản.",
    "Nhiều hộ kinh doanh gần {place} hy vọng lượng khách sẽ tăng khi {thing} hoàn thành.",
    "Mưa lớn trong tuần qua khiến công tác chuẩn bị chậm gần một tuần so với kế hoạch.",
    "{Official} cảm ơn {group} đã kiên nhẫn và cho biết giai đoạn khó khăn nhất đã qua.",
    "Các chuyên gia khuyến nghị cần có kế hoạch bảo trì định kỳ để {thing} sử dụng lâu dài.",
)
_VI_AUTHORS = ("Minh Anh", "Quốc Việt", "Thu Trang", "Hoàng Long", "Ngọc Hân")
_VI_RELATED = (
    "Giá xăng giảm nhẹ từ chiều nay",
    "Học sinh cả nước bước vào kỳ thi học kỳ",
    "Thời tiết miền Bắc chuyển lạnh về đêm",
    "Chợ hoa xuân mở cửa đến nửa đêm",
    "Nhiều tuyến xe buýt điều chỉnh lộ trình",
    "Bảo tàng thành phố mở cửa miễn phí cuối tuần",
)

# Chinese (simplified; every character is in GBK).
_ZH_TOPICS: tuple[_Topic, ...] = (
    _Topic(
        "metro",
        "社会",
        ("东湖区", "新港路口", "滨江站"),
        ("地铁五号线", "换乘枢纽", "地下停车场"),
        ("市轨道交通公司负责人王建平", "区交通局副局长李红"),
        ("上班族", "沿线居民", "周边商户"),
        ("地铁五号线{place}段预计年底试运行", "{place}换乘枢纽开工建设"),
        (
            "每列地铁由六节车厢组成，高峰时段可运送两千多名乘客。",
            "所有高架车站都配备了无障碍电梯，方便老人和推婴儿车的家长出行。",
            "试运行期间，工作人员在沿线多个地点测量了噪音，结果均低于国家标准。",
            "乘客可以在售票窗口购票，也可以使用手机扫码进站。",
            "接驳公交将把周边小区和最近的车站连接起来。",
            "围挡施工期间，沿线部分小店不得不暂停营业。",
        ),
    ),
    _Topic(
        "tea",
        "财经",
        ("青山镇", "云溪村", "南坡茶园"),
        ("今年的春茶", "冷链仓库", "滴灌系统"),
        ("镇农业服务中心主任张国强", "茶叶合作社理事长陈秀兰"),
        ("茶农", "合作社社员", "收购商"),
        ("{place}春茶开采，茶农喜迎丰收", "{place}建成冷链仓库"),
        (
            "今年春天气温回升较快，茶树发芽比往年提前了大约一周。",
            "滴灌系统比传统浇灌方式节约了将近一半的用水。",
            "收购商对手工采摘、及时摊晾的鲜叶给出了更高的价格。",
            "不少农户在茶园里套种了果树，以降低价格波动带来的风险。",
            "新建的冷链仓库让茶叶在梅雨季节也不容易受潮发霉。",
            "合作社正在学习记录种植日志，为出口欧洲市场做准备。",
        ),
    ),
    _Topic(
        "school",
        "教育",
        ("实验小学", "北苑社区", "城西新区"),
        ("新教学楼", "课后托管服务", "校园图书馆"),
        ("校长刘慧敏", "区教育局局长赵明"),
        ("家长", "老师", "五年级学生"),
        ("{place}新教学楼正式启用", "{place}推出课后托管服务"),
        (
            "新教室都安装了护眼灯和防眩光黑板，窗户宽大，采光良好。",
            "过去由于教室不足，一些班级只能在临时板房里上课。",
            "校园图书馆藏书超过两万册，周末也向社区居民开放。",
            "放学时段，家长志愿者轮流在校门口维持秩序。",
            "学校食堂使用附近合作社提供的新鲜蔬菜。",
            "年轻教师参加了培训，学习用游戏和歌曲教授英语。",
        ),
    ),
    _Topic(
        "oldtown",
        "文化",
        ("古镇老街", "白沙湾", "月亮岛"),
        ("元宵灯会", "观光巴士线路", "游客服务中心"),
        ("文旅局负责人孙立新", "民宿经营者周小燕"),
        ("游客", "餐馆老板", "导游"),
        ("{place}灯会吸引大批游客", "{place}开通观光巴士线路"),
        (
            "灯会期间，整条老街关闭路灯，只点亮各式各样的纸灯笼。",
            "一些老宅向游客开放，主人会讲述当地制陶手艺的故事。",
            "暑期周末，民宿价格几乎翻了一倍。",
            "新码头投入使用后，游客在风浪较大时上岛也更加安全。",
            "许多餐馆推出了三种语言的菜单，并明码标价。",
            "海滩上的塑料垃圾明显减少，因为饮品店已经停止提供吸管。",
        ),
    ),
    _Topic(
        "clinic",
        "健康",
        ("社区卫生服务中心", "城南医院", "河西街道"),
        ("家庭医生签约服务", "夜间门诊", "新救护车"),
        ("院长吴振华", "街道卫生办主任郑丽"),
        ("老年人", "有小孩的家庭", "护士"),
        ("{place}开设夜间门诊", "{place}老年人免费体检"),
        (
            "夜间门诊周一至周五开放到晚上九点。",
            "患者可以通过电话预约，不必一大早就来排队挂号。",
            "在这次免费体检中，不少老年人被查出患有高血压。",
            "新救护车配备了呼吸机，能够更快到达偏远村庄。",
            "护士上门指导家属如何照顾长期卧床的病人。",
            "卫生服务中心新添了专门保存疫苗的医用冰箱。",
        ),
    ),
    _Topic(
        "river",
        "环境",
        ("清水河", "滨湖公园", "东郊"),
        ("河道清淤工程", "垃圾分类试点", "新种植的行道树"),
        ("环保局副局长黄志刚", "社区网格员何静"),
        ("志愿者", "沿河居民", "大学生"),
        ("{place}清淤完成，河水重现清澈", "{place}开展垃圾分类试点"),
        (
            "清淤之前，河道散发的臭味让不少住户整天不敢开窗。",
            "每个周日早上，数百名志愿者沿着河岸捡拾垃圾。",
            "居民家中领到了绿色和橙色两个垃圾桶，用于分类投放。",
            "河水变清以后，多段河道里又能看到小鱼了。",
            "炎热的月份里，洒水车每天为新种的行道树浇水。",
            "厨余垃圾被制成有机肥，用于社区里的小菜园。",
        ),
    ),
)
_ZH_GENERIC = (
    "据{official}介绍，{thing}预计将在{m}月底前完成。",
    "不少{group}表示，他们已经等待{thing}长达{num}年。",
    "项目总投资约{money}亿元，比最初的估算高出百分之{pct}。",
    "在{place}举行的居民座谈会上，许多人希望每月公开工程进度。",
    "{official}表示，施工单位已经安排了足够的人员和设备。",
    "部分{group}担心施工期间的噪音和扬尘问题。",
    "第一阶段工程主要集中在{place}，第二阶段尚未获得批准。",
    "工程师们将用大约{num}周时间勘察{place}一带的地基。",
    "有关部门承诺将在官方网站上定期发布进度报告。",
    "一项针对{num3}户家庭的调查显示，大多数居民支持{thing}。",
    "此前，将{thing}迁往郊区的方案因成本过高而被否决。",
    "施工期间，{place}周边道路将实行交通管制，时间至少{num}天。",
    "下一轮公众意见征集预计在{m2}月进行，市民可以提交书面意见。",
    "{place}附近的商户希望{thing}完成后客流量能够明显增加。",
    "上周的持续降雨使前期准备工作推迟了将近一周。",
    "专家建议制定定期维护计划，让{thing}长期发挥作用。",
)
_ZH_AUTHORS = ("记者 林晓", "记者 马俊", "通讯员 杨帆", "记者 徐静")
_ZH_RELATED = (
    "本市公交线路优化调整",
    "春季招聘会本周六举行",
    "气象台发布大风蓝色预警",
    "博物馆推出周末免费开放日",
    "老旧小区改造进入新阶段",
    "全民健身活动周启动",
)


# --------------------------------------------------------------------------------------
# Articles and products as data, rendered into site templates below.
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Article:
    slug: str
    title: str
    paragraphs: tuple[str, ...]
    author: str
    published: datetime
    comments: int
    related: tuple[str, ...]
    section: str


@dataclass(frozen=True)
class _Product:
    slug: str
    name: str
    sku: str
    price_cents: int
    category: str
    specs: tuple[tuple[str, str], ...]
    paragraphs: tuple[str, ...]
    rating: str
    reviews: int
    related: tuple[str, ...]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _slugify(text: str) -> str:
    ascii_only = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = "".join(c if c.isalnum() else " " for c in ascii_only.lower()).split()
    return "-".join(words[:8]) or "page"


def _rotate_sentences(paragraph: str) -> str:
    sentences = re.split(r"(?<=[.!?]) ", paragraph)
    return " ".join(sentences[1:] + sentences[:1])


class _Writer:
    """Fills sentence templates from one topic's cast with seeded choices."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def slots(self, topic: _Topic) -> dict[str, str]:
        rng = self.rng
        official = rng.choice(topic.officials)
        return {
            "place": rng.choice(topic.places),
            "thing": rng.choice(topic.things),
            "official": official,
            "Official": _cap(official),
            "group": rng.choice(topic.groups),
            "weekday": rng.choice(_WEEKDAYS),
            "month": rng.choice(_MONTHS),
            "m": str(rng.randint(4, 11)),
            "m2": str(rng.randint(4, 12)),
            "num": str(rng.randint(2, 9)),
            "num3": str(rng.randint(120, 980)),
            "num4": str(rng.choice((15, 20, 25, 30, 40))),
            "big": f"{rng.randint(12, 98) * 100:,}",
            "money": f"{rng.randint(12, 95) / 10:.1f}",
            "pct": str(rng.randint(6, 35)),
        }

    def fill(self, template: str, topic: _Topic) -> str:
        return template.format(**self.slots(topic))

    def article(
        self,
        topic: _Topic,
        specific: Sequence[str],
        generic: Sequence[str],
        *,
        n_specific: int,
        n_generic: int,
        per_paragraph: int,
        joiner: str,
    ) -> tuple[str, tuple[str, ...]]:
        rng = self.rng
        picked = [*rng.sample(list(specific), n_specific), *rng.sample(list(generic), n_generic)]
        chosen = [self.fill(s, topic) for s in picked]
        rng.shuffle(chosen)
        paragraphs = tuple(
            joiner.join(chosen[i : i + per_paragraph]) for i in range(0, len(chosen), per_paragraph)
        )
        headline = self.fill(rng.choice(topic.headlines), topic)
        return _cap(headline), paragraphs


# --------------------------------------------------------------------------------------
# HTML. Lines are (depth, text); "pretty" output indents, "compact" output has no
# whitespace between tags (the whitespace-only case).
# --------------------------------------------------------------------------------------

_Lines = list[tuple[int, str]]


def _render(lines: _Lines, *, compact: bool = False) -> str:
    if compact:
        return "".join(text for _, text in lines)
    return "\n".join("  " * depth + text for depth, text in lines) + "\n"


def _e(text: str) -> str:
    return escape(text, quote=True)


def _menu(depth: int, css: str, items: Sequence[str], path: Callable[[str], str]) -> _Lines:
    lines: _Lines = [(depth, f'<nav class="{css}">'), (depth + 1, "<ul>")]
    for item in items:
        lines.append((depth + 2, f'<li><a href="{_e(path(item))}">{_e(item)}</a></li>'))
    return [*lines, (depth + 1, "</ul>"), (depth, "</nav>")]


def _head(lang: str, charset: str, title: str, url: str) -> _Lines:
    return [
        (0, "<!DOCTYPE html>"),
        (0, f'<html lang="{lang}">'),
        (0, "<head>"),
        (1, f'<meta charset="{charset}">'),
        (1, f"<title>{_e(title)}</title>"),
        (1, '<meta name="viewport" content="width=device-width, initial-scale=1">'),
        (1, f'<link rel="canonical" href="{_e(url)}">'),
        (0, "</head>"),
    ]


def _paragraph_lines(depth: int, paragraphs: Sequence[str], *, wrap: bool) -> _Lines:
    out: _Lines = []
    for text in paragraphs:
        body = _e(text)
        if wrap:  # hard line breaks inside the paragraph, as some CMSes emit
            words = body.split(" ")
            body = "\n".join(" ".join(words[i : i + 9]) for i in range(0, len(words), 9))
        out.append((depth, f"<p>{body}</p>"))
    return out


_NEWS_MENU: dict[str, tuple[str, ...]] = {
    "Local": ("North", "South", "Harbour", "Villages"),
    "Politics": ("Council", "Elections", "Parliament"),
    "Business": ("Markets", "Jobs", "Property", "Small business"),
    "Transport": ("Roads", "Rail", "Cycling"),
    "Education": ("Schools", "Universities"),
    "Health": ("Hospitals", "Wellbeing"),
    "Science": ("Space", "Nature", "Technology"),
    "Sport": ("Football", "Rowing", "Athletics", "Results"),
    "Culture": ("Theatre", "Music", "Books", "Listings"),
    "Opinion": ("Editorials", "Letters", "Columnists"),
}
_NEWS_UTILITY = ("Subscribe", "Sign in", "Newsletters", "Today's paper", "Puzzles", "Jobs")
_NEWS_MOST_READ = (
    "Man rescued after car rolls into harbour at low tide",
    "Ten walks to try before the clocks go forward",
    "Why the number 4 bus keeps running late",
    "Readers' photos: frost on the allotments",
    "Letters: the market square needs more benches",
    "Quiz of the week: how well do you know the old town?",
)
_NEWS_FOOTER = (
    "About us",
    "Contact",
    "Advertise",
    "Privacy",
    "Cookie settings",
    "Terms",
    "Corrections",
    "Careers",
    "Accessibility",
    "Archive",
    "RSS feeds",
    "Complaints",
)
_NEWS_LEGAL = (
    "The Example Courier is an invented newspaper used to test duplicate detection. "
    "Registered office: 1 Example Street, Example Town. Registered in England No. 0000000. "
    "We follow the editors' code of practice and publish corrections on the corrections "
    "page. Reproduction of any material without permission is prohibited."
)
_NEWS_MENU_V2 = ("Home", "Latest", "Your area", "Money", "Sport", "Life", "Puzzles", "Podcasts")


def _mega_menu(depth: int) -> _Lines:
    lines: _Lines = [(depth, '<nav class="main-menu">'), (depth + 1, '<ul class="sections">')]
    for section, subsections in _NEWS_MENU.items():
        base = f"/{_slugify(section)}/"
        lines.append((depth + 2, f'<li><a href="{base}">{_e(section)}</a>'))
        lines.append((depth + 3, '<ul class="sub">'))
        for sub in subsections:
            lines.append((depth + 4, f'<li><a href="{base}{_slugify(sub)}/">{_e(sub)}</a></li>'))
        lines += [(depth + 3, "</ul>"), (depth + 2, "</li>")]
    return [*lines, (depth + 1, "</ul>"), (depth, "</nav>")]


def _news_html(
    art: _Article,
    url: str,
    stamp: str,
    *,
    redesign: bool = False,
    compact: bool = False,
    wrap: bool = False,
    byline_extra: str = "",
) -> str:
    """A heavy, realistic template: the page's own words are a minority of its text."""
    date_text = f"{art.published.day} {art.published:%B %Y}"
    lines = _head("en", "utf-8", f"{art.title} | The Example Courier", url)
    lines.append((0, "<body>"))
    if redesign:
        lines += [
            (1, '<header class="masthead">'),
            (2, '<a class="brand" href="/">Example Courier</a>'),
            (2, '<a class="subscribe" href="/subscribe/">Subscribe for 1 euro</a>'),
            *_menu(2, "nav-v2", _NEWS_MENU_V2, lambda s: f"/{_slugify(s)}/"),
            (1, "</header>"),
        ]
    else:
        lines += [
            (1, '<div class="utility-bar">'),
            *_menu(2, "utility", _NEWS_UTILITY, lambda s: f"/{_slugify(s)}/"),
            (1, "</div>"),
            (1, '<header class="site-header">'),
            (2, '<a class="logo" href="/">The Example Courier</a>'),
            *_mega_menu(2),
            (1, "</header>"),
        ]
    related_heading = f"More from {art.section}" if redesign else "Related articles"
    lines += [
        (1, "<main>"),
        (2, '<article class="story">'),
        (3, f"<h1>{_e(art.title)}</h1>"),
        (
            3,
            f'<p class="byline">By {_e(art.author)}{byline_extra} · <time datetime="'
            f'{art.published:%Y-%m-%d}">{date_text}</time> · <a class="comment-count" '
            f'href="#comments">{art.comments} comments</a></p>',
        ),
        *_paragraph_lines(3, art.paragraphs, wrap=wrap),
        (2, "</article>"),
        (2, '<aside class="related">'),
        (3, f"<h2>{_e(related_heading)}</h2>"),
        (3, "<ul>"),
        *[
            (4, f'<li><a href="/{_slugify(r)}/">{_e(r)}</a></li>')
            for r in (art.related[::-1] if redesign else art.related)
        ],
        (3, "</ul>"),
        (2, "</aside>"),
    ]
    if not redesign:
        lines += [
            (2, '<aside class="most-read">'),
            (3, "<h2>Most read</h2>"),
            (3, "<ol>"),
            *[(4, f'<li><a href="/{_slugify(r)}/">{_e(r)}</a></li>') for r in _NEWS_MOST_READ],
            (3, "</ol>"),
            (2, "</aside>"),
        ]
    lines += [
        (2, '<section class="comments" id="comments">'),
        (3, f"<h2>{art.comments} comments</h2>"),
    ]
    for i in range(min(art.comments, 2)):
        who = _EN_COMMENTERS[(art.comments + i) % len(_EN_COMMENTERS)]
        said = _EN_COMMENTS[(art.comments * 3 + i) % len(_EN_COMMENTS)]
        lines += [
            (3, '<div class="comment">'),
            (4, f'<p class="comment-meta">{_e(who)}</p>'),
            (4, f"<p>{_e(said)}</p>"),
            (3, "</div>"),
        ]
    lines.append((2, "</section>"))
    lines.append((1, "</main>"))
    if redesign:
        lines += [
            (1, '<footer class="footer-v2">'),
            (2, "<p>Example Courier Media Group · Newsroom: +44 20 0000 0000</p>"),
            (2, '<p><a href="/privacy/">Privacy settings</a> · <a href="/jobs/">Jobs</a></p>'),
            (2, f'<p class="generated">Served {stamp}</p>'),
            (1, "</footer>"),
        ]
    else:
        lines += [
            (1, '<footer class="site-footer">'),
            *_menu(2, "footer-links", _NEWS_FOOTER, lambda s: f"/{_slugify(s)}/"),
            (2, f"<p>{_e(_NEWS_LEGAL)}</p>"),
            (2, "<p>© 2026 The Example Courier Ltd. All rights reserved.</p>"),
            (2, f'<p class="generated">Page generated {stamp}</p>'),
            (1, "</footer>"),
        ]
    lines += [(0, "</body>"), (0, "</html>")]
    return _render(lines, compact=compact)


def _wire_html(art: _Article, url: str) -> str:
    date_text = f"{art.published:%B} {art.published.day}, {art.published.year}"
    lines = _head("en", "utf-8", f"{art.title} - Example Wire", url)
    lines += [
        (0, "<body>"),
        (1, '<div class="topbar">'),
        (2, '<a class="wordmark" href="/">EXAMPLE WIRE</a>'),
        *_menu(
            2, "sections", ("World", "Business", "Markets", "Technology", "Regions"), _wire_path
        ),
        (1, "</div>"),
        (1, '<main class="content">'),
        (2, "<article>"),
        (3, f"<h1>{_e(art.title)}</h1>"),
        (3, f'<div class="meta">{_e(art.author)} · {date_text} · {art.comments} comments</div>'),
        *_paragraph_lines(3, art.paragraphs, wrap=False),
        (2, "</article>"),
        (2, '<aside class="related">'),
        (3, "<h2>Related coverage</h2>"),
        (3, "<ul>"),
        *[(4, f"<li>{_e(r)}</li>") for r in art.related],
        (3, "</ul>"),
        (2, "</aside>"),
        (1, "</main>"),
        (1, '<footer class="wire-footer">'),
        (2, "<p>Reporting by Example Wire; editing by the regional desk.</p>"),
        (2, "<p>Example Wire is an invented news agency used for testing.</p>"),
        (2, "<p>All quotes delayed by at least 15 minutes. © 2026 Example Wire.</p>"),
        (1, "</footer>"),
        (0, "</body>"),
        (0, "</html>"),
    ]
    return _render(lines)


def _wire_path(section: str) -> str:
    return f"/{_slugify(section)}/"


def _talk_html(
    title: str,
    url: str,
    author: str,
    posted: datetime,
    paragraphs: Sequence[str],
    replies: Sequence[tuple[str, str]],
    *,
    kind: str = "thread",
) -> str:
    lines = _head("en", "utf-8", f"{title} - Talk Example", url)
    lines += [
        (0, "<body>"),
        (1, '<header class="forum-header">'),
        (2, '<a class="logo" href="/">Talk Example</a>'),
        *_menu(2, "forum-nav", ("Forums", "Latest", "Top", "Blog", "Members", "Rules"), _wire_path),
        (1, "</header>"),
        (1, "<main>"),
        (2, f'<article class="{kind}">'),
        (3, f"<h1>{_e(title)}</h1>"),
        (
            3,
            f'<p class="post-meta">Posted by {_e(author)} on {posted:%Y-%m-%d} · '
            f"{len(replies)} replies</p>",
        ),
        *_paragraph_lines(3, paragraphs, wrap=False),
        (2, "</article>"),
    ]
    if kind == "teaser":
        lines.append(
            (
                2,
                '<div class="read-more"><a href="https://news.example.com/">Continue reading '
                "at The Example Courier</a></div>",
            )
        )
    lines += [(2, '<section class="comments">'), (3, f"<h2>{len(replies)} replies</h2>")]
    for who, said in replies:
        lines += [
            (3, '<div class="comment">'),
            (4, f'<p class="comment-meta">{_e(who)}</p>'),
            (4, f"<p>{_e(said)}</p>"),
            (3, "</div>"),
        ]
    lines += [
        (2, "</section>"),
        (2, '<aside class="sidebar">'),
        (3, "<h2>Related threads</h2>"),
        (3, "<ul><li>Beginners: read this first</li><li>Show us your weekend projects</li></ul>"),
        (2, "</aside>"),
        (1, "</main>"),
        (1, '<footer class="forum-footer">'),
        (2, "<p>Talk Example is a community forum. Be kind, stay on topic.</p>"),
        (1, "</footer>"),
        (0, "</body>"),
        (0, "</html>"),
    ]
    return _render(lines)


_SHOP_MENU = ("Kitchen", "Outdoor", "Home office", "Audio", "Clothing", "Sale")


def _price(cents: int) -> str:
    return f"${cents // 100}.{cents % 100:02d}"


def _shop_frame(title: str, url: str, main: _Lines, *, stock_related: Sequence[str]) -> str:
    lines = _head("en", "utf-8", f"{title} | Example Shop", url)
    lines += [
        (0, "<body>"),
        (1, '<header class="shop-header">'),
        (2, '<a class="logo" href="/">Example Shop</a>'),
        (2, '<a class="basket" href="/basket/">Basket (0)</a>'),
        *_menu(2, "categories", _SHOP_MENU, lambda s: f"/c/{_slugify(s)}/"),
        (1, "</header>"),
        (1, "<main>"),
        *main,
        (2, '<aside class="related-products">'),
        (3, "<h2>Customers also viewed</h2>"),
        (3, "<ul>"),
        *[(4, f'<li><a href="/p/{_slugify(r)}/">{_e(r)}</a></li>') for r in stock_related],
        (3, "</ul>"),
        (2, "</aside>"),
        (1, "</main>"),
        (1, '<footer class="shop-footer">'),
        (2, "<p>Free delivery on orders over $50 · Returns within 30 days</p>"),
        (2, "<p>© 2026 Example Shop. Prices include VAT.</p>"),
        (1, "</footer>"),
        (0, "</body>"),
        (0, "</html>"),
    ]
    return _render(lines)


def _product_html(prod: _Product, url: str) -> str:
    main: _Lines = [
        (
            2,
            '<nav class="breadcrumb"><a href="/">Home</a> › '
            f'<a href="/c/{_slugify(prod.category)}/">{_e(prod.category)}</a></nav>',
        ),
        (2, '<div class="product">'),
        (3, f"<h1>{_e(prod.name)}</h1>"),
        (3, f'<p class="price">{_price(prod.price_cents)}</p>'),
        (3, f'<p class="sku">SKU: {_e(prod.sku)}</p>'),
        (3, f'<p class="rating">Rated {prod.rating} out of 5 · {prod.reviews} reviews</p>'),
        (3, '<div class="description">'),
        *_paragraph_lines(4, prod.paragraphs, wrap=False),
        (3, "</div>"),
        (3, '<table class="specs">'),
        *[(4, f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>") for k, v in prod.specs],
        (3, "</table>"),
        (2, "</div>"),
    ]
    return _shop_frame(prod.name, url, main, stock_related=prod.related)


def _stub_html(name: str, url: str) -> str:
    main: _Lines = [
        (2, '<div class="product">'),
        (3, f"<h1>{_e(name)}</h1>"),
        (3, "<p>Sold out.</p>"),
        (2, "</div>"),
    ]
    lines = _head("en", "utf-8", f"{name} | Example Shop", url)
    lines += [(0, "<body>"), (1, "<main>"), *main, (1, "</main>"), (0, "</body>"), (0, "</html>")]
    return _render(lines)


_VI_MENU = ("Thời sự", "Thế giới", "Kinh tế", "Giáo dục", "Sức khỏe", "Du lịch", "Thể thao")
_VI_WEEKDAYS = ("Thứ hai", "Thứ ba", "Thứ tư", "Thứ năm", "Thứ sáu", "Thứ bảy", "Chủ nhật")


def _vi_html(art: _Article, url: str, charset: str) -> str:
    date_text = f"{_VI_WEEKDAYS[art.published.weekday()]}, {art.published.day}/" + (
        f"{art.published.month}/{art.published.year}"
    )
    lines = _head("vi", charset, f"{art.title} - Tin Tức Mẫu", url)
    lines += [
        (0, "<body>"),
        (1, '<header class="header">'),
        (2, '<a class="logo" href="/">Tin Tức Mẫu</a>'),
        *_menu(2, "menu-chinh", ("Trang chủ", *_VI_MENU), lambda s: f"/{_slugify(s)}/"),
        (1, "</header>"),
        (1, '<main class="main">'),
        (2, '<article class="bai-viet">'),
        (3, f"<h1>{_e(art.title)}</h1>"),
        (
            3,
            f'<p class="thong-tin">{_e(art.author)} · {date_text} · '
            f'<span class="so-binh-luan">{art.comments} bình luận</span></p>',
        ),
        *_paragraph_lines(3, art.paragraphs, wrap=False),
        (2, "</article>"),
        (2, '<aside class="related">'),
        (3, "<h2>Bài viết liên quan</h2>"),
        (3, "<ul>"),
        *[(4, f'<li><a href="/{_slugify(r)}.html">{_e(r)}</a></li>') for r in art.related],
        (3, "</ul>"),
        (2, "</aside>"),
        (1, "</main>"),
        (1, '<footer class="footer">'),
        (2, "<p>© 2026 Tin Tức Mẫu. Trang tin thử nghiệm, nội dung hoàn toàn hư cấu.</p>"),
        (2, "<p>Liên hệ quảng cáo · Điều khoản sử dụng · Chính sách bảo mật</p>"),
        (1, "</footer>"),
        (0, "</body>"),
        (0, "</html>"),
    ]
    return _render(lines)


_ZH_MENU = ("首页", "国内", "国际", "财经", "科技", "体育", "文化", "社会")


def _zh_html(art: _Article, url: str) -> str:
    p = art.published
    lines = _head("zh-CN", "gbk", f"{art.title}_示例新闻网", url)
    lines += [
        (0, "<body>"),
        (1, '<div class="header">'),
        (2, '<a class="logo" href="/">示例新闻网</a>'),
        *_menu(2, "nav", _ZH_MENU, lambda s: f"/{len(s)}/"),
        (1, "</div>"),
        (1, '<div class="main">'),
        (2, '<div class="article">'),
        (3, f"<h1>{_e(art.title)}</h1>"),
        (
            3,
            f'<p class="info">{p.year}年{p.month}月{p.day}日 {_e(art.author)} · '
            f'<span class="comment-num">{art.comments}条评论</span></p>',
        ),
        *_paragraph_lines(3, art.paragraphs, wrap=False),
        (2, "</div>"),
        (2, '<div class="related">'),
        (3, "<h2>相关文章</h2>"),
        (3, "<ul>"),
        *[(4, f"<li>{_e(r)}</li>") for r in art.related],
        (3, "</ul>"),
        (2, "</div>"),
        (1, "</div>"),
        (1, '<div class="footer">'),
        (2, "<p>示例新闻网 版权所有 2026 本站内容均为虚构，仅供测试。</p>"),
        (2, "<p>关于我们 | 联系方式 | 广告服务 | 隐私政策</p>"),
        (1, "</div>"),
        (0, "</body>"),
        (0, "</html>"),
    ]
    return _render(lines)


def _login_html(url: str, next_path: str) -> str:
    lines = _head("en", "utf-8", "Sign in | The Example Courier", url)
    lines += [
        (0, "<body>"),
        (1, '<main class="login">'),
        (2, "<h1>Sign in to keep reading</h1>"),
        (2, "<p>This article is for subscribers.</p>"),
        (2, '<form method="post" action="/account/login">'),
        (3, f'<input type="hidden" name="next" value="{_e(next_path)}">'),
        (3, '<label>Email <input type="email" name="email"></label>'),
        (3, '<label>Password <input type="password" name="password"></label>'),
        (3, '<button type="submit">Sign in</button>'),
        (2, "</form>"),
        (1, "</main>"),
        (0, "</body>"),
        (0, "</html>"),
    ]
    return _render(lines)


def _blocked_html(status: int, url: str, ref: str, *, lang: str = "en") -> str:
    if lang == "zh":
        title, msg = "访问被拒绝", "您的请求已被安全系统拦截，请完成验证后重试。"
        charset = "gbk"
    elif status == 403:
        title, msg = "Access denied", "You do not have permission to view this page."
        charset = "utf-8"
    else:
        title, msg = "Too many requests", "Please wait a minute and prove you are not a robot."
        charset = "utf-8"
    lines = _head(lang, charset, title, url)
    lines += [
        (0, "<body>"),
        (1, '<div class="challenge">'),
        (2, f"<h1>{_e(title)}</h1>"),
        (2, f"<p>{_e(msg)}</p>"),
        (2, '<div class="captcha" data-sitekey="demo"></div>'),
        (2, f'<p class="ref">Reference #{ref}</p>'),
        (1, "</div>"),
        (0, "</body>"),
        (0, "</html>"),
    ]
    return _render(lines)


def _empty_html(url: str, title: str, *, app_shell: bool) -> str:
    lines = _head("en", "utf-8", title, url)
    if app_shell:  # a client-rendered page fetched without running its script
        lines += [
            (0, "<body>"),
            (1, '<div id="root"></div>'),
            (1, '<script src="/static/app.3f9c1a.js" defer></script>'),
            (0, "</body>"),
        ]
    else:
        lines.append((0, "<body></body>"))
    lines.append((0, "</html>"))
    return _render(lines)


# --------------------------------------------------------------------------------------
# Encodings.
# --------------------------------------------------------------------------------------

# Vietnamese tone marks: windows-1258 has them as combining characters, and has the
# vowel shapes (â ă ê ô ơ ư) precomposed, but not most letters carrying both.
_VI_TONES = frozenset("\u0300\u0301\u0303\u0309\u0323")


def cp1258_form(text: str) -> str:
    """The same text in the form windows-1258 can encode: letters precomposed where
    the code page has them, tone marks as combining characters otherwise.
    NFC of the result equals NFC of the input."""
    out: list[str] = []
    for ch in unicodedata.normalize("NFC", text):
        try:
            ch.encode("cp1258")
        except UnicodeEncodeError:
            decomposed = unicodedata.normalize("NFD", ch)
            shape = "".join(c for c in decomposed if c not in _VI_TONES)
            tones = "".join(c for c in decomposed if c in _VI_TONES)
            ch = unicodedata.normalize("NFC", shape) + tones
            ch.encode("cp1258")  # raises if the text cannot be written in cp1258
        out.append(ch)
    return "".join(out)


_FULLWIDTH = {c: chr(ord(c) + 0xFEE0) for c in "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"}
_FULLWIDTH.update({c.lower(): chr(ord(c.lower()) + 0xFEE0) for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"})


def to_fullwidth(text: str) -> str:
    """ASCII letters and digits → their full-width forms (NFKC maps them back)."""
    return "".join(_FULLWIDTH.get(c, c) for c in text)


# --------------------------------------------------------------------------------------
# The crawl.
# --------------------------------------------------------------------------------------


class _Crawl:
    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.writer = _Writer(self.rng)
        self.pages: list[DemoPage] = []
        self.cases: list[DemoCase] = []
        self._slugs: set[str] = set()

    # -- helpers ---------------------------------------------------------------------

    def when(self, day: int) -> datetime:
        """A fetch time on day `day` (0 = 2026-03-02), at a seeded minute of the day."""
        minutes = self.rng.randint(0, 14 * 60)
        return _BASE_TIME + timedelta(days=day, minutes=minutes, seconds=self.rng.randint(0, 59))

    def unique_slug(self, text: str) -> str:
        slug = base = _slugify(text)
        n = 2
        while slug in self._slugs:
            slug = f"{base}-{n}"
            n += 1
        self._slugs.add(slug)
        return slug

    def add(
        self,
        page_id: str,
        url: str,
        html: str,
        *,
        doc_type: str,
        fetched_at: datetime,
        encoding: str = "utf-8",
        status: int = 200,
        expect: str = "ok",
        content_charset: str | None = None,
        extra_headers: Sequence[tuple[str, str]] = (),
        body: bytes | None = None,
    ) -> DemoPage:
        data = body if body is not None else html.encode(encoding, errors="strict")
        charset = content_charset or encoding
        headers = [
            ("Content-Type", f"text/html; charset={charset}"),
            ("Content-Length", str(len(data))),
            ("Date", format_datetime(fetched_at, usegmt=True)),
            ("Server", "demo"),
            *extra_headers,
        ]
        site = url.split("/")[2]
        page = DemoPage(
            page_id, url, site, doc_type, fetched_at, status, headers, data, encoding, expect
        )
        self.pages.append(page)
        return page

    def case(
        self,
        case: str,
        title: str,
        pages: Sequence[DemoPage],
        label: str,
        reason: str,
        **checks: object,
    ) -> None:
        self.cases.append(DemoCase(case, title, tuple(p.id for p in pages), label, reason, checks))

    def en_article(self, topic: _Topic, *, section_related: Sequence[str]) -> _Article:
        rng = self.rng
        title, paragraphs = self.writer.article(
            topic,
            topic.specific,
            _EN_GENERIC,
            n_specific=8,
            n_generic=6,
            per_paragraph=3,
            joiner=" ",
        )
        return _Article(
            slug=self.unique_slug(title),
            title=title,
            paragraphs=paragraphs,
            author=rng.choice(_EN_AUTHORS),
            published=_BASE_TIME + timedelta(days=rng.randint(-3, 0)),
            comments=rng.randint(0, 60),
            related=tuple(rng.sample(list(section_related), 3)),
            section=topic.section,
        )

    def vi_article(self, topic: _Topic) -> _Article:
        rng = self.rng
        title, paragraphs = self.writer.article(
            topic,
            topic.specific,
            _VI_GENERIC,
            n_specific=5,
            n_generic=10,
            per_paragraph=3,
            joiner=" ",
        )
        return _Article(
            slug=self.unique_slug(title),
            title=title,
            paragraphs=paragraphs,
            author=rng.choice(_VI_AUTHORS),
            published=_BASE_TIME + timedelta(days=rng.randint(-3, 0)),
            comments=rng.randint(0, 80),
            related=tuple(rng.sample(list(_VI_RELATED), 3)),
            section=topic.section,
        )

    def zh_article(self, topic: _Topic) -> _Article:
        rng = self.rng
        title, paragraphs = self.writer.article(
            topic,
            topic.specific,
            _ZH_GENERIC,
            n_specific=5,
            n_generic=10,
            per_paragraph=3,
            joiner="",
        )
        return _Article(
            slug=f"{rng.randint(100000, 999999)}",
            title=title,
            paragraphs=paragraphs,
            author=rng.choice(_ZH_AUTHORS),
            published=_BASE_TIME + timedelta(days=rng.randint(-3, 0)),
            comments=rng.randint(0, 300),
            related=tuple(rng.sample(list(_ZH_RELATED), 3)),
            section=topic.section,
        )

    def product(self, index: int) -> _Product:
        rng = self.rng
        name, sku, cents, category, specs, specific = _PRODUCTS[index]
        generic = [
            g.format(
                name=name,
                category=category.lower(),
                num=rng.randint(2, 5),
                num4=rng.randint(5, 10),
            )
            for g in rng.sample(list(_PRODUCT_GENERIC), 3)
        ]
        sentences = [*specific, *generic]
        rng.shuffle(sentences)
        paragraphs = tuple(" ".join(sentences[i : i + 3]) for i in range(0, len(sentences), 3))
        return _Product(
            slug=_slugify(name),
            name=name,
            sku=sku,
            price_cents=cents,
            category=category,
            specs=specs,
            paragraphs=paragraphs,
            rating=f"{rng.randint(38, 49) / 10:.1f}",
            reviews=rng.randint(8, 400),
            related=tuple(rng.sample(list(_SHOP_RELATED), 3)),
        )

    def forum_post(self, index: int) -> tuple[str, tuple[str, ...]]:
        rng = self.rng
        _key, title, specific = _FORUM_TOPICS[index]
        generic = [
            g.format(num=rng.randint(2, 12), weekday=rng.choice(_WEEKDAYS))
            for g in rng.sample(list(_FORUM_GENERIC), 5)
        ]
        sentences = [*rng.sample(list(specific), 7), *generic]
        rng.shuffle(sentences)
        return title, tuple(" ".join(sentences[i : i + 3]) for i in range(0, len(sentences), 3))

    # -- the pages and cases -----------------------------------------------------------

    def build(self) -> None:
        rng = self.rng
        # One topic per English article, so unrelated stories share only grammar.
        en_topics = list(_EN_TOPICS)
        rng.shuffle(en_topics)

        def next_en(related: Sequence[str] = _NEWS_RELATED) -> _Article:
            return self.en_article(en_topics.pop(), section_related=related)

        def news_url(art: _Article) -> str:
            return (
                f"https://news.example.com/{_slugify(art.section)}/"
                f"{art.published:%Y/%m/%d}/{art.slug}/"
            )

        def stamp(at: datetime) -> str:
            return f"{at:%Y-%m-%d %H:%M:%S} UTC"

        def news(
            page_id: str, art: _Article, day: int, *, redesign: bool = False, byline_extra: str = ""
        ) -> DemoPage:
            at = self.when(day)
            url = news_url(art)
            html = _news_html(art, url, stamp(at), redesign=redesign, byline_extra=byline_extra)
            return self.add(page_id, url, html, doc_type="article", fetched_at=at)

        # 1. Verbatim copy: the same bytes served at a tracking-parameter URL.
        a1 = next_en()
        p1 = news("news-a1", a1, 0)
        p1_copy = self.add(
            "news-a1-copy",
            news_url(a1) + "?utm_source=newsletter&utm_medium=email",
            "",
            body=p1.body,
            doc_type="article",
            fetched_at=self.when(1),
        )
        self.case(
            "verbatim_copy",
            "verbatim copy at two URLs",
            [p1, p1_copy],
            "duplicate",
            "same bytes at two URLs (tracking parameters only)",
            same_raw_sha256=True,
            exact_main_text=True,
            main_distance_max=0,
            full_distance_max=0,
        )

        # 2. Whitespace and line breaks only: pretty HTML vs compact HTML with hard breaks.
        a2 = next_en()
        at2 = self.when(0)
        url2 = news_url(a2)
        p2 = self.add(
            "news-a2",
            url2,
            _news_html(a2, url2, stamp(at2)),
            doc_type="article",
            fetched_at=at2,
        )
        p2_ws = self.add(
            "news-a2-compact",
            url2 + "index.html",
            _news_html(a2, url2, stamp(at2), compact=True, wrap=True),
            doc_type="article",
            fetched_at=self.when(1),
        )
        self.case(
            "whitespace_only",
            "whitespace and line-break changes only",
            [p2, p2_ws],
            "duplicate",
            "the HTML differs only in indentation and line breaks",
            same_raw_sha256=False,
            exact_main_text=True,
            main_distance_max=0,
        )

        # 3. Template change only: the site was redesigned between two fetches.
        a3 = next_en()
        p3 = news("news-a3", a3, 0)
        p3_new = news("news-a3-redesign", a3, 3, redesign=True)
        self.case(
            "template_change",
            "menu or footer change only",
            [p3, p3_new],
            "duplicate",
            "same article body; the menu, footer and related block changed in a redesign",
            same_raw_sha256=False,
            exact_main_text=True,
            main_distance_max=0,
        )

        # 4. Price change on a product page → a revision, not a duplicate.
        products = list(range(len(_PRODUCTS)))
        rng.shuffle(products)
        prod = self.product(products.pop())
        purl = f"https://shop.example.com/p/{prod.slug}/"
        s1 = self.add(
            "shop-p1", purl, _product_html(prod, purl), doc_type="product", fetched_at=self.when(0)
        )
        cheaper = replace(prod, price_cents=prod.price_cents - 500)
        s1_sale = self.add(
            "shop-p1-price",
            purl,
            _product_html(cheaper, purl),
            doc_type="product",
            fetched_at=self.when(2),
        )
        self.case(
            "price_change",
            "price changed on a product page",
            [s1, s1_sale],
            "revision",
            f"same product; the price fell from {_price(prod.price_cents)} to "
            f"{_price(cheaper.price_cents)} (guard: numbers differ)",
            same_raw_sha256=False,
            exact_main_text=False,
            numbers_differ=True,
            main_distance_max=6,  # a one-token change: the words method barely moves
        )

        # 5. Paragraph order shuffled: a content farm reposts a wire story.
        w2 = next_en(_WIRE_RELATED)
        wurl2 = f"https://wire.example.org/{_slugify(w2.section)}/{w2.slug}"
        wp2 = self.add(
            "wire-w2", wurl2, _wire_html(w2, wurl2), doc_type="article", fetched_at=self.when(0)
        )
        # Paragraphs shuffled and each paragraph's sentences rotated: the same words,
        # enough changed 3-shingles that an order-aware method always sees it.
        order = list(range(len(w2.paragraphs)))
        while order == sorted(order):
            rng.shuffle(order)
        shuffled = tuple(_rotate_sentences(w2.paragraphs[i]) for i in order)
        turl = f"https://talk.example.net/blog/digest-{w2.slug}/"
        tp_shuffled = self.add(
            "talk-w2-reordered",
            turl,
            _talk_html(w2.title, turl, "newsdigest_bot", w2.published, shuffled, (), kind="post"),
            doc_type="article",
            fetched_at=self.when(1),
        )
        self.case(
            "sentence_order",
            "sentence order changed",
            [wp2, tp_shuffled],
            "near-duplicate",
            "the same sentences in another order (paragraphs shuffled) on a reposting blog",
            same_raw_sha256=False,
            exact_main_text=False,
            reorder_words_distance_zero=True,
        )

        # 6. Syndication: new headline and an inserted advertisement paragraph.
        w1 = next_en(_WIRE_RELATED)
        wurl1 = f"https://wire.example.org/{_slugify(w1.section)}/{w1.slug}"
        wp1 = self.add(
            "wire-w1", wurl1, _wire_html(w1, wurl1), doc_type="article", fetched_at=self.when(0)
        )
        ad = (
            "Advertisement: subscribe to The Example Courier today and get your first three "
            "months of unlimited reading for free."
        )
        paras = list(w1.paragraphs)
        paras.insert(2, ad)
        new_title = f"{w1.title.split(' ')[0]} news: what the decision means for you"
        synd = replace(
            w1,
            title=new_title,
            paragraphs=tuple(paras),
            slug=self.unique_slug(new_title),
            related=tuple(rng.sample(list(_NEWS_RELATED), 3)),
        )
        ps = news("news-w1-syndicated", synd, 1, byline_extra=", Example Wire")
        self.case(
            "syndication",
            "syndicated article with a new headline and an ad paragraph",
            [wp1, ps],
            "near-duplicate",
            "wire story republished on another host with a new headline and an inserted ad",
            same_raw_sha256=False,
            exact_main_text=False,
            main_distance_max=12,
        )

        # 7. Teaser: the first two paragraphs of a full article, on a link blog.
        a4 = next_en()
        p4 = news("news-a4", a4, 1)
        teaser_url = f"https://talk.example.net/links/{a4.slug}/"
        tp = self.add(
            "talk-a4-teaser",
            teaser_url,
            _talk_html(
                a4.title, teaser_url, "linkbot", a4.published, a4.paragraphs[:2], (), kind="teaser"
            ),
            doc_type="article",
            fetched_at=self.when(2),
        )
        self.case(
            "teaser",
            "teaser (first two paragraphs) of a full article",
            [p4, tp],
            "near-duplicate",
            "the teaser is contained in the full article (containment, not similarity)",
            same_raw_sha256=False,
            exact_main_text=False,
            main_text_contained=True,
        )

        # 8. Too short to judge: two out-of-stock stubs.
        stubs = []
        for i, colour in enumerate(("Blue", "Red")):
            name = f"Ceramic Mug, {colour}"
            url = f"https://shop.example.com/p/ceramic-mug-{colour.lower()}/"
            stubs.append(
                self.add(
                    f"shop-stub-{i + 1}",
                    url,
                    _stub_html(name, url),
                    doc_type="product",
                    fetched_at=self.when(1),
                    expect="too_short",
                )
            )
        self.case(
            "short_texts",
            "short texts of a few tokens",
            stubs,
            "unsure",
            "out-of-stock stubs: a handful of words cannot say whether two pages are the same",
            extraction_status="too_short",
            main_tokens_max=7,
        )

        # 9. Empty extraction: an empty <body> and a script-only application shell.
        e1 = self.add(
            "news-empty",
            "https://news.example.com/live/election-night/",
            _empty_html(
                "https://news.example.com/live/", "Live | The Example Courier", app_shell=False
            ),
            doc_type="article",
            fetched_at=self.when(2),
            expect="empty",
        )
        e2 = self.add(
            "shop-app-shell",
            "https://shop.example.com/app/wishlist/",
            _empty_html("https://shop.example.com/app/", "Example Shop", app_shell=True),
            doc_type="product",
            fetched_at=self.when(2),
            expect="empty",
        )
        self.case(
            "empty_extraction",
            "empty extraction",
            [e1, e2],
            "unsure",
            "no text: empty text is never a duplicate of empty text",
            extraction_status="empty",
            no_fingerprint=True,
        )

        # 10. Login walls at many URLs and block pages (403, 429).
        blocked: list[DemoPage] = []
        for i in range(7):
            next_path = f"/{rng.choice(list(_NEWS_MENU)).lower()}/2026/03/0{rng.randint(1, 5)}/" + (
                f"story-{rng.randint(1000, 9999)}/"
            )
            url = f"https://news.example.com/account/login?next={quote(next_path, safe='')}"
            blocked.append(
                self.add(
                    f"news-login-{i + 1}",
                    url,
                    _login_html(url, next_path),
                    doc_type="other",
                    fetched_at=self.when(i % 4),
                    expect="blocked",
                )
            )
        for i in range(3):
            url = f"https://shop.example.com/p/{_slugify(_SHOP_RELATED[i])}/"
            ref = f"{rng.randint(1, 99)}.{rng.getrandbits(32):08x}"
            blocked.append(
                self.add(
                    f"shop-403-{i + 1}",
                    url,
                    _blocked_html(403, url, ref),
                    doc_type="other",
                    fetched_at=self.when(3),
                    status=403,
                    expect="blocked",
                )
            )
        for i in range(2):
            url = f"https://news.example.com/search/?q=harbour&page={i + 2}"
            ref = f"{rng.randint(1, 99)}.{rng.getrandbits(32):08x}"
            blocked.append(
                self.add(
                    f"news-429-{i + 1}",
                    url,
                    _blocked_html(429, url, ref),
                    doc_type="other",
                    fetched_at=self.when(3),
                    status=429,
                    expect="blocked",
                    extra_headers=(("Retry-After", "120"),),
                )
            )
        url = "https://xinwen.example.cn/search/?q=%E5%9C%B0%E9%93%81"
        ref = f"{rng.randint(1, 99)}.{rng.getrandbits(32):08x}"
        blocked.append(
            self.add(
                "cn-403-1",
                url,
                _blocked_html(403, url, ref, lang="zh"),
                doc_type="other",
                fetched_at=self.when(3),
                encoding="gbk",
                status=403,
                expect="blocked",
            )
        )
        self.case(
            "blocked_pages",
            "login wall at many URLs and block pages",
            blocked,
            "distinct",
            "login walls and 403/429 challenge pages carry no content: status blocked, "
            "never a duplicate of an article, never a candidate",
            extraction_status="blocked",
        )

        # 11. Different articles on the same template.
        a5, a6 = next_en(), next_en()
        p5 = news("news-a5", a5, 1)
        p6 = news("news-a6", a6, 1)
        self.case(
            "same_template",
            "different articles on the same template",
            [p5, p6],
            "distinct",
            "same site template, unrelated stories: the main texts are far apart",
            # The words method cannot promise distance here: English function words keep
            # unrelated articles within a few bits of each other. Word 3-shingles can.
            method=SHINGLE,
            same_raw_sha256=False,
            exact_main_text=False,
            main_distance_min=16,
        )

        # 12a. NFC vs NFD Vietnamese.
        vi_topics = list(_VI_TOPICS)
        rng.shuffle(vi_topics)
        v1 = self.vi_article(vi_topics.pop())
        vurl = f"https://tintuc.example.vn/{_slugify(v1.section)}/{v1.slug}.html"
        vhtml = _vi_html(v1, vurl, "utf-8")
        vp = self.add("vn-a1", vurl, vhtml, doc_type="article", fetched_at=self.when(0))
        vp_nfd = self.add(
            "vn-a1-nfd",
            vurl.replace(".html", "-amp.html"),
            unicodedata.normalize("NFD", vhtml),
            doc_type="article",
            fetched_at=self.when(2),
        )
        self.case(
            "unicode_nfc_nfd",
            "NFC vs NFD variants of a Vietnamese article",
            [vp, vp_nfd],
            "duplicate",
            "same text; one page spells every diacritic as combining characters (NFD)",
            same_raw_sha256=False,
            exact_main_text=True,
            main_distance_max=0,
        )

        # 12b. Full-width vs half-width letters and digits on a Chinese (GBK) page.
        zh_topics = list(_ZH_TOPICS)
        rng.shuffle(zh_topics)
        z1 = self.zh_article(zh_topics.pop())
        model = f"HX{rng.randint(100, 999)}"
        extra = (
            f"新型号{model}的设备共有{rng.randint(20, 90)}台，编号从A001开始，"
            f"首批将于{rng.randint(4, 11)}月投入使用。"
        )
        z1 = replace(z1, paragraphs=(*z1.paragraphs, extra))
        z1_fw = replace(z1, paragraphs=tuple(to_fullwidth(p) for p in z1.paragraphs))
        zurl = f"https://xinwen.example.cn/{z1.published:%Y%m%d}/{z1.slug}.html"
        zp = self.add(
            "cn-a1",
            zurl,
            _zh_html(z1, zurl),
            doc_type="article",
            fetched_at=self.when(0),
            encoding="gbk",
        )
        zurl_m = zurl.replace("://xinwen.", "://m.xinwen.")
        zp_fw = self.add(
            "cn-a1-fullwidth",
            zurl_m,
            _zh_html(z1_fw, zurl_m),
            doc_type="article",
            fetched_at=self.when(1),
            encoding="gbk",
        )
        self.case(
            "fullwidth_halfwidth",
            "full-width vs half-width letters and digits",
            [zp, zp_fw],
            "duplicate",
            "same text; the mobile page writes letters and digits full-width (ＨＸ vs HX)",
            method=CJK,
            same_raw_sha256=False,
            exact_main_text=True,
            main_distance_max=0,
        )

        # 13. The same URL re-fetched later: only the footer time stamp differs.
        a7 = next_en()
        p7 = news("news-a7", a7, 0)
        p7_again = news("news-a7-refetch", a7, 3)
        self.case(
            "refetch_timestamp",
            "the same page re-fetched with a new timestamp",
            [p7, p7_again],
            "duplicate",
            "same URL fetched three days later; only the 'page generated' stamp changed",
            same_raw_sha256=False,
            exact_main_text=True,
            main_distance_max=0,
        )

        # Filler: ordinary distinct pages on every site.
        filler: list[DemoPage] = []
        for i in range(2):
            art = next_en()
            filler.append(news(f"news-f{i + 1}", art, i % 4))
        wire_story: tuple[_Article, DemoPage] | None = None
        for i in range(1):
            art = next_en(_WIRE_RELATED)
            url = f"https://wire.example.org/{_slugify(art.section)}/{art.slug}"
            filler.append(
                self.add(
                    f"wire-f{i + 1}",
                    url,
                    _wire_html(art, url),
                    doc_type="article",
                    fetched_at=self.when(i + 1),
                )
            )
            wire_story = (art, filler[-1])
        for i in range(len(_FORUM_TOPICS)):
            title, paragraphs = self.forum_post(i)
            user = _FORUM_USERS[i]
            replies = [(rng.choice(_FORUM_USERS), r) for r in rng.sample(list(_FORUM_REPLIES), 2)]
            url = f"https://talk.example.net/t/{_slugify(title)}/{rng.randint(1000, 9999)}"
            posted = _BASE_TIME - timedelta(days=rng.randint(1, 20))
            filler.append(
                self.add(
                    f"talk-f{i + 1}",
                    url,
                    _talk_html(title, url, user, posted, paragraphs, replies),
                    doc_type="article",
                    fetched_at=self.when(i % 4),
                )
            )
        for i in range(5):
            prod = self.product(products.pop())
            url = f"https://shop.example.com/p/{prod.slug}/"
            filler.append(
                self.add(
                    f"shop-f{i + 1}",
                    url,
                    _product_html(prod, url),
                    doc_type="product",
                    fetched_at=self.when(i % 4),
                )
            )
        for i in range(4):
            art = self.vi_article(vi_topics.pop())
            url = f"https://tintuc.example.vn/{_slugify(art.section)}/{art.slug}.html"
            filler.append(
                self.add(
                    f"vn-f{i + 1}",
                    url,
                    _vi_html(art, url, "utf-8"),
                    doc_type="article",
                    fetched_at=self.when(i % 4),
                )
            )
        art = self.vi_article(vi_topics.pop())
        url = f"https://tintuc.example.vn/{_slugify(art.section)}/{art.slug}.html"
        html_1258 = cp1258_form(_vi_html(art, url, "windows-1258"))
        filler.append(
            self.add(
                "vn-cp1258",
                url,
                html_1258,
                doc_type="article",
                fetched_at=self.when(2),
                encoding="cp1258",
                content_charset="windows-1258",
            )
        )
        for i in range(5):
            art = self.zh_article(zh_topics.pop())
            url = f"https://xinwen.example.cn/{art.published:%Y%m%d}/{art.slug}.html"
            filler.append(
                self.add(
                    f"cn-f{i + 1}",
                    url,
                    _zh_html(art, url),
                    doc_type="article",
                    fetched_at=self.when(i % 4),
                    encoding="gbk",
                )
            )
        self.case(
            "distinct_filler",
            "ordinary unrelated pages on every site",
            filler,
            "distinct",
            "different stories, posts and products; at most a language or a template shared",
            method=SHINGLE,
            same_raw_sha256=False,
            exact_main_text=False,
            main_distance_min=10,
        )
        assert wire_story is not None
        self._partial_copies(*wire_story)

    def _partial_copies(self, art: _Article, original: DemoPage) -> None:
        """Copies SimHash cannot see (built last, so the pages above stay as they were):
        an excerpt of a wire story, and the whole story inside another site's own
        introduction and closing lines."""
        middle = art.paragraphs[1:3]
        excerpt_url = f"https://talk.example.net/links/{art.slug}-excerpt/"
        excerpt = self.add(
            "talk-wire-excerpt",
            excerpt_url,
            _talk_html(art.title, excerpt_url, "linkbot", art.published, middle, (), kind="teaser"),
            doc_type="article",
            fetched_at=self.when(3),
        )
        self.case(
            "excerpt",
            "excerpt (two middle paragraphs) of a wire story on another site",
            [original, excerpt],
            "near-duplicate",
            "the excerpt is wholly inside the wire story; far in SimHash bits, found by "
            "shared passages",
            same_raw_sha256=False,
            exact_main_text=False,
            passage_channel=True,
            passage_containment_pct_min=80,
        )
        intro = (
            "Our regional desk adds: readers along the coast asked what this story means "
            "for the harbour towns, so we are republishing the agency report in full below "
            "with a note from our own newsroom before and after it. Fishing crews, ferry "
            "operators and the two boatyards on the estuary all told us last week that they "
            "had heard rumours but no details, and several letters to this paper asked for "
            "the full text rather than a summary."
        )
        outro = (
            "Local angle: the county council told our newsroom it would publish its own "
            "response next week, and the harbour board will discuss the matter at its "
            "monthly meeting, which is open to the public and streamed online. The "
            "chamber of commerce plans a breakfast briefing for shop owners on the quay, "
            "and the ferry company says timetables for the summer season are not affected "
            "for now. Send your questions to the regional desk and we will put them to the "
            "council."
        )
        title = f"{art.title} (regional edition)"
        wrapped_art = replace(
            art,
            title=title,
            slug=self.unique_slug(title),
            paragraphs=(intro, *art.paragraphs, outro),
            related=tuple(self.rng.sample(list(_NEWS_RELATED), 3)),
        )
        at = self.when(4)
        url = (
            f"https://news.example.com/{_slugify(wrapped_art.section)}/"
            f"{wrapped_art.published:%Y/%m/%d}/{wrapped_art.slug}/"
        )
        wrapped = self.add(
            "news-wire-wrapped",
            url,
            _news_html(
                wrapped_art, url, f"{at:%Y-%m-%d %H:%M:%S} UTC", byline_extra=", Example Wire"
            ),
            doc_type="article",
            fetched_at=at,
        )
        self.case(
            "intro_outro",
            "the whole wire story inside another site's introduction and closing lines",
            [original, wrapped],
            "near-duplicate",
            "all of the agency text is inside the longer page; its own intro and outro are "
            "the only additions",
            same_raw_sha256=False,
            exact_main_text=False,
            passage_channel=True,
            passage_containment_pct_min=80,
        )


def build_demo_crawl(seed: int = 7) -> tuple[list[DemoPage], list[DemoCase]]:
    """The demo pages (in crawl order: by fetch time, then id) and the answer key."""
    crawl = _Crawl(seed)
    crawl.build()
    pages = sorted(crawl.pages, key=lambda p: (p.fetched_at, p.id))
    return pages, crawl.cases


# --------------------------------------------------------------------------------------
# Output.
# --------------------------------------------------------------------------------------


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _record_id(seed: int, name: str) -> str:
    return f"<urn:uuid:{uuid.uuid5(_ID_NAMESPACE, f'{seed}/{name}')}>"


def _sha1_b32(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def write_warc(pages: list[DemoPage], out: BinaryIO, *, seed: int = 7) -> int:
    """Gzipped WARC: one warcinfo, one request (before the first response), a response
    per page, and one revisit (an identical re-fetch of the first page) at the end.
    Returns the number of records written."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    if not pages:
        raise ValueError("no pages to write")
    writer = WARCWriter(out, gzip=True)
    first = pages[0]
    start = min(p.fetched_at for p in pages)
    info_id = _record_id(seed, "warcinfo")

    info = {
        "software": GENERATOR,
        "format": "WARC File Format 1.0",
        "description": f"Dedup Desk demo crawl, seed {seed}; all content is invented",
        "isPartOf": f"dedup-desk-demo-{seed}",
    }
    info_body = "".join(f"{k}: {v}\r\n" for k, v in info.items()).encode("utf-8")
    warcinfo = writer.create_warc_record(
        "",
        "warcinfo",
        payload=BytesIO(info_body),
        length=len(info_body),
        warc_content_type="application/warc-fields",
        warc_headers=StatusAndHeaders(
            "",
            [
                ("WARC-Type", "warcinfo"),
                ("WARC-Record-ID", info_id),
                ("WARC-Filename", f"dedup-desk-demo-{seed}.warc.gz"),
                ("WARC-Date", _iso(start - timedelta(minutes=1))),
            ],
            protocol="WARC/1.0",
        ),
    )
    writer.write_record(warcinfo)
    written = 1

    def response_id(page: DemoPage) -> str:
        return _record_id(seed, f"response/{page.id}")

    for page in pages:
        if page is first:
            host = page.url.split("/")[2]
            path = "/" + page.url.split("/", 3)[3] if page.url.count("/") >= 3 else "/"
            request = StatusAndHeaders(
                f"GET {path} HTTP/1.1",
                [
                    ("Host", host),
                    ("User-Agent", "DedupDeskDemoBot/1.0 (+https://example.com/bot)"),
                    ("Accept", "text/html,application/xhtml+xml"),
                ],
                is_http_request=True,
            )
            writer.write_record(
                writer.create_warc_record(
                    page.url,
                    "request",
                    http_headers=request,
                    warc_headers_dict={
                        "WARC-Record-ID": _record_id(seed, f"request/{page.id}"),
                        "WARC-Date": _iso(page.fetched_at),
                        "WARC-Concurrent-To": response_id(page),
                        "WARC-Warcinfo-ID": info_id,
                    },
                )
            )
            written += 1
        status = f"{page.http_status} {_REASONS.get(page.http_status, 'Unknown')}"
        http = StatusAndHeaders(status, list(page.headers), protocol="HTTP/1.1")
        writer.write_record(
            writer.create_warc_record(
                page.url,
                "response",
                payload=BytesIO(page.body),
                length=len(page.body),
                http_headers=http,
                warc_headers_dict={
                    "WARC-Record-ID": response_id(page),
                    "WARC-Date": _iso(page.fetched_at),
                    "WARC-Warcinfo-ID": info_id,
                },
            )
        )
        written += 1

    # An unchanged re-fetch recorded as a revisit (headers only, no payload).
    later = max(p.fetched_at for p in pages) + timedelta(minutes=10)
    revisit_headers = [
        (k, format_datetime(later, usegmt=True) if k == "Date" else v) for k, v in first.headers
    ]
    writer.write_record(
        writer.create_revisit_record(
            first.url,
            _sha1_b32(first.body),
            first.url,
            _iso(first.fetched_at),
            http_headers=StatusAndHeaders("200 OK", revisit_headers, protocol="HTTP/1.1"),
            warc_headers_dict={
                "WARC-Record-ID": _record_id(seed, f"revisit/{first.id}"),
                "WARC-Date": _iso(later),
                "WARC-Refers-To": response_id(first),
                "WARC-Warcinfo-ID": info_id,
            },
        )
    )
    return written + 1


def page_html(page: DemoPage) -> str:
    return page.body.decode(page.encoding)


def write_jsonl(pages: list[DemoPage], out: TextIO) -> int:
    """One JSON object a line (url, html, status, fetched_at, headers, final_url,
    doc_type); the html is decoded, so Content-Type says utf-8 and the length is gone."""
    for page in pages:
        headers = {k: v for k, v in page.headers if k != "Content-Length"}
        headers["Content-Type"] = "text/html; charset=utf-8"
        row = {
            "url": page.url,
            "html": page_html(page),
            "status": page.http_status,
            "fetched_at": _iso(page.fetched_at),
            "headers": headers,
            "final_url": page.url,
            "doc_type": page.doc_type,
        }
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(pages)


def expectations(pages: Sequence[DemoPage], cases: Sequence[DemoCase], seed: int) -> dict:
    """The answer key written beside the crawl (OUT.expected.json)."""
    return {
        "seed": seed,
        "generator": GENERATOR,
        "main_text": MAIN_TEXT_EXTRACTOR,
        "full_text": FULL_TEXT_EXTRACTOR,
        "check_keys": CHECK_KEYS,
        "pages": [
            {
                "id": p.id,
                "url": p.url,
                "site": p.site,
                "doc_type": p.doc_type,
                "fetched_at": _iso(p.fetched_at),
                "encoding": p.encoding,
                "http_status": p.http_status,
                "expect_extraction": p.expect_extraction,
            }
            for p in pages
        ],
        "cases": [
            {
                "case": c.case,
                "title": c.title,
                "pages": list(c.pages),
                "expected_label": c.expected_label,
                "reason": c.reason,
                "checks": c.checks,
            }
            for c in cases
        ],
    }


def expectations_path(out: Path) -> Path:
    """OUT.warc.gz / OUT.warc / OUT.jsonl → OUT.expected.json beside it."""
    name = out.name
    for suffix in (".warc.gz", ".warc", ".jsonl.gz", ".jsonl"):
        if name.endswith(suffix):
            return out.with_name(name[: -len(suffix)] + ".expected.json")
    return out.with_name(name + ".expected.json")
