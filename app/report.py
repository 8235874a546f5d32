"""The HTML report: one self-contained file with the views as images, the
size tables, the what-if results and the advice, the data dir path, the date
and the dbxray version."""
from __future__ import annotations

import base64
import datetime as _dt
import html
import tempfile
from pathlib import Path

from dbxray.parsers.humanize import human_bytes, human_speed, percent
from dbxray.parsers.model import Dataset
from dbxray.parsers.tree import build_tree

from dbxray.app import __version__

def run_default_whatif(ds: Dataset, sample: str = "0.05", progress=None, is_cancelled=None) -> dict:
    """What-if projections with the compressor layer's default codecs."""
    from dbxray.compress.whatif import run_whatif
    return run_whatif(ds, None, sample=sample, seed=0, progress=progress, is_cancelled=is_cancelled)


def _img_tag(png: bytes, alt: str) -> str:
    return (f'<img alt="{html.escape(alt)}" style="max-width:100%;border:1px solid #ddd" '
            f'src="data:image/png;base64,{base64.b64encode(png).decode()}">')


def render_views(ds: Dataset, whatif: dict | None, width: int = 1300, height: int = 760,
                 progress=None) -> list[tuple[str, bytes]]:
    """(title, PNG bytes) of every view that has something to show for this dataset;
    ``progress(done, total, message)`` after each view (the report's last phase)."""
    from dbxray.app.headless import make_view, settle, view_ids
    from dbxray.viz.export import export_png
    root = build_tree(ds)
    out = []
    from dbxray.viz.registry import view_shows
    todo = [(vid, cls) for vid, cls in view_ids().items()
            if view_shows(cls, ds) and not (vid == "whatif" and not whatif)]
    with tempfile.TemporaryDirectory() as tmp:
        for n, (vid, cls) in enumerate(todo):
            if progress is not None:
                progress(n, len(todo), f"drawing the {cls.title} view")
            view = make_view(vid, ds, root, width, height, whatif=whatif)
            shots = view.report_targets() if hasattr(view, "report_targets") else [(cls.title, None)]
            for k, (caption, target) in enumerate(shots):
                if target is not None:
                    view.set_target(target)
                    settle()
                widget = view.export_widget() if hasattr(view, "export_widget") else view
                p = Path(tmp) / f"{vid}-{k}.png"
                if export_png(widget, str(p), width, height):
                    out.append((caption, p.read_bytes()))
            view.close()
            view.deleteLater()
    if progress is not None:
        progress(len(todo), len(todo), "views drawn")
    return out


def _table(headers: list[str], rows: list[list], numeric_from: int = 1) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for r in rows:
        cells = "".join(
            f"<td class='num'>{html.escape(str(c))}</td>" if i >= numeric_from else f"<td>{html.escape(str(c))}</td>"
            for i, c in enumerate(r))
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{th}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def whatif_summary(whatif: dict) -> list[dict]:
    """One row per target of a what-if result, the numbers the window shows: its current
    bytes, the smallest projection of its primary model (the codec the engine would write),
    the saving and the saving's 95% interval, and the verdict of the advice."""
    advice: dict[str, list[dict]] = {}
    for a in whatif.get("advice", []):
        for f in a.get("files") or [a.get("target")]:
            advice.setdefault(f, []).append(a)
        advice.setdefault(a.get("target"), []).append(a)
    def per_column(t: dict) -> list[dict]:
        """A ClickHouse table's advice: its columns' entries (its codec is set per column)."""
        if t.get("engine") != "clickhouse":
            return []
        head = t["target"] + "."
        return [a for a in whatif.get("advice", []) if str(a.get("target", "")).startswith(head)]

    rows = []
    for t in whatif.get("targets", []):
        model = t.get("primary_model")
        res = [r for r in t.get("results", []) if (r.get("model") == model or model is None)
               and r.get("codec") != t.get("current_codec")]
        if not res:
            continue
        best = min(res, key=lambda r: r["projected_bytes"])
        cur = int(t.get("current_bytes") or 0)
        split = t.get("split") or {}
        # a codec whose DDL rebuilds the table saves against the table rebuilt as it is: the
        # free space is the rebuild's (its own row), never the codec's (issue 17 item 1)
        base = int(split["rebuilt_bytes"]) if split and "compression_saving_bytes" in best else cur
        lo, hi = (best.get("ci95") or [best["projected_bytes"]] * 2)[:2]
        adv = [a for a in advice.get(t["target"], []) if a.get("codec") == best["codec"]
               and a.get("kind", "codec") == "codec"]
        # a MyRocks level set by its column family's one entry (every advised level's pick at once)
        fam = [a for a in advice.get(t["target"], []) if t["target"] in (a.get("levels") or {})]
        if fam and not adv:
            picked = fam[0]["levels"][t["target"]]
            verdict = (f"advised with its column family's one setting ({fam[0]['target']}: {picked})"
                       + ("" if picked == best["codec"] else f"; {best['codec']} is this level's smallest alone"))
        elif adv:
            verdict = "advised (" + adv[0].get("choice", "") + ")" + (
                f"; {adv[0]['verdict']}" if adv[0].get("verdict") else "")
        elif per_column(t):
            verdict = f"advised per column ({len(per_column(t))} entries below)"
        elif base - hi <= 0:
            verdict = "no saving beyond the 95% interval"
        else:
            verdict = "not advised (not a table, or a system object)" if not [
                a for a in advice.get(t["target"], []) if a.get("kind", "codec") != "engine"] else \
                "advised for the table as a whole"
        rows.append({"target": t["target"], "engine": t.get("engine"), "current": cur, "codec": best["codec"],
                     "model": best.get("model", ""), "projected": int(best["projected_bytes"]),
                     "saving": base - int(best["projected_bytes"]), "saving_ci95": [base - int(hi), base - int(lo)],
                     "reclaimable": int(split.get("reclaimable_bytes", 0)),
                     "shrinks": bool(split.get("shrinks", True)), "verdict": verdict})
    return rows


