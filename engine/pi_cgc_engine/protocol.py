"""The engine's two outputs: the JSON-lines protocol on the real stdout, and logs on stderr."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from typing import IO, Any, Dict, Iterator, List, Optional

from .context import RUN

REFUSED_EXIT = 3

# The real stdout, once take_stdout has pointed fd 1 at stderr (cgc's library may print).
_protocol: Optional[IO[str]] = None


def take_stdout() -> None:
    """Keeps the real stdout for the protocol alone: fd 1 (and sys.stdout) now go to stderr."""
    global _protocol
    if _protocol is None:
        _protocol = os.fdopen(os.dup(1), "w", buffering=1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr


@contextlib.contextmanager
def stdout_given_back() -> Iterator[None]:
    """While cgc's own command runs in this process: its output on the real stdout, as when cgc runs alone."""
    if _protocol is None:
        yield
        return
    sys.stdout.flush()
    held = os.dup(1)
    os.dup2(_protocol.fileno(), 1)
    real = sys.__stdout__
    assert real is not None  # (take_stdout found one: it duplicated its descriptor)
    sys.stdout = real
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(held, 1)
        os.close(held)
        sys.stdout = sys.stderr


def log(message: str) -> None:
    print(f"[pi-cgc-engine] {message}", file=sys.stderr, flush=True)


def emit(obj: Dict[str, Any]) -> None:
    emit_text(json.dumps(obj) + "\n")


def emit_text(text: str) -> None:
    """Raw text on the protocol's stream (the dump without --out)."""
    out = _protocol if _protocol is not None else sys.__stdout__
    assert out is not None
    out.write(text)
    out.flush()


def plural(count: int, noun: str) -> str:
    """"1 file", "5 files"."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def ms_since(start: float) -> int:
    return round((time.monotonic() - start) * 1000)


def refuse(reason: str) -> None:
    emit({"event": "refused", "reason": reason})
    sys.exit(REFUSED_EXIT)


class Stop(BaseException):
    """A stop signal. Not an Exception: cgc's library catches Exception around each file's parse (and a parser's
    start), so a stop raised there was once taken for the file's parse error, the update went on without the
    file, and the cache saved at exit kept it as unparseable (docs/reliability.md)."""


def process_alive(pid: int) -> bool:
    """Whether a process of that pid runs (another user's counts as running: not ours to judge)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class DebugClock:
    """With --debug, CPU ms per phase, logged."""

    def __init__(self) -> None:
        self.on = RUN.options.debug
        self.last = time.process_time()
        self.laps: List[str] = []

    def lap(self, name: str) -> None:
        if self.on:
            now = time.process_time()
            self.laps.append(f"{name} {round((now - self.last) * 1000, 1)}")
            self.last = now

    def report(self, what: str) -> None:
        if self.on:
            log(f"{what}: {', '.join(self.laps)} (CPU ms)")
