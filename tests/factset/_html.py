"""HTML pages: a minified news page, a pretty-printed docs page, a product page, a forum thread and a
wiki article, each with scripts, styles, navigation and boilerplate around one planted sentence."""

from __future__ import annotations

import random
from collections.abc import Callable

from ._facts import Fact
from ._words import CITIES, COMPANIES, DOMAINS, Lexicon, person

__all__ = ["HTML"]

_PROPS = (
    "display:flex",
    "margin:0 auto",
    "padding:4px 8px",
    "color:#333",
    "font-size:14px",
    "line-height:1.5",
    "border-radius:4px",
    "background:#f7f7f9",
    "position:relative",
    "z-index:10",
    "max-width:1200px",
    "font-weight:600",
    "text-decoration:none",
    "box-shadow:0 1px 2px rgba(0,0,0,.08)",
    "gap:12px",
    "align-items:center",
    "justify-content:space-between",
    "overflow:hidden",
    "opacity:.85",
)
_CLASSES = (
    "nav",
    "header",
    "footer",
    "card",
    "btn",
    "promo",
    "banner",
    "grid",
    "col",
    "menu",
    "search",
    "logo",
    "teaser",
    "badge",
    "tag",
    "share",
    "modal",
    "cookie",
    "sidebar",
    "crumbs",
    "hero",
)


def _css(rng: random.Random, rules: int) -> str:
    out = []
    for _ in range(rules):
        selector = f".{rng.choice(_CLASSES)}{rng.choice(('', '-item', '-wrap', '__title', '--active', ' a', ':hover'))}"
        props = ";".join(rng.sample(_PROPS, rng.randrange(2, 6)))
        out.append(f"{selector}{{{props}}}")
    if rng.random() < 0.5:
        out.append("@media (max-width:768px){.nav{display:none}.grid{grid-template-columns:1fr}}")
    return "".join(out)


def _js(rng: random.Random, functions: int) -> str:
    out = ["window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}"]
    for i in range(functions):
        name = rng.choice(("init", "track", "load", "toggle", "render", "bind", "lazy", "observe")) + str(i)
        out.append(
            f"function {name}(e){{var t=document.querySelectorAll('.{rng.choice(_CLASSES)}');"
            f"for(var n=0;n<t.length;n++){{t[n].addEventListener('click',function(r){{r.preventDefault();"
            f"gtag('event','{name}',{{value:{rng.randrange(100)}}})}})}}return t.length>{rng.randrange(9)}}}"
        )
    out.append(
        f"document.addEventListener('DOMContentLoaded',function(){{init0()}});var cfg={{id:'UA-{rng.randrange(10**8)}-1'}};"
    )
    return "".join(out)


def _links(rng: random.Random, lex: Lexicon, count: int, prefix: str = "/") -> list[tuple[str, str]]:
    out = []
    for _ in range(count):
        label = f"{lex.adjectives.pick(rng)} {lex.noun(rng)}s".title()
        out.append((f"{prefix}{label.lower().replace(' ', '-')}", label))
    return out


def _ul(links: list[tuple[str, str]], cls: str) -> str:
    return f'<ul class="{cls}">' + "".join(f'<li><a href="{h}">{t}</a></li>' for h, t in links) + "</ul>"


def _svg(rng: random.Random) -> str:
    points = " ".join(f"{rng.randrange(24)},{rng.randrange(24)}" for _ in range(8))
    return f'<svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true"><path d="M{points}Z"/></svg>'


def _head(rng: random.Random, title: str, styles: int, scripts: int) -> str:
    return (
        f'<head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{title}</title>"
        f'<meta property="og:title" content="{title}"><link rel="stylesheet" href="/static/site.{rng.randrange(16**6):06x}.css">'
        f"<style>{_css(rng, styles)}</style>"
        f'<script async src="https://www.googletagmanager.com/gtag/js?id=G-{rng.randrange(10**6)}"></script>'
        f"<script>{_js(rng, scripts)}</script>"
        f'<script type="application/ld+json">{{"@context":"https://schema.org","@type":"Article",'
        f'"headline":"{title}","author":{{"@type":"Person","name":"{person(rng)}"}}}}</script></head>'
    )


