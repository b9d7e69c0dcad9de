"""config_card.md: the configuration card of one bundle (qdqreport/report/config_card.py) as Markdown."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.report.config_card import CardModel, build_card
from qdqreport.redact import file_name, redact_manifest, redactor_for
from qdqreport.render.env import markdown_env

CARD_FILE = "config_card.md"


def render_card(card: CardModel) -> str:
    text = markdown_env().get_template("config_card.md.j2").render(card=card)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def card_text(bundle_path: Path | str, out_dir: Path | str | None = None, redact: bool = False) -> str:
    """The card of the bundle at *bundle_path* (folder or .zip), read and validated like any bundle.

    With *redact* (report --redact) the manifest is redacted in memory first, as the report does, so
    the card names files, never the folders they were in.
    """
    bundle = Bundle(bundle_path)
    if not redact:
        return render_card(build_card(Context(bundle)))
    redactor = redactor_for([str(bundle.location), str(out_dir or "")])
    redact_manifest(bundle.manifest, redactor, by="qdqreport report --redact --config-card")
    card = build_card(Context(bundle))
    return render_card(replace(card, bundle=file_name(card.bundle)))
