"""The one error a user can meet while loading a landing folder."""

from __future__ import annotations


class LoadError(Exception):
    """A landing file that cannot be loaded.

    The message names the file (relative to the landing folder), the column or row when there
    is one, and what to do about it. Nothing of the load call that raised it is kept: the load
    runs in one transaction.
    """

    def __init__(
        self,
        source_file: str,
        problem: str,
        *,
        fix: str | None = None,
        column: str | None = None,
        row_number: int | None = None,
    ) -> None:
        self.source_file = source_file
        self.problem = problem
        self.fix = fix
        self.column = column
        self.row_number = row_number
        where = source_file
        if row_number is not None:
            where += f", row {row_number}"
        message = f"{where}: {problem}"
        if fix:
            message += f" {fix}"
        super().__init__(message)
