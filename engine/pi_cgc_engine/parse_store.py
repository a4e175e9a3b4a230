"""The parse store: each file's parse kept by its content, so that a session, a `--force` rebuild, another branch
and another worktree of the same repository parse a file's content once (docs/engine.md, "The parse store").

An entry is what `Tree.parse` returns for one file (its data and its share of the imports map), made relocatable:
the data's `path` and `repo_path` and the imports map's paths are kept relative to the root, and put back on
load. It is keyed by the file's content (the sha1 of its bytes, as `files.digest_of` gives it), its path relative
to the root, and everything else that changes what a parse gives: cgc's version and its parser libraries', the
engine's own code, the write profile (`Tree.parse` marks what the backend cannot write), cgc's INDEX_SOURCE and
--parse-order-as-parsed. The relative path is in the key because cgc's parse output may depend on the path (a
module's name comes from it, and a parser may read it); with it, a hit is a parse of the same bytes at the same
place in the tree.

Private and checked as the warm-start cache is (cache.py): the folder 0700, the files 0600, a file that is not
the user's own and private is not read, and the load is the restricted unpickler. Each entry carries a sha256 of
its body, so a damaged entry (bad bytes, cut short) is a miss, never another parse. Writes go to a temporary file
renamed into place in the same folder, so two writers of one key leave one whole entry. The store is bounded:
when it passes its size, the entries used least recently go first (a hit refreshes the entry's mtime).

Every fault is a miss and a parse: a damaged entry, a full disk (writes pause, said once), the folder removed
under a running engine (made again at the next write), another writer at the same time.
"""

from __future__ import annotations

import errno
import hashlib
import multiprocessing
import os
import pickle
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Set, Tuple

from .cache import not_private, private_folder, private_loads
from .context import RUN
from .files import file_ext
from .protocol import log

if TYPE_CHECKING:
    from .tree import Tree

FORK = "fork" in multiprocessing.get_all_start_methods()
# The entries' layout; another is a miss (its entries age out).
STORE_FORMAT = 1
MAGIC = b"pi-cgc-parse\x00" + bytes([STORE_FORMAT])
SUFFIX = ".parse"
# Extensions whose parse reads more of the tree than the file: Solidity's import remappings come from the
# repository's foundry.toml and remappings.txt, and its imports are looked up on the disk.
READS_THE_TREE = frozenset({".sol"})
# A hit refreshes an entry's mtime (its last use, for the eviction) when it is older than this: one write per
# entry per ten minutes, not one per hit.
TOUCH_AFTER_S = 600.0
# A process sweeps the store after writing this share of the bound (and after each index: ParseStore.sweep).
SWEEP_SHARE = 20
# A sweep leaves the store at this share of its bound, so that the next sweep is not due at the next write.
SWEEP_TO = 0.9
# A temporary file older than this was left by a writer that died before its rename.
STALE_TEMP_S = 3600.0
# After a write fails for want of space, writes pause this long (each would fail the same way).
WRITE_PAUSE_S = 300.0


# Where a value is in a parse: the keys and list indices that lead to it.
Place = Tuple[Any, ...]


@dataclass(frozen=True)
class Slot:
    """Where one file's parse is kept: its key (a hex digest), its path relative to the root, and the root."""

    key: str
    rel: str
    root: str


# The engine's modules whose code makes what Tree.parse returns: the parse itself and cgc's hooks (tree,
# cgc_contract), source order (files), the write marks (graph_rows and the replay it runs), this store's layout.
PARSE_MODULES = ("tree", "cgc_contract", "files", "graph_rows", "graph_replay", "graph_model", "graph_profiles",
                 "graph_sanitize", "parse_store")


def engine_code_digest() -> str:
    """The sha1 of the source of PARSE_MODULES: a changed one makes new entries (a change elsewhere in the engine
    keeps them)."""
    digest = hashlib.sha1()
    here = Path(__file__).resolve().parent
    for name in PARSE_MODULES:
        digest.update(name.encode())
        digest.update((here / f"{name}.py").read_bytes())
    return digest.hexdigest()


def parser_versions() -> str:
    """The versions of the parsing libraries under cgc (a new grammar can parse the same bytes otherwise; a notebook
    is converted to Python by nbconvert first)."""
    from importlib import metadata

    found: List[str] = []
    for name in ("tree-sitter", "tree-sitter-language-pack", "tree-sitter-c-sharp", "nbconvert", "nbformat"):
        try:
            found.append(f"{name}={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name}=")
    return ",".join(found)


