"""What a load call did, per file and in total."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

Status = Literal["loaded", "skipped", "ignored"]


@dataclass
class FileResult:
    """One landing file: loaded, skipped (its content was loaded before) or ignored."""

    source_file: str
    status: Status
    format: str | None = None
    raw_table: str | None = None
    file_hash: str | None = None
    rows_loaded: int = 0
    rows_quarantined: int = 0
    # optional values (unit prices, quantities) that did not read: nulled, their rows loaded
    values_nulled: int = 0
    rows_replaced: int = 0
    period_key: str | None = None
    note: str = ""

    def line(self) -> str:
        """The human line the CLI prints for this file."""
        if self.status == "loaded":
            rows = f"{self.rows_loaded:,} row{'' if self.rows_loaded == 1 else 's'}"
            text = f"loaded  {self.source_file} -> raw.{self.raw_table}: {rows}"
            details = []
            if self.rows_quarantined:
                details.append(f"{self.rows_quarantined:,} quarantined")
            if self.values_nulled:
                details.append(f"{self.values_nulled:,} unreadable optional values nulled")
            if self.rows_replaced:
                details.append(f"replaced {self.rows_replaced:,} earlier rows")
            if details:
                text += f" ({', '.join(details)})"
            return text
        return f"{self.status} {self.source_file}: {self.note}"


@dataclass
class LoadSummary:
    """Per-file results of one `load_landing` call and their totals."""

    loaded_at: datetime
    files: list[FileResult] = field(default_factory=list)

    def _with(self, status: Status) -> list[FileResult]:
        return [f for f in self.files if f.status == status]

    @property
    def files_loaded(self) -> int:
        return len(self._with("loaded"))

    @property
    def files_skipped(self) -> int:
        return len(self._with("skipped"))

    @property
    def files_ignored(self) -> int:
        return len(self._with("ignored"))

    @property
    def files_replaced(self) -> int:
        """Loaded files whose rows replaced earlier rows (restatements, re-deliveries)."""
        return sum(1 for f in self._with("loaded") if f.rows_replaced)

    @property
    def rows_by_table(self) -> dict[str, int]:
        """Rows inserted per raw table (`raw_table` name without schema)."""
        counts: Counter[str] = Counter()
        for f in self._with("loaded"):
            counts[f.raw_table or ""] += f.rows_loaded
        return dict(counts)

    @property
    def rows_loaded(self) -> int:
        return sum(f.rows_loaded for f in self.files)

    @property
    def rows_quarantined(self) -> int:
        return sum(f.rows_quarantined for f in self.files)

    @property
    def values_nulled(self) -> int:
        return sum(f.values_nulled for f in self.files)

    @property
    def rows_replaced(self) -> int:
        return sum(f.rows_replaced for f in self.files)

    def total_line(self) -> str:
        text = (
            f"{self.files_loaded} files loaded ({self.rows_loaded:,} rows), "
            f"{self.files_skipped} skipped as already loaded, {self.files_ignored} ignored"
        )
        if self.files_replaced:
            text += f"; {self.files_replaced} replaced earlier data ({self.rows_replaced:,} rows)"
        if self.rows_quarantined:
            text += f"; {self.rows_quarantined:,} rows quarantined (see raw.quarantine)"
        if self.values_nulled:
            text += (
                f"; {self.values_nulled:,} unreadable optional values nulled, their rows loaded "
                "(see raw.quarantine where row_kept)"
            )
        return text
