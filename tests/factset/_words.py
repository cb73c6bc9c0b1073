"""Word pools for the fact set's generators: common English, a few domains, names, places.

Filler draws its words Zipf-like (a few words very often, many once or twice), as real text does,
so that a word used once is no sign of a planted fact by itself.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from itertools import accumulate

__all__ = [
    "CITIES",
    "COMPANIES",
    "DOMAINS",
    "FIRST",
    "LAST",
    "Lexicon",
    "Zipf",
    "code",
    "person",
    "words",
]


def words(text: str) -> list[str]:
    """The words of ``text`` (pools are written as text: easier to read than lists of strings)."""
    return text.split()


FIRST = words(
    "Anna Ben Carla David Elena Farid Grace Hugo Ines Jonas Kira Liam Maya Nikolai Olga Pedro Quinn "
    "Rosa Samir Tessa Umar Vera Walter Xenia Yusuf Zoe Arjun Bianca Chen Dmitri Esther Felix Gita Hana "
    "Igor Julia Kenji Lena Marco Nadia Oscar Priya Rafael Sofia Tomas Ursula Viktor Wanda Yara"
)
LAST = words(
    "Adler Baker Castro Dubois Eriksen Fischer Garcia Horvat Ibrahim Jensen Kowalski Lopez Moreau "
    "Novak Okafor Petrov Quinlan Rossi Schmidt Tanaka Urban Vargas Weber Xu Yilmaz Zimmermann Andersen "
    "Berg Costa Dalton Engel Ferreira Gallo Hayes Ivanova Kaur Lindqvist Meyer Nakamura Ortiz Park "
    "Reyes Silva Torres Volkov Walsh Young"
)
CITIES = words(
    "Lisbon Oslo Denver Austin Lyon Porto Krakow Osaka Leeds Tampere Graz Ghent Bergen Malmo Turin "
    "Dublin Quebec Perth Halifax Utrecht Bilbao Brno Kyoto Tucson Boise Seville Aarhus Riga Tallinn "
    "Vilnius Zagreb Split Cork Galway Basel Bern Lausanne Nantes Lille Bremen Leipzig Dresden"
)
COMPANIES = words(
    "Northwind Contoso Globex Initech Umbrella Hooli Vandelay Acme Stark Wayne Tyrell Cyberdyne "
    "Soylent Wonka Oscorp Gringotts Pendant Sirius Duff Monarch Blue Sun Dunder Vehement Nakatomi"
)

_COMMON = words(
    "the of and to in a is that for it as was with be by on not he this are or his from at which "
    "but have an they you were their one all we can her has there been if more when will would who so "
    "no out up into than them could other time these two may then do first any like my now over such "
    "our man me even most made after also did many before must through back years where much your way "
    "well down should because each just those people how too little state good very make world still "
    "own see men work long get here between both life being under never day same another know while "
    "last might us great old year off come since against go came right used take three"
)

# Each domain: nouns, verbs (past tense), adjectives, as a report in that field would use them.
DOMAINS: dict[str, tuple[list[str], list[str], list[str]]] = {
    "operations": (
        words(
            "team process review schedule budget capacity vendor shipment warehouse shift audit policy "
            "request report meeting quarter target forecast inventory contract supplier rollout backlog "
            "deadline workflow handover checklist procedure training staff facility maintenance ticket "
            "escalation approval invoice headcount roster pallet dock forklift compliance incident"
        ),
        words(
            "reviewed approved delayed finished scheduled updated discussed reduced increased moved "
            "assigned completed planned checked reported adjusted merged closed opened tracked measured "
            "estimated handled resolved confirmed"
        ),
        words(
            "weekly quarterly internal external regional new current previous temporary formal manual "
            "shared central local minor major standard revised final initial overdue routine"
        ),
    ),
    "infrastructure": (
        words(
            "server cluster node database replica cache queue service endpoint deployment pipeline "
            "container volume network gateway certificate load balancer region zone backup snapshot "
            "index shard partition job worker scheduler proxy firewall route metric alert dashboard "
            "release build artifact registry secret token quota limit"
        ),
        words(
            "restarted migrated scaled deployed rolled promoted drained rebuilt patched rotated "
            "throttled provisioned upgraded configured monitored indexed replicated cached retried"
        ),
        words(
            "primary secondary stale healthy degraded idle busy read-only regional global staging "
            "production internal public private hourly nightly redundant legacy ephemeral"
        ),
    ),
    "history": (
        words(
            "river valley harbour fortress treaty council merchant guild cathedral bridge market "
            "monastery village province frontier archive chronicle dynasty settlement trade route "
            "estate charter parish mill granary wall gate tower square chapel road"
        ),
        words(
            "founded built burned rebuilt besieged granted signed abandoned expanded ruled crossed "
            "recorded traded settled restored flooded surrendered inherited"
        ),
        words(
            "ancient medieval northern southern eastern western royal local wealthy ruined fortified "
            "coastal rural early late prosperous remote"
        ),
    ),
    "nature": (
        words(
            "forest meadow wetland species bird beetle fern moss canopy soil stream trail ridge "
            "slope season rainfall habitat colony nest seed root predator burrow lichen orchid oak "
            "pine heath dune estuary marsh pond spring"
        ),
        words(
            "observed counted nested migrated flowered spread declined recovered thrived surveyed "
            "sampled grazed returned vanished bloomed"
        ),
        words(
            "rare common native invasive dense sparse shaded damp dry seasonal nocturnal wild "
            "coastal alpine shallow"
        ),
    ),
    "kitchen": (
        words(
            "recipe dough sauce oven pan broth stock flour butter onion garlic pepper salt crust "
            "filling batch tray knife board pantry shelf spice herb glaze marinade skillet ladle "
            "simmer roast menu dish course portion"
        ),
        words(
            "baked stirred chopped roasted whisked folded seasoned simmered tasted cooled plated "
            "served prepared kneaded reduced"
        ),
        words(
            "fresh crisp golden tender savory sweet sour smoky rich light hot cold thick thin "
            "seasonal homemade"
        ),
    ),
    "finance": (
        words(
            "account ledger payment invoice balance revenue margin expense asset liability fund "
            "portfolio dividend loan rate audit statement forecast reserve transfer fee tax "
            "quarter budget cost claim refund deposit"
        ),
        words(
            "posted reconciled transferred approved deferred refunded billed invested reported "
            "audited allocated settled accrued charged"
        ),
        words(
            "annual quarterly fiscal net gross operating current deferred outstanding variable "
            "fixed projected actual pending"
        ),
    ),
}


class Zipf:
    """Draw from ``words`` with weight 1 / (rank + 2.7), rank being a seeded shuffle's order."""

    def __init__(self, words: Sequence[str], rng: random.Random) -> None:
        self.words = list(words)
        rng.shuffle(self.words)
        self.cumulative = list(accumulate(1.0 / (rank + 2.7) for rank in range(len(self.words))))

    def pick(self, rng: random.Random) -> str:
        return rng.choices(self.words, cum_weights=self.cumulative)[0]