def whatif_sections(whatif: dict) -> list[str]:
    """The report's what-if part: how it was run, one summary row per target, every
    projection collapsed under it, the advice and how speeds were measured."""
    e = html.escape
    out = ["<h2>What if: projected sizes</h2>"]
    samp = whatif.get("sample", {})
    codecs = whatif.get("codecs") or sorted({r.get("codec") for t in whatif.get("targets", [])
                                             for r in t.get("results", [])} - {"current"})
    frac = samp.get("fraction")
    how = "every unit" if samp.get("mode") == "all" else f"a {float(frac or 0):.0%} sample"
    sampled, total = samp.get("units_sampled"), samp.get("units_total")
    counts = f", {sampled:,} of {total:,} units sampled" if isinstance(sampled, int) and isinstance(total, int) \
        else ""
    if counts and isinstance(samp.get("units_encoded"), int):
        # the same words as the description: re-encoded, and known without encoding
        enc = samp["units_encoded"]
        counts = f", {enc:,} of {total:,} units re-encoded, {max(0, sampled - enc):,} more known without encoding"
    out.append(f"<p class='meta'>As run: {e(how)} (seed {e(str(samp.get('seed')))}{counts}), codecs "
               f"{e(', '.join(codecs))}; filesystem block {whatif.get('fs_block', '?')} B; 95% confidence "
               f"intervals.</p>")
    if samp.get("description"):
        out.append(f"<p class='meta'>The sample: {e(samp['description'])}.</p>")
    rows = whatif_summary(whatif)
    out.append("<p class='meta'>Savings are compression only: where a codec's DDL rebuilds the table "
               "(InnoDB page compression, ROW_FORMAT=COMPRESSED) it is compared with the table rebuilt as it "
               "is; the free pages and unwritten space a rebuild alone reclaims (OPTIMIZE TABLE) are the "
               "'reclaimable' column and their own advice line.</p>")
    out.append(_table(["target", "engine", "current", "reclaimable (rebuild)", "smallest codec", "projected",
                       "compression saving", "saving 95% CI", "verdict"],
                      [[r["target"], r["engine"], human_bytes(r["current"]),
                        "-" if not r["reclaimable"] else human_bytes(r["reclaimable"]) if r["shrinks"] else
                        f"none (never shrinks; {human_bytes(r['reclaimable'])} free inside)", r["codec"],
                        human_bytes(r["projected"]),
                        human_bytes(r["saving"]) if r["saving"] >= 0 else "-" + human_bytes(-r["saving"]),
                        f"{_signed(r['saving_ci95'][0])} – {_signed(r['saving_ci95'][1])}", r["verdict"]]
                       for r in rows], numeric_from=2))
    for t in whatif.get("targets", []):
        wrows = []
        for r in sorted(t.get("results", []), key=lambda r: (r.get("model", ""), r["projected_bytes"])):
            lo, hi = (r.get("ci95") or [None, None])[:2]
            wrows.append([r.get("codec"), r.get("model", ""), human_bytes(r.get("projected_bytes")),
                          f"{human_bytes(lo)} – {human_bytes(hi)}" if lo is not None else "-",
                          human_speed(r.get("compress_mb_s")), human_speed(r.get("decompress_mb_s"))])
        out.append(f"<details><summary>{e(str(t.get('target')))}: all {len(wrows)} projections</summary>"
                   + _table(["codec", "model", "projected", "95% CI", "compress MB/s", "decompress MB/s"],
                            wrows, numeric_from=2) + "</details>")
    if whatif.get("speed_method"):
        out.append(f"<p class='meta'>Speeds: {e(whatif['speed_method'])} (shown as '-').</p>")
    adv = whatif.get("advice", [])
    if adv:
        out.append("<h2>Advice</h2>")
        arows = [[a.get("target"), "rebuild (codec stays)" if a.get("kind") == "rebuild" else
                  f"{a.get('engine_clause')} ({a.get('codec')}, estimate)" if a.get("kind") == "engine" else a.get("codec"),
                  human_bytes(a.get("projected_bytes")),
                  human_bytes(a.get("saving_bytes")), a.get("verdict") or a.get("choice", ""), a.get("ddl", "")]
                 for a in adv]
        out.append(_table(["target", "codec", "projected", "saving", "why", "DDL"], arows, numeric_from=2))
    return out


