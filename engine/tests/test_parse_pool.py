"""The parse pool (parse_pool.py): many files parsed by forked workers, from a process with serve's signal handlers
(each raises once on SIGTERM and SIGINT). A worker that inherited them did not end on the pool's terminate, and the
update waited for it for good."""

from __future__ import annotations

import multiprocessing
import signal
from pathlib import Path
from typing import Any, Iterator

import pytest

from pi_cgc_engine import parse_pool
from pi_cgc_engine.files import digest_of
from pi_cgc_engine.tree import Tree


class Stop(Exception):
    pass


@pytest.fixture
def serve_handlers() -> Iterator[None]:
    def on_signal(signum: int, _frame: Any) -> None:
        raise Stop(signal.Signals(signum).name)

    before = signal.signal(signal.SIGTERM, on_signal), signal.signal(signal.SIGINT, on_signal)
    yield
    signal.signal(signal.SIGTERM, before[0])
    signal.signal(signal.SIGINT, before[1])


def test_many_files_are_parsed_by_workers_that_end_with_the_parse(tmp_path: Path, cgc: Any,
                                                                   serve_handlers: None) -> None:
    paths = []
    for at in range(parse_pool.POOL_FROM * 2):
        path = tmp_path / f"m{at}.py"
        path.write_text(f"def f{at}(x):\n    return g(x) + {at}\n", encoding="utf-8")
        paths.append(path)
    tree = Tree(tmp_path, None)
    seen = []
    entries = list(parse_pool.parse_all(tree, [(p, digest_of(p)) for p in paths], seen.append))
    # In the order asked.
    assert [f"f{at}" in {fn["name"] for fn in e.data["functions"]} for at, e in enumerate(entries)] == [True] * len(paths)
    assert seen[-1] == len(paths)
    # The workers ended with the parse, none left behind to be terminated.
    assert multiprocessing.active_children() == []


def test_a_worker_ends_on_sigterm_and_leaves_sigint_to_the_engine(serve_handlers: None) -> None:
    with multiprocessing.get_context("fork").Pool(1, initializer=parse_pool._worker_start) as pool:
        handlers = pool.apply(_handlers)
    assert handlers == (int(signal.SIG_DFL), int(signal.SIG_IGN))


def _handlers() -> tuple:
    return int(signal.getsignal(signal.SIGTERM)), int(signal.getsignal(signal.SIGINT))  # type: ignore[arg-type]
