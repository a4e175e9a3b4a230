"""The cycle collector is off while the engine builds its state, and as it was afterwards."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any, List

import pytest

from pi_cgc_engine import engine as engine_module
from pi_cgc_engine.memory import collector_paused


def test_the_collector_is_off_inside_and_as_it_was_after() -> None:
    was = gc.isenabled()
    try:
        for before in (True, False):
            (gc.enable if before else gc.disable)()
            with collector_paused():
                assert not gc.isenabled()
            assert gc.isenabled() is before
        gc.enable()
        with pytest.raises(RuntimeError), collector_paused():
            raise RuntimeError("a start that fails")
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def test_an_engines_start_runs_with_the_collector_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: List[bool] = []

    def start(self: Any, *args: Any) -> dict:
        seen.append(gc.isenabled())
        return {}

    monkeypatch.setattr(engine_module.Engine, "_start", start)
    engine = object.__new__(engine_module.Engine)
    gc.enable()
    engine.start()
    assert seen == [False]
    assert gc.isenabled()
