"""The database: cgc chooses it beside the engine's start, and a failed choice is raised where it is first used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_cgc_engine.database import Database


def test_a_backend_cgc_refuses_is_raised_at_its_first_use_with_cgc_s_message(
        cgc: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CGC_RUNTIME_DB_TYPE", "nosuchdb")
    db = Database(tmp_path, None)  # the choice runs aside: nothing is raised yet
    for _ in range(2):  # and it is not forgotten: every use raises it
        with pytest.raises(ValueError, match="Unknown database type: 'nosuchdb'"):
            db.backend  # noqa: B018


def test_the_backend_is_cgc_s_own_choice(cgc: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CGC_RUNTIME_DB_TYPE", "kuzudb")
    db = Database(tmp_path, None)
    assert db.backend == "kuzudb" and db.embedded and not db.falkordb
    assert db.manager.get_backend_type() == "kuzudb"
