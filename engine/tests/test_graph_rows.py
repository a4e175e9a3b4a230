"""graph_rows: the pure replay of cgc 0.6.13's full-index writes (no cgc, no database). The parity with cgc's own
index is proven on real trees by a driver (see the commit messages); these pin the replay's KùzuDB details."""

from __future__ import annotations

import pytest

from pi_cgc_engine import graph_rows as gr

ROOT = "/r/repo"


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