def _footer(rng: random.Random, lex: Lexicon, company: str) -> str:
    cols = "".join(
        f'<div class="footer-col"><h4>{lex.noun(rng).title()}</h4>{_ul(_links(rng, lex, 6, "/about/"), "footer-links")}</div>'
        for _ in range(4)
    )
    social = "".join(
        f'<a class="share" href="https://social.example/{company.lower()}{i}">{_svg(rng)}</a>'
        for i in range(4)
    )
    return (
        f'<footer class="footer">{cols}<div class="social">{social}</div>'
        f'<p>&copy; 2026 {company} Ltd. All rights reserved. <a href="/privacy">Privacy</a> | '
        f'<a href="/terms">Terms</a> | <a href="/cookies">Cookie settings</a></p></footer>'
        f'<div class="cookie"><p>We use cookies to improve your experience. By continuing you agree to our '
        f'<a href="/cookies">cookie policy</a>.</p><button class="btn">Accept all</button>'
        f'<button class="btn">Manage</button></div>'
    )


def _body_paragraphs(
    rng: random.Random, lex: Lexicon, fact: Fact, total: int, wrap: Callable[[str], str]
) -> list[str]:
    paras: list[list[str]] = []
    size = 0
    while size < total:
        para = lex.paragraph(rng, rng.randrange(3, 7))
        paras.append(para)
        size += sum(map(len, para)) + 10
    where = rng.randrange(1, max(2, len(paras) - 1))
    paras[where].insert(rng.randrange(0, len(paras[where]) + 1), fact.sentence)
    return [wrap(" ".join(p)) for p in paras]


def _target(rng: random.Random) -> int:
    return rng.randrange(4_000, 11_000)  # the article's own text; the page around it is as much again


def news(rng: random.Random, fact: Fact) -> tuple[str, dict[str, object]]:
    """Minified: the whole page on one line."""
    lex = Lexicon(rng.choice(list(DOMAINS)), rng)
    company = rng.choice(COMPANIES)
    title = (
        f"{lex.adjectives.pick(rng).title()} {lex.noun(rng).title()} Plans Announced in {rng.choice(CITIES)}"
    )
    nav = _ul(_links(rng, lex, rng.randrange(30, 50)), "nav")
    paras = _body_paragraphs(rng, lex, fact, _target(rng), lambda t: f"<p>{t}</p>")
    for k in range(2, len(paras), 4):
        paras.insert(k, f"<h2>{lex.phrase(rng).capitalize()}</h2>")
    related = _ul(_links(rng, lex, 8, "/news/"), "related")
    page = (
        f'<!DOCTYPE html><html lang="en">{_head(rng, title, rng.randrange(40, 90), rng.randrange(6, 14))}<body>'
        f'<header class="header"><a class="logo" href="/">{_svg(rng)}{company} News</a><nav>{nav}</nav>'
        f'<form class="search" action="/search"><input name="q" placeholder="Search"></form></header>'
        f'<main><article><h1>{title}</h1><p class="byline">By {person(rng)} &middot; '
        f'<time datetime="2026-03-{rng.randrange(1, 28):02d}">March 2026</time></p>{"".join(paras)}</article>'
        f'<aside class="sidebar"><h3>Related</h3>{related}<div class="promo">Subscribe for '
        f"&pound;1 a week</div></aside></main>{_footer(rng, lex, company)}</body></html>"
    )
    return page, {"url": f"https://{company.lower()}-news.example.com/story/{rng.randrange(10**6)}"}


