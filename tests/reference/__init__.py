"""An independent reference ledger (issue 12 §3): SPEC §4–§9 in plain Python + pandas over the
landing files and kubeledger.yml. It imports nothing from kubeledger and never reads the
warehouse (except tests/reference/compare.py, which reads the marts to compare).

    reference_ledger(landing: Path, config_path: Path, *, as_of: date,
                     deliveries: list[Path] | None = None) -> Ledger
"""

from tests.reference.ledger import Ledger, build_ledger, reference_ledger

__all__ = ["Ledger", "build_ledger", "reference_ledger"]
