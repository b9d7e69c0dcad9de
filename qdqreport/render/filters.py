"""Jinja filters shared by the HTML and Markdown templates: number formatting and Markdown escaping."""

from __future__ import annotations

import math
import re
from typing import Any

DASH = "—"

# Characters that change the meaning of GitHub-flavoured Markdown (emphasis, code, links,
# tables, strike-through, escapes). Backslash escapes keep them literal; <, > and & become
# entities so no text can open an HTML tag in a GitHub comment.
_MD_PUNCTUATION = re.compile(r"([\\`*_\[\]{}|~#!])")
_MD_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def md(value: Any) -> str:
    """Escape a user-provided string (node name, path, error text) for one Markdown line or table cell."""
    text = "" if value is None else str(value)
    text = "".join(_MD_ENTITIES.get(ch, ch) for ch in text)
    text = _MD_PUNCTUATION.sub(r"\\\1", text)
    return " ".join(text.split())  # newlines would end a table row or a list item


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
    if value is None:
        return DASH
    text = f"{value:.1%}"
    return text.replace(".0%", "%")


def seconds(value: Any) -> str:
    return DASH if value is None else f"{value:.2f} s"


def score(value: Any) -> str:
    return DASH if value is None else f"{value:.2f}"


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


FILTERS = {"num": num, "cosine": cosine, "db": db, "pct": pct, "seconds": seconds, "score": score}
MARKDOWN_FILTERS = {**FILTERS, "md": md, "fence": fence}
