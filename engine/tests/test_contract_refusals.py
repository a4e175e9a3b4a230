"""A changed cgc is refused, and the refusal names what changed: each case edits one checked name in a copy of the
installed codegraphcontext (a tree of links to its files but the one edited) put first on sys.path of a fresh
interpreter, and runs cgc_contract.load (or engine/discover.py, for the name it patches) against it."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Tuple

import pytest

ENGINE_DIR = Path(__file__).resolve().parent.parent
_SPEC = importlib.util.find_spec("codegraphcontext")
assert _SPEC is not None and _SPEC.origin is not None
INSTALLED = Path(_SPEC.origin).resolve().parent  # the installed package, not imported here


def cgc_copy(tmp_path: Path, relative: str, old: str, new: str, count: int = 1) -> Path:
    """A folder whose codegraphcontext is the installed one with `old` replaced by `new` in one file (`count`
    times; -1: every one). Its other files are links to the installed ones (their compiled code is reused)."""
    site = tmp_path / "site"
    shutil.copytree(INSTALLED, site / "codegraphcontext", copy_function=os.symlink)
    edited = site / "codegraphcontext" / relative
    text = (INSTALLED / relative).read_text(encoding="utf-8")
    assert old in text, f"{relative} has no {old!r}: the case needs writing again for this cgc"
    edited.unlink()
    edited.write_text(text.replace(old, new, count), encoding="utf-8")
    return site


def run(site: Path, argv: Tuple[str, ...], home: Path) -> subprocess.CompletedProcess[str]:
    # No bytecode written: the links' __pycache__ folders are the installed package's.
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=120, env=env,
                          stdin=subprocess.DEVNULL)


LOAD = (
    "import json, sys\n"
    f"sys.path.insert(0, {str(ENGINE_DIR)!r})\n"
    "import codegraphcontext\n"
    "from pi_cgc_engine import cgc_contract\n"
    "try:\n"
    "    cgc_contract.load()\n"
    "    print(json.dumps({'from': codegraphcontext.__file__, 'refused': None}))\n"
    "except cgc_contract.ContractBroken as error:\n"
    "    print(json.dumps({'from': codegraphcontext.__file__, 'refused': str(error)}))\n"
)


def refusal_of_load(site: Path, home: Path) -> str:
    done = run(site, ("-c", LOAD), home)
    assert done.returncode == 0, done.stderr
    answer: Dict[str, str] = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["from"].startswith(str(site)), answer  # the copy, not the installed package
    assert answer["refused"], "load passed on a changed cgc"
    return answer["refused"]


WRITER = "tools/indexing/persistence/writer.py"


def test_the_copy_unchanged_passes(tmp_path: Path) -> None:
    # The same copy with a change the contract does not cover (a comment at the end of a module it does not copy).
    site = cgc_copy(tmp_path, "core/jobs.py", "\n", "\n# a comment\n")
    done = run(site, ("-c", LOAD), tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["refused"] is None


def test_a_removed_or_renamed_function_is_refused_by_name(tmp_path: Path) -> None:
    site = cgc_copy(tmp_path, "tools/indexing/resolution/inheritance.py",
                    "def build_embeds_links(", "def build_embeds_links_renamed(")
    reason = refusal_of_load(site, tmp_path)
    assert "lacks codegraphcontext.tools.indexing.resolution.inheritance.build_embeds_links" in reason
    assert reason.endswith("(removed or renamed)"), reason


def test_an_overwritten_private_function_gone_is_refused_by_name(tmp_path: Path) -> None:
    site = cgc_copy(tmp_path, WRITER, "def _purge_dangling_pathless_nodes(self)", "def _purge_dangling(self)")
    reason = refusal_of_load(site, tmp_path)
    assert "lacks codegraphcontext.tools.indexing.persistence.writer.GraphWriter._purge_dangling_pathless_nodes" in reason


def test_an_overwritten_private_function_no_longer_called_is_refused(tmp_path: Path) -> None:
    # delete_file_from_graph purges through another name: the engine's overwrite would not take.
    site = cgc_copy(tmp_path, WRITER, "        self._purge_dangling_pathless_nodes()\n",
                    "        type(self)._purge_dangling_pathless_nodes(self)\n", -1)
    reason = refusal_of_load(site, tmp_path)
    assert "delete_file_from_graph no longer calls" in reason and "_purge_dangling_pathless_nodes" in reason


def test_a_changed_source_the_replay_copies_is_refused_by_name(tmp_path: Path) -> None:
    site = cgc_copy(tmp_path, WRITER, "        # Normalize both paths for cross-platform consistency",
                    "        # Normalize both paths (changed)")
    reason = refusal_of_load(site, tmp_path)
    assert "codegraphcontext.tools.indexing.persistence.writer.GraphWriter.add_minimal_file_node (its source changed" in reason
    assert reason.count("its source changed") == 1, reason  # only the method edited


def test_a_changed_constant_the_replay_copies_is_refused_by_name(tmp_path: Path) -> None:
    site = cgc_copy(tmp_path, "tools/indexing/sanitize.py", "MAX_STR_LEN = 4096", "MAX_STR_LEN = 8192")
    reason = refusal_of_load(site, tmp_path)
    assert "codegraphcontext.tools.indexing.sanitize.MAX_STR_LEN (its value changed" in reason


def test_a_missing_frame_local_is_refused_by_name(tmp_path: Path) -> None:
    site = cgc_copy(tmp_path, "tools/indexing/resolution/calls.py", "functions_named", "functions_called", -1)
    reason = refusal_of_load(site, tmp_path)
    assert "build_function_call_groups has no local functions_named" in reason


def test_a_kuzu_manager_without_its_pool_is_refused_by_name(tmp_path: Path) -> None:
    site = cgc_copy(tmp_path, "core/database_embedded_kuzu.py", "    _pool = None\n", "    _connections = None\n")
    reason = refusal_of_load(site, tmp_path)
    assert "EmbeddedGraphManager) has no attribute _pool" in reason


def test_discover_refuses_a_cgc_whose_patched_name_is_gone(tmp_path: Path) -> None:
    site = cgc_copy(tmp_path, "core/cgcignore.py", "find_cgcignore(", "locate_cgcignore(", -1)
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n")
    done = run(site, (str(ENGINE_DIR / "discover.py"), str(root)), tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    error = json.loads(done.stdout.strip().splitlines()[-1])["error"]
    assert error.startswith("ContractBroken: ") and "lacks codegraphcontext.core.cgcignore.find_cgcignore" in error
    assert not (root / ".cgcignore").exists()


def test_discover_refuses_a_cgc_whose_patch_would_not_take(tmp_path: Path) -> None:
    # build_ignore_spec finds the ignore file through another name: a patch of find_cgcignore would not keep
    # cgc from writing one into the workspace.
    site = cgc_copy(tmp_path, "core/cgcignore.py", "    local_cgcignore_path = find_cgcignore(ignore_root, explicit_path=None)",
                    "    local_cgcignore_path = _find(ignore_root, explicit_path=None)")
    with (site / "codegraphcontext" / "core" / "cgcignore.py").open("a", encoding="utf-8") as module:
        module.write("\n_find = find_cgcignore\n")
    root = tmp_path / "repo"
    root.mkdir()
    done = run(site, (str(ENGINE_DIR / "discover.py"), str(root)), tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    error = json.loads(done.stdout.strip().splitlines()[-1])["error"]
    assert "build_ignore_spec no longer calls codegraphcontext.core.cgcignore.find_cgcignore" in error
    assert not (root / ".cgcignore").exists()


@pytest.mark.parametrize("relative", [WRITER])
def test_the_copy_leaves_the_installed_package_as_it_was(tmp_path: Path, relative: str) -> None:
    before = (INSTALLED / relative).read_bytes()
    cgc_copy(tmp_path, relative, "def _purge_dangling_pathless_nodes(self)", "def _changed(self)")
    assert (INSTALLED / relative).read_bytes() == before
