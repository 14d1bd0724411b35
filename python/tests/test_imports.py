"""The package's modules import one another without a cycle (issue 25: _comm -> _comm_rma -> _rma -> _comm
was one; a cycle makes the import order matter and hides half-initialised modules). Reads the sources'
relative imports, function-local ones included, with ast: no library needed. Cost: milliseconds."""
import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "hetccl"


def relative_imports(path):
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found.update([node.module] if node.module else [a.name for a in node.names])
    return found


def test_no_import_cycle():
    graph = {p.stem: relative_imports(p) for p in PACKAGE.glob("*.py")}
    cycles = set()

    def visit(module, path):
        for nxt in graph.get(module, ()):
            if nxt in path:
                cycles.add(" -> ".join(path[path.index(nxt):] + [nxt]))
            else:
                visit(nxt, path + [nxt])

    for module in graph:
        visit(module, [module])
    assert not cycles, "import cycles: " + "; ".join(sorted(cycles))
