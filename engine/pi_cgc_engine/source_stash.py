"""The fields of a parsed file that only the graph's writers read (files.UNREAD_FIELDS: its functions' and classes'
source text and docstrings), kept on disk while a full index resolves the tree, and put back file by file as the
file is written.

cgc's resolution never reads them (files.make_lean relies on that too), and they are about 40 % of a parse: at
5 000 files about 190 MB, held through the resolution and the making of the graph's rows, the two highs of the
index's memory. The stash is one temporary file, unlinked as soon as it is made (nothing is left behind, even by a
kill); `whole` reads a file's fields back and returns a copy of its data as the parse gave it, key order included.
"""

from __future__ import annotations

import marshal
import os
import tempfile
from typing import Any, Dict, List, Optional, Tuple

from .files import KEEP_WHOLE, UNREAD_FIELDS

# Per stashed item: (list key, position in the list, the item's keys in their order, the stashed values in it).
StashedItem = Tuple[str, int, Tuple[str, ...], Tuple[Any, ...]]


class SourceStash:
    def __init__(self, folder: Optional[str] = None) -> None:
        fd, path = tempfile.mkstemp(prefix="pi-cgc-stash-", dir=folder)
        os.unlink(path)
        self.handle = os.fdopen(fd, "w+b")
        self.end = 0
        self.places: Dict[str, Tuple[int, int]] = {}

    def take(self, data: Dict[str, Any]) -> None:
        """Moves the UNREAD_FIELDS of data's items (outside KEEP_WHOLE) into the stash. Items whose values marshal
        cannot write (none known) keep them."""
        found: List[StashedItem] = []
        for key, entries in data.items():
            if key in KEEP_WHOLE or not isinstance(entries, list):
                continue
            for at, item in enumerate(entries):
                if isinstance(item, dict) and not UNREAD_FIELDS.isdisjoint(item):
                    order = tuple(item)
                    found.append((key, at, order, tuple(item[name] for name in order if name in UNREAD_FIELDS)))
        if not found:
            return
        try:
            blob = marshal.dumps(found)
        except ValueError:
            return
        self.handle.seek(self.end)
        self.handle.write(blob)
        self.places[str(data.get("path"))] = (self.end, len(blob))
        self.end += len(blob)
        for key, at, order, _ in found:
            item = data[key][at]
            for name in order:
                if name in UNREAD_FIELDS:
                    del item[name]

    def whole(self, data: Dict[str, Any]) -> Dict[str, Any]:
        """data as the parse gave it: a copy with its stashed fields put back in place (data is not changed; data
        itself where nothing of it was stashed)."""
        place = self.places.get(str(data.get("path")))
        if place is None:
            return data
        self.handle.seek(place[0])
        found: List[StashedItem] = marshal.loads(self.handle.read(place[1]))
        full = dict(data)
        copied: Dict[str, List[Any]] = {}
        for key, at, order, values in found:
            entries = copied.get(key)
            if entries is None:
                entries = copied[key] = full[key] = list(full[key])  # a CallRows gives its rows as dicts
            item = entries[at]
            stashed = dict(zip((name for name in order if name in UNREAD_FIELDS), values))
            entries[at] = {name: stashed[name] if name in stashed else item[name] for name in order}
        return full

    def close(self) -> None:
        self.handle.close()
