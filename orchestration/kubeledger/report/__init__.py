"""The monthly chargeback report: one self-contained HTML file (SPEC §16, issue 9).

`data` queries the marts, `charts` turns the results into plotly figures, `render` writes the
HTML (plotly.js inlined: the file opens offline), `commands` is `kubeledger report`.
"""

from kubeledger.report.data import ReportData, load_report_data
from kubeledger.report.render import render_report, write_report

__all__ = ["ReportData", "load_report_data", "render_report", "write_report"]