def docs(rng: random.Random, fact: Fact) -> tuple[str, dict[str, object]]:
    """Pretty-printed, indented, with a sidebar of links, code blocks and a parameter table."""
    lex = Lexicon(rng.choice(("infrastructure", "operations", "finance")), rng)
    company = rng.choice(COMPANIES)
    title = f"{lex.noun(rng).title()} guide"
    side = "\n".join(
        f'        <li><a href="/docs{h}">{t}</a></li>' for h, t in _links(rng, lex, rng.randrange(40, 70))
    )
    paras = _body_paragraphs(rng, lex, fact, _target(rng), lambda t: f"      <p>{t}</p>")
    blocks = []
    for k, p in enumerate(paras):
        if k % 3 == 0:
            blocks.append(f'      <h2 id="s{k}">{lex.phrase(rng).capitalize()}</h2>')
        blocks.append(p)
        if k % 4 == 2:
            blocks.append(
                "      <pre><code>$ "
                + f"{company.lower()} {lex.noun(rng)} --{lex.noun(rng)}={rng.randrange(100)}\n"
                + f"{lex.noun(rng)}: ok ({rng.randrange(1000)} ms)</code></pre>"
            )
    rows = "\n".join(
        f"          <tr><td><code>{lex.noun(rng)}_{i}</code></td><td>{rng.choice(('string', 'int', 'bool'))}</td>"
        f"<td>{lex.sentence(rng, 0)}</td></tr>"
        for i in range(rng.randrange(6, 14))
    )
    style = _css(rng, rng.randrange(30, 60)).replace("}", "}\n      ")
    script = _js(rng, rng.randrange(4, 10)).replace(";", ";\n      ")
    content = "\n".join(blocks)
    page = f"""<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>{title} | {company} Docs</title>
    <style>
      {style}
    </style>
    <script>
      {script}
    </script>
  </head>
  <body>
    <nav class="sidebar" aria-label="Documentation">
      <ul>
{side}
      </ul>
    </nav>
    <main class="content">
      <nav class="crumbs"><a href="/docs">Docs</a> / <a href="/docs/guides">Guides</a> / {title}</nav>
      <h1>{title}</h1>
{content}
      <h2>Parameters</h2>
      <table class="params">
        <thead><tr><th>Name</th><th>Type</th><th>Description</th></tr></thead>
        <tbody>
{rows}
        </tbody>
      </table>
    </main>
    {_footer(rng, lex, company)}
  </body>
</html>
"""
    return page, {"url": f"https://docs.{company.lower()}.example/guides/{rng.randrange(999)}"}


def product(rng: random.Random, fact: Fact) -> tuple[str, dict[str, object]]:
    """Server-rendered: a line per block, spec table, reviews; the fact in a review or the spec notes."""
    lex = Lexicon("kitchen", rng)
    company = rng.choice(COMPANIES)
    name = f"{company} {lex.noun(rng).title()} {rng.randrange(100, 900)}"
    specs = [
        (lex.noun(rng).title(), f"{rng.randrange(1, 500)} {rng.choice(('mm', 'g', 'W', 'L'))}")
        for _ in range(10)
    ]
    in_specs = rng.random() < 0.4
    if in_specs:
        specs.insert(rng.randrange(len(specs)), ("Notes", fact.sentence))
    spec_rows = "\n".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in specs)
    reviews: list[str] = []
    size, target = 0, _target(rng)
    while size < target:
        text = " ".join(lex.paragraph(rng, rng.randrange(2, 5)))
        reviews.append(text)
        size += len(text) + 200
    if not in_specs:
        k = rng.randrange(1, len(reviews))
        reviews[k] = f"{reviews[k]} {fact.sentence}"
    review_html = "\n".join(
        f'<div class="review"><span class="stars">{"&#9733;" * rng.randrange(1, 6)}</span>'
        f'<span class="author">{person(rng)}</span>\n<p>{r}</p>\n<a href="#" class="btn">Helpful ({rng.randrange(40)})</a></div>'
        for r in reviews
    )
    cards = "\n".join(
        f'<div class="card"><a href="/p/{rng.randrange(10**5)}"><img src="/img/{rng.randrange(10**5)}.jpg" alt="">'
        f'{lex.noun(rng).title()}</a><span class="price">&euro;{rng.randrange(5, 400)}.99</span></div>'
        for _ in range(12)
    )
    page = (
        f"<!doctype html>\n<html>\n{_head(rng, name, rng.randrange(30, 70), rng.randrange(4, 10))}\n<body>\n"
        f'<header class="header"><a class="logo" href="/">{company}</a>\n<nav>{_ul(_links(rng, lex, 25, "/shop/"), "menu")}</nav></header>\n'
        f'<nav class="crumbs"><a href="/">Home</a> &rsaquo; <a href="/kitchen">Kitchen</a> &rsaquo; {name}</nav>\n'
        f'<main>\n<h1>{name}</h1>\n<p class="price">&euro;{rng.randrange(20, 900)}.00</p>\n'
        f'<p>{" ".join(lex.paragraph(rng, 4))}</p>\n<h2>Specifications</h2>\n<table class="specs">\n{spec_rows}\n</table>\n'
        f'<h2>Reviews</h2>\n{review_html}\n<h2>You may also like</h2>\n<div class="grid">\n{cards}\n</div>\n</main>\n'
        f"{_footer(rng, lex, company)}\n</body>\n</html>\n"
    )
    return page, {"url": f"https://shop.example.com/{name.lower().replace(' ', '-')}"}


