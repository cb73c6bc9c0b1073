"""Facts to plant: a sentence, the question that asks for it, and the answer the preview must show.

The question shares words with the sentence (so a search with its words can find it) but never the
answer. Answers are drawn from their own pools, so each occurs once in an output.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ._words import code, words

__all__ = ["Fact", "sentence_fact"]


@dataclass(frozen=True)
class Fact:
    sentence: str
    question: str
    answer: str


_RARE_FIRST = words(
    "Ottoline Bartholomew Perpetua Leopoldine Ignatius Clementine Evander Philippa Auberon Rosalind"
)
_RARE_LAST = words(
    "Varga Quillfeather Amundsen-Roe Blackwood Thistlewaite Okonkwo Marchetti Featherstone Villanueva"
)
_PLACES = [
    "archive room",
    "boathouse",
    "east stairwell",
    "print shop",
    "server cage",
    "greenhouse",
    "loading bay",
]
_HIDINGS = [
    "under the cracked flower pot by the north door",
    "inside the grey fuse box behind reception",
    "taped beneath the second drawer of the oak desk",
    "in a tin of peppermints on the top shelf",
    "behind the loose brick left of the gate",
    "in the glovebox of the blue delivery van",
]
_ROLES = [
    ("treasurer", "rowing club"),
    ("safety officer", "night shift"),
    ("editor", "staff newsletter"),
    ("quartermaster", "field team"),
    ("liaison", "harbour board"),
]
_DOORS = ["tool shed", "roof hatch", "cold store", "records vault", "bike cage"]
_ITEMS = [
    "replacement boilers",
    "conference chairs",
    "spare turbine blades",
    "new microscopes",
    "oak flooring",
]
_REASONS = ["the ferry strike", "a customs dispute", "a flooded depot", "a labelling error"]
_EVENTS = ["winter gala", "annual hackathon", "charity bake-off", "volunteer picnic", "chess open"]
_VENUES = [
    "the Kestrel Street tram depot",
    "the old salt warehouse on Pier 9",
    "the Marlowe botanical glasshouse",
    "the rooftop of the Quarry Lane car park",
    "the disused Albion cinema",
]
_ANIMALS = [("tortoise", "courtyard"), ("parrot", "lobby"), ("goat", "orchard"), ("cat", "mailroom")]
_PET_NAMES = ["Admiral Pudding", "Sir Wobbles", "Marzipan", "Captain Noodle", "Biscuit the Third"]
_COLOURS = ["pale saffron", "duck-egg blue", "burnt sienna", "pistachio green", "mulberry"]
_THINGS = [("front door", "bakery"), ("railings", "footbridge"), ("lockers", "changing room")]
_CAUSES = [
    "an expired intermediate certificate",
    "a mislabeled fuse in rack nine",
    "a squirrel in the substation",
    "a forgotten cron job that truncated the audit table",
    "a firmware bug in the core switch",
]
_SYSTEMS = ["payroll", "ticketing", "badge reader", "mail relay", "warehouse scanner"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
_TASKS = ["pallet wrap", "tyre change", "sourdough knead", "server rack swap"]


def _rare_person(rng: random.Random) -> str:
    return f"{rng.choice(_RARE_FIRST)} {rng.choice(_RARE_LAST)}"


def sentence_fact(rng: random.Random) -> Fact:
    """One fact as a sentence of prose, from a dozen shapes."""
    kind = rng.randrange(11)
    if kind == 0:
        place, hiding = rng.choice(_PLACES), rng.choice(_HIDINGS)
        return Fact(
            f"The spare key for the {place} is kept {hiding}.",
            f"Where is the spare key for the {place} kept?",
            hiding,
        )
    if kind == 1:
        (role, unit), who = rng.choice(_ROLES), _rare_person(rng)
        return Fact(
            f"{who} was named the new {role} of the {unit} last week.",
            f"Who was named the new {role} of the {unit}?",
            who,
        )
    if kind == 2:
        door, number = rng.choice(_DOORS), code(rng, "9999-AA")
        return Fact(
            f"The access code for the {door} is {number}.", f"What is the access code for the {door}?", number
        )
    if kind == 3:
        item, reason = rng.choice(_ITEMS), rng.choice(_REASONS)
        date = f"{rng.randrange(2, 28)} {rng.choice(('February', 'April', 'August', 'November'))}"
        return Fact(
            f"Delivery of the {item} was postponed to {date} because of {reason}.",
            f"To which date was the delivery of the {item} postponed?",
            date,
        )
    if kind == 4:
        event, venue = rng.choice(_EVENTS), rng.choice(_VENUES)
        return Fact(
            f"This year the {event} takes place at {venue}.",
            f"Where does the {event} take place this year?",
            venue,
        )
    if kind == 5:
        room, password = rng.choice(_PLACES), code(rng, "AAAA").lower() + code(rng, "99") + rng.choice("!#%")
        return Fact(
            f"The guest wifi password in the {room} is {password}.",
            f"What is the guest wifi password in the {room}?",
            password,
        )
    if kind == 6:
        (animal, place), name = rng.choice(_ANIMALS), rng.choice(_PET_NAMES)
        return Fact(
            f"The {animal} that lives in the {place} is called {name}.",
            f"What is the {animal} that lives in the {place} called?",
            name,
        )
    if kind == 7:
        (thing, where), colour = rng.choice(_THINGS), rng.choice(_COLOURS)
        return Fact(
            f"The {thing} of the {where} was repainted {colour} over the holidays.",
            f"What colour was the {thing} of the {where} repainted?",
            colour,
        )
    if kind == 8:
        task, who, minutes = rng.choice(_TASKS), _rare_person(rng), rng.randrange(3, 40)
        return Fact(
            f"{who} holds the record for the fastest {task}, at {minutes} minutes.",
            f"Who holds the record for the fastest {task}?",
            who,
        )
    if kind == 9:
        system, day, cause = rng.choice(_SYSTEMS), rng.choice(_DAYS), rng.choice(_CAUSES)
        return Fact(
            f"The {system} outage on {day} was traced to {cause}.",
            f"What was the {system} outage on {day} traced to?",
            cause,
        )
    account = code(rng, "99-9999-999")
    return Fact(
        f"Refunds for the overseas branch are now paid from account {account}.",
        "From which account are refunds for the overseas branch paid?",
        account,
    )
