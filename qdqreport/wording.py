"""Words and numbers shared by the rules' texts and the reports: plurals and large ratios.

Imports nothing from qdqreport, so rules (which must not import the renderer) and the renderer
use the same helpers."""

from __future__ import annotations

import math

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_IRREGULAR = {"is": "are", "was": "were", "has": "have", "this": "these", "does": "do"}


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """"1 layer", "3 layers", "0 layers": the count and the word that agrees with it.

    For phrases, only the first word is inflected ("1 Reformat layer changes type" is written
    as `plural(n, "Reformat layer")` and `verb(n, "changes")`)."""
    return f"{count:,} {noun(count, singular, plural_form)}"


def noun(count: int, singular: str, plural_form: str | None = None) -> str:
    """The word alone: *singular* for 1, else *plural_form* or the English -s/-es plural."""
    if count == 1:
        return singular
    if plural_form:
        return plural_form
    if singular.endswith(("s", "x", "ch", "sh")):
        return singular + "es"
    if singular.endswith("y") and singular[-2:-1] not in "aeiou":
        return singular[:-1] + "ies"
    return singular + "s"


def verb(count: int, singular: str) -> str:
    """"writes" for 1, "write" for any other count ("is"/"are", "has"/"have")."""
    if count == 1:
        return singular
    return _IRREGULAR.get(singular, singular[:-1] if singular.endswith("s") else singular)


def significant(value: float, digits: int = 3) -> str:
    """A number with *digits* significant digits; very large or small ones in powers of ten
    ("4.07×10³¹", "1.2×10⁻⁵"), never a 32-digit integer."""
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("∞" if value > 0 else "−∞")
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value)))
    if -3 <= exponent < 5:
        return f"{value:.{digits}g}" if exponent < digits else f"{round(value):,}"
    mantissa = f"{value / 10 ** exponent:.{digits - 1}f}".rstrip("0").rstrip(".")
    if mantissa in ("10", "-10"):  # 9.999 rounded up
        mantissa, exponent = mantissa[:-1], exponent + 1
    return f"{mantissa}×10{str(exponent).translate(_SUPERSCRIPT)}"


def ratio(value: float, digits: int = 3) -> str:
    """A factor such as a scale ratio: "123×", "4.07×10³¹×"."""
    return significant(value, digits) + "×"


def percent(share: float) -> str:
    """A share of a whole (0..1) as a percentage with 3 significant digits ("0.47%", "52.4%", "44%"),
    never rounded to 0% or 100% unless it is exactly that (99.99% stays "99.99%")."""
    if not math.isfinite(share):
        return significant(share)
    value = share * 100
    if value in (0, 100) or abs(value) > 100:
        return f"{value:,.0f}%"
    if abs(value) < 0.001:
        return f"{significant(value)}%"
    for digits in range(3, 8):
        text = f"{value:.{digits}g}"
        if float(text) not in (0.0, 100.0, -100.0):
            break
    return f"{float(text):g}%"


def percent_value(share: float) -> float:
    """A share as a percentage number with 3 significant digits, for a metric whose unit is "%"."""
    return float(f"{share * 100:.3g}") if math.isfinite(share) else share
