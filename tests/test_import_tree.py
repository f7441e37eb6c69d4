"""The import graph of the kubeledger package is a tree (STYLE.md): no two modules import each
other, at module level or inside a function (imports under `if TYPE_CHECKING:` aside)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "orchestration"


def _modules() -> dict[str, Path]:
    found = {}
    for path in (PACKAGE / "kubeledger").rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _imports(tree: ast.AST, modules: dict[str, Path]) -> set[str]:
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kubeledger"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                targets.add(sub if sub in modules else node.module)
        elif isinstance(node, ast.Import):
            targets |= {a.name for a in node.names if a.name.startswith("kubeledger")}
    return targets & set(modules)


def test_no_two_modules_import_each_other():
    modules = _modules()
    graph = {
        name: _imports(ast.parse(path.read_text()), modules) - {name}
        for name, path in modules.items()
    }
    circles = sorted(
        {tuple(sorted((a, b))) for a, targets in graph.items() for b in targets if a in graph[b]}
    )
    assert circles == []


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node in tree.body:
                names.add(node.name)
    for node in tree.body:
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.If | ast.Try):
            names |= _top_level_names(ast.Module(body=node.body, type_ignores=[]))
        for target in targets:
            names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def test_every_name_imported_from_the_package_exists():
    """`from kubeledger.x import y`, at module level or inside a function (where an import
    error shows only when the command runs), names a submodule or a top-level name of x."""
    modules = _modules()
    defined = {
        name: _top_level_names(ast.parse(path.read_text())) for name, path in modules.items()
    }
    missing = []
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or node.level:
                continue
            source = node.module or ""
            if source not in modules:
                continue
            for alias in node.names:
                if f"{source}.{alias.name}" not in modules and alias.name not in defined[source]:
                    missing.append(f"{name}: from {source} import {alias.name}")
    assert missing == []
