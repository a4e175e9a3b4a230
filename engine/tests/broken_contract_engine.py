#!/usr/bin/env python3
"""pi-cgc's engine run against a cgc whose build_function_call_groups is not the one the narrowing was written for,
for test_contract.py: the engine as pi-cgc runs it, with find_loop_roles finding none of the loops it knows.

  python engine/tests/broken_contract_engine.py serve --root R …
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Dict

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pi_cgc_engine import cgc_contract, serve  # noqa: E402


def no_loops_known() -> Dict[int, str]:
    return {}


if __name__ == "__main__":
    cgc_contract.find_loop_roles = no_loops_known
    sys.exit(serve.main(sys.argv[1:]))
