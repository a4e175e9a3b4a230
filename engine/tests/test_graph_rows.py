"""graph_rows: the pure replay of cgc 0.6.13's full-index writes (no database). The parity with cgc's own index is
proven on real trees by engine/tests/test_index_parity.py and test/integration/index-parity.test.ts; these pin the
replay's details, and the check before it against the replay's own verdict on files cgc's parser parsed."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_cgc_engine import graph_rows as gr
from pi_cgc_engine.files import digest_of
from pi_cgc_engine.graph_model import GraphRows
from pi_cgc_engine.graph_replay import Writer
from pi_cgc_engine.tree import Tree

ROOT = "/r/repo"
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def fn(name, line, **extra):
    return {"name": name, "line_number": line, "args": extra.pop("args", []), "lang": "python", **extra}


def build(files, links=None):
    base = {k: [] for k in ("inherits", "implements", "embeds", "companion", "partial", "part_of", "metaclass",
                            "decorated", "binds", "previews")}
    base["calls"] = [[] for _ in range(10)]
    base.update(links or {})
    return gr.build_graph(ROOT, files, {}, base, normalize=lambda p: str(p), indexed_at="t")


def test_directory_chain_file_and_items():
    g = build([{"path": f"{ROOT}/a/b/m.py", "lang": "python", "functions": [fn("f", 3, args=["x", "y"])]}])
    assert set(g.nodes["Directory"]) == {f"{ROOT}/a", f"{ROOT}/a/b"}
    contains = {(a[1], b[1]) for a, b, _ in g.edges["CONTAINS"]}
    assert (ROOT, f"{ROOT}/a") in contains and (f"{ROOT}/a/b", f"{ROOT}/a/b/m.py") in contains
    uid = f"f{ROOT}/a/b/m.py30"  # cgc's uid: name, path, line, occurrence_index run together
    assert g.nodes["Function"][uid]["cyclomatic_complexity"] == 1
    assert set(g.nodes["Parameter"]) == {f"x{ROOT}/a/b/m.py3", f"y{ROOT}/a/b/m.py3"}


def test_same_name_and_line_get_occurrence_indices_and_variables_coalesce():
    g = build([{"path": f"{ROOT}/m.py", "lang": "python", "functions": [fn("f", 1), fn("f", 1)],
                "variables": [{"name": "v", "line_number": 2, "value": "1"}, {"name": "v", "line_number": 2, "value": "2"}]}])
    assert sorted(n["occurrence_index"] for n in g.nodes["Function"].values()) == [0, 1]
    assert [n["value"] for n in g.nodes["Variable"].values()] == ["2"]


def test_module_metadata_first_writer_wins_and_alias_defaults_to_empty():
    files = [
        {"path": f"{ROOT}/a.py", "lang": "python", "imports": [{"name": "os", "full_import_name": "os", "line_number": 1}]},
        {"path": f"{ROOT}/b.py", "lang": "python", "imports": [{"name": "os", "full_import_name": "os.path", "line_number": 1}]},
    ]
    g = build(files)
    assert g.nodes["Module"]["os"]["full_import_name"] == "os"
    assert all(props["alias"] == "" for props in g.edges["IMPORTS"].values())


def test_unparsed_file_gets_a_minimal_node_and_unsupported_none():
    g = build([{"path": f"{ROOT}/x.md", "error": "Generic", "unsupported": False},
               {"path": f"{ROOT}/y.zz", "error": "No parser", "unsupported": True}])
    assert set(g.nodes["File"]) == {f"{ROOT}/x.md"}
    assert "relative_path" not in g.nodes["File"][f"{ROOT}/x.md"]


def test_external_parent_and_function_to_parameter_calls_skipped():
    files = [{"path": f"{ROOT}/m.py", "lang": "python", "classes": [{"name": "C", "line_number": 1, "bases": ["X"]}],
              "functions": [fn("f", 3, args=["cb"])]}]
    call = {"caller_name": "f", "caller_file_path": f"{ROOT}/m.py", "caller_line_number": 3, "called_name": "cb",
            "called_file_path": f"{ROOT}/m.py", "line_number": 4, "full_call_name": "cb", "args": []}
    calls = [[] for _ in range(10)]
    calls[8] = [call]  # fn_to_param: `called.line_number` on Parameter is a binder exception on KùzuDB
    g = build(files, {"inherits": [{"child_name": "C", "path": f"{ROOT}/m.py", "parent_name": "X",
                                    "resolved_parent_file_path": "__external__", "child_label": "Class"}], "calls": calls})
    assert list(g.nodes["ExternalClass"]) == ["X"]
    assert [p for p in g.edges["INHERITS"].values()] == [{"confidence_label": "INFERRED"}]
    assert "CALLS" not in g.edges


def test_a_value_of_another_type_than_its_column_is_refused():
    with pytest.raises(gr.NotReplicable):
        build([{"path": f"{ROOT}/m.py", "lang": "python", "functions": [fn("f", 1, end_line="x")]}])


def test_orm_trees_are_refused():
    assert gr.refusal([{"path": "p", "orm_mappings": [{"kind": "class_table"}]}])


def test_a_nul_character_fails_the_file_s_write_only_where_the_parameters_travel_as_text():
    """FalkorDB's client writes the parameters into the query's text, which FalkorDB reads up to a NUL: cgc's
    statement fails there (a docstring cgc's parser unescaped into one, in the standard library), its pipeline
    keeps what the file's statements before it wrote, and leaves the file out of the resolution. The parse marks
    such a file (write_fails); the replay then stops its statements where cgc's write fails. KùzuDB and Neo4j take
    parameters as values and keep the NUL."""
    path = f"{ROOT}/m.py"
    functions = [fn("f", 1), fn("g", 5)]
    classes = [{"name": "C", "line_number": 3, "docstring": "before\x00after", "lang": "python"}]
    links = {k: [] for k in ("inherits", "implements", "embeds", "companion", "partial", "part_of", "metaclass",
                             "decorated", "binds", "previews")}
    links["calls"] = [[] for _ in range(10)]

    def build_on(profile, marked):
        data = {"path": path, "lang": "python", "functions": functions, "classes": classes}
        failure = gr.write_fails(data, profile, ROOT, normalize=lambda p: str(p))
        if marked and failure is not None:
            data.update(error=failure, write_failed=True)
        return failure, gr.build_graph(ROOT, [data], {}, links, profile=profile, normalize=lambda p: str(p),
                                       indexed_at="t")

    for profile in (gr.PROFILES["falkordb"], gr.PROFILES["falkordb-remote"]):
        failure, g = build_on(profile, marked=True)
        assert failure is not None and "NUL" in failure
        # The functions' batch comes before the classes': written, with the File's CONTAINS; nothing after it.
        assert sorted(props["name"] for props in g.nodes["Function"].values()) == ["f", "g"]
        assert not g.nodes.get("Class")
        assert len(g.nodes["File"]) == 1
        # Not marked (a parse that did not know the backend): the replay refuses the tree.
        with pytest.raises(gr.NotReplicable, match="NUL"):
            build_on(profile, marked=False)
    for profile in (gr.KUZU, gr.PROFILES["neo4j"]):
        failure, g = build_on(profile, marked=True)
        assert failure is None
        assert [props["docstring"] for props in g.nodes["Class"].values()] == ["before\x00after"]
    # A file without a NUL is written whole everywhere.
    clean = {"path": path, "lang": "python", "functions": functions}
    assert gr.write_fails(clean, gr.PROFILES["falkordb"], ROOT, normalize=lambda p: str(p)) is None


JS_FILES = {
    "several.js": "import { join, dirname } from './paths.js'\nexport const both = () => join(dirname('a'), 'b')\n",
    "one_each.js": "import { join } from './paths.js'\nimport { dirname } from './paths.js'\nexport const x = join\n",
    "required.js": "const { spawn, exec } = require('child_process')\nmodule.exports = { spawn, exec }\n",
    "types.ts": "import type { A, B } from './model'\nexport function pick(a: A, b: B): A { return a }\n",
    "plain.py": "from os.path import join, dirname\n\n\ndef both():\n    return join(dirname('a'), 'b')\n",
}


def test_the_import_check_before_the_replay_gives_the_replays_own_verdict(cgc, tmp_path):
    """On FalkorDB an IMPORTS statement whose rows set one relationship to different values is refused (the row
    FalkorDB keeps is its own choice). The full index checks that before it lets go of the engine's state
    (refusal with the profile), so that a refused tree is read once: the check must refuse exactly the files
    the replay refuses, on every backend. Files parsed by cgc's parser: written here, and real ones."""
    root = tmp_path.resolve()
    for name, text in JS_FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    real = sorted((PROJECT_ROOT / "node_modules" / "@mariozechner" / "pi-tui" / "dist").glob("*.js"))[:6]
    for path in real:
        (root / "real" / path.name).parent.mkdir(exist_ok=True)
        (root / "real" / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    tree = Tree(root, None)
    parsed = [tree.parse(path, digest_of(path)).data for path in tree.discover()]
    assert len(parsed) == len(JS_FILES) + len(real) and not any("error" in fd for fd in parsed)
    verdicts = {}
    for name, profile in gr.PROFILES.items():
        for fd in parsed:
            before = gr.refusal([fd], profile=profile)
            try:
                Writer(GraphRows(profile), str).add_file(fd, str(root))
                replayed = None
            except gr.NotReplicable as error:
                replayed = str(error)
            assert (before is None, name, fd["path"]) == (replayed is None, name, fd["path"])
            verdicts[name, Path(fd["path"]).name] = before is not None
    refused = sorted(file for (name, file), refused_there in verdicts.items() if refused_there and name == "falkordb")
    # Several names from one module in one statement: refused; one name a statement, or Python's rows (keyed by the
    # imported name too): not. And real code has such statements (pi-tui's autocomplete.js).
    assert [file for file in refused if file in JS_FILES] == ["several.js", "types.ts"], refused
    assert set(refused) - set(JS_FILES), refused
    assert not any(refused_there for (name, _), refused_there in verdicts.items() if name in ("kuzudb", "neo4j")), verdicts
    # Without the profile (the check cgc's writer needs no matter the backend) nothing here is refused.
    assert all(gr.refusal([fd]) is None for fd in parsed)
