"""pi-cgc's index leaves the graph cgc's own index leaves (KùzuDB): one multi-language tree, indexed by
`cgc index --force` in one copy and by the engine's `index --force` (graph_rows + bulk_kuzu) in another, the
canonical dumps (`dump --dangling`) compared line for line: 0 differing. And the comparison sees a broken replay:
the engine with a planted fault (fault_engine.py --drop-edge-type CALLS) leaves a graph whose dump differs.

The tree is built from files a clean clone has: Python's own json and wsgiref packages (the interpreter's
stdlib) and a file with a NUL in a docstring, JavaScript and TypeScript from node_modules (basic-ftp's dist,
@smithy/signature-v4's dist-types), Go from GOROOT/src (files whose lines call no name twice: cgc's Go parser picks one of two nested same-name calls at
random, so two cgc indexes of such a file can differ), and Java classes written here. Each side runs in a HOME of
its own (cgc keeps its config and the embedded database under $HOME/.codegraphcontext). The cgc index takes most
of the time (about half a second a file).
"""

from __future__ import annotations

import collections
import os
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path
from typing import Dict, List

import pytest

ENGINE_DIR = Path(__file__).resolve().parent.parent
PROJECT_ROOT = ENGINE_DIR.parent
VENV = PROJECT_ROOT / ".venv" / "bin"
ENGINE = ENGINE_DIR / "pi-cgc-engine.py"
FAULT_ENGINE = ENGINE_DIR / "tests" / "fault_engine.py"

JAVA = {
    "Shape.java": """package shapes;

public interface Shape {
    double area();
    String name();
}
""",
    "Base.java": """package shapes;

public abstract class Base implements Shape {
    protected final String label;

    protected Base(String label) {
        this.label = label;
    }

    public String name() {
        return label;
    }

    protected static double square(double x) {
        return x * x;
    }
}
""",
    "Circle.java": """package shapes;

public class Circle extends Base {
    private final double r;

    public Circle(double r) {
        super("circle");
        this.r = r;
    }

    @Override
    public double area() {
        return Math.PI * square(r);
    }
}
""",
    "Rect.java": """package shapes;

import java.util.List;
import java.util.ArrayList;

public class Rect extends Base {
    private final double w;
    private final double h;

    public Rect(double w, double h) {
        super("rect");
        this.w = w;
        this.h = h;
    }

    @Override
    public double area() {
        return w * h;
    }

    public static double total(List<Shape> shapes) {
        double sum = 0;
        for (Shape s : shapes) {
            sum += s.area();
        }
        return sum;
    }

    public static List<Shape> some() {
        List<Shape> out = new ArrayList<>();
        out.add(new Rect(1, 2));
        out.add(new Circle(3));
        return out;
    }
}
""",
}
GO_CANDIDATES = ["container/list/list.go", "container/ring/ring.go", "container/heap/heap.go",
                 "encoding/hex/hex.go", "unicode/utf16/utf16.go", "sort/search.go", "strings/compare.go",
                 "bytes/reader.go", "errors/errors.go", "errors/wrap.go", "path/match.go", "html/escape.go"]
CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def go_root() -> Path:
    go = shutil.which("go")
    if go is None:
        pytest.skip("no go toolchain (GOROOT's sources are the tree's Go files)")
    return Path(subprocess.run([go, "env", "GOROOT"], capture_output=True, text=True, check=True).stdout.strip())


def no_nested_same_name_call(text: str) -> bool:
    for line in text.splitlines():
        names = [n for n in CALL.findall(line) if n not in ("func", "if", "for", "switch", "return")]
        if len(names) != len(set(names)):
            return False
    return True


def build_tree(root: Path) -> int:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for package in ("json", "wsgiref"):
        for source in sorted((stdlib / package).glob("*.py")):
            target = root / "py" / package / source.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    modules = PROJECT_ROOT / "node_modules"
    for folder, target in ((modules / "basic-ftp" / "dist", "js/ftp"),
                           (modules / "@smithy" / "signature-v4" / "dist-types", "js/sigv4")):
        if not folder.is_dir():
            pytest.skip(f"{folder} missing: run npm install")
        for source in sorted(folder.iterdir()):
            if source.is_file() and source.suffix in (".js", ".ts"):
                (root / target).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, root / target / source.name)
    src = go_root() / "src"
    for name in GO_CANDIDATES:
        source = src / name
        if source.is_file() and no_nested_same_name_call(source.read_text(encoding="utf-8")):
            target = root / "go" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    for name, text in JAVA.items():
        target = root / "java" / "shapes" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    # A docstring cgc's parser unescapes into a NUL character: KùzuDB keeps it (on FalkorDB cgc's write of the file
    # fails there: test/helpers/index-parity.ts, NUL_DOCSTRINGS).
    (root / "py" / "escapes").mkdir(parents=True, exist_ok=True)
    (root / "py" / "escapes" / "in_class.py").write_text(
        'def helper(x):\n    return x\n\n\nclass Holder:\n    """holds a \\0 once unescaped"""\n\n'
        '    def get(self, y):\n        return helper(y)\n', encoding="utf-8")
    return sum(1 for p in root.rglob("*") if p.is_file())