class ParseStore:
    """One process's handle on the store folder (forked parse workers use their parent's)."""

    def __init__(self, folder: Path, bound_bytes: int, cgc_version: str, index_source: bool):
        self.folder = folder
        self.bound = bound_bytes
        self.settings = "\0".join([str(STORE_FORMAT), cgc_version, parser_versions(), engine_code_digest(),
                                   f"index_source={index_source}"])
        self.said: Set[str] = set()
        self.written_since_sweep = 0
        self.writes_paused_until = 0.0
        # Hits and misses, shared with the forked parse workers (their memory is the parent's until written).
        self.counts: Any = multiprocessing.get_context("fork").Array("q", 2) if FORK else [0, 0]
        self.usable = self.make_folder()

    def count(self, which: int) -> None:
        if FORK:
            with self.counts.get_lock():
                self.counts[which] += 1
        else:
            self.counts[which] += 1

    @property
    def hits(self) -> int:
        return int(self.counts[0])

    @property
    def misses(self) -> int:
        return int(self.counts[1])

    # -- faults, said once -----------------------------------------------------------------------------------
    def say_once(self, kind: str, message: str) -> None:
        if kind not in self.said:
            self.said.add(kind)
            log(f"parse store: {message}")

    def make_folder(self) -> bool:
        """The folder, made 0700 where the user owns it; False (the store unused by this process) where it was not
        private: entries others could have replaced are not read (as cache.read_cache)."""
        try:
            unsafe = not_private(self.folder, "folder") if os.path.lexists(self.folder) else None
            private_folder(self.folder)
            unsafe = unsafe or not_private(self.folder, "folder")
        except OSError as error:
            self.say_once("folder", f"not used: {error}")
            return False
        if unsafe is not None:
            self.say_once("folder", f"not used: {unsafe}")
            return False
        return True

    # -- keys ----------------------------------------------------------------------------------------------
    def slot(self, tree: "Tree", path: Path, known: Tuple[int, int, str]) -> Optional[Slot]:
        """Where `path`'s parse is kept; None where it is not kept (a file outside the root, one whose parse
        reads other files)."""
        if not self.usable:
            return None
        if file_ext(path) in READS_THE_TREE:
            return None
        posix = path.as_posix()
        prefix = tree.root_str + "/"
        if not posix.startswith(prefix):
            return None
        rel = posix[len(prefix):]
        profile = tree.write_profile.name if tree.write_profile is not None else ""
        material = "\0".join([self.settings, f"profile={profile}",
                              f"as_parsed={RUN.options.parse_order_as_parsed}", rel, str(known[0]), known[2]])
        return Slot(hashlib.sha256(material.encode()).hexdigest(), rel, tree.root_str)

    def entry_path(self, slot: Slot) -> Path:
        return self.folder / slot.key[:2] / (slot.key[2:] + SUFFIX)

    # -- reading -------------------------------------------------------------------------------------------
    def get(self, slot: Slot) -> Optional[Tuple[Dict[str, Any], Dict[str, List[str]]]]:
        """The kept parse (data, imports) at `slot`'s root, or None: a miss for every fault."""
        path = self.entry_path(slot)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            self.count(1)
            return None
        except OSError as error:  # a link where an entry should be (ELOOP), a folder made unreadable
            self.say_once("open", f"an entry was not read: {error}")
            self.count(1)
            return None
        try:
            info = os.fstat(fd)
            unsafe = refusal(info, path)
            if unsafe is not None:
                self.say_once("private", f"an entry was not read: {unsafe}")
                self.count(1)
                return None
            with os.fdopen(os.dup(fd), "rb") as handle:
                blob = handle.read()
            found = self.decode(blob, slot)
            if found is None:
                self.say_once("damaged", f"a damaged entry was removed and the file parsed again ({path.name})")
                path.unlink(missing_ok=True)
                self.count(1)
                return None
            if time.time() - info.st_mtime > TOUCH_AFTER_S:
                try:
                    os.utime(fd)
                except OSError:
                    pass  # its last use stays older: it may go sooner, which costs a parse
            self.count(0)
            return found
        except OSError as error:
            self.say_once("read", f"an entry was not read: {error}")
            self.count(1)
            return None
        finally:
            os.close(fd)

    def decode(self, blob: bytes, slot: Slot) -> Optional[Tuple[Dict[str, Any], Dict[str, List[str]]]]:
        head = len(MAGIC) + 32
        if len(blob) < head or not blob.startswith(MAGIC):
            return None
        body = blob[head:]
        if hashlib.sha256(body).digest() != blob[len(MAGIC):head]:
            return None
        try:
            kept = private_loads(body)
        except Exception:  # a body that is not the engine's pickle (it passed its digest: written so)
            return None
        if not (isinstance(kept, dict) and kept.get("key") == slot.key and kept.get("rel") == slot.rel
                and isinstance(kept.get("data"), dict) and isinstance(kept.get("imports"), dict)
                and isinstance(kept.get("places"), list)):
            return None
        try:
            return relocated(kept["data"], kept["imports"], kept["places"], slot)
        except (LookupError, TypeError):  # places that are not in its data: not an entry this store wrote
            return None

    # -- writing -------------------------------------------------------------------------------------------
    def put(self, slot: Slot, data: Dict[str, Any], imports: Dict[str, List[str]], path: Path,
            known: Tuple[int, int, str]) -> bool:
        """Keeps a parse just made, if it can be moved to another root and was made of the content `known`
        names. Whether it was written."""
        if time.monotonic() < self.writes_paused_until:
            return False
        body = self.encode(data, imports, slot)
        if body is None or not still_content(path, known, slot.root):
            return False
        target = self.entry_path(slot)
        blob = MAGIC + hashlib.sha256(body).digest() + body
        for attempt in range(2):
            try:
                self.write_atomic(target, blob)
                break
            except FileNotFoundError:
                if attempt == 1 or not self.make_folder():
                    return False  # the folder removed and not made again
            except OSError as error:
                if error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
                    self.writes_paused_until = time.monotonic() + WRITE_PAUSE_S
                    self.say_once("full", f"not written ({os.strerror(error.errno)}): files are parsed again "
                                          f"until there is room (writes pause {WRITE_PAUSE_S:.0f} s)")
                else:
                    self.say_once("write", f"not written: {error}")
                return False
        self.written_since_sweep += len(blob)
        if self.written_since_sweep * SWEEP_SHARE >= self.bound:
            self.sweep()
        return True

    def encode(self, data: Dict[str, Any], imports: Dict[str, List[str]], slot: Slot) -> Optional[bytes]:
        """The parse with its root taken out, pickled; None where something else in it names the root (it could not
        be moved to another root as it is). The file's own path may be anywhere in the data (cgc's Java parser gives
        each function and class its file's path): where it is is kept, and the path put back there on load."""
        prefix = slot.root + "/"
        own = prefix + slot.rel
        if data.get("path") != own or data.get("repo_path") != slot.root:
            return None
        moved_imports: Dict[str, List[str]] = {}
        for name, paths in imports.items():
            if not all(isinstance(p, str) and p.startswith(prefix) for p in paths):
                return None
            moved_imports[name] = [p[len(prefix):] for p in paths]
        places: List[Place] = []
        find_own_path(data, own, (), places)
        # Set to "" for the pickle, then back: the data is the caller's (no copy of a large parse).
        for place in places:
            set_at(data, place, "")
        data["repo_path"] = ""
        try:
            if names_root(data, slot.root) or names_root(list(moved_imports), slot.root):
                return None
            return pickle.dumps({"key": slot.key, "rel": slot.rel, "data": data, "imports": moved_imports,
                                 "places": places}, protocol=pickle.HIGHEST_PROTOCOL)
        finally:
            for place in places:
                set_at(data, place, own)
            data["repo_path"] = slot.root

    def write_atomic(self, target: Path, blob: bytes) -> None:
        folder = target.parent
        if not folder.is_dir():
            if not self.folder.is_dir():
                raise FileNotFoundError(errno.ENOENT, "the parse store's folder is gone", str(self.folder))
            try:
                folder.mkdir(mode=0o700)
            except FileExistsError:
                pass
        temp = folder / f".{target.name}.{os.getpid()}.{time.monotonic_ns()}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as handle:
                os.fchmod(handle.fileno(), 0o600)
                handle.write(blob)
            os.replace(temp, target)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise

    # -- the bound -----------------------------------------------------------------------------------------
    def sweep(self) -> Tuple[int, int]:
        """Removes the entries used least recently while the store is above its bound (to SWEEP_TO of it), and
        temporary files writers left. Returns (entries kept, bytes kept)."""
        self.written_since_sweep = 0
        entries: List[Tuple[float, int, str]] = []
        now = time.time()
        try:
            subfolders = [item.path for item in os.scandir(self.folder) if item.is_dir(follow_symlinks=False)]
        except OSError:
            return 0, 0
        for sub in subfolders:
            try:
                with os.scandir(sub) as items:
                    for item in items:
                        try:
                            info = item.stat(follow_symlinks=False)
                        except OSError:
                            continue
                        if item.name.endswith(SUFFIX):
                            entries.append((info.st_mtime, info.st_size, item.path))
                        elif item.name.endswith(".tmp") and now - info.st_mtime > STALE_TEMP_S:
                            _unlink(item.path)
            except OSError:
                continue
        total = sum(size for _, size, _ in entries)
        if total <= self.bound:
            return len(entries), total
        entries.sort()
        goal = int(self.bound * SWEEP_TO)
        kept = len(entries)
        for _, size, path in entries:
            if total <= goal:
                break
            if _unlink(path):
                total -= size
                kept -= 1
        return kept, total


