"""Fixtures of the fuzz tests: the real seed bundles, built once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzz_seeds import load_seeds


@pytest.fixture(scope="session")
def seed_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the demo collected with --per-layer and the imported-engine bundle are built (once per session)."""
    return tmp_path_factory.mktemp("fuzz-seeds")


@pytest.fixture(scope="session")
def seeds(seed_cache: Path) -> dict[str, dict[str, bytes]]:
    return load_seeds(seed_cache)