def side_env(home: Path) -> Dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TREE_SITTER_LANGUAGE_PACK_LIBS_DIR")}
    env.update(HOME=str(home), COLUMNS="10000", ENABLE_AUTO_WATCH="false")
    return env


def run(cmd: List[str], cwd: Path, env: Dict[str, str]) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{cmd} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def index_and_dump(work: Path, source: Path, side: str, command: List[str]) -> List[str]:
    repo = work / side / "repo"
    shutil.copytree(source, repo)
    env = side_env(work / f"home-{side}")
    done = run([*command, str(repo)], repo, env)
    (work / f"{side}.log").write_text(done.stdout + "\n" + done.stderr, encoding="utf-8")
    out = work / f"{side}.dump"
    run([str(VENV / "python"), str(ENGINE), "dump", "--root", str(repo), "--out", str(out), "--dangling"], repo, env)
    return out.read_text(encoding="utf-8").splitlines()


def differing(a: List[str], b: List[str]) -> List[str]:
    ca, cb = collections.Counter(a), collections.Counter(b)
    return [f"< {line}" for line in sorted((ca - cb).elements())] + [f"> {line}" for line in sorted((cb - ca).elements())]


@pytest.fixture(scope="module")
def parity(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, object]:
    assert (VENV / "cgc").exists(), "cgc is not installed in .venv: run npm run setup"
    work = tmp_path_factory.mktemp("index-parity")
    source = work / "tree"
    files = build_tree(source)
    cgc_dump = index_and_dump(work, source, "cgc", [str(VENV / "cgc"), "index", "--force"])
    pi_dump = index_and_dump(work, source, "pi", [str(VENV / "python"), str(ENGINE), "index", "--force"])
    return {"work": work, "source": source, "files": files, "cgc": cgc_dump, "pi": pi_dump}


def test_the_tree_has_every_language(parity: Dict[str, object]) -> None:
    source = parity["source"]
    assert isinstance(source, Path)
    suffixes = collections.Counter(p.suffix for p in source.rglob("*") if p.is_file())
    assert suffixes[".py"] >= 8 and suffixes[".js"] >= 10 and suffixes[".ts"] >= 10
    assert suffixes[".go"] >= 4 and suffixes[".java"] == 4
    assert 50 <= int(parity["files"]) <= 110  # type: ignore[call-overload]


def test_pi_cgc_index_leaves_cgc_s_graph(parity: Dict[str, object]) -> None:
    cgc_dump, pi_dump = parity["cgc"], parity["pi"]
    assert isinstance(cgc_dump, list) and isinstance(pi_dump, list)
    log = (parity["work"] / "pi.log").read_text(encoding="utf-8")  # type: ignore[operator]
    assert "written with bulk" in log, log[-2000:]
    kinds = {line.split(" ", 2)[1] for line in cgc_dump if line.startswith("E ")}
    assert {"CONTAINS", "CALLS", "IMPORTS", "INHERITS", "HAS_PARAMETER"} <= kinds
    assert any(line.startswith("N Class ") and "holds a \\u0000 once" in line for line in cgc_dump)
    diff = differing(cgc_dump, pi_dump)
    assert diff == [], f"{len(diff)} differing lines of {len(cgc_dump)}:\n" + "\n".join(diff[:20])


def test_a_dropped_edge_type_is_seen(parity: Dict[str, object]) -> None:
    work, source = parity["work"], parity["source"]
    assert isinstance(work, Path) and isinstance(source, Path)
    broken = index_and_dump(work, source, "fault",
                            [str(VENV / "python"), str(FAULT_ENGINE), "--drop-edge-type", "CALLS", "index", "--force"])
    diff = differing(parity["cgc"], broken)  # type: ignore[arg-type]
    assert diff, "the dumps agree though the bulk index dropped every CALLS edge"
    assert all(line.startswith("< E CALLS ") for line in diff), "\n".join(diff[:10])


def cgc_answer(work: Path, side: str, args: List[str]) -> List[str]:
    """What cgc's own command prints of a side's graph, its root's path put as <root> (the two sides' differ)."""
    repo = work / side / "repo"
    done = run([str(VENV / "cgc"), *args], repo, side_env(work / f"home-{side}"))
    return [line.replace(str(repo), "<root>").rstrip() for line in done.stdout.splitlines() if "│" in line]


def test_cgc_s_own_commands_answer_the_same(parity: Dict[str, object]) -> None:
    """cgc's list and stats read the graph pi-cgc's index wrote as they read cgc's own: the same rows."""
    work = parity["work"]
    assert isinstance(work, Path)
    for args in (["stats", str(work / "{side}" / "repo")], ["list"]):
        answers = {side: cgc_answer(work, side, [arg.replace("{side}", side) for arg in args]) for side in ("cgc", "pi")}
        assert answers["cgc"], f"cgc {args[0]} printed no table"
        assert answers["pi"] == answers["cgc"], f"cgc {args[0]}:\n" + "\n".join(answers["pi"] + ["--"] + answers["cgc"])
