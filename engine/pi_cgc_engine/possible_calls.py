"""Possible callers: the call sites of a function that cgc's graph may miss, found at answer time.

cgc links a call only where its resolver settles the callee; measured against type-aware references (see
bench/RESULTS.md, "Call-graph truth"), it misses calls through `self` to a method a base class in another
module defines, calls on objects whose type it does not know, and calls it links to a same-named function
elsewhere. pi-cgc does not change the graph for them: it lists, apart from the graph's callers, the call sites
of the function's name that a deterministic rule cannot rule out, from what the engine already parsed (each
file's calls, resolved or not; its imports; its classes' bases). Each site says why it is listed; the strongest
rules rank first.

The rules, for a target function `n` defined in file P (in class C, or at module level):
- `self.n()` / `cls.n()` / `this.n()` / `super().n()` in C or in a class that inherits from C (rank 0);
- `n()` in P itself, or in a file that imports `n` from P (a function only; rank 0);
- `m.n()` where `m` is P's module imported by name (rank 0);
- `x.n()` on any other object, in P or in a file that imports from P, or anywhere where at most two classes
  have a method `n` (rank 1: the object's type is unknown);
- the same where `n` overrides a base class's method (rank 2: listed only where the function has no other
  caller, since such a call is most often the base's).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Dict, Iterable, Iterator, List, Optional, Set, Tuple

MODULE = "<module>"
# A call on one of these is a call of the language's own type, not of the tree's code.
BUILTIN_TYPES = frozenset({"object", "type", "super", "str", "bytes", "int", "float", "bool", "tuple", "list",
                           "dict", "set", "frozenset", "Object", "Array", "String", "Number", "Promise", "Math",
                           "JSON", "Map", "Set", "Symbol", "Reflect", "console"})
SELF_NAMES = frozenset({"self", "cls", "this"})


@dataclass(frozen=True)
class Site:
    """One possible call of the target: the call's file and line, the function around it, why, and its rank."""

    path: str
    line: int
    caller: str
    caller_line: int
    rule: str
    why: str
    rank: int

    def as_json(self) -> Dict[str, Any]:
        return {"path": self.path, "line": self.line, "caller": self.caller, "callerLine": self.caller_line,
                "rule": self.rule, "why": self.why, "rank": self.rank}


@dataclass(frozen=True)
class Call:
    path: str
    line: int
    receiver: str  # "" for a plain name; "self", "super()", "a.b" … otherwise
    class_name: Optional[str]  # the class whose body holds the call
    local: Optional[str] = None  # the name called, where the file imports the function under another name


