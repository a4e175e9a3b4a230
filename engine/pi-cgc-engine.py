#!/usr/bin/env python3
"""pi-cgc's engine, as pi-cgc runs it with cgc's own interpreter: `serve`, `dump`, `index`, or `cgc ARGS…`.

The engine itself is the package beside this file (pi_cgc_engine/; docs/engine.md).
"""

import sys
from pathlib import Path

# The package beside this file, also where the script's folder is not on the path (pi-cgc runs cgc's Python
# with PYTHONSAFEPATH=1, so that a workspace's own files cannot shadow cgc's modules).
sys.path.insert(0, str(Path(__file__).resolve().parent))

from pi_cgc_engine.serve import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
