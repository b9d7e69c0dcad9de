"""config_card.md: the configuration card of one bundle (qdqreport/config_card.py) as Markdown."""

from __future__ import annotations

import re
from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.config_card import CardModel, build_card
from qdqreport.render.env import markdown_env

CARD_FILE = "config_card.md"


def render_card(card: CardModel) -> str:
    text = markdown_env().get_template("config_card.md.j2").render(card=card)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def card_text(bundle_path: Path | str) -> str:
    """The card of the bundle at *bundle_path* (folder or .zip), read and validated like any bundle."""
    return render_card(build_card(Context(Bundle(bundle_path))))
