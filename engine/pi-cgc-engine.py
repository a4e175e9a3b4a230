#!/usr/bin/env python3
"""pi-cgc's engine, as pi-cgc runs it with cgc's own interpreter: `serve`, `dump`, or `cgc ARGS…`.

The engine itself is the package beside this file (pi_cgc_engine/; docs/engine.md).
"""

import sys

from pi_cgc_engine.serve import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
