"""Month exports of the marts (Parquet / CSV, stable schema, manifest) and a FOCUS file.

`schema` is the contract (marts, columns, types), `writer` writes the files and the manifest,
`focus` the FOCUS-shaped allocated cost per team, `commands` is `kubeledger export`.
"""

from kubeledger.export.writer import ExportError, ExportResult, export_month

__all__ = ["ExportError", "ExportResult", "export_month"]