def _unlink(path: str) -> bool:
    try:
        os.unlink(path)
        return True
    except FileNotFoundError:
        return True  # another process's sweep took it
    except OSError:
        return False


def refusal(info: os.stat_result, path: Path) -> Optional[str]:
    """Why an opened entry is not read (cache.not_private's rules, on the file as opened)."""
    if not stat.S_ISREG(info.st_mode):
        return f"{path} is not a regular file"
    if info.st_uid != os.getuid():
        return f"{path} is owned by uid {info.st_uid}, not this user ({os.getuid()})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{path} is writable by {'its group' if info.st_mode & stat.S_IWGRP else 'others'} (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def names_root(value: Any, root: str) -> bool:
    """Whether any string in `value` (keys too) holds `root`: a path the relocation does not move."""
    kind = type(value)
    if kind is str:
        return root in value
    if kind is dict:
        return any(names_root(key, root) or names_root(item, root) for key, item in value.items())
    if kind is list or kind is tuple:
        return any(names_root(item, root) for item in value)
    return False


def find_own_path(value: Any, own: str, at: Place, places: List[Place]) -> None:
    """Where in `value` the file's own path is (a place: the keys and indices that lead to it)."""
    if type(value) is dict:
        for key, item in value.items():
            if item == own and type(item) is str:
                places.append((*at, key))
            elif type(item) in (dict, list):
                find_own_path(item, own, (*at, key), places)
    elif type(value) is list:
        for index, item in enumerate(value):
            if item == own and type(item) is str:
                places.append((*at, index))
            elif type(item) in (dict, list):
                find_own_path(item, own, (*at, index), places)


def set_at(data: Any, place: Place, value: str) -> None:
    for step in place[:-1]:
        data = data[step]
    data[place[-1]] = value


def relocated(data: Dict[str, Any], imports: Dict[str, List[str]], places: List[Place],
              slot: Slot) -> Tuple[Dict[str, Any], Dict[str, List[str]]]:
    """A kept parse at `slot`'s root: the file's path put back where it was, repo_path and the imports' paths made
    absolute there."""
    prefix = slot.root + "/"
    own = prefix + slot.rel
    for place in places:
        set_at(data, place, own)
    data["repo_path"] = slot.root
    return data, {name: [prefix + p for p in paths] for name, paths in imports.items()}


def still_content(path: Path, known: Tuple[int, int, str], root: str) -> bool:
    """Whether the file still is the content `known` names (size, mtime, sha1), read after its parse: a parse of a
    file that changed while it was read is not kept under the key of content it may not be. And whether its
    bytes do not name the root: a string of the source equal to the file's path would be moved with the root."""
    try:
        info = path.stat()
        if (info.st_size, info.st_mtime_ns) != (known[0], known[1]):
            return False
        content = path.read_bytes()
    except OSError:
        return False
    return hashlib.sha1(content).hexdigest() == known[2] and root.encode() not in content
