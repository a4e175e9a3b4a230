"""Times cgc's file discovery as the engine runs it (engine/pi_cgc_engine.py Tree.discover) with cgc's own
ignore matcher and with the engine's remembered answers, alternated round by round in one process, and
checks that both find the same files. Writes one JSON line to stderr (the engine's import turns stdout
into stderr): {"files", "original": [ms…], "remembering": [ms…]}.

  .venv/bin/python bench/engine-discovery.py ROOT ROUNDS
"""

import importlib.util
import json
import sys
import time
from pathlib import Path

ENGINE = Path(__file__).resolve().parent.parent / "engine" / "pi_cgc_engine.py"


def main(root: Path, rounds: int) -> None:
    spec = importlib.util.spec_from_file_location("pi_cgc_engine", ENGINE)
    engine = importlib.util.module_from_spec(spec)
    sys.modules["pi_cgc_engine"] = engine
    spec.loader.exec_module(engine)
    from codegraphcontext.tools.indexing import discovery

    original = discovery.build_ignore_spec
    engine.load_cgc()  # installs the remembering matcher, as the engine's start does
    remembering = discovery.build_ignore_spec
    tree = engine.Tree(root, None)
    times = {"original": [], "remembering": []}
    found = {}
    for round_ in range(rounds + 1):
        order = ("original", "remembering") if round_ % 2 == 0 else ("remembering", "original")
        for name in order:
            discovery.build_ignore_spec = original if name == "original" else remembering
            started = time.perf_counter()
            files = [path.as_posix() for path in tree.discover()]
            elapsed = (time.perf_counter() - started) * 1000
            if round_ > 0:  # the first round warms the file system's cache and the remembered answers
                times[name].append(elapsed)
            found.setdefault(name, files)
    if found["original"] != found["remembering"]:
        raise SystemExit("the remembered matcher found other files than cgc's own")
    print(json.dumps({"files": len(found["original"]), **times}), file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve(), int(sys.argv[2]))
