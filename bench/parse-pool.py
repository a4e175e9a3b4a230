"""The engine's parse of a whole tree with cgc's parser in this process against the same with the pool of forked
workers (engine/pi_cgc_engine/parse_pool.py), side by side in one run, rounds alternated.

  .venv/bin/python bench/parse-pool.py ROOT [--rounds N]

Prints each way's wall times and the ratio of the medians. Run with HOME pointing at a scratch folder (cgc reads its
config from there) and from ROOT.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "engine"))

from pi_cgc_engine import cgc_contract, parse_pool
from pi_cgc_engine.engine import Engine
from pi_cgc_engine.protocol import take_stdout


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    take_stdout()
    cgc_contract.load()
    root = Path(args.root).resolve()
    times = {"one process": [], f"pool of {parse_pool.workers()}": []}
    threshold = parse_pool.POOL_FROM
    for round_ in range(args.rounds):
        ways = list(times) if round_ % 2 == 0 else list(reversed(times))
        for way in ways:
            parse_pool.POOL_FROM = 10**9 if way == "one process" else threshold
            engine = Engine(root, None, None, cgc_contract.cgc_version())
            started = time.monotonic()
            files, _ = engine.read_tree({}, None)
            times[way].append(time.monotonic() - started)
    medians = {way: statistics.median(samples) for way, samples in times.items()}
    for way, samples in times.items():
        print(f"{way}: {', '.join(f'{s:.1f}' for s in samples)} s (median {medians[way]:.1f} s), {len(files)} files")
    single, pooled = medians.values()
    print(f"one process ÷ pool: {single / pooled:.2f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
