"""Landing files -> raw tables. The contract is docs/landing-and-raw.md.

from kubeledger.load import load_landing
summary = load_landing("warehouse/kubeledger.duckdb", "landing/", progress=print)
"""

from kubeledger.load.errors import LoadError
from kubeledger.load.formats import FORMATS, FORMATS_BY_NAME, FormatSpec
from kubeledger.load.loader import load_landing
from kubeledger.load.schema import ensure_raw_schema, fill_source_days, raw_table_columns
from kubeledger.load.summary import FileResult, LoadSummary

__all__ = [
    "FORMATS",
    "FORMATS_BY_NAME",
    "FileResult",
    "FormatSpec",
    "LoadError",
    "LoadSummary",
    "ensure_raw_schema",
    "fill_source_days",
    "load_landing",
    "raw_table_columns",
]