def callee_text(full_name: str) -> str:
    """The called expression of cgc's full_call_name, without spaces: Python's is that already (`self.x.n`);
    TypeScript's is the call's whole text (`this.#q.n(a, b)`, `new X<T>()`), whose last argument list and type
    arguments go, and so does `new`."""
    text = "".join(full_name.split())
    if text.endswith(")"):
        depth = 0
        for at in range(len(text) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(text[at], 0)
            if depth == 0:
                text = text[:at]
                break
    if text.endswith(">") and "<" in text:
        text = text[: text.index("<")]
    if text.startswith("new") and not text[3:4].isalnum() and text[3:4] not in ("_", "$"):
        text = text[3:]
    return text.replace("?.", ".").rstrip("!?.")


def receiver_of(text: str, name: str) -> str:
    """What the call is made on: `self.x` for `self.x.n`, "" for `n`, the whole text for anything else."""
    if text == name or text == "":
        return ""
    return text[: -len(name) - 1] if text.endswith("." + name) else text


# A call inside a called expression (`self.make_signer(salt).sign`: cgc records `sign` alone): its receiver and
# name. Its arguments are cgc's own calls, recorded apart.
INNER_CALL = re.compile(r"((?:[A-Za-z_$#][\w$#]*\.)*)([A-Za-z_$][\w$]*)\(")


def inner_calls(text: str) -> Iterator[Tuple[str, str]]:
    for match in INNER_CALL.finditer(text):
        start = match.start()
        chained = start > 0 and text[start - 1] == "."  # on the value of an earlier call: its type is not known
        yield ("?" if chained else match.group(1).rstrip(".")), match.group(2)


def python_module(root: str, path: str) -> Optional[str]:
    """`pkg.sub.mod` for root/pkg/sub/mod.py (`pkg.sub` for its __init__.py); None outside the root."""
    rel = PurePosixPath(path)
    try:
        rel = rel.relative_to(root)
    except ValueError:
        return None
    parts = list(rel.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) if parts else None


class FileView:
    """What the rules read of one parsed file."""

    def __init__(self, root: str, data: Dict[str, Any]):
        self.path: str = str(data.get("path") or "")
        self.lang: str = str(data.get("lang") or "")
        functions = [f for f in data.get("functions") or () if f.get("name") != MODULE]
        classes = list(data.get("classes") or ())
        # A function's lines, from its first decorator's (a call in a decorator is the decorated function's, as a
        # type-aware reference has it): (first, start, end, name, class it is a method of, whether an overload).
        spans = []
        for f in functions:
            start = int(f.get("line_number") or 0)
            decorators = [str(d) for d in f.get("decorators") or ()]
            spans.append((start - len(decorators), start, int(f.get("end_line") or start), str(f.get("name")),
                          method_of(f), any(d.split("(")[0].endswith("overload") for d in decorators)))
        spans.sort()
        class_spans = [(int(c.get("line_number") or 0), int(c.get("end_line") or 0), str(c.get("name"))) for c in classes]
        for at, span in enumerate(spans):
            if span[4] is None and not_nested(span, spans):
                # cgc 0.6.13 gives the methods of some classes (TypeScript's abstract ones) no class: the class
                # whose lines hold the function, where no other function does.
                holder = [c for c in class_spans if c[0] < span[1] <= c[1]]
                if holder:
                    spans[at] = span[:4] + (max(holder)[2],) + span[5:]
        self.span_starts = [s[0] for s in spans]
        self.spans = spans
        self.functions: Dict[Tuple[str, int], Optional[str]] = {(s[3], s[1]): s[4] for s in spans}
        # An overloaded function's calls are its first declaration's (as a type-aware reference has them): the
        # later declarations of the same name in the same class, implementation included, get none.
        self.later_overloads: Set[Tuple[str, int]] = set()
        overloaded = {(s[3], s[4]) for s in spans if s[5]}
        firsts: Set[Tuple[str, Optional[str]]] = set()
        for span in spans:
            if (span[3], span[4]) in overloaded:
                if (span[3], span[4]) in firsts:
                    self.later_overloads.add((span[3], span[1]))
                firsts.add((span[3], span[4]))
        self.classes: Dict[str, List[str]] = {}
        # cgc 0.6.13's Python parser leaves out a subscripted base (`class A(Base[T])`): read from the header.
        self.text: Optional[List[str]] = None
        lines = self.lines() if self.lang == "python" and classes else []
        for cls in classes:
            bases = [str(b) for b in cls.get("bases") or ()]
            if lines:
                bases += python_bases(lines, int(cls.get("line_number") or 0))
            self.classes.setdefault(str(cls.get("name")), []).extend(bases)
        self.defined: Set[str] = {s[3] for s in spans if s[4] is None} | set(self.classes)
        self.defined |= {str(v.get("name")) for v in data.get("variables") or () if not v.get("class_context")}
        self.module = python_module(root, self.path) if self.lang == "python" else None
        # Imports: a local name and the dotted names it may come from (Python); the names imported (any language).
        self.from_imports: Dict[str, List[str]] = {}  # local name → candidate modules it is imported from
        self.module_aliases: Dict[str, str] = {}  # local name → module it names
        self.renamed: Dict[str, str] = {}  # local name → the name imported as it (`from m import name as local`)
        self.imported_names: Set[str] = set()
        for imp in data.get("imports") or ():
            name = str(imp.get("name") or "")
            alias = imp.get("alias")
            full = str(imp.get("full_import_name") or "")
            self.imported_names.add(name)
            if self.lang != "python" or not full:
                continue
            absolute = self.absolute(full)
            if imp.get("imported_name") is not None:
                local = str(alias or name)
                if alias and alias != name:
                    self.renamed[local] = name
                parent = absolute.rsplit(".", 1)[0] if "." in absolute else absolute
                self.from_imports[local] = [parent, absolute]  # the name's module, or the name is a module itself
            else:
                self.module_aliases[str(alias) if alias else name.split(".")[0]] = absolute if alias else name.split(".")[0]
        self.calls: List[Tuple[str, Call]] = []
        for call in data.get("function_calls") or ():
            name = str(call.get("name") or "")
            if not name:
                continue
            class_context = call.get("class_context")
            class_name = class_context[0] if isinstance(class_context, (list, tuple)) and class_context else None
            line = int(call.get("line_number") or 0)
            text = callee_text(str(call.get("full_name") or name))
            receiver = receiver_of(text, name)
            self.calls.append((name, Call(self.path, line, receiver, class_name)))
            if receiver == "" and name in self.renamed:
                self.calls.append((self.renamed[name], Call(self.path, line, "", class_name, local=name)))
            for receiver, inner in inner_calls(text):
                self.calls.append((inner, Call(self.path, line, receiver, class_name)))

    def absolute(self, dotted: str) -> str:
        """A relative import's module made absolute against this file's package."""
        if not dotted.startswith(".") or self.module is None:
            return dotted
        level = len(dotted) - len(dotted.lstrip("."))
        package = self.module.split(".")
        if not self.path.endswith("__init__.py"):
            package = package[:-1]
        base = package[: len(package) - (level - 1)] if level > 1 else package
        rest = dotted.lstrip(".")
        return ".".join([*base, rest] if rest else base)

    def lines(self) -> List[str]:
        """The file's lines, read once (the tree as the engine last read it is what is on disk)."""
        if self.text is None:
            self.text = read_lines(self.path)
        return self.text

    def annotation(self, name: str, line: int) -> Optional[str]:
        """The class a parameter `name` of the function around `line` is annotated with (`node: nodes.Const` →
        `Const`), from the function's header; None where it has none."""
        _, start = self.enclosing(line)
        if start == 0:
            return None
        header = []
        for text in self.lines()[start - 1: start + 15]:
            header.append(text)
            stripped = text.split("#")[0].rstrip()
            if stripped.endswith(":") or "{" in stripped:
                break
        found = re.search(r"(?<![\w$.])" + re.escape(name) + r"\??\s*:\s*([A-Za-z_$][\w$.]*)", " ".join(header))
        return found.group(1).rsplit(".", 1)[-1] if found else None

    def enclosing(self, line: int) -> Tuple[str, int]:
        """The innermost function whose lines (with its decorators') hold `line`, else module level."""
        at = bisect.bisect_right(self.span_starts, line)
        best = None
        for span in self.spans[:at]:
            if span[0] <= line <= span[2] and (best is None or span[0] >= best[0]):
                best = span
        return (best[3], best[1]) if best is not None else (MODULE, 0)


# The rank of sites listed only where a function has no other caller, confirmed or possible.
FALLBACK_RANK = 2

# A call of a method on an object of unknown type, in a file unrelated to the method's, is listed where so few
# classes of the tree have a method of that name.
FEW_OWNERS = 2


def plural_classes(count: int) -> str:
    return "1 class" if count == 1 else f"{count} classes"


def method_of(function: Dict[str, Any]) -> Optional[str]:
    """The class a function is a method of: its class, unless it is nested in a method (its context is that method)."""
    owner = function.get("class_context")
    context = function.get("context")
    return str(owner) if owner and context in (None, owner) else None


def not_nested(span: Tuple[Any, ...], spans: List[Tuple[Any, ...]]) -> bool:
    return not any(other is not span and other[1] < span[1] <= other[2] for other in spans)


def read_lines(path: str) -> List[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().split("\n")
    except OSError:
        return []  # gone since it was parsed: its bases are cgc's alone


def python_bases(lines: List[str], line: int) -> List[str]:
    """The base classes' dotted names in the header `class Name(...):` starting at 1-based `line`."""
    header = " ".join(lines[line - 1: line + 9])
    opened = header.find("(")
    if opened < 0 or header.find(":") < opened:
        return []
    depth, part, parts = 0, "", []
    for char in header[opened + 1:]:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                parts.append(part)
                break
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(part)
            part = ""
            continue
        if depth == 0 and char not in "([{)]}":
            part += char
    names = []
    for part in parts:
        part = part.strip()
        if part and "=" not in part and not part.startswith("*"):
            names.append(part.split()[0])
    return names


def suffixes(dotted: str) -> List[str]:
    """`a.b.c`, `b.c`, `c`."""
    parts = dotted.split(".")
    return [".".join(parts[at:]) for at in range(len(parts))]


def module_matches(candidate: str, module: Optional[str]) -> bool:
    """Whether an imported dotted name names the module: equal, or the module's name ends with it on a dot (the
    root may sit above the package: `itsdangerous.signer` for `src/itsdangerous/signer.py`)."""
    if module is None or not candidate:
        return False
    return module == candidate or module.endswith("." + candidate) or candidate.endswith("." + module)


def usable(data: Dict[str, Any]) -> bool:
    """A parse the rules can read: not a failed or unsupported file."""
    return bool(data.get("path")) and not (data.get("error") or data.get("unsupported"))


class Views:
    """Each file's view, kept while its content is the same (an update makes again only the changed files')."""

    def __init__(self, root: str):
        self.root = root
        self.kept: Dict[str, Tuple[str, FileView]] = {}
        self.last: Optional[CallIndex] = None  # the index of the files kept, while none changed

    def index(self, files: Dict[str, Any]) -> "CallIndex":
        """The index of `files` (path → an entry with `digest` and `data`)."""
        kept: Dict[str, Tuple[str, FileView]] = {}
        made = False
        for path, entry in files.items():
            if entry is None or not usable(entry.data):
                continue
            hit = self.kept.get(path)
            if hit is None or hit[0] != entry.digest:
                hit, made = (entry.digest, FileView(self.root, entry.data)), True
            kept[path] = hit
        if made or self.last is None or len(kept) != len(self.kept):
            self.last = CallIndex(self.root, (view for _, view in kept.values()))
        self.kept = kept
        return self.last


class CallIndex:
    """The rules over one state of the tree: built once per state, asked per target."""

    def __init__(self, root: str, views: Iterable[FileView]):
        self.root = root
        self.files: Dict[str, FileView] = {view.path: view for view in views}
        self.calls_by_name: Dict[str, List[Call]] = {}
        self.classes_by_name: Dict[str, List[Tuple[str, str]]] = {}
        self.definers: Dict[str, Set[str]] = {}
        self.ancestors_known: Dict[Tuple[str, str], Set[Tuple[str, str]]] = {}
        self.parents_known: Dict[Tuple[str, str], List[Tuple[str, str]]] = {}
        self.method_owners: Dict[str, Set[Tuple[str, str]]] = {}
        self.class_methods: Dict[Tuple[str, str], Set[str]] = {}
        self.module_suffixes: Optional[Set[str]] = None
        self.modules: Set[str] = set()
        for view in self.files.values():
            for (name, _), owner in view.functions.items():
                if owner is not None:
                    self.method_owners.setdefault(name, set()).add((view.path, owner))
                    self.class_methods.setdefault((view.path, owner), set()).add(name)
            for name, call in view.calls:
                self.calls_by_name.setdefault(name, []).append(call)
            for cls in view.classes:
                self.classes_by_name.setdefault(cls, []).append((view.path, cls))
            for name in view.defined:
                self.definers.setdefault(name, set()).add(view.path)

    # -- how files relate -----------------------------------------------------------------------
    def imports_from(self, view: FileView, target: FileView) -> bool:
        """Whether `view` imports anything from `target`'s file (a name it defines, or its module)."""
        if view.lang == "python" and target.module is not None:
            for modules in view.from_imports.values():
                if any(module_matches(m, target.module) for m in modules):
                    return True
            if any(module_matches(m, target.module) for m in view.module_aliases.values()):
                return True
        return any(target.path in self.definers.get(name, ()) for name in view.imported_names)

    def imports_name_from(self, view: FileView, name: str, target: FileView, local: Optional[str] = None) -> bool:
        if view.lang == "python" and target.module is not None and (local or name) in view.from_imports:
            return module_matches(view.from_imports[local or name][0], target.module)
        return name in view.imported_names and target.path in self.definers.get(name, ())

    def ancestors(self, path: str, cls: str) -> Set[Tuple[str, str]]:
        key = (path, cls)
        known = self.ancestors_known.get(key)
        if known is None:
            known = self.ancestors_known[key] = self.find_ancestors(path, cls)
        return known

    def find_ancestors(self, path: str, cls: str) -> Set[Tuple[str, str]]:
        seen: Set[Tuple[str, str]] = set()
        todo = [(path, cls)]
        while todo:
            for parent in self.parents(*todo.pop()):
                if parent not in seen:
                    seen.add(parent)
                    todo.append(parent)
        return seen

    def parents(self, path: str, cls: str) -> List[Tuple[str, str]]:
        """The classes `cls` of `path` names as its bases: a class of that name in the same file, else in the
        files the class's file imports it from, else (the base's module unknown) every class of that name."""
        key = (path, cls)
        known = self.parents_known.get(key)
        if known is not None:
            return known
        found: List[Tuple[str, str]] = []
        view = self.files.get(path)
        for base in view.classes.get(cls, ()) if view is not None else ():
            short = base.split("(")[0].split("[")[0].split(".")[-1].strip()
            if short in view.classes and short != cls:  # type: ignore[union-attr]
                found.append((path, short))
                continue
            everywhere = self.classes_by_name.get(short, [])
            found += [c for c in everywhere if self.imports_name_from(view, short, self.files[c[0]])] or everywhere  # type: ignore[arg-type]
        self.parents_known[key] = found
        return found

    # -- what a call is made on -------------------------------------------------------------------
    def through(self, view: FileView, receiver: str) -> Optional[str]:
        """"module" for a receiver that is an imported module (or an attribute of one); a class's name for a
        class of the tree or a call of one (`Parser(env, source)`); "builtin" for a builtin type; else None."""
        head = receiver.split(".")[0]
        if head in view.module_aliases or (head in view.from_imports and self.is_module(view.from_imports[head][1])):
            last = receiver.rsplit(".", 1)[-1]
            return last if receiver != head and last in self.classes_by_name else "module"
        last = receiver.rsplit(".", 1)[-1]
        called = last.endswith(")") and "(" in last
        if called:
            last = last[: last.index("(")]
        if last in BUILTIN_TYPES and "." not in receiver:
            return "builtin"
        # A class by its name (capitalized, as classes are named), or the object calling one made.
        return last if last in self.classes_by_name and (called or last[:1].isupper()) else None

    def is_module(self, dotted: str) -> bool:
        """Whether a dotted name names a module of the tree (module_matches against any)."""
        if self.module_suffixes is None:
            self.modules = {view.module for view in self.files.values() if view.module}
            self.module_suffixes = {suffix for module in self.modules for suffix in suffixes(module)}
        return dotted in self.module_suffixes or any(s in self.modules for s in suffixes(dotted))

    def names_module(self, view: FileView, receiver: str, target: FileView) -> bool:
        """Whether the receiver (an imported module, perhaps with attributes) is the target's module."""
        head, _, rest = receiver.partition(".")
        module = view.module_aliases.get(head) or view.from_imports.get(head, ["", ""])[1]
        return module_matches(f"{module}.{rest}" if rest else module, target.module)

    def annotated_class(self, view: FileView, receiver: str, line: int) -> Optional[str]:
        """The tree's class a bare receiver is a parameter annotated with, if any."""
        annotated = view.annotation(receiver, line)
        return annotated if annotated in self.classes_by_name else None

    def overrides(self, path: str, owner: str, name: str) -> bool:
        """Whether a class the owner inherits from has a method of that name."""
        return any(name in self.class_methods.get(parent, ()) for parent in self.ancestors(path, owner))

    def class_has(self, class_name: str, path: str, owner: str) -> bool:
        """Whether a class of that name is the owner or inherits from it."""
        return any(cls == (path, owner) or (path, owner) in self.ancestors(*cls)
                   for cls in self.classes_by_name.get(class_name, ()))

    # -- the rules ------------------------------------------------------------------------------
    def sites(self, path: str, name: str, line: int) -> List[Site]:
        target = self.files.get(path)
        if target is None or (name, line) not in target.functions or (name, line) in target.later_overloads:
            return []
        owner = target.functions[(name, line)]
        found: List[Site] = []
        overriding = owner is not None and self.overrides(path, owner, name)
        # Per file and per class, once per target: a name with many calls (`__init__`) meets them again and again.
        importing: Dict[str, bool] = {}
        having: Dict[str, bool] = {}
        for call in self.calls_by_name.get(name, ()):
            view = self.files[call.path]
            receiver = call.receiver
            rank = 0
            if receiver in SELF_NAMES or receiver.startswith("super"):
                if owner is None or call.class_name is None:
                    continue
                key = (call.path, call.class_name)
                if key == (path, owner) and not receiver.startswith("super"):
                    rule, why = "same class", f"{receiver}.{name}() in {owner} itself"
                elif key != (path, owner) and (path, owner) in self.ancestors(*key):
                    rule, why = "subclass", f"{receiver}.{name}() in {call.class_name}, which inherits from {owner}"
                else:
                    continue
            elif receiver == "":
                if owner is not None:
                    continue  # a plain name does not reach a method
                if call.path == path:
                    rule, why = "same file", f"a call of {name}() in its own file"
                elif self.imports_name_from(view, name, target, call.local):
                    as_local = f" as {call.local}" if call.local else ""
                    rule, why = "imported name", f"{self.relative(call.path)} imports {name}{as_local} from {self.relative(path)}"
                else:
                    continue
            else:
                through = self.through(view, receiver)
                if through == "module":
                    if not self.names_module(view, receiver, target):
                        continue
                    rule, why = "module", f"{receiver} is the module {target.module}"
                elif through is not None:
                    # On a class, or on what calling one made: that class's own method, or one it inherits.
                    if through not in having:
                        having[through] = owner is not None and self.class_has(through, path, owner)
                    if not having[through]:
                        continue
                    rule = "class"
                    why = f"{receiver}.{name}(): {through} inherits {name} from {owner}" if through != owner \
                        else f"{receiver}.{name}() on {owner}"
                elif owner is None:
                    continue  # a module's function is reached through its module's name (above)
                elif "." not in receiver and (annotated := self.annotated_class(view, receiver, call.line)) is not None:
                    if not self.class_has(annotated, path, owner):
                        continue
                    rule, why = "annotated", f"{receiver}.{name}(): {receiver} is annotated {annotated}"
                elif call.path == path:
                    rule, why, rank = "object, same file", f"{receiver}.{name}() in the same file; the object's type is not known", 1
                elif importing[call.path] if call.path in importing else importing.setdefault(call.path, self.imports_from(view, target)):
                    rule, why, rank = "object, importing file", f"{receiver}.{name}() in a file that imports from {self.relative(path)}; the object's type is not known", 1
                elif len(self.method_owners.get(name, ())) <= FEW_OWNERS:
                    rule, why, rank = "object, few classes", f"{receiver}.{name}(); {name} is a method of {plural_classes(len(self.method_owners[name]))} alone", 1
                else:
                    continue
                if rank == 1 and overriding:
                    # Such a call is most often the declaration's a base class makes (its declared type's, as a
                    # type-aware reference resolves it): listed only where nothing else is.
                    rule, rank = "object, override", FALLBACK_RANK
                    why += f"; {owner}.{name} overrides a base class's {name}"
            caller, caller_line = view.enclosing(call.line)
            found.append(Site(call.path, call.line, caller, caller_line, rule, why, rank))
        found.sort(key=lambda s: (s.rank, s.path, s.line))
        return found

    def relative(self, path: str) -> str:
        return path[len(self.root) + 1:] if path.startswith(self.root + "/") else path
