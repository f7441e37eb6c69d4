"""The reference pricing's scope (SPEC §4 "Scope is one model"): which billing lines are a
cluster's, in which role and cost family, Google committed-use fees spread over instances, and
how far each account's export reaches. Imports nothing of kubeledger."""

from __future__ import annotations

import datetime as dt
import re

import numpy as np
import pandas as pd

FAMILY = {
    "instance": "compute",
    "control_plane": "compute",
    "volume": "storage",
    "load_balancer": "network",
    "data_transfer": "network",
}


def last_segment(text: str) -> str:
    return text.rstrip("/").rsplit("/", 1)[-1]


def instance_key(lines: pd.DataFrame) -> pd.Series:
    key = lines["rkey"].fillna("")
    focus = lines["fmt"] == "focus"
    return key.where(~focus, key.map(last_segment))


def spread_commitments(lines: pd.DataFrame) -> pd.DataFrame:
    """SPEC §3.2: a Google Cloud committed-use fee is spread over the account's instances in
    proportion to each instance's COMMITTED_USAGE_DISCOUNT credits that day. Each share is
    added as a line of that instance (same account, tags and resource), so it is the node's
    cost when the node is the cluster's and unallocated when the link selects it. SPEC silent
    on "account": the billing account here (commitments are shared across its projects)."""
    fees = lines[lines["kind"] == "commitment_fee"]
    if fees.empty:
        return lines
    fee_day = fees.groupby(["account", "charge_date"])["cost"].sum().rename("fee")
    instances = lines[(lines["kind"] == "instance") & (lines["fmt"] == "gcp")]
    cud = instances.groupby(["account", "charge_date", "ikey"], as_index=False).agg(
        cud=("cud", "sum"), first_line=("line_no", "min")
    )
    total = cud.groupby(["account", "charge_date"])["cud"].transform("sum")
    cud = cud.join(fee_day, on=["account", "charge_date"])
    cud = cud[(total != 0) & cud["fee"].notna() & (cud["cud"] != 0)]
    share = cud["fee"] * cud["cud"] / total[cud.index]
    template = lines.set_index("line_no").loc[cud["first_line"]].reset_index()
    template["cost"] = share.to_numpy()
    template["cud"] = 0.0
    template["hours"] = np.nan
    template["is_usage"] = False
    template["line_no"] = np.arange(len(lines), len(lines) + len(template))
    spread_days = set(map(tuple, cud[["account", "charge_date"]].to_numpy()))
    is_spread = [
        (a, d) in spread_days for a, d in zip(fees["account"], fees["charge_date"], strict=True)
    ]
    lines = lines.copy()
    # A spread fee is now carried by its shares; an unspread one stays at account level.
    lines.loc[fees.index[is_spread], "kind"] = "spread_commitment_fee"
    return pd.concat([lines, template[lines.columns]], ignore_index=True)


def link_selects(lines: pd.DataFrame, link: dict) -> pd.Series:
    """SPEC §3.3: accounts only restrict; tags and patterns select. A link with accounts and
    no filter selects nothing (beyond the cluster's own resources, matched elsewhere)."""
    tags = link.get("tags") or []
    patterns = link.get("resource_id_patterns") or []
    accounts = [str(a) for a in (link.get("accounts") or [])]
    selected = pd.Series(False, index=lines.index)
    for tag in tags:
        key, has_value, value = str(tag).partition("=")
        norm = re.sub(r"[^a-z0-9]", "_", _strip_user(key.lower()))
        if has_value:
            selected |= lines["tags"].map(lambda t, k=norm, v=value: t.get(k) == v)
        else:
            selected |= lines["tags"].map(lambda t, k=norm: k in t)
    for pattern in patterns:
        selected |= lines["resource_id"].fillna("").str.contains(pattern, case=False, regex=True)
    if accounts:
        selected &= lines["account"].isin(accounts) | lines["sub_account"].isin(accounts)
    return selected


def _strip_user(key: str) -> str:
    for prefix in ("user:", "user_"):
        if key.startswith(prefix):
            return key[len(prefix) :]
    return key