_SYLLABLES = words(
    "ba ce di fo gu la me ni po ru sa te vi zo kra bel dor fen gal hin jor kes lun mar nos pel quin ros "
    "sil tar ven wil ath bro cul dra eph fri gor hul isk jun kel lom mir nev orb pra quo rel sut tov"
)


def _invented(rng: random.Random, count: int, suffix: str = "") -> list[str]:
    """``count`` made-up words of two or three syllables: the long tail of a rich vocabulary."""
    made = {
        "".join(rng.choice(_SYLLABLES) for _ in range(rng.choice((2, 2, 3)))) + suffix for _ in range(count)
    }
    return sorted(made)


class Lexicon:
    """One domain's words, drawn Zipf-like, and a sentence grammar over them. Half of them (drawn)
    are rich: thousands of words more in a long tail, so that most sentences hold a word no other
    sentence uses, as real prose does."""

    def __init__(self, domain: str, rng: random.Random) -> None:
        nouns, verbs, adjectives = DOMAINS[domain]
        if rng.random() < 0.5:
            nouns = nouns + _invented(rng, 2500)
            verbs = verbs + _invented(rng, 600, "ed")
            adjectives = adjectives + _invented(rng, 900, "ic")
        self.domain = domain
        self.nouns = Zipf(nouns, rng)
        self.verbs = Zipf(verbs, rng)
        self.adjectives = Zipf(adjectives, rng)
        self.common = Zipf(_COMMON, rng)

    def noun(self, rng: random.Random) -> str:
        return self.nouns.pick(rng)

    def phrase(self, rng: random.Random) -> str:
        """A noun phrase: ``the weekly audit``, ``a new vendor of the warehouse``."""
        det = rng.choice(("the", "the", "a", "our", "this", "each", "every", "their"))
        parts = [det]
        if rng.random() < 0.55:
            parts.append(self.adjectives.pick(rng))
        parts.append(self.noun(rng))
        if rng.random() < 0.25:
            parts += ["of", "the", self.noun(rng)]
        return re.sub(r"\ba ([aeiou])", r"an \1", " ".join(parts))

    def sentence(self, rng: random.Random, specifics: float = 0.2) -> str:
        """One sentence of filler; ``specifics`` is the share that name a person, a place, a number or
        a date (real prose has them everywhere, not only in a planted fact)."""
        subject, obj = self.phrase(rng), self.phrase(rng)
        verb = self.verbs.pick(rng)
        shapes = (
            lambda: f"{subject} {verb} {obj}",
            lambda: f"{subject} was {verb} {rng.choice(('after', 'before', 'during', 'despite'))} {obj}",
            lambda: (
                f"{rng.choice(('Since', 'When', 'Although', 'Because', 'After'))} {subject} "
                f"{verb} {obj}, {self.phrase(rng)} {self.verbs.pick(rng)} {self.phrase(rng)}"
            ),
            lambda: f"{subject} and {obj} were {verb} {rng.choice(('together', 'again', 'twice', 'early'))}",
            lambda: (
                f"{rng.choice(('Most', 'Some', 'Few', 'Many'))} of {obj} {verb} "
                f"{self.common.pick(rng)} {self.phrase(rng)}"
            ),
            lambda: (
                f"{subject} {rng.choice(('has', 'had', 'will have'))} {verb} {obj} "
                f"{rng.choice(('as', 'so', 'while', 'until'))} {self.phrase(rng)} {self.verbs.pick(rng)}"
            ),
            lambda: f"It is {self.adjectives.pick(rng)} that {subject} {verb} {obj}",
        )
        text = rng.choice(shapes)()
        if rng.random() < specifics:
            text += rng.choice(
                (
                    lambda: f" in {rng.choice(CITIES)}",
                    lambda: f", according to {person(rng)}",
                    lambda: f" by {rng.randrange(2, 95)} percent",
                    lambda: (
                        f" in {rng.choice(('March', 'June', 'October', 'January'))} {rng.randrange(1990, 2026)}"
                    ),
                    lambda: f" for {rng.choice(COMPANIES)}",
                    lambda: f" at {rng.randrange(1, 12)}:{rng.choice(('00', '15', '30', '45'))}",
                )
            )()
        return text[0].upper() + text[1:] + rng.choice((".", ".", ".", ".", "!", ";"))[0].replace(";", ".")

    def paragraph(self, rng: random.Random, sentences: int, specifics: float = 0.2) -> list[str]:
        return [self.sentence(rng, specifics) for _ in range(sentences)]


def person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def code(rng: random.Random, shape: str = "AA-9999") -> str:
    """A random code of ``shape``: ``A`` an upper-case letter, ``9`` a digit, anything else itself."""
    out = []
    for c in shape:
        if c == "A":
            out.append(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ"))
        elif c == "9":
            out.append(rng.choice("0123456789"))
        else:
            out.append(c)
    return "".join(out)
