"""HTML read as a reader sees it: title, headings, the main text's sentences, links; the rest folded.

A page is recognised by its markup, whatever tool sent it. It is scanned once, left to right, by one
regular expression for the start of each tag (in C) and a bounded one for each tag's end: no tree is
built, so a 10 MB page costs one pass, and malformed markup only makes a region end sooner or later.
Scripts, styles, the head, navigation, headers and footers outside the article, sidebars, forms, cookie
banners and other boilerplate (known by element name, ARIA role, or a class or id word) become units
that are never shown: each run of them folds into one ``[chars A-B folded: navigation (45 links)]``.
The text is cut into sentences whose characters are known exactly, so the text between two markers is
the reader text (tags left out, entities decoded, blanks collapsed) of exactly the characters between
them, and any range reads back byte for byte with ``offset``/``length``.
"""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from collections.abc import Sequence
from itertools import pairwise

from mcpsqueeze.shrink._passages import Reading, Sentences

__all__ = ["html_reading", "looks_like_html"]

_KNOWN_RE = re.compile(
    r"<(?:p|div|span|a|li|ul|ol|table|tr|td|th|h[1-6]|body|head|meta|link|script|style|section|article"
    r"|nav|img|br|header|footer|main|form|input|button)\b",
    re.IGNORECASE,
)
# A tag: its start (a comment, a doctype, an end tag, a start tag and its name), and the rest of it to
# its ">" (group 3; "" when it does not end where it should): quoted values may hold ">", each quote is
# bounded (a quote left open costs at most that much before the plain ">" is taken instead). The short
# forms come first: the regex engine tries them before the one that repeats. First of all, a whole
# element of one block or cell, with attributes that hold no "<" or ">" or none, and nothing but text
# in it (groups 1-3: <p>text</p>, <td class="n">text</td>): the most common piece of a page's text,
# read in one step.
_TAG_RE = re.compile(
    r"""<(?:(p|li|dt|dd|div|h[1-6]|td|th)((?:\s(?:[^<>"'/]++|/(?!>)|"[^"<>]{0,4096}"|'[^'<>]{0,4096}')*+)?)>"""
    r"""([^<]*+)</\1>"""
    r"""|(/?)([A-Za-z][A-Za-z0-9:._-]*+)"""
    r"""(>|[^>"']*+>|[^>"']*+(?:(?:"[^"]{0,4096}"|'[^']{0,4096}')[^>"']*+)*+>|)|!--|[!?])"""
)
_ATTR_RE = re.compile(r"""([A-Za-z_:][-A-Za-z0-9_:.]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?""")

_RAW = frozenset(("script", "style", "textarea", "title", "noscript", "xmp", "iframe", "noembed", "noframes"))
_VOID = frozenset(
    ("area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr")
)
_BLOCKS = frozenset(
    [
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "caption",
        "dd",
        "details",
        "dialog",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "html",
        "li",
        "main",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "thead",
        "tfoot",
        "tr",
        "ul",
        "head",
        "center",
    ]
)
_BOILERPLATE_NAMES = {
    "nav": "navigation",
    "footer": "footer",
    "aside": "sidebar",
    "form": "form",
    "header": "header",
    "dialog": "dialog",
    "menu": "menu",
    "button": "button",
    "select": "form field",
    "svg": "image",
    "math": "formula",
    "template": "template",
    "canvas": "image",
    "video": "video",
    "audio": "audio",
    "object": "embed",
}
_ROLES = {
    "navigation": "navigation",
    "banner": "header",
    "contentinfo": "footer",
    "complementary": "sidebar",
    "search": "search",
    "dialog": "dialog",
}
_CLASS_WORDS = (
    "nav|navbar|navigation|menu|footer|sidebar|cookies?|consent|banner|breadcrumbs?|crumbs|share|sharing"
    "|social|promo|advert|ads?|related|newsletter|subscribe|modal|popup|toolbar|skip|pagination|pager"
    "|actions|signature|sig|masthead|topbar|widget|edit|editsection"
)
_CLASS_WORDS_RE = re.compile(rf"(?:^|[\s_-])({_CLASS_WORDS})(?=$|[\s_-])", re.IGNORECASE)
# What a tag's attributes must hold, somewhere, for it to open boilerplate by them (a quick look before
# they are parsed: a role, hidden, a style, a class or id word with what may stand around a value);
# ASCII attributes are lowered and looked at case by case (the caseless regex is much slower).
_MAYBE_BOILERPLATE = rf"role|hidden|display|[\s_\-\"'=](?:{_CLASS_WORDS})(?=$|[\s_\-\"'=<>`/])"
_MAYBE_BOILERPLATE_RE = re.compile(_MAYBE_BOILERPLATE, re.IGNORECASE)
_MAYBE_BOILERPLATE_ASCII_RE = re.compile(_MAYBE_BOILERPLATE)
# Elements inside a run of text: their tags join the words around them as they are; any other tag
# between two pieces of text (a span, a div, a cell) puts a blank between them.
_INLINE = frozenset(
    [
        "a",
        "abbr",
        "b",
        "bdi",
        "bdo",
        "cite",
        "code",
        "data",
        "del",
        "dfn",
        "em",
        "i",
        "ins",
        "kbd",
        "mark",
        "q",
        "s",
        "samp",
        "small",
        "strong",
        "sub",
        "sup",
        "u",
        "var",
    ]
)


