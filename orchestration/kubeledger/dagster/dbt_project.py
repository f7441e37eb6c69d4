"""The dbt project as Dagster sees it: `DbtProject`, and a manifest that is never stale.

The manifest is written to dbt's own `DBT_TARGET_PATH` (default `target/` in the project) by
`dbt parse` whenever it is missing or older than any model, macro, seed, test or
dbt_project.yml, so the code location always shows the models as they are on disk. Runs write
their artifacts in a folder per invocation under the same path.
"""

from __future__ import annotations

from pathlib import Path

from dagster_dbt import DbtProject

from kubeledger.paths import PROFILES_DIR, PROJECT_DIR, dbt_target_path

SOURCE_PATHS = ("models", "macros", "seeds", "data-tests", "dbt_project.yml")


def _newest_source_mtime() -> float:
    newest = 0.0
    for name in SOURCE_PATHS:
        path = PROJECT_DIR / name
        paths = [path] if path.is_file() else path.rglob("*") if path.exists() else []
        for item in paths:
            if item.is_file():
                newest = max(newest, item.stat().st_mtime)
    return newest


def _models_match(manifest: Path) -> bool:
    """Whether the manifest's models are this project's model files: a dbt run of another
    project (a copy with stub models, say) that shared the target folder leaves a fresh
    manifest of its own there, and the code location would show its models."""
    import json

    try:
        nodes = json.loads(manifest.read_text())["nodes"].values()
    except (OSError, ValueError, KeyError, AttributeError):
        return False
    in_manifest = {
        node.get("original_file_path") for node in nodes if node.get("resource_type") == "model"
    }
    on_disk = {
        path.relative_to(PROJECT_DIR).as_posix()
        for path in (PROJECT_DIR / "models").rglob("*")
        if path.suffix in (".sql", ".py") and path.is_file()
    }
    return in_manifest == on_disk


def ensure_manifest(project: DbtProject) -> Path:
    """Parse the project when its manifest is missing or older than its sources."""
    manifest = Path(project.manifest_path)
    if (
        manifest.exists()
        and manifest.stat().st_mtime >= _newest_source_mtime()
        and _models_match(manifest)
    ):
        return manifest
    from dbt.cli.main import dbtRunner

    result = dbtRunner().invoke(
        [
            "parse",
            "--quiet",
            "--project-dir",
            str(PROJECT_DIR),
            "--profiles-dir",
            str(PROFILES_DIR),
            "--target-path",
            str(project.target_path),
        ]
    )
    if not result.success:
        raise RuntimeError(
            f"dbt parse of {PROJECT_DIR} failed ({result.exception}); run "
            f"`dbt parse --project-dir {PROJECT_DIR} --profiles-dir {PROFILES_DIR}` to see why"
        )
    return manifest


dbt_project = DbtProject(
    project_dir=PROJECT_DIR, profiles_dir=PROFILES_DIR, target_path=dbt_target_path()
)
DBT_MANIFEST = ensure_manifest(dbt_project)
