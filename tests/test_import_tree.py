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