def match_lines(lines, keys, pv_days, lb_services, clusters, settings) -> pd.DataFrame:
    """Every in-scope (and every data-transfer) line with its cluster and role:
    node | volume | lb | fee | selected (link-selected, matches nothing) | data_transfer."""
    out = []
    node_keys = keys.dropna(subset=["ikey"])[["cluster_id", "ikey"]].drop_duplicates()
    inst = lines[lines["kind"].isin(["instance", "data_transfer"])]
    hit = inst.merge(node_keys, on="ikey")
    hit["role"] = np.where(hit["kind"] == "instance", "node", "data_transfer")
    out.append(hit)

    pvs = pv_days.drop_duplicates(["cluster_id", "pv_name"])[
        ["cluster_id", "pv_name", "csi_volume_handle"]
    ]
    vol = lines[lines["kind"] == "volume"]
    by_handle = vol.merge(
        pvs.assign(rkey=pvs["csi_volume_handle"].fillna("").str.lower()), on="rkey"
    )
    vol_last = vol.assign(pv_key=vol["rkey"].map(last_segment))
    by_name = vol_last.merge(pvs.assign(pv_key=pvs["pv_name"].str.lower()), on="pv_key").drop(
        columns="pv_key"
    )
    vols = pd.concat([by_handle, by_name]).drop_duplicates(["line_no", "cluster_id"])
    vols["role"] = "volume"
    out.append(vols[[*vols.columns]])

    lbs = lines[lines["kind"] == "load_balancer"]
    lb_ids = lb_services.drop_duplicates(["cluster_id", "lb_key"])[["cluster_id", "lb_key"]]
    lb_exact = lbs.merge(lb_ids.rename(columns={"lb_key": "rkey"}), on="rkey")
    bare = lb_ids[~lb_ids["lb_key"].str.contains("[/:]", regex=True)]
    lb_bare = lbs.assign(lb_key=lbs["rkey"].map(last_segment)).merge(bare, on="lb_key")
    lb_hit = pd.concat([lb_exact, lb_bare.drop(columns="lb_key")]).drop_duplicates(
        ["line_no", "cluster_id"]
    )
    lb_hit["role"] = "lb"
    out.append(lb_hit)

    own = pd.concat(out, ignore_index=True)
    own_lines = set(own.loc[own["role"] != "data_transfer", "line_no"])

    fees = lines[lines["kind"] == "control_plane"]
    candidates = lines[
        lines["kind"].isin(["instance", "volume", "load_balancer"])
        & ~lines["line_no"].isin(own_lines)
    ]
    extra = []
    for cluster in clusters:
        cid = str(cluster["id"])
        link = cluster.get("billing_link") or {}
        # SPEC §4 / §5: a managed control-plane fee is matched by the cluster's ARN / name
        # (the EKS fee's resource ID ends in `cluster/<name>`), or by the link's filter.
        by_name = fees["cluster_name"].fillna("").str.lower() == cid.lower()
        by_link = link_selects(fees, link) if link else False
        extra.append(fees[by_name | by_link].assign(cluster_id=cid, role="fee"))
        if link:
            chosen = candidates[link_selects(candidates, link)]
            extra.append(chosen.assign(cluster_id=cid, role="selected"))
    matched = pd.concat([own, *extra], ignore_index=True)
    matched = matched.drop_duplicates(["line_no", "cluster_id"])
    matched["family"] = matched["kind"].map(FAMILY)
    matched["in_scope"] = (matched["role"] != "data_transfer") | settings.include_data_transfer
    return matched


def billed_through_by_account(lines: pd.DataFrame) -> dict:
    """SPEC §4: per account, the latest end of its usage charge periods; rows spanning a whole
    month (tax, support fees) do not count."""
    usage = lines[lines["is_usage"].astype(bool) & lines["end"].notna()]
    month_start = usage["start"].dt.tz_localize(None).dt.to_period("M").dt.start_time
    next_month = month_start + pd.offsets.MonthBegin(1)
    whole_month = (usage["start"].dt.tz_localize(None) <= month_start) & (
        usage["end"].dt.tz_localize(None) >= next_month
    )
    usage = usage[~whole_month]
    ends = usage.groupby(["provider", "account"])["end"].max()
    return {key: value for key, value in ends.items()}


def is_billed(billed_through: dict, provider: str, account: str, day: dt.date) -> bool:
    end = billed_through.get((provider, account))
    if end is None:
        return False
    return end >= pd.Timestamp(day + dt.timedelta(days=1), tz="UTC")
