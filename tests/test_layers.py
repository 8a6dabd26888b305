"""The package's architecture, checked: every import inside ``agentflow``
goes down the layers named in ``LAYERS`` (or stays within its layer), no
modules import each other in a circle, and no module imports a private
(underscore) module, or a private name, of another package.

Every import statement counts, wherever it stands: at the top of a module,
inside a function (imported late), or under ``TYPE_CHECKING``. A late import
still ties the two modules together, and a type-only circle is still a
circle a reader has to untangle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "agentflow"

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # lowest first: a module may import its own layer and the layers above it in this list
    ("base", (
        "agentflow._anyio_fast", "agentflow._arguments", "agentflow._blocks",
        "agentflow._clean_text", "agentflow._commit", "agentflow._exc_text", "agentflow._logging",
        "agentflow._lru", "agentflow._msg_content", "agentflow._msg_keys",
        "agentflow._nesting", "agentflow._scopes", "agentflow._secrets",
        "agentflow._slots_init", "agentflow._version", "agentflow.documents",
        "agentflow.errors", "agentflow.logprobs", "agentflow.media", "agentflow.messages",
        "agentflow.model",
        "agentflow.model_options", "agentflow.model_profile", "agentflow.ratelimit",
        "agentflow.usage",
    )),
    ("core", (
        "agentflow._sync_loop", "agentflow.acting", "agentflow.agent", "agentflow.approvals",
        "agentflow.batch_api.protocol", "agentflow.call_input", "agentflow.call_outcome",
        "agentflow.client_tool_checks", "agentflow.client_tools",
        "agentflow.content", "agentflow.events", "agentflow.execution", "agentflow.grounding",
        "agentflow.input_checks", "agentflow.loop", "agentflow.loop_steps", "agentflow.middleware",
        "agentflow.output",
        "agentflow.reasoning", "agentflow.reply", "agentflow.state", "agentflow.telemetry",
        "agentflow.tool_call_assembler", "agentflow.waiting_calls",
        "agentflow.testing", "agentflow.tools",
    )),
    ("providers", ("agentflow.providers",)),
    ("extraction", (
        "agentflow.batch", "agentflow.batch_api", "agentflow.batch_types",
        "agentflow.extraction", "agentflow.sync",
    )),
    ("interfaces", ("agentflow.cli", "agentflow.mcp", "agentflow.ray", "agentflow.web")),
    ("surface", ("agentflow",)),
)
"""The layers, lowest first, each a tuple of module prefixes. A module belongs
to the layer of its longest matching prefix (``agentflow.batch_api.protocol``,
the interface a provider's batch API implements, sits in the core while the
rest of ``agentflow.batch_api`` is extraction)."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def package_of(name: str, path: Path) -> str:
    """The package module ``name`` (at ``path``) is in: itself for a package's
    ``__init__``, else the package above it."""
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def imported_from(node: ast.ImportFrom, package: str) -> str:
    """The absolute module ``from ... import`` reads, in a module of ``package``
    (``from .x import y`` in ``agentflow.cli``: ``agentflow.cli.x``)."""
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, *([node.module] if node.module else [])])


def imported(name: str, path: Path, known: set[str]) -> Iterator[tuple[int, str]]:
    """``(line, module)`` of every ``agentflow`` module ``path`` imports."""
    package = package_of(name, path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = imported_from(node, package)
            # ``from a import b`` imports module ``a.b`` when there is one, else a name of ``a``
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                       for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # ``import a.b.c`` of a name: its module
                target = target.rpartition(".")[0]
            if target and target != name:
                yield node.lineno, target


def layer_of(name: str) -> int:
    best, depth = -1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > depth:
                best, depth = index, len(prefix)
    return best


def graph() -> dict[str, dict[str, int]]:
    """module -> {imported module: the line of its first import}."""
    found = modules()
    known = set(found)
    edges: dict[str, dict[str, int]] = {}
    for name, path in found.items():
        targets: dict[str, int] = {}
        for line, target in imported(name, path, known):
            targets.setdefault(target, line)
        edges[name] = targets
    return edges


def circles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_every_module_has_a_layer() -> None:
    assert [name for name in modules() if layer_of(name) < 0] == []


def test_imports_go_down_the_layers() -> None:
    wrong = [
        f"{name} ({LAYERS[layer_of(name)][0]}) imports {target} "
        f"({LAYERS[layer_of(target)][0]}) at line {line}"
        for name, targets in graph().items()
        for target, line in targets.items()
        if layer_of(target) > layer_of(name)
    ]
    assert wrong == []


def test_no_import_circles() -> None:
    assert circles(graph()) == []


def test_the_check_sees_a_circle_and_an_upward_import() -> None:
    # the checker itself, on a made-up graph: it must not pass by seeing nothing
    edges = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    assert circles(edges) == [["a", "b", "c"]]
    assert layer_of("agentflow.extraction.chunked") > layer_of("agentflow.agent")
    assert layer_of("agentflow.batch_api.protocol") < layer_of("agentflow.batch_api.mode")
    assert "agentflow.messages" in graph()["agentflow.model"]


def owner_of(module: str) -> str | None:
    """The package a private module belongs to: the one that holds its first
    underscore part (``agentflow.errors`` for ``agentflow.errors._usage``,
    ``agentflow`` for ``agentflow._blocks``), or ``None`` for a public module
    (dunders such as ``__main__`` are not private)."""
    parts = module.split(".")
    for index, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:index])
    return None


def foreign_private_imports(edges: dict[str, dict[str, int]]) -> list[str]:
    """``module imports target ...`` for each import of a private module
    from outside the package it belongs to (``owner_of``)."""
    return [
        f"{name} imports {target} (private to {owner}) at line {line}"
        for name, targets in edges.items()
        for target, line in targets.items()
        if (owner := owner_of(target)) is not None
        and name != owner and not name.startswith(owner + ".")
    ]


