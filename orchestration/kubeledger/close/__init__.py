"""The monthly close (SPEC §9): exact cent bills, sealing, corrections and their commands.

- `seal`: the sealed store's public face; its jobs: `sealed_schema` (schema `sealed`, created
  by Python, never by dbt), `store` (seal a month), `corrections` (seal a correction),
  `digest` (hash, chain and copy a sealed artifact), `verify` (check seals against both);
- `closer`: the close procedure (`close_month`, `correct_month`);
- `bill`: reading a sealed or draft bill, exporting it, explaining a line;
- `commands`: the click commands `close`, `bill`, `explain`, `correct`, `verify`.
"""
