"""Jinja filters shared by the HTML and Markdown templates: number formatting and Markdown escaping."""

from __future__ import annotations

import html
import math
import numbers
import re
from typing import Any, Callable

from qdqreport.stage_names import stage_name
from qdqreport.wording import percent

DASH = "—"

# Characters that change the meaning of GitHub-flavoured Markdown (emphasis, code, links,
# tables, strike-through, escapes). Backslash escapes keep them literal; <, > and & become
# entities so no text can open an HTML tag in a GitHub comment.
_MD_PUNCTUATION = re.compile(r"([\\`*_\[\]{}|~#!])")
_MD_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}

# GitHub turns plain text into links, mentions, emoji and math after Markdown is parsed, in
# every text node (also inside HTML such as <summary>), and backslashes do not stop it. A zero
# width space (U+200B) breaks each trigger without changing what a reader sees:
#   @octocat, @org/team, a@b.example (mention, e-mail autolink)  -> "@" + ZWSP
#   (a mention needs no word character before the "@": node names like Conv@0 stay as they are)
#   https://x, :smile: (URL scheme, emoji)                       -> ":" + ZWSP
#   (the only all-digit emoji are :100: and :1234:, so times like 14:33:35 stay as they are)
#   www.evil.example (bare-domain autolink)                      -> "www" + ZWSP + "."
#   #123, GH-123 (issue references)                              -> "#" / "GH" + ZWSP
# and "$" is wrapped in a span, GitHub's documented way to show a dollar that is not math.
ZWSP = "\u200b"
_TRIGGERS = re.compile(r"(?<!\w)@(?=\S)|@(?=[\w-]+\.\w)|:(?=//|(?!\d+:)[\w+-]+:|(?:100|1234):)|(?i:\bwww)(?=\.)|#(?=\d)|(?i:\bgh)(?=-\d)")
DOLLAR = "<span>$</span>"


# "- x", "+ x", "1. x", "1) x" start a list, "---"/"===" a rule or a heading underline.
_BLOCK_START = re.compile(r"^(\d{0,9})([.)])(?=\s|$)|^()([-+])(?=\s|$)|^()([-=])(?=[-=\s]*$)")


def _escape_block_start(match: re.Match) -> str:
    digits, marker = next((match.group(i), match.group(i + 1)) for i in (1, 3, 5) if match.group(i + 1))
    return f"{digits}\\{marker}"


class Escaped(str):
    """Text already escaped for Markdown: escaping it again returns it unchanged."""


def _neutralise(text: str) -> str:
    return _TRIGGERS.sub(lambda m: m.group(0) + ZWSP, text).replace("$", DOLLAR)


def md(value: Any) -> str:
    """Escape a user-provided string (node name, path, error text) for one Markdown line or table cell.

    No raw HTML, link, image, autolink, mention, emoji, issue reference, math or table pipe survives.
    """
    if isinstance(value, Escaped):
        return value
    text = "" if value is None else str(value)
    text = "".join(_MD_ENTITIES.get(ch, ch) for ch in text)
    text = _MD_PUNCTUATION.sub(r"\\\1", text)
    text = " ".join(text.split())  # newlines would end a table row or a list item
    text = _BLOCK_START.sub(_escape_block_start, text)  # alone on its line, text must not start a list or rule
    return Escaped(_neutralise(text))


def md_html(value: Any) -> str:
    """Escape a user-provided string for text inside an HTML tag of the Markdown report (<summary>).

    GitHub shows backslashes literally there, so only HTML escaping, plus the same neutralising as `md`.
    """
    text = "" if value is None else " ".join(str(value).split())
    return Escaped(_neutralise(html.escape(text, quote=True)))


# `text` between a pair of backticks on one line: code the message's author meant ("run `qdqreport collect`").
_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def code_span(value: Any) -> str:
    """*value* as an inline code span that nothing inside can close or break out of: the fence is one
    backtick longer than any run inside, and a table pipe is escaped (GFM splits cells before code)."""
    text = " ".join(str(value).split()).replace("|", "\\|")
    fence_ = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence_}{pad}{text}{pad}{fence_}"


def md_cell(value: Any) -> str:
    """`md` for a table cell, except that paired backticks show as code (built by code_span), not as
    escaped backticks; everything outside them is escaped exactly as `md` does."""
    if isinstance(value, Escaped):
        return value
    text = " ".join(("" if value is None else str(value)).split())
    parts, last = [], 0
    for match in _CODE_SPAN.finditer(text):
        parts += [_md_fragment(text[last:match.start()]), code_span(match.group(1))]
        last = match.end()
    parts.append(_md_fragment(text[last:]))
    return Escaped("".join(parts))


def _md_fragment(text: str) -> str:
    # md() trims; the spaces around a code span are part of the sentence.
    lead, trail = " " * (text[:1] == " "), " " * (len(text) > 1 and text[-1:] == " ")
    return lead + md(text) + trail if text.strip() else text


def fence(value: Any, language: str = "sh") -> str:
    """A fenced code block longer than any backtick run inside, so a command cannot close it early."""
    text = str(value).rstrip("\n")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    marker = "`" * max(3, longest + 1)
    return f"{marker}{language}\n{text}\n{marker}"


def num(value: Any, digits: int = 4) -> str:
    """A number for a table: thousands separators for integers, `digits` significant digits for floats."""
    if value is None:
        return DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        return f"{value:.{digits}g}"
    return str(value)


def cosine(value: Any) -> str:
    if value is None:
        return DASH
    return f"{value:.4f}" if _finite(value) else num(value)


def db(value: Any) -> str:
    """SQNR in decibels; identical outputs have infinite SQNR and show as ∞ dB."""
    if value is None:
        return DASH
    return f"{value:.1f} dB" if _finite(value) else f"{num(float(value))} dB"


def pct(value: Any) -> str:
    """A share (0..1) as a percentage, the same way in every table and in the rules' texts (wording.percent)."""
    return DASH if value is None else percent(value)


def seconds(value: Any) -> str:
    return DASH if value is None else f"{value:.2f} s"


def score(value: Any) -> str:
    return DASH if value is None else f"{value:.2f}"


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def markdown_safe(number_filter: Callable[..., str]) -> Callable[..., str]:
    """The number filter for Markdown: a value that is not a number (a hostile bundle's string,
    list or dict where a number belongs) is escaped with `md` instead of printed raw."""
    def safe(value: Any, *args: Any) -> str:
        if value is None or isinstance(value, (bool, numbers.Number)):
            return Escaped(number_filter(value, *args))
        return md(value)
    safe.__name__ = number_filter.__name__
    return safe


def stage(value: Any) -> str:
    """A stage or comparison id as the name users know ("ONNX Runtime QDQ"); other text unchanged."""
    return stage_name(value)


FILTERS = {"num": num, "cosine": cosine, "db": db, "pct": pct, "seconds": seconds, "score": score, "stage": stage}
MARKDOWN_FILTERS = {**{name: markdown_safe(f) for name, f in FILTERS.items()}, "md": md, "md_html": md_html, "fence": fence,
                    "stage": lambda value: md(stage_name(value)), "stage_html": lambda value: md_html(stage_name(value)),
                    "md_cell": md_cell, "cell": lambda value: markdown_safe(num)(value) if _is_number(value) else md_cell(value)}


def _is_number(value: Any) -> bool:
    return value is None or isinstance(value, (bool, numbers.Number))
