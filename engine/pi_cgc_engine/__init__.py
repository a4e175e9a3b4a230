"""pi-cgc's incremental graph engine, run by cgc's own interpreter (docs/engine.md has the map of the package).

It keeps a workspace's graph equal to what a fresh `cgc index --force` of the same tree holds: changed files are
deleted and re-added with cgc's own writer, and the link rows (CALLS, INHERITS, …) of every file the change can
affect are resolved again by cgc's own resolution, narrowed to those files.
"""
