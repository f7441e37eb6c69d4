"""The code location's manifest is this project's: a fresh manifest.json that another project
(the close tests' copy with stub models, say) left in a shared target folder is parsed again,
not shown as this project's assets."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from dagster_dbt import DbtProject

from kubeledger.paths import PROFILES_DIR, PROJECT_DIR


def _model_paths(manifest: dict) -> set[str]:
    return {
        node["original_file_path"]
        for node in manifest["nodes"].values()
        if node["resource_type"] == "model"
    }


def test_a_fresh_manifest_of_another_project_is_parsed_again(tmp_path):
    from kubeledger.dagster.dbt_project import dbt_project, ensure_manifest

    ours = json.loads(Path(dbt_project.manifest_path).read_text())
    # another project's manifest: a stub in place of one of our models
    foreign = copy.deepcopy(ours)
    key = "model.kubeledger.fct_pod_costs_daily"
    stub = foreign["nodes"].pop(key)
    stub["original_file_path"] = "models/stubs/fct_pod_costs_daily.sql"
    foreign["nodes"]["model.kubeledger.stub_fct_pod_costs_daily"] = stub
    target = tmp_path / "target"
    target.mkdir()
    (target / "manifest.json").write_text(json.dumps(foreign))  # newer than every source

    project = DbtProject(project_dir=PROJECT_DIR, profiles_dir=PROFILES_DIR, target_path=target)
    manifest = json.loads(ensure_manifest(project).read_text())

    on_disk = {
        path.relative_to(PROJECT_DIR).as_posix() for path in (PROJECT_DIR / "models").rglob("*.sql")
    }
    assert _model_paths(manifest) == on_disk == _model_paths(ours)
    assert manifest["nodes"][key]["config"]["schema"] == "marts"
