"""Data-quality expectations on the landing (raw) tables, as Great Expectations 1.x suites.

One suite per raw table, built in code (no GX project folder, no network): required columns
present and filled, typed values readable, usage and capacity non-negative, usage not above
capacity beyond a tolerance, known enum values, and dates inside the file's own period.

    from kubeledger.quality import validate_raw_tables
    results = validate_raw_tables(con, first_day, last_day)   # one TableValidation per table
"""

from kubeledger.quality.suites import SUITES, TableSuite
from kubeledger.quality.tables import RAW_TABLES, RawTable
from kubeledger.quality.validate import ExpectationFailure, TableValidation, validate_raw_tables

__all__ = [
    "RAW_TABLES",
    "SUITES",
    "ExpectationFailure",
    "RawTable",
    "TableSuite",
    "TableValidation",
    "validate_raw_tables",
]
