"""The sealed store's public face: seal a month, seal a correction, verify the seals.

The jobs live in their own modules: sealed_schema.py (tables, errors, shared reads), store.py
(seal a month), corrections.py (seal a correction), digest.py (hash, chain and copy an
artifact), verify.py (check the warehouse against its hashes and copies). Import from here.
"""

from kubeledger.close.corrections import seal_correction
from kubeledger.close.sealed_schema import (
    DDL,
    LEDGER_VERSION,
    SCHEMA,
    SEALED_TABLES,
    AlreadySealedError,
    CorrectionBill,
    SealedBill,
    SealError,
    SealSources,
    UnbalancedBillError,
    VerificationError,
    already_sealed_message,
    corrections_of,
    ensure_sealed_schema,
    sealed_bill,
)
from kubeledger.close.store import seal_month

__all__ = [
    "DDL",
    "LEDGER_VERSION",
    "SCHEMA",
    "SEALED_TABLES",
    "AlreadySealedError",
    "CorrectionBill",
    "SealError",
    "SealSources",
    "SealedBill",
    "UnbalancedBillError",
    "VerificationError",
    "already_sealed_message",
    "corrections_of",
    "ensure_sealed_schema",
    "seal_correction",
    "seal_month",
    "sealed_bill",
]