def types_sections(advice: dict) -> list[str]:
    """The report's Types part (ClickHouse, compress/typeadvice.advise's result): one row per
    suggested type or codec chain of each column, smallest first, with its 95% interval, its
    saving, lossless or the precision lost and any warning (parts that would be written
    Compact); the DDL of each under it, the table notes (Compact parts) and the columns not
    advised with why."""
    e = html.escape
    out = ["<h2>Types: narrower ClickHouse columns</h2>"]
    samp = advice.get("sample")
    how = "every value" if samp == "all" else f"a {float(samp or 0):.0%} sample of each column's runs"
    cols = advice.get("columns") or []
    out.append(f"<p class='meta'>As run: {e(how)} (seed {e(str(advice.get('seed')))}), "
               f"{'with' if advice.get('codecs') else 'without'} codec chains; {len(cols):,} columns, "
               f"{advice.get('seconds', 0):.1f} s; projected bytes with 95% intervals, the engine's block framing. "
               f"{e(advice.get('warning') or '')}.</p>")
    rows, ddls = [], []
    for a in cols:
        for c in sorted((a.get("candidates") or []) + (a.get("codec_candidates") or []),
                        key=lambda c: c["projected_bytes"]):
            lo, hi = (c.get("projected_bytes_ci95") or [c["projected_bytes"]] * 2)[:2]
            kind = "lossless" if c.get("lossless") else "loses precision"
            rows.append([f"{a['database']}.{a['table']}.{a['column']}", a["type"], human_bytes(a["current_bytes"]),
                         c["type"] + (f" CODEC({c['codec']})" if c["codec"] != a.get("current_codec") else ""),
                         human_bytes(c["projected_bytes"]), f"{human_bytes(lo)} – {human_bytes(hi)}",
                         _signed(int(c.get("saving_bytes") or 0)), kind, c.get("warning") or ""])
            ddls.append(c.get("ddl") or "")
    if rows:
        out.append(_table(["column", "type now", "now", "suggestion", "projected", "95% CI", "saving", "",
                           "warning"], rows, numeric_from=4))
        out.append("<details><summary>The DDL of each suggestion</summary><pre>" + e("\n".join(ddls))
                   + "</pre></details>")
    else:
        out.append("<p>No column has a narrower type or a better codec.</p>")
    notes = sorted({f"{a['database']}.{a['table']}: {n}" for a in cols for n in a.get("notes") or []
                    if "Compact" in n})
    if notes:
        out.append("<ul>" + "".join(f"<li>{e(n)}</li>" for n in notes) + "</ul>")
    skipped = [[f"{a['database']}.{a['table']}.{a['column']}", a["type"], a["not_advised"]] for a in cols
               if a.get("not_advised")]
    if skipped:
        out.append(f"<details><summary>{len(skipped):,} columns not advised</summary>"
                   + _table(["column", "type", "why"], skipped, numeric_from=3) + "</details>")
    return out


