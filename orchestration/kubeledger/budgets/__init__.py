"""Budget alerts: the thresholds `marts.fct_budget_status_daily` shows crossed, and the JSON
message POSTed to `budgets.webhook_url` (alerts.py)."""
