"""Times cgc's file discovery as the engine runs it (engine/pi_cgc_engine/tree.py, Tree.discover) three ways,
alternated round by round in one Python process, and checks that all find the same files: cgc's own
ignore matcher on a whole walk, the engine's remembered answers on a whole walk, and the kept walk (cgc's
discovery handed only the folders whose times changed). Before each timed walk the tree changes as an
agent's edit changes it: in turn a file's content, a new file in a folder, and that file deleted. Writes one
JSON line to stderr (as the engine, whose stdout is its protocol's):
{"files", "original": [ms…], "remembering": [ms…], "kept": [ms…]}.

  .venv/bin/python bench/engine-discovery.py ROOT ROUNDS
"""

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "engine"))

from pi_cgc_engine import cgc_contract, walk  # noqa: E402
from pi_cgc_engine.context import RUN  # noqa: E402
from pi_cgc_engine.tree import Tree  # noqa: E402


def main(root: Path, rounds: int) -> None:
    from codegraphcontext.tools.indexing import discovery

    original = discovery.build_ignore_spec
    cgc_contract.load()  # installs the remembering matcher and the kept walk, as the engine's start does
    remembering = discovery.build_ignore_spec
    tree = Tree(root, None)
    # The folder the edits happen in: the one of the file in the middle of the walk's list.
    middle = tree.discover()[len(tree.discover()) // 2]
    added = middle.parent / "pi_cgc_walk_bench.py"
    text = middle.read_bytes()

    def change(step: int) -> None:
        kind = step % 3
        if kind == 0:
            middle.write_bytes(text + b"\n# edited\n" if step % 2 == 0 else text)
        elif kind == 1:
            added.write_text("def walk_bench():\n    return 1\n", encoding="utf-8")
        else:
            added.unlink()

    # A repository made just now: every folder was changed within the kept walk's margin (RACY_NS) and would
    # be listed again. The folders of a repository an agent works in are older: wait until these are too.
    newest = max(max(st.st_mtime_ns, st.st_ctime_ns) for st in (os.stat(d) for d, _, _ in os.walk(root)))
    time.sleep(max(0.0, (newest + walk.RACY_NS - time.time_ns()) / 1e9))
    ways = ("original", "remembering", "kept")
    times = {name: [] for name in ways}
    found = {}
    step = 0
    try:
        for round_ in range(rounds + 1):
            rotation = ways[round_ % 3:] + ways[:round_ % 3]
            for name in rotation:
                discovery.build_ignore_spec = original if name == "original" else remembering
                RUN.options.whole_walk = name != "kept"
                change(step)
                step += 1
                started = time.perf_counter()
                files = [path.as_posix() for path in tree.discover()]
                elapsed = (time.perf_counter() - started) * 1000
                RUN.options.whole_walk = True
                whole = [path.as_posix() for path in tree.discover()]
                if files != whole:
                    raise SystemExit(f"{name}: found other files than a whole walk after the same change")
                if round_ > 0:  # the first round warms the file system's cache and the remembered answers
                    times[name].append(elapsed)
                found.setdefault(name, len(files))
    finally:
        middle.write_bytes(text)
        added.unlink(missing_ok=True)
    print(json.dumps({"files": found["original"], **times}), file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve(), int(sys.argv[2]))