def forum(rng: random.Random, fact: Fact) -> tuple[str, dict[str, object]]:
    lex = Lexicon(rng.choice(list(DOMAINS)), rng)
    company = rng.choice(COMPANIES)
    title = f"{lex.phrase(rng).capitalize()}?"
    posts: list[str] = []
    size, target = 0, _target(rng)
    while size < target:
        text = " ".join(lex.paragraph(rng, rng.randrange(1, 6)))
        posts.append(text)
        size += len(text) + 300
    k = rng.randrange(1, len(posts))
    posts[k] = f"{fact.sentence} {posts[k]}" if rng.random() < 0.5 else f"{posts[k]} {fact.sentence}"
    html = []
    for i, text in enumerate(posts):
        who = person(rng)
        html.append(
            f'<div class="post" id="p{1000 + i}"><div class="author"><img class="avatar" src="/u/{i}.png" alt="">'
            f'<a href="/u/{who.split()[0].lower()}">{who}</a><span class="badge">{rng.choice(("Member", "Moderator", "Newbie"))}</span></div>'
            f'<time datetime="2026-02-{i % 28 + 1:02d}T10:{i % 60:02d}">Feb {i % 28 + 1}</time>'
            f'<div class="body"><p>{text}</p></div><div class="sig">-- {lex.sentence(rng, 0)}</div>'
            f'<div class="actions"><a href="#reply">Reply</a> <a href="#quote">Quote</a> <a href="#report">Report</a></div></div>'
        )
    page = (
        f"<!DOCTYPE html><html>{_head(rng, title, rng.randrange(20, 50), rng.randrange(3, 8))}<body>"
        f'<header class="header"><a class="logo" href="/">{company} Community</a>{_ul(_links(rng, lex, 20, "/c/"), "nav")}</header>'
        f"<main><h1>{title}</h1>\n" + "\n".join(html) + f"</main>{_footer(rng, lex, company)}</body></html>"
    )
    return page, {"url": f"https://forum.{company.lower()}.example/t/{rng.randrange(10**5)}"}


def wiki(rng: random.Random, fact: Fact) -> tuple[str, dict[str, object]]:
    lex = Lexicon(rng.choice(("history", "nature")), rng)
    city = rng.choice(CITIES)
    title = f"{lex.noun(rng).title()} of {city}"
    infobox = "".join(
        f"<tr><th>{lex.noun(rng).title()}</th><td>{rng.randrange(1100, 1900)}</td></tr>" for _ in range(8)
    )
    paras = _body_paragraphs(
        rng,
        lex,
        fact,
        _target(rng),
        lambda t: (
            "<p>"
            + t.replace(
                ". ", f'.<sup><a href="#cite-{rng.randrange(99)}">[{rng.randrange(1, 40)}]</a></sup> ', 1
            )
            + "</p>"
        ),
    )
    body = []
    for k, p in enumerate(paras):
        if k % 3 == 0:
            body.append(
                f'<h2><span id="h{k}">{lex.phrase(rng).capitalize()}</span><span class="edit">[<a href="?action=edit&amp;section={k}">edit</a>]</span></h2>'
            )
        body.append(p)
    refs = "".join(
        f'<li id="cite-{i}"><a href="https://archive.example.org/{rng.randrange(10**6)}">{lex.phrase(rng).capitalize()}</a>. '
        f"{rng.choice(COMPANIES)} Press, {rng.randrange(1950, 2025)}.</li>"
        for i in range(rng.randrange(20, 40))
    )
    toc = _ul([(f"#h{k}", lex.noun(rng).title()) for k in range(0, len(paras), 3)], "toc")
    page = (
        f"<!DOCTYPE html>\n<html>{_head(rng, title, rng.randrange(20, 40), rng.randrange(2, 6))}<body>\n"
        f'<div id="mw-head">{_ul(_links(rng, lex, 30, "/wiki/"), "menu")}</div>\n'
        f'<div id="content"><h1>{title}</h1><table class="infobox">{infobox}</table>\n<div id="toc">{toc}</div>\n'
        + "\n".join(body)
        + f'\n<h2>References</h2><ol class="references">{refs}</ol></div>\n{_footer(rng, lex, "Wiki")}\n</body></html>'
    )
    return page, {"url": f"https://en.wiki.example/wiki/{title.replace(' ', '_')}"}


HTML: list[Callable[[random.Random, Fact], tuple[str, dict[str, object]]]] = [
    news,
    docs,
    product,
    forum,
    wiki,
]
