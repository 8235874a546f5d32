"""MyRocks advice checks shared by the RocksDB reality tests and the fixture-wide advice test."""
from __future__ import annotations


def options_set(ddl: str) -> set[str]:
    """The column family options a MyRocks advice line sets (the names inside its ``cf={...}``)."""
    import re
    m = re.search(r"=\{(.*)\}'", ddl)
    assert m, ddl
    body, names, depth, item = m.group(1), set(), 0, ""
    for ch in body + ";":
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == ";" and depth == 0:
            names.add(item.split("=", 1)[0].strip())
            item = ""
        else:
            item += ch
    return names - {""}


def assert_one_setting_per_family(advice: list[dict]) -> dict[str, list[dict]]:
    """Issue 17 item 2 (no contradictory ALTERs for one table): no column family gets two
    entries that set the same option; one target's smallest and fastest-decode lines are
    alternatives (at most one of each)."""
    fams: dict[str, list[dict]] = {}
    for a in advice:
        if a["target"].startswith("#rocksdb/") or "/#rocksdb/" in a["target"]:
            fams.setdefault(a["target"].split("#rocksdb/", 1)[1].split("/")[0], []).append(a)
    for cf, adv in fams.items():
        for i, a in enumerate(adv):
            for b in adv[i + 1:]:
                if a["target"] == b["target"]:
                    assert {a["choice"], b["choice"]} == {"smallest", "fastest_decode_within_5pct"}, (a, b)
                else:
                    assert not options_set(a["ddl"]) & options_set(b["ddl"]), (cf, a["ddl"], b["ddl"])
        assert len({a["target"] for a in adv}) == 1, (cf, [a["target"] for a in adv])
    return fams
