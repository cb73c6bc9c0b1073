"""Prose outputs: handbooks in Markdown, hard-wrapped reports, one-line-per-paragraph articles, email
threads, transcripts and text with no line breaks at all, each with one planted sentence."""

from __future__ import annotations

import random
import textwrap
from collections.abc import Callable

from ._facts import Fact
from ._words import CITIES, COMPANIES, DOMAINS, Lexicon, person

__all__ = ["PROSE"]


def _size(rng: random.Random) -> int:
    return rng.randrange(20_000, 29_000)


def _paragraphs(lex: Lexicon, rng: random.Random, total: int, low: int = 3, high: int = 8) -> list[list[str]]:
    out: list[list[str]] = []
    size = 0
    while size < total:
        para = lex.paragraph(rng, rng.randrange(low, high))
        out.append(para)
        size += sum(len(s) + 1 for s in para)
    return out


def _plant(rng: random.Random, paragraphs: list[list[str]], fact: Fact) -> None:
    """Put the fact inside a paragraph away from both ends of the text, rarely first in it."""
    n = len(paragraphs)
    where = rng.randrange(max(1, n // 8), max(2, n - n // 8))
    para = paragraphs[where]
    at = rng.randrange(1, len(para) + 1) if rng.random() < 0.85 else 0
    para.insert(at, fact.sentence)


def handbook(rng: random.Random, fact: Fact) -> tuple[str, dict[str, object]]:
    domain = rng.choice(list(DOMAINS))
    lex = Lexicon(domain, rng)
    paragraphs = _paragraphs(lex, rng, _size(rng))
    _plant(rng, paragraphs, fact)
    company = rng.choice(COMPANIES)
    out = [f"# {company} {domain} handbook\n\n", f"{lex.sentence(rng)} {lex.sentence(rng)}\n\n"]
    for i, para in enumerate(paragraphs):
        if i % rng.randrange(2, 5) == 0:
            title = f"{lex.adjectives.pick(rng)} {lex.noun(rng)}s".capitalize()
            out.append(f"## {i // 2 + 1}. {title}\n\n")
        if rng.random() < 0.15 and fact.sentence not in para:
            out.extend(f"- {s}\n" for s in para)
            out.append("\n")
        else:
            out.append(" ".join(para) + "\n\n")
    path = f"docs/{domain}/handbook.md"
    return "".join(out), {"path": path}


def report(rng: random.Random, fact: Fact) -> tuple[str, dict[str, object]]:
    domain = rng.choice(list(DOMAINS))
    lex = Lexicon(domain, rng)
    paragraphs = _paragraphs(lex, rng, _size(rng), 4, 9)
    _plant(rng, paragraphs, fact)
    width = rng.choice((72, 76, 80))
    out = [
        f"REPORT ON THE {lex.noun(rng).upper()} {lex.noun(rng).upper()} REVIEW\n",
        f"Prepared by {person(rng)}, {rng.choice(CITIES)}\n\n",
    ]
    section = 0
    for i, para in enumerate(paragraphs):
        if i % 3 == 0:
            section += 1
            out.append(f"{section}. {lex.noun(rng).capitalize()} and {lex.noun(rng)}\n\n")
        out.append(textwrap.fill(" ".join(para), width) + "\n\n")
    return "".join(out), {"path": f"/srv/reports/{domain}-review.txt"}


def article(rng: random.Random, fact: Fact) -> tuple[str, dict[str, object]]:
    domain = rng.choice(list(DOMAINS))
    lex = Lexicon(domain, rng)
    paragraphs = _paragraphs(lex, rng, _size(rng), 5, 12)
    _plant(rng, paragraphs, fact)
    title = f"The {lex.adjectives.pick(rng)} {lex.noun(rng)} of {rng.choice(CITIES)}"
    body = "\n\n".join(" ".join(p) for p in paragraphs)
    return f"{title}\n\n{body}\n", {"url": f"https://news.example.org/{domain}/{rng.randrange(10**6)}"}


def thread(rng: random.Random, fact: Fact) -> tuple[str, dict[str, object]]:
    domain = rng.choice(list(DOMAINS))
    lex = Lexicon(domain, rng)
    people = [person(rng) for _ in range(5)]
    subject = f"{lex.adjectives.pick(rng)} {lex.noun(rng)} plan".capitalize()
    messages: list[list[str]] = []
    size = 0
    target = _size(rng)
    while size < target:
        para = lex.paragraph(rng, rng.randrange(2, 7))
        messages.append(para)
        size += sum(map(len, para)) + 200
    _plant(rng, messages, fact)
    out = []
    for i, body in enumerate(messages):
        sender = people[i % len(people)]
        out.append(f"From: {sender} <{sender.split()[0].lower()}@{rng.choice(COMPANIES).lower()}.example>\n")
        out.append(
            f"Date: {rng.choice(('Mon', 'Tue', 'Wed', 'Thu', 'Fri'))}, {i % 28 + 1} Mar 2026 "
            f"{rng.randrange(8, 19):02d}:{rng.randrange(60):02d}\n"
        )
        out.append(f"Subject: {'Re: ' * min(i, 1)}{subject}\n\n")
        out.append(f"Hi {people[(i + 1) % len(people)].split()[0]},\n\n")
        out.append(textwrap.fill(" ".join(body), 78) + "\n\n")
        if i and rng.random() < 0.5:  # a quoted line or two of the message before
            quoted = textwrap.wrap(" ".join(messages[i - 1][:2]), 76)[:3]
            out.extend(f"> {line}\n" for line in quoted)
            out.append("\n")
        out.append(f"Thanks,\n{sender.split()[0]}\n\n")
    return "".join(out), {"mailbox": "team", "thread_id": f"T{rng.randrange(10**7)}"}


def transcript(rng: random.Random, fact: Fact) -> tuple[str, dict[str, object]]:
    domain = rng.choice(list(DOMAINS))
    lex = Lexicon(domain, rng)
    speakers = [person(rng).split()[1].upper() for _ in range(3)]
    turns: list[list[str]] = []
    size, target = 0, _size(rng)
    while size < target:
        turn = lex.paragraph(rng, rng.randrange(1, 5))
        turns.append(turn)
        size += sum(map(len, turn)) + 20
    _plant(rng, turns, fact)
    out = [f"Transcript: {domain} committee hearing\n\n"]
    seconds = 0
    for i, turn in enumerate(turns):
        seconds += rng.randrange(5, 90)
        stamp = f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        out.append(f"{speakers[i % 3]} ({stamp}): {' '.join(turn)}\n")
    return "".join(out), {"recording": f"hearing-{rng.randrange(100, 999)}"}


def flat(rng: random.Random, fact: Fact) -> tuple[str, dict[str, object]]:
    """A page's text extracted without any line breaks: one line of prose."""
    domain = rng.choice(list(DOMAINS))
    lex = Lexicon(domain, rng)
    paragraphs = _paragraphs(lex, rng, _size(rng))
    _plant(rng, paragraphs, fact)
    return " ".join(" ".join(p) for p in paragraphs), {"url": f"https://wiki.example.net/{domain}"}


PROSE: list[Callable[[random.Random, Fact], tuple[str, dict[str, object]]]] = [
    handbook,
    report,
    article,
    thread,
    transcript,
    flat,
]