def advise_for_report(ds: Dataset, sample: float | None = 0.05, progress=None) -> dict | None:
    """The type advice the report shows: None when the scan holds no MergeTree table."""
    tables = (ds.sections.get("clickhouse") or {}).get("tables") or []
    if not any("MergeTree" in str(t.get("engine", "")) for t in tables):
        return None
    from dbxray.compress.typeadvice import advise
    return advise(ds, sample, progress=progress)


def _signed(n: int) -> str:
    return human_bytes(n) if n >= 0 else "-" + human_bytes(-n)


def report_html(ds: Dataset, images: list[tuple[str, bytes]], whatif: dict | None,
                advice: dict | None = None) -> str:
    e = html.escape
    now = _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    root = build_tree(ds)
    parts = [f"<h1>dbxray report</h1><p class='meta'>Data dir <code>{e(ds.root)}</code><br>"
             f"Engines: {e(', '.join(ds.engines) or 'none found')} &middot; {len(ds.files)} files &middot; "
             f"apparent {human_bytes(ds.apparent_bytes)} &middot; allocated {human_bytes(ds.allocated_bytes)}"
             f"<br>Made {e(now)} by dbxray {e(__version__)}</p>"]
    # tables
    rows = []
    for n in root.walk():
        if n.kind == "table":
            db = n.parent.name if n.parent is not None else ""
            up = n.parent
            while up is not None and up.kind != "engine":
                up = up.parent
            eng = up.name if up is not None else ""
            rows.append([f"{db}.{n.name}", eng, human_bytes(n.apparent), human_bytes(n.allocated),
                         human_bytes(n.holes), human_bytes(n.logical), percent(n.allocated, n.apparent)])
    rows.sort(key=lambda r: r[0])
    if rows:
        parts.append("<h2>Tables</h2>" + _table(["table", "engine", "apparent", "allocated", "holes", "logical",
                                                 "allocated / apparent"], rows, numeric_from=2))
    for title, png in images:
        parts.append(f"<h2>{e(title)}</h2>{_img_tag(png, title)}")
    if whatif:
        parts.extend(whatif_sections(whatif))
    if advice:
        parts.extend(types_sections(advice))
    errs = list(ds.errors) + [x for f in ds.files for x in f.errors]
    if errs:
        parts.append(f"<h2>Errors ({len(errs)})</h2><ul>" + "".join(f"<li>{e(x)}</li>" for x in errs[:200]) + "</ul>")
    files_rows = [[f.path, f.engine or "-", f.role, human_bytes(f.apparent_bytes), human_bytes(f.allocated_bytes),
                   human_bytes(f.hole_bytes)] for f in ds.files if f.engine]
    if files_rows:
        parts.append("<h2>Files</h2>" + _table(["path", "engine", "role", "apparent", "allocated", "holes"],
                                               files_rows, numeric_from=3))
    style = ("body{font-family:'DejaVu Sans',Arial,sans-serif;margin:2em auto;max-width:1320px;color:#212121}"
             "h1{margin-bottom:0}.meta{color:#616161}table{border-collapse:collapse;margin:0.5em 0 1.5em}"
             "td,th{border-bottom:1px solid #e0e0e0;padding:3px 10px;font-size:13px;text-align:left}"
             "td.num{text-align:right;font-variant-numeric:tabular-nums}th{background:#f5f5f5}"
             "code{background:#f5f5f5;padding:1px 4px}details{margin:0 0 0.4em}summary{cursor:pointer;color:#424242}")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>dbxray report: {e(ds.root)}</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>")


def write_report(ds: Dataset, path: str, whatif_sample: str | None = "0.05", whatif: dict | None = None,
                 codecs: list[str] | None = None, seed: int = 0, progress=None, advice: dict | None = None,
                 types_sample: float | None | bool = 0.05, phase_progress=None) -> None:
    """The report of ``ds``: with ``whatif`` (a what-if result the user ran) as it is, else a
    what-if run here on ``whatif_sample`` (None: none) with ``codecs`` and ``seed`` (``progress``
    its progress); the Types part from ``advice``, else the type advisor run here on
    ``types_sample`` (False: none). ``phase_progress(phase)`` gives the progress callback of the
    other phases ("types", "views"), or None."""
    phase = phase_progress or (lambda name: None)
    if whatif is None and whatif_sample:
        from dbxray.compress.whatif import run_whatif
        whatif = run_whatif(ds, codecs or None, sample=whatif_sample, seed=seed, progress=progress)
    if advice is None and types_sample is not False:
        advice = advise_for_report(ds, types_sample, progress=phase("types"))
    images = render_views(ds, whatif, progress=phase("views"))
    text = report_html(ds, images, whatif, advice)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