def looks_like_html(text: str) -> bool:
    """The text is HTML by its markup: it opens with a doctype or ``<html``, or with a tag and holds
    a dozen tags of HTML's own names in its first 16 KB."""
    head = text[:4096].lstrip("\ufeff \t\r\n")
    if not head.startswith("<"):
        return False
    lowered = head[:64].lower()
    if lowered.startswith(("<!doctype html", "<html")):
        return True
    if lowered.startswith("<?xml"):
        return False
    found = _KNOWN_RE.findall(text, 0, 16 * 1024)
    return len(found) >= 12 and len({f.lower() for f in found}) >= 3


_OTHER, _BLOCK, _CELL, _INLINE_ROLE = range(4)  # what a tag does to the text around it


def _attributes(raw: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for match in _ATTR_RE.finditer(raw):
        name = match.group(1).lower()
        if name not in out:
            value = match.group(2) if match.group(2) is not None else match.group(3)
            out[name] = value if value is not None else (match.group(4) or "")
    return out


def _boilerplate(name: str, attrs: str, inside_content: bool) -> str | None:
    """What a start tag opens when it opens boilerplate: its label; None for content."""
    label = _BOILERPLATE_NAMES.get(name)
    if label is not None and not (inside_content and name in ("header", "footer")):
        return label
    if (
        attrs
        and ("class" in attrs or "id" in attrs or "role" in attrs or "hidden" in attrs or "style" in attrs)
        and (
            _MAYBE_BOILERPLATE_ASCII_RE.search(attrs.lower())
            if attrs.isascii()
            else _MAYBE_BOILERPLATE_RE.search(attrs)
        )
        is not None
    ):
        found = _attributes(attrs)
        role = _ROLES.get(found.get("role", "").lower())
        if role is not None:
            return role
        if "hidden" in found or found.get("aria-hidden", "").lower() == "true":
            return "hidden"
        if re.search(r"display\s*:\s*none", found.get("style", ""), re.IGNORECASE):
            return "hidden"
        words = _CLASS_WORDS_RE.search(f"{found.get('class', '')} {found.get('id', '')}")
        if words is not None:
            word = words.group(1).lower()
            return {"nav": "navigation", "navbar": "navigation", "crumbs": "breadcrumbs", "ad": "ads"}.get(
                word, word
            )
    return None


_LINK_RE = re.compile(r"<a[\s>]", re.IGNORECASE)  # (counted, not parsed: "<a" then a blank or ">")
_SCRIPT_RE = re.compile(r"<script[\s>]", re.IGNORECASE)
_STYLE_RE = re.compile(r"<style[\s>]", re.IGNORECASE)
_TITLE_RE = re.compile(r"<title[^>]*>([^<]*)", re.IGNORECASE)
_META_RE = re.compile(r"<meta\s[^>]*\bname\s*=\s*[\"']?description\b[^>]*>", re.IGNORECASE)
_NESTING: dict[str, re.Pattern[str]] = {}


def _matching_end(text: str, name: str, start: int) -> int | None:
    """Where the element ``name`` whose start tag ends at ``start`` ends (after its end tag), counting
    the same elements nested in it; None when it is never closed."""
    pattern = _NESTING.get(name)
    if pattern is None:
        pattern = _NESTING[name] = re.compile(rf"<(/?){re.escape(name)}(?=[\s/>])", re.IGNORECASE)
    depth = 1
    for match in pattern.finditer(text, start):
        if match.group(1):
            depth -= 1
            if depth == 0:
                close = text.find(">", match.end())
                return len(text) if close < 0 else close + 1
        else:
            depth += 1
    return None


class _Page:
    """The scan's findings: boilerplate regions, text blocks, title, links.

    One pass over the tags outside boilerplate; a region (the head, a script, a navigation) is jumped
    over once its end is found (its own elements counted, in C), so its insides cost no Python steps."""

    def __init__(self, text: str) -> None:
        self.text = text
        # Regions and blocks of text (a paragraph, a list item, a table row), in the order of the text
        # (regions are jumped over); a block is its number: the element that opened it ("p", "li",
        # "h2", "tr" ...) is ``kinds[k]``, its segments (the characters of text between its tags, each
        # (start, end, what stands between it and the one before: "", " ", " | ")) are
        # ``segments[firsts[k]:firsts[k + 1]]``. (Flat lists: few objects for the collector to walk.)
        self.items: list[int | tuple[int, str]] = []
        self.kinds: list[str] = []
        self.firsts: list[int] = []
        self.segments: list[tuple[int, int, str]] = []
        self.title = ""
        self.description = ""
        self.links: list[str] = []  # hrefs of the text's own links
        self.all_links = len(_LINK_RE.findall(text))
        self._read()
        self.firsts.append(len(self.segments))

    def _region(self, start: int, end: int, label: str) -> None:
        """A region of boilerplate from ``start`` to ``end``: its start and what its marker says."""
        counts = [
            f"{n} {what}{'s' if n != 1 else ''}"
            for pattern, what in ((_LINK_RE, "link"), (_SCRIPT_RE, "script"), (_STYLE_RE, "style"))
            if (n := len(pattern.findall(self.text, start, end)))
        ]
        self.items.append((start, f"{label} ({', '.join(counts)})" if counts else label))

    def _read(self) -> None:
        text = self.text
        n = len(text)
        tags = _TAG_RE.finditer(text)  # (made again where the scan jumps: a region, a comment)
        names: dict[str, tuple[str, int]] = {}  # a tag's name as written -> (its name, its role)
        stack: list[str] = []  # open elements of the text (not of boilerplate: it is jumped over)
        content = 0  # open main/article elements
        block = False  # a block of text is open: text that follows joins it
        items, kinds, firsts, segments = self.items, self.kinds, self.firsts, self.segments
        separator = ""
        pos = 0
        while pos < n:
            match = next(tags, None)
            start = n if match is None else match.start()
            if start > pos and not text[pos:start].isspace():
                if not block:
                    items.append(len(kinds))
                    kind = next((k for k in reversed(stack) if k in _BLOCKS or k in ("td", "th")), "div")
                    kinds.append("tr" if kind in ("td", "th") else kind)
                    firsts.append(len(segments))
                    segments.append((pos, start, ""))
                    block = True
                else:
                    segments.append((pos, start, separator))
                separator = ""
            if match is None:
                break
            simple, attrs, inside, slash, written, rest = match.groups()
            if simple is not None:  # <p>text</p>: its start tag, its text, its end tag
                pos = match.end()
                if attrs and (label := _boilerplate(simple, attrs, content > 0)) is not None:
                    self._region(start, pos, label)
                    block = False
                    continue
                cell = simple in ("td", "th")
                if inside and not inside.isspace():
                    at = pos - len(simple) - 3 - len(inside)
                    if not block or not cell:
                        items.append(len(kinds))
                        kinds.append("tr" if cell else simple)
                        firsts.append(len(segments))
                        segments.append((at, at + len(inside), ""))
                        block = True
                        separator = ""
                    else:
                        segments.append((at, at + len(inside), " | "))
                if cell:
                    separator = " | "
                else:
                    block = False
                continue
            if written is None:  # a comment, <!DOCTYPE ...>, <?xml ...?>
                comment = match.group(0) == "<!--"
                close = text.find("-->" if comment else ">", match.end())
                pos = n if close < 0 else close + (3 if comment else 1)
                tags = _TAG_RE.finditer(text, pos)
                continue
            known = names.get(written)
            if known is None:  # its name lower-cased, and what it does to the text around it
                lowered = written.lower()
                in_text = _INLINE_ROLE if lowered in _INLINE else _OTHER
                role = _BLOCK if lowered in _BLOCKS else _CELL if lowered in ("td", "th") else in_text
                known = names[written] = lowered, role
            name, role = known
            if rest:
                end = match.end()
            else:
                close = text.find(">", match.end())
                end = n if close < 0 else close + 1
                tags = _TAG_RE.finditer(text, end)
            pos = end
            if slash:  # an end tag
                if stack and stack[-1] == name:
                    stack.pop()
                else:
                    for k in range(len(stack) - 2, max(-1, len(stack) - 12), -1):
                        if stack[k] == name:
                            del stack[k:]
                            break
            else:
                attrs = rest[:-1] if rest else text[match.end() : max(match.end(), end - 1)]  # ("" for <p>)
                closed = attrs.endswith("/")
                stop: int | None = None  # where the region it opens ends (jumped to)
                if name == "head" or name in _RAW:
                    stop = _matching_end(text, name, end) if not closed else end
                    stop = n if stop is None else stop
                    if name == "head":
                        title = _TITLE_RE.search(text, start, stop)
                        if title is not None:
                            self.title = _clean(title.group(1))
                        meta = _META_RE.search(text, start, stop)
                        if meta is not None:
                            self.description = _clean(_attributes(meta.group(0)[5:-1]).get("content", ""))
                    elif name == "title":
                        self.title = self.title or _clean(text[end : text.rfind("<", end, stop)])
                    self._region(start, stop, name)
                else:
                    if name == "a" and "href" in attrs:
                        href = _attributes(attrs).get("href", "")
                        if href and not href.startswith(("#", "javascript:")):
                            self.links.append(href)
                    if not (name in _VOID or closed or (not attrs and name not in _BOILERPLATE_NAMES)):
                        label = _boilerplate(name, attrs, content > 0)
                        if label is not None:
                            stop = _matching_end(text, name, end)
                            if stop is not None:
                                self._region(start, stop, label)
                if stop is not None:
                    block = False
                    pos = stop
                    tags = _TAG_RE.finditer(text, pos)
                    continue
                if name not in _VOID and not closed:
                    stack.append(name)
            if role == _BLOCK:
                block = False
                if name in ("main", "article"):
                    content = max(content - 1, 0) if slash else content + 1
            elif role == _CELL:
                separator = " | "
            elif role == _OTHER:
                separator = separator or " "


def _clean(raw: str) -> str:
    """Reader text: entities decoded, blanks collapsed."""
    if "&" in raw:
        raw = html.unescape(raw)
    elif raw.isprintable() and "  " not in raw and raw.strip() == raw:
        return raw  # (no blank but single spaces inside: nothing to collapse)
    return " ".join(raw.split())


# What a block's first line starts with: a list item's dash, a heading's hashes (a heading is one unit).
_PREFIX = {"li": "- ", "dt": "- ", **{f"h{k}": "#" * k + " " for k in range(1, 7)}}


def html_reading(text: str, terms: Sequence[str] = ()) -> Reading:
    """A page read as units: its boilerplate (never shown: folded), and the sentences of its text
    blocks; headings first in the plan, then the lead, then every block's first sentence."""
    page = _Page(text)
    starts: list[int] = []
    texts: list[str] = []
    blocks: list[int] = []
    folds: dict[int, str] = {}
    prefixes: dict[int, str] = {}
    headings: list[int] = []
    firsts: list[int] = []
    sentences = Sentences(text)
    kinds, bounds, all_segments = page.kinds, page.firsts, page.segments
    for number, item in enumerate(page.items):
        if isinstance(item, tuple):
            folds[len(starts)] = item[1]
            starts.append(item[0])
            texts.append("")
            blocks.append(-1)
            continue
        kind = kinds[item]
        first, after = bounds[item], bounds[item + 1]
        if after - first == 1:
            start, stop, _ = all_segments[first]
            segments = None  # (its text is text[start:stop], tags left out of none)
        else:
            segments = all_segments[first:after]
            start = segments[0][0]
            stop = segments[-1][1]
        prefix = _PREFIX.get(kind)
        if prefix is not None:
            prefixes[number] = prefix
            if prefix[0] == "#":  # (a heading)
                title = _reader(text, segments, start, stop)
                if title:
                    headings.append(len(starts))
                    starts.append(start)
                    texts.append(title)
                    blocks.append(number)
                continue
        firsts.append(len(starts))
        # sentence starts in the block's text (a segment's own start is no sentence start: tags inside a
        # sentence, a link say, cut it into several segments; a start inside a tag is none either)
        found = sentences.split(start, stop)
        if segments is not None and len(found) > 1:
            opens = [a for a, _, _ in segments]
            found = [start] + [p for p in found[1:] if p < segments[bisect_right(opens, p) - 1][1]]
        for a, b in pairwise([*found, stop]):
            said = _reader(text, segments, a, b)
            if said:
                starts.append(a)
                texts.append(said)
                blocks.append(number)
    if not starts or starts[0] > 0:  # (the doctype and the tags before the first unit)
        starts.insert(0, 0)
        texts.insert(0, "")
        blocks.insert(0, -1)
        headings = [h + 1 for h in headings]
        firsts = [f + 1 for f in firsts]
        folds = {i + 1: label for i, label in folds.items()}
    lead = "".join(
        f"{name}: {value}\n"
        for name, value in (("title", page.title), ("description", page.description))
        if value
    )
    return Reading(
        "HTML page",
        text,
        starts,
        texts,
        blocks,
        folds=folds,
        prefixes=prefixes,
        lead=lead,
        tail=_links_line(page),
        how="shown as its text (tags left out)",
    ).plan(headings, firsts, 3, terms)


def _reader(text: str, segments: list[tuple[int, int, str]] | None, a: int, b: int) -> str:
    """The reader text of the characters ``a`` to ``b`` of a block made of ``segments`` (None: of
    one segment, where ``a`` and ``b`` are)."""
    if segments is None:
        raw = text[a:b]
    else:
        parts: list[str] = []
        for start, end, separator in segments:
            if end <= a or start >= b:
                continue
            if separator and start >= a and parts:
                parts.append(separator)
            parts.append(text[max(start, a) : min(end, b)])
        raw = "".join(parts)
    return _clean(raw)


def _links_line(page: _Page) -> str:
    """``[links: 142 in all, 97 distinct in the text: /a, /b, ... (+12 more)]``: the text's own links,
    distinct, as far as they fit a short line; navigation and footer links are counted in their folds."""
    if not page.all_links:
        return ""
    distinct = list(dict.fromkeys(page.links))
    shown: list[str] = []
    size = 0
    for href in distinct:
        if size + len(href) + 2 > 400:
            break
        shown.append(href)
        size += len(href) + 2
    more = f" (+{len(distinct) - len(shown)} more)" if len(shown) < len(distinct) else ""
    listed = f": {', '.join(shown)}{more}" if shown else ""
    return f"[links: {page.all_links} in all, {len(distinct)} distinct in the text{listed}]\n"