def test_no_module_imports_a_private_module_of_another_package() -> None:
    """A private module (a leading underscore: ``agentflow.errors._usage``,
    ``agentflow.ray._extract``) is imported only from inside the package that
    holds it, at any depth (``agentflow.errors`` and ``agentflow.errors.x.y``
    may import ``agentflow.errors._usage``; ``agentflow.cli.ray`` may not).
    Another package imports what the package shares: a name its
    ``__init__`` re-exports, or a public module of it (no underscore).

    The modules at the top level (``agentflow/_blocks.py``) belong to the top
    package, ``agentflow``, which holds every module: its private modules are
    the whole code base's base helpers, and any module may import them. A
    private package (``agentflow/x/_y/``) is private to ``agentflow.x`` in the
    same way. Every import counts, relative or absolute, late or type-only;
    ``tests/`` is not checked (a test may reach into the module it tests)."""
    assert foreign_private_imports(graph()) == []
    # the check itself, on a made-up graph: it must not pass by seeing nothing
    edges = {"agentflow.cli.ray": {"agentflow.ray._refs": 3, "agentflow._blocks": 4},
             "agentflow.ray._extract": {"agentflow.ray._refs": 5},
             "agentflow.ray.x.y": {"agentflow.ray._refs": 6},
             "agentflow.agent": {"agentflow.errors._usage": 7, "agentflow.cli.__main__": 8}}
    assert foreign_private_imports(edges) == [
        "agentflow.cli.ray imports agentflow.ray._refs (private to agentflow.ray) at line 3",
        "agentflow.agent imports agentflow.errors._usage (private to agentflow.errors) at line 7",
    ]


SHARING_NO_PRIVATE_NAMES = ("agentflow.documents",)
"""Packages whose modules share only public names: what one module uses of
another has no leading underscore (and is documented); a private name stays
in its module. (Underscore modules are fine: their names are the package's.)"""


def private_imports(prefixes: tuple[str, ...]) -> list[str]:
    """``module: name from module`` for each private name (``_x``, not a
    module, not a dunder) a module imports from a module under ``prefixes``."""
    found = modules()
    out: list[str] = []
    for name, path in found.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not (isinstance(node, ast.ImportFrom) and node.module and not node.level):
                continue
            if not any(node.module == p or node.module.startswith(p + ".") for p in prefixes):
                continue
            out += [f"{name}: {alias.name} from {node.module}" for alias in node.names
                    if alias.name.startswith("_") and not alias.name.startswith("__")
                    and f"{node.module}.{alias.name}" not in found]
    return out


def test_modules_share_no_private_names() -> None:
    assert private_imports(SHARING_NO_PRIVATE_NAMES) == []
    # the check itself sees one: a package that still shares some
    assert any(": _" in line for line in private_imports(("agentflow.output",)))


def private_names_imported() -> list[tuple[str, int, str, str]]:
    """``(module, line, from module, name)`` for each private name (``_x``,
    not a module, not a dunder) a module imports from an ``agentflow``
    module, by an absolute or a relative import, late or type-only."""
    found = modules()
    out: list[tuple[str, int, str, str]] = []
    for name, path in found.items():
        package = package_of(name, path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            source = imported_from(node, package)
            if source not in found:
                continue
            out += [(name, node.lineno, source, alias.name) for alias in node.names
                    if alias.name.startswith("_") and not alias.name.startswith("__")
                    and f"{source}.{alias.name}" not in found]
    return out


def foreign_private_names(imports: list[tuple[str, int, str, str]],
                          packages: set[str]) -> list[str]:
    """``module imports name from module ...`` for each private name imported
    from a module of another package (``package_of``; ``packages``: the
    modules that are packages, their ``__init__``)."""
    def home(module: str) -> str:
        return module if module in packages else module.rpartition(".")[0]

    return [f"{name} imports {private} from {source} (private to {home(source)}) at line {line}"
            for name, line, source, private in imports if home(name) != home(source)]


def test_no_module_imports_a_private_name_of_another_package() -> None:
    """A private name (``_x``) is shared at most among the modules of its own
    package (``agentflow.cli`` and ``agentflow.cli.extract``, both in
    ``agentflow.cli``); another package imports a public name (documented,
    left out of ``__all__`` when it is plumbing, as ``extraction.records.
    RecordSink``). A subpackage is another package (``agentflow.extraction.
    schedule`` may not import ``agentflow.batch_types._x``), and so is the
    package above (``agentflow.batch`` may not import ``agentflow.extraction.
    pipeline._x``). ``SHARING_NO_PRIVATE_NAMES`` is stricter still."""
    packages = {name for name, path in modules().items() if path.name == "__init__.py"}
    found = private_names_imported()
    assert foreign_private_names(found, packages) == []
    # the check itself: it sees private names, and flags only those crossing a package
    assert ("agentflow.cli", "agentflow.cli.extract", "_extract") in {
        (name, source, private) for name, _, source, private in found}
    made_up = [("agentflow.cli", 3, "agentflow.extraction.records", "_Sink"),
               ("agentflow.cli", 4, "agentflow.cli.extract", "_extract"),
               ("agentflow.extraction.schedule", 5, "agentflow.batch_types", "_aiter"),
               ("agentflow.output.a", 6, "agentflow.output.b", "_x")]
    assert foreign_private_names(made_up, {"agentflow", "agentflow.cli"}) == [
        "agentflow.cli imports _Sink from agentflow.extraction.records "
        "(private to agentflow.extraction) at line 3",
        "agentflow.extraction.schedule imports _aiter from agentflow.batch_types "
        "(private to agentflow) at line 5",
    ]
