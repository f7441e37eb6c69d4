"""The monthly close (SPEC §9): exact cent bills, sealing, corrections and their commands.

- `seal`: the sealed store (schema `sealed`, created by Python, never by dbt);
- `closer`: the close procedure (`close_month`, `correct_month`);
- `bill`: reading a sealed or draft bill, exporting it, explaining a line;
- `commands`: the click commands `close`, `bill`, `explain`, `correct`.
"""
