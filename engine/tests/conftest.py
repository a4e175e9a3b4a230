"""The engine's unit tests: run by cgc's own interpreter (the project venv), `python -m pytest engine/tests`.

engine/ goes on sys.path so that the tests import the package as the entry (engine/pi-cgc-engine.py) does.
A test that needs cgc's library asks for the `cgc` fixture: cgc_contract.load() runs once per session (it
installs the engine's hooks into cgc's modules, which a second load would wrap again). Every test gets the run
context (context.RUN) back as it found it.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

ENGINE_DIR = Path(__file__).resolve().parent.parent
PROJECT_ROOT = ENGINE_DIR.parent
if str(ENGINE_DIR) not in sys.path:
    sys.path.insert(0, str(ENGINE_DIR))

from pi_cgc_engine import cgc_contract  # noqa: E402
from pi_cgc_engine.context import RUN  # noqa: E402


@pytest.fixture(scope="session")
def cgc() -> Any:
    """cgc's library as the engine reaches it (cgc_contract), loaded once: its contract checked, hooks in."""
    cgc_contract.load()
    return cgc_contract


@pytest.fixture(autouse=True)
def run_state() -> Iterator[None]:
    """RUN's options and the state of a run under way, put back after each test."""
    options = dataclasses.replace(RUN.options)
    saved = {name: getattr(RUN, name) for name in ("journal", "sink", "call_run", "tests", "keeping",
                                                    "degree_function")}
    loop_roles = dict(RUN.loop_roles)
    try:
        yield
    finally:
        RUN.options = options
        for name, value in saved.items():
            setattr(RUN, name, value)
        RUN.loop_roles.clear()
        RUN.loop_roles.update(loop_roles)
