#!/usr/bin/env python3
"""Turns bench.py's JSON lines into Markdown tables and figures (matplotlib).

  apps/bench/report.py RESULTS.jsonl... [--md OUT.md] [--svg-dir DIR] [--format svg|png|pdf]
                       [--predictions OUT.md]

One table per (tier, platform, ranks, workload family): a row per parameter value (message unit,
density, ...), a column per strategy with the time in ms (FAILED where bench.py recorded a
failure); then `best/LB` (best strategy's time over the bandwidth lower bound) and
`native/best`. For each table a figure, <tier>-<platform>-<ranks>-<workload>.svg: per row a
horizontal bar chart of speedup over native (native = 1, the lower bound dashed), fastest first,
the six fastest strategies with auto and native; and where the rows sweep four or more message
units, <...>-sweep.svg: time against unit (log-log) for native, auto, the four fastest and the
lower bound, each line labelled. Markdown goes to --md (default stdout); figures to --svg-dir
(default: beside --md, bench-plots/); without matplotlib (Debian python3-matplotlib) the figures
are skipped with one message.

Then two summaries over the points that have them:
  * issue 3 (cost model and auto): per point the oracle (fastest measured, native included),
    auto's final choice and time, auto/oracle and auto/native, and the Spearman rank correlation
    of the cost model's predicted times against the measured ones over the strategies with both;
    the targets (auto within 5 % of the oracle, at most 3 % slower than native, Spearman >= 0.9)
    are checked per point. --predictions writes every point's per-strategy table (predicted,
    measured, the two ranks, the lower bounds).
  * issue 5 (indirect routes): per point the best direct and the best indirect strategy, native
    over the best indirect one (target >= 3x at 1024 ranks with small messages) and auto's choice.

Lines of bench.py smpi --set bursts (issue 6: halo_exchange and cg_solver natively and with
COMMSCHED_BURSTS=off, =local and =collective) get a table of their own, a row per point: time
per exchange per level, the lower bound, the ratios, collective's choice, and whether every run
printed the same results.
"""
import argparse
import collections
import json
import math
import os
import random
import re
import statistics
import sys


def load(paths):
    recs = []
    for p in paths:
        with open(p) as f:
            for line in f:
                line = line.strip()
                if line:
                    recs.append(json.loads(line))
    # a later line for the same point replaces an earlier one (reruns)
    uniq = collections.OrderedDict()
    for r in recs:
        key = (r["tier"], r["platform"], r["ranks"], r["workload"],
               json.dumps(r["params"], sort_keys=True), r["strategy"])
        uniq[key] = r
    return list(uniq.values())


def family(r):
    """Table key and the row label within it."""
    p = r["params"]
    if r["workload"].startswith("density_"):
        return f"density sweep, {p['unit']} B messages", f"{int(round(p['density'] * 100))} %"
    if r["workload"].startswith("transport"):
        return f"transport k={p['k']}, t={p['unit']} B", f"l={p['nonuniformity']:.4g}"
    return r["workload"], f"{p['unit']} B"


STRATEGY_ORDER = ["native", "native_sync", "ac", "lex", "lp_xor", "lp_shift", "pex", "bex",
                  "greedy", "rs_n", "rs_n_sort", "rs_nh", "rs_nh+l1", "rs_nh+fixed", "color", "maxmin", "maxsum",
                  "unif", "bvn", "drs", "two_stage", "mesh2d", "mesh2d_pure", "grid3d",
                  "grid3d_pure", "hypercube", "hypercube_pure", "two_level", "node_aware",
                  "node_aware_multi", "auto"]
# Strategies that forward data through intermediate ranks (issue 5).
INDIRECT = {"two_stage", "mesh2d", "mesh2d_pure", "grid3d", "grid3d_pure", "hypercube",
            "hypercube_pure", "two_level", "node_aware", "node_aware_multi"}


def order_strategies(names):
    known = [s for s in STRATEGY_ORDER if s in names]
    rest = sorted(s for s in names if s not in STRATEGY_ORDER and s != "auto")
    tail = ["auto"] if "auto" in names and "auto" not in known else []
    if "auto" in known:  # auto last
        known.remove("auto")
        tail = ["auto"]
    return known + rest + tail


def timed(r):
    """A record that gave a time (not a failed point, not missing)."""
    return bool(r) and not r.get("failed") and (r.get("time_s") or 0) > 0


def fmt_ms(t):
    if t is None:
        return "–"
    ms = t * 1e3
    return f"{ms:.3g}" if ms < 100 else f"{ms:.0f}"


def tables(recs):
    groups = collections.OrderedDict()
    for r in recs:
        fam, row = family(r)
        key = (r["tier"], r["platform"], r["ranks"], fam)
        groups.setdefault(key, collections.OrderedDict()).setdefault(row, {})[r["strategy"]] = r
    return groups


def unit_of(label):
    return int(label.split()[0]) if label.endswith(" B") else None


def render_markdown(groups, svg_links):
    out = []
    for (tier, platform, ranks, fam), rows in groups.items():
        strategies = order_strategies({s for row in rows.values() for s in row})
        spread = tier == "netns"
        out.append(f"\n#### {tier} · {platform} · {ranks} ranks · {fam}\n")
        has_auto = "auto" in strategies
        head = ["param"] + strategies + ["best", "best/LB", "native/best"] + \
            (["auto chose"] if has_auto else [])
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
        for label, cells in rows.items():
            vals = []
            for s in strategies:
                r = cells.get(s)
                if r is None:
                    vals.append("–")
                    continue
                if r.get("failed"):
                    vals.append("FAILED")
                    continue
                v = fmt_ms(r["time_s"])
                if spread and r.get("spread_s"):
                    sp = r["spread_s"]
                    v += f" ({fmt_ms(sp['p25'])}–{fmt_ms(sp['p75'])})"
                vals.append(v)
            cand = [r for s, r in cells.items() if s not in ("native", "auto") and timed(r)]
            best = min(cand, key=lambda r: r["time_s"]) if cand else None
            native = cells.get("native") if timed(cells.get("native")) else None
            lb = next((r["lower_bound_s"] for r in cells.values() if r.get("lower_bound_s")), None)
            vals.append(best["strategy"] if best else "–")
            vals.append(f"{best['time_s'] / lb:.2f}" if best and lb else "–")
            vals.append(f"{native['time_s'] / best['time_s']:.2f}" if best and native else "–")
            if has_auto:
                a = cells.get("auto")
                vals.append((a.get("chosen") or "?") if a else "–")
            out.append(f"| {label} | " + " | ".join(vals) + " |")
        key = (tier, platform, ranks, fam)
        note = "Times in ms" + (", median of the repetitions (p25–p75)" if spread else
                                 " (simulated, one deterministic run)")
        out.append(f"\n{note}; LB = bytes through the busiest port / its bandwidth"
                   + ("; `auto chose`: auto's final choice after its trial, which the `auto` "
                      "column timed." if has_auto else "."))
        for link in svg_links.get(key, []):
            out.append(f"\n![{fam}]({link})")
        out.append("")
    return "\n".join(out)


def spearman(xs, ys):
    """Spearman's rank correlation (ties get their average rank); None below 3 pairs."""
    if len(xs) < 3:
        return None

    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2 + 1
            i = j + 1
        return r

    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def predicted_of(s, r, cells):
    if s == "native":
        return next((c.get("native_predicted_s") for c in cells.values()
                     if c.get("native_predicted_s") is not None), None)
    if s == "auto":
        return None
    return r.get("predicted_s")


def point_analysis(cells):
    """Issue 3's numbers for one point (its cells: strategy -> record)."""
    measured = {s: r["time_s"] for s, r in cells.items() if timed(r) and s != "auto"}
    if not measured:
        return None
    oracle = min(measured, key=measured.get)
    pred = {s: predicted_of(s, r, cells) for s, r in cells.items()}
    ranked = [s for s in measured if pred.get(s) is not None and pred[s] >= 0
              and not s.startswith("rs_nh+")]
    pairs = [(pred[s], measured[s]) for s in ranked]
    rho = spearman([p for p, _ in pairs], [m for _, m in pairs])
    a = cells.get("auto") if timed(cells.get("auto")) else None
    res = {"oracle": oracle, "oracle_s": measured[oracle], "rho": rho, "n_pred": len(pairs),
           "pred": pred, "measured": measured, "native_s": measured.get("native"),
           "rho_launches": launch_rho(cells, ranked),
           "rho_perfect": perfect_rho(cells, ranked),
           "separated": separated_pairs(cells, ranked, pred)}
    if a:
        res.update(auto_s=a["time_s"], chosen=a.get("chosen"),
                   auto_over_oracle=a["time_s"] / measured[oracle],
                   auto_over_native=(a["time_s"] / measured["native"]) if "native" in measured
                   else None, decided=a.get("auto_decided"),
                   tried=[c["strategy"] for c in a.get("auto_candidates", []) if not c["rejected"]])
    return res


def launch_medians(cells, strategies, least):
    """Every strategy's launch medians (bench.py --launches), as many for each and at least
    `least`; None for fewer than 3 strategies (no rank correlation) or launches missing."""
    meds = [cells[s].get("launch_medians_s") for s in strategies]
    if len(meds) < 3 or any(not m for m in meds) or len({len(m) for m in meds}) != 1 \
            or len(meds[0]) < least:
        return None
    return meds


def launch_rho(cells, strategies):
    """How well the measurement ranks the strategies against itself: the mean Spearman rho
    between the strategies' medians of two launches (bench.py --launches), over every pair of
    launches. (A prediction is compared with the median of all the launches, which is less
    noisy than one launch: perfect_rho says what it can reach.) None without launches."""
    meds = launch_medians(cells, strategies, 2)
    if meds is None:
        return None
    k = len(meds[0])
    rhos = [spearman([m[i] for m in meds], [m[j] for m in meds])
            for i in range(k) for j in range(i + 1, k)]
    rhos = [x for x in rhos if x is not None]
    return sum(rhos) / len(rhos) if rhos else None


def perfect_rho(cells, strategies, draws=2000, target=0.9):
    """What a prediction equal to the true times could expect against this measurement: each
    strategy's true time taken as its cell (the median of its launch medians) and its launch
    medians as that plus normal noise with their sample standard deviation; the measurement
    drawn again `draws` times (as many launches, their median), the Spearman rho of the truth
    against each draw. Returns (mean rho, share of draws with rho >= target), or None without
    two launches or more. Seeded: the same records give the same figures."""
    meds = launch_medians(cells, strategies, 2)
    if meds is None:
        return None
    truth = [statistics.median(m) for m in meds]
    sd = [statistics.stdev(m) for m in meds]
    rng = random.Random(0)
    rhos = []
    for _ in range(draws):
        drawn = [statistics.median([rng.gauss(t, d) for _ in m])
                 for t, d, m in zip(truth, sd, meds)]
        rho = spearman(truth, drawn)
        if rho is not None:
            rhos.append(rho)
    if not rhos:
        return None
    return sum(rhos) / len(rhos), sum(r >= target for r in rhos) / len(rhos)


def separated_pairs(cells, strategies, pred):
    """The pairs of strategies the measurement orders the same way in every launch (one's
    slowest launch faster than the other's fastest), and how many of them the prediction orders
    that way too: (right, separated). Pairs within the launch-to-launch spread have no measured
    order to get right. None without launches."""
    meds = {s: cells[s].get("launch_medians_s") for s in strategies}
    if len(meds) < 2 or any(not m for m in meds.values()):
        return None
    right = total = 0
    for i, a in enumerate(strategies):
        for b in strategies[i + 1:]:
            if max(meds[a]) < min(meds[b]):
                fast, slow = a, b
            elif max(meds[b]) < min(meds[a]):
                fast, slow = b, a
            else:
                continue
            total += 1
            right += pred[fast] < pred[slow]
    return right, total


def yes_no(ok):
    return "–" if ok is None else ("yes" if ok else "**no**")


def render_issue3(groups):
    analyses = [[(label, cells, point_analysis(cells)) for label, cells in rows.items()]
                 for rows in groups.values()]
    launches = any(an and an.get("rho_launches") is not None
                   for rows in analyses for _, _, an in rows)
    out = ["| point | oracle | auto chose (tried) | auto/oracle | auto/native | Spearman ρ (n) | "
           + ("ρ launch vs launch | ρ a perfect prediction expects (share ≥ 0.9) | "
              "separated pairs ordered right | " if launches else "")
           + "auto ≤ 1.05 oracle | auto ≤ 1.03 native | ρ ≥ 0.9 |",
           "|" + "---|" * (12 if launches else 9)]
    counts = collections.Counter()
    perfect_shares = []  # per point: the share of draws in which a perfect prediction meets 0.9
    details = []
    for (tier, platform, ranks, fam), rows in zip(groups.keys(), analyses):
        for label, cells, an in rows:
            if not an or "auto_s" not in an:
                continue
            c1 = an["auto_over_oracle"] <= 1.05
            c2 = an["auto_over_native"] <= 1.03 if an["auto_over_native"] is not None else None
            c3 = an["rho"] >= 0.9 if an["rho"] is not None else None
            for k, v in (("oracle", c1), ("native", c2), ("rho", c3)):
                if v is not None:
                    counts[(k, v)] += 1
            name = f"{platform} {ranks} · {fam} · {label}"
            tried = ", ".join(an["tried"])
            out.append(f"| {name} | {an['oracle']} {fmt_ms(an['oracle_s'])} | "
                       f"{an['chosen']} {fmt_ms(an['auto_s'])} ({tried}) | "
                       f"{an['auto_over_oracle']:.2f} | "
                       + (f"{an['auto_over_native']:.2f}" if an['auto_over_native'] else "–")
                       + f" | " + (f"{an['rho']:.2f} ({an['n_pred']})" if an['rho'] is not None
                                   else "–")
                       + ((" | " + (f"{an['rho_launches']:.2f}"
                                    if an["rho_launches"] is not None else "–")
                           + " | " + (f"{an['rho_perfect'][0]:.2f} "
                                      f"({100 * an['rho_perfect'][1]:.0f} %)"
                                      if an.get("rho_perfect") else "–")
                           + " | " + (f"{an['separated'][0]}/{an['separated'][1]}"
                                      if an.get("separated") else "–"))
                          if launches else "")
                       + f" | {yes_no(c1)} | {yes_no(c2)} | {yes_no(c3)} |")
            if an.get("rho_perfect"):
                perfect_shares.append(an["rho_perfect"][1])
            if an.get("separated"):
                counts["sep_right"] += an["separated"][0]
                counts["sep_total"] += an["separated"][1]
            details.append((name, cells, an))
    out.append("")
    out.append("Times in ms. Targets met on " + ", ".join(
        f"{counts[(k, True)]} of {counts[(k, True)] + counts[(k, False)]} points ({what})"
        for k, what in (("oracle", "auto within 5 % of the oracle"),
                        ("native", "auto at most 3 % slower than native"),
                        ("rho", "Spearman ≥ 0.9"))) + "."
               + (f" Over all points the prediction orders {counts['sep_right']} of the "
                  f"{counts['sep_total']} strategy pairs that every launch separates the way "
                  "the launches do." if counts["sep_total"] else "")
               + (f" A prediction equal to the true times would meet ρ ≥ 0.9 on "
                  f"{sum(perfect_shares):.1f} of these {len(perfect_shares)} points on "
                  f"average, and on all of them with probability {math.prod(perfect_shares):.2g}."
                  if perfect_shares else ""))
    return "\n".join(out), details


def render_predictions(details):
    out = []
    for name, cells, an in details:
        out.append(f"#### {name}\n")
        lb = next((r.get("lower_bound_s") for r in cells.values() if r.get("lower_bound_s")), None)
        mlb = next((r.get("model_lower_bound_s") for r in cells.values()
                    if r.get("model_lower_bound_s") is not None), None)
        out.append("| strategy | predicted | measured | predicted rank | measured rank |")
        out.append("|---|---|---|---|---|")
        strategies = [s for s in order_strategies(set(cells)) if s != "auto"]
        meas = an["measured"]
        pred = {s: an["pred"].get(s) for s in strategies}
        prank = {s: i + 1 for i, s in enumerate(sorted(
            [s for s in strategies if pred[s] is not None and pred[s] >= 0],
            key=lambda s: pred[s]))}
        mrank = {s: i + 1 for i, s in enumerate(sorted(meas, key=meas.get))}
        for s in strategies:
            out.append(f"| {s} | {fmt_ms(pred[s]) if pred[s] is not None and pred[s] >= 0 else '–'}"
                       f" | {fmt_ms(meas.get(s))} | {prank.get(s, '–')} | {mrank.get(s, '–')} |")
        out.append(f"\nms; lower bound: platform {fmt_ms(lb)}, cost model {fmt_ms(mlb)}; oracle "
                   f"{an['oracle']}; auto chose {an.get('chosen')} ({fmt_ms(an.get('auto_s'))}); "
                   "Spearman ρ = " + (f"{an['rho']:.2f}" if an['rho'] is not None else "–") + "\n")
    return "\n".join(out)


def render_issue5(groups):
    out = ["| point | native | best direct | best indirect | native/best indirect | "
           "best indirect/best direct | auto chose |", "|" + "---|" * 7]
    n = 0
    for (tier, platform, ranks, fam), rows in groups.items():
        if ranks < 256 and not platform.startswith("two_clusters"):
            continue
        for label, cells in rows.items():
            meas = {s: r["time_s"] for s, r in cells.items() if timed(r)}
            ind = {s: t for s, t in meas.items() if s in INDIRECT}
            dire = {s: t for s, t in meas.items() if s not in INDIRECT and s not in
                    ("native", "auto")}
            if not ind:
                continue
            bi = min(ind, key=ind.get)
            bd = min(dire, key=dire.get) if dire else None
            nat = meas.get("native")
            a = cells.get("auto") if timed(cells.get("auto")) else None
            out.append(f"| {platform} {ranks} · {fam} · {label} | {fmt_ms(nat)} | "
                       + (f"{bd} {fmt_ms(dire[bd])}" if bd else "–")
                       + f" | {bi} {fmt_ms(ind[bi])} | "
                       + (f"{nat / ind[bi]:.2f}" if nat else "–") + " | "
                       + (f"{ind[bi] / dire[bd]:.2f}" if bd else "–") + " | "
                       + ((f"{a.get('chosen')} {fmt_ms(a['time_s'])}") if a else "–") + " |")
            n += 1
    out.append("\nTimes in ms; indirect = " + ", ".join(sorted(INDIRECT)) + ".")
    return "\n".join(out) if n else ""


BURST_LEVELS = ["native", "off", "local", "collective"]


def render_bursts(recs):
    """Issue 6: a row per (app, platform, ranks) with every level's time per exchange."""
    points = collections.OrderedDict()
    for r in recs:
        key = (r["workload"], r["platform"], r["ranks"], r["params"].get("vertices"))
        points.setdefault(key, {})[r["strategy"]] = r
    out = ["| app | platform | ranks | vertices | messages (max peers) | LB | native | off | local | "
           "collective | native/local | off/native | native/collective | local/LB | "
           "collective chose | same results |", "|" + "---|" * 16]
    ratio = lambda x, y: f"{x / y:.2f}" if x and y else "–"
    # Exchanges take microseconds here: four digits, so the levels' differences show.
    ms = lambda t: f"{t * 1e3:.4g}" if t is not None else "–"
    for (app, platform, ranks, vertices), cells in points.items():
        t = {lvl: cells[lvl]["time_s"] if lvl in cells else None for lvl in BURST_LEVELS}
        any_r = next(iter(cells.values()))
        lb = any_r.get("lower_bound_s")
        keys = {(r.get("checksum"), r.get("sum"), r.get("messages_per_iter"),
                 r.get("bytes_per_iter")) for r in cells.values()}
        same = "yes" if len(keys) == 1 else "**no**"
        coll = cells.get("collective")
        out.append(f"| {app} | {platform} | {ranks} | {vertices} | "
                   f"{any_r.get('messages_per_iter')} ({any_r.get('max_peers')}) | {ms(lb)} | "
                   + " | ".join(ms(t[lvl]) for lvl in BURST_LEVELS) + " | "
                   f"{ratio(t['native'], t['local'])} | {ratio(t['off'], t['native'])} | "
                   f"{ratio(t['native'], t['collective'])} | {ratio(t['local'], lb)} | "
                   f"{(coll.get('chosen') or '?') if coll else '–'} | {same} |")
    out.append("\nTimes per exchange in ms (simulated; median over the exchanges of one run); "
               "messages: per exchange, all ranks; LB = the most bytes one rank sends per "
               "exchange / its link's bandwidth; collective chose: auto's choice for the exchange's "
               "pattern after its trial; same results: checksum, sum and traffic lines "
               "identical across the levels run (– : not run).")
    return "\n".join(out)


# Figures (matplotlib, Agg backend): few series, direct labels, native and the lower bound as
# reference lines; read at a glance, every number also in the tables.
FIGURE_TOP = 6  # strategies shown per panel besides native and auto: the fastest ones
COLOURS = {"native": "#7f7f7f", "auto": "#e6550d", "direct": "#3182bd", "indirect": "#31a354"}
FAMILY_LABELS = {"native": "native (MPI library)", "auto": "auto (default setting)",
                 "direct": "direct schedule", "indirect": "indirect route"}


def pyplot():
    """matplotlib's pyplot on the Agg backend, or None (figures skipped) without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        print("report.py: no matplotlib (Debian python3-matplotlib): figures skipped",
              file=sys.stderr)
        return None
    matplotlib.use("Agg")
    matplotlib.rcParams.update({"svg.fonttype": "none", "font.size": 9,
                                "axes.spines.top": False, "axes.spines.right": False})
    import matplotlib.pyplot as plt
    return plt


def family_of(s):
    if s in ("native", "auto"):
        return s
    return "indirect" if s in INDIRECT else "direct"


def shown_strategies(cells, top=FIGURE_TOP):
    """The strategies one panel shows: the `top` fastest measured ones, then auto and native;
    failed points are kept (they must show). Fastest first."""
    ok = {s: r for s, r in cells.items() if r.get("time_s") and not r.get("failed")}
    ranked = sorted((s for s in ok if s not in ("native", "auto")), key=lambda s: ok[s]["time_s"])
    keep = ranked[:top] + [s for s in ("auto", "native") if s in ok]
    keep.sort(key=lambda s: ok[s]["time_s"])
    failed = [s for s, r in cells.items() if r.get("failed")]
    return keep, failed, len(ranked) - len(ranked[:top])


def bar_panel(ax, label, cells):
    """One horizontal bar per strategy, fastest on top: speedup over native (native = 1) where
    native ran, else time in ms; the lower bound as a dashed line."""
    keep, failed, hidden = shown_strategies(cells)
    native = cells.get("native")
    native_t = native["time_s"] if native and not native.get("failed") else None
    lb = next((r["lower_bound_s"] for r in cells.values() if r.get("lower_bound_s")), None)
    if native_t:
        value = {s: native_t / cells[s]["time_s"] for s in keep}
        bound = native_t / lb if lb else None
        fmt = lambda v: f"{v:.2f}×"
    else:
        value = {s: cells[s]["time_s"] * 1e3 for s in keep}
        bound = lb * 1e3 if lb else None
        fmt = lambda v: f"{v:.3g} ms"
    names = keep + failed
    y = list(range(len(names)))[::-1]  # first name on top
    vals = [value.get(s, 0) for s in names]
    colours = [COLOURS[family_of(s)] for s in names]
    ax.barh(y, vals, color=colours, height=0.7)
    ax.set_yticks(y)
    ax.set_yticklabels(names)
    right = max(vals + [1.0 if native_t else 0])
    # A bound far beyond the bars would squeeze them: then it is written, not drawn.
    draw_bound = bound is not None and bound <= 2.5 * right
    if draw_bound:
        right = max(right, bound)
    for yy, s, v in zip(y, names, vals):
        text = "FAILED" if s in failed else fmt(v)
        ax.text(v + right * 0.01, yy, text, va="center", fontsize=8,
                color="#b30000" if s in failed else "black")
    if native_t:
        ax.axvline(1.0, color="black", linewidth=1)
    if draw_bound:
        ax.axvline(bound, color="#b30000", linestyle="--", linewidth=1)
        ax.text(bound, y[0] + 0.6, f" lower bound {fmt(bound)}", color="#b30000", fontsize=8,
                va="bottom", ha="right" if bound > 0.6 * right else "left")
    elif bound is not None:
        ax.text(0.99, 1.0, f"lower bound {fmt(bound)} (off the scale)", color="#b30000",
                fontsize=8, transform=ax.transAxes, ha="right", va="bottom")
    ax.set_xlim(0, right * 1.18)
    ax.set_ylim(-0.6, len(names) - 0.2)
    title = label + (f" · native {fmt_ms(native_t)} ms" if native_t else " · no native run")
    if hidden:
        title += f" · {hidden} slower {'strategy' if hidden == 1 else 'strategies'} in the table"
    ax.set_title(title, fontsize=9, loc="left")
    ax.set_xlabel("speedup over native (native time / strategy time)" if native_t
                  else "time per call (ms)")
    return {family_of(s) for s in names}


def label_value(label):
    """A row label's number ("4096 B", "25 %", "l=0.125"), for ordering the panels."""
    m = re.search(r"[-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?", label)
    return float(m.group()) if m else math.inf


def bar_figure(plt, title, rows, path):
    """Per workload: one panel per row (message size, density, ...)."""
    panels = sorted(((label, cells) for label, cells in rows.items() if cells),
                    key=lambda p: label_value(p[0]))
    if not panels:
        return False
    heights = [0.32 * (len(shown_strategies(c)[0]) + len(shown_strategies(c)[1])) + 0.9
               for _, c in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(7.5, sum(heights) + 0.7),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    families = set()
    for ax, (label, cells) in zip(axes[:, 0], panels):
        families |= bar_panel(ax, label, cells)
    # Title, then the colour key on its own line, then the panels (offsets in inches).
    inch = 1 / fig.get_figheight()
    fig.suptitle(title, x=0.01, y=1 - 0.08 * inch, ha="left", va="top", fontsize=10,
                 fontweight="bold")
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLOURS[f]) for f in COLOURS if f in families]
    fig.legend(handles, [FAMILY_LABELS[f] for f in COLOURS if f in families], loc="upper left",
               ncol=len(handles), fontsize=8, frameon=False,
               bbox_to_anchor=(0.0, 1 - 0.3 * inch))
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 * inch))
    fig.savefig(path)
    plt.close(fig)
    return True


def spread_labels(ys, gap):
    """Label positions for sorted values ys, at least `gap` apart, each run of crowded labels
    centred on the mean of its values."""
    clusters = [[y] for y in ys]  # each placed around its mean, `gap` apart
    bottom = lambda c: sum(c) / len(c) - gap * (len(c) - 1) / 2
    merged = True
    while merged:
        merged = False
        for i in range(len(clusters) - 1):
            if bottom(clusters[i + 1]) < bottom(clusters[i]) + gap * len(clusters[i]):
                clusters[i:i + 2] = [clusters[i] + clusters[i + 1]]
                merged = True
                break
    return [bottom(c) + gap * k for c in clusters for k in range(len(c))]


def sweep_figure(plt, title, rows, path, top=4):
    """Where a workload sweeps >= 4 message units: speedup over native against the unit (native
    = 1), for auto and the `top` strategies fastest over the sweep (geometric mean), and the
    most the lower bound allows (native / LB). Lines within 3 % of each other share one label; each label
    sits at its line's right end."""
    units = sorted((unit_of(lbl), lbl) for lbl in rows)
    if len(units) < 4:
        return False
    native = {u: rows[lbl]["native"]["time_s"] for u, lbl in units
              if timed(rows[lbl].get("native"))}
    if len(native) < 4:
        return False

    def speedups(s):
        return [(u, native[u] / rows[lbl][s]["time_s"]) for u, lbl in units
                if u in native and timed(rows[lbl].get(s))]

    def score(s):
        v = [x for _, x in speedups(s)]
        return -math.exp(sum(map(math.log, v)) / len(v))

    full = [s for s in {s for cells in rows.values() for s in cells}
            if s != "native" and len(speedups(s)) == len(native)]
    ranked = (["auto"] if "auto" in full else []) + sorted((s for s in full if s != "auto"),
                                                          key=score)
    series = []  # [names sharing the line, points]
    for s in ranked:
        pts = speedups(s)
        twin = next((g for g in series if all(abs(a[1] - b[1]) <= 0.03 * b[1]
                                              for a, b in zip(pts, g[1]))), None)
        if twin:
            twin[0].append(s)
        elif len(series) < top + ("auto" in full):
            series.append([[s], pts])
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    palette = ["#3182bd", "#31a354", "#756bb1", "#8c6d31", "#17becf", "#d6616b"]
    ends = []
    ax.axhline(1.0, color=COLOURS["native"], linewidth=1.2)
    ends.append((1.0, "native", COLOURS["native"]))
    lbs = [(u, native[u] / next((r["lower_bound_s"] for r in rows[lbl].values()
                                 if r.get("lower_bound_s")), math.inf))
           for u, lbl in units if u in native]
    lbs = [(u, b) for u, b in lbs if b > 0]
    if lbs:
        ax.plot([u for u, _ in lbs], [b for _, b in lbs], "--", color="#b30000", linewidth=1.2)
        ends.append((lbs[-1][1], "lower bound (best possible)", "#b30000"))
    i = 0
    for names, pts in series:
        colour = COLOURS["auto"] if names[0] == "auto" else palette[i % len(palette)]
        i += names[0] != "auto"
        ax.plot([u for u, _ in pts], [x for _, x in pts], "-", color=colour, marker="o",
                markersize=3.5, linewidth=1.8 if names[0] == "auto" else 1.4)
        ends.append((pts[-1][1], ", ".join(names[:3]) + (" ..." if len(names) > 3 else ""),
                     colour))
    ax.set_xscale("log", base=2)
    ax.set_xticks([u for u, _ in units])
    ax.set_xticklabels([f"{u} B" if u < 1024 else f"{u // 1024} KiB" for u, _ in units])
    ax.minorticks_off()
    ax.set_xlabel("message unit")
    ax.set_ylabel("speedup over native (native time / strategy time)")
    ax.set_ylim(bottom=0)
    ax.grid(True, axis="y", color="#e0e0e0", linewidth=0.6)
    ax.set_xlim(units[0][0] / 1.3, units[-1][0] * 1.3)
    # Labels right of the plot at their lines' last values, pushed apart so none overlap.
    lo, hi = ax.get_ylim()
    ends.sort()
    for (_, name, colour), yl in zip(ends, spread_labels([y for y, _, _ in ends],
                                                         (hi - lo) * 0.055)):
        ax.text(1.01, yl, name, transform=ax.get_yaxis_transform(), color=colour,
                fontsize=8, va="center", clip_on=False)
    ax.set_title(title + " · message-size sweep", loc="left", fontsize=10, fontweight="bold")
    fig.tight_layout()
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)
    return True


def figure_name(key):
    tier, platform, ranks, fam = key
    name = f"{tier}-{platform}-{ranks}-{fam}".replace(" ", "_").replace(",", "")
    return "".join(ch for ch in name if ch.isalnum() or ch in "-_.=")


def write_figures(groups, fig_dir, md_dir, ext="svg"):
    """Every group's bar chart (and sweep where it has one); returns {key: [relative paths]}."""
    plt = pyplot()
    links = {}
    if plt is None:
        return links
    os.makedirs(fig_dir, exist_ok=True)
    for key, rows in groups.items():
        tier, platform, ranks, fam = key
        title = f"{tier} · {platform} · {ranks} ranks · {fam}"
        name = figure_name(key)
        made = []
        path = os.path.join(fig_dir, f"{name}.{ext}")
        if bar_figure(plt, title, rows, path):
            made.append(path)
        if None not in [unit_of(lbl) for lbl in rows]:
            path = os.path.join(fig_dir, f"{name}-sweep.{ext}")
            if sweep_figure(plt, title, rows, path):
                made.append(path)
        if made:
            links[key] = [os.path.relpath(p, md_dir) for p in made]
    return links


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+")
    ap.add_argument("--md", default=None, help="write Markdown here (default: stdout)")
    ap.add_argument("--svg-dir", default=None, help="write the figures here")
    ap.add_argument("--format", default="svg", choices=["svg", "png", "pdf"],
                    help="figure file format (default svg)")
    ap.add_argument("--predictions", default=None,
                    help="write every point's predicted-against-measured table here")
    a = ap.parse_args()
    recs = load(a.results)
    burst_recs = [r for r in recs if r.get("bursts")]
    groups = tables([r for r in recs if not r.get("bursts")])
    svg_dir = a.svg_dir or (os.path.join(os.path.dirname(os.path.abspath(a.md)), "bench-plots")
                            if a.md else None)
    links = {}
    if svg_dir:
        base = os.path.dirname(os.path.abspath(a.md)) if a.md else os.getcwd()
        links = write_figures(groups, svg_dir, base, a.format)
    md = render_markdown(groups, links)
    issue3, details = render_issue3(groups)
    if details:
        md += "\n#### Cost model and auto per point (issue 3)\n\n" + issue3 + "\n"
    issue5 = render_issue5(groups)
    if issue5:
        md += "\n#### Indirect routes per point (issue 5)\n\n" + issue5 + "\n"
    if burst_recs:
        md += "\n#### Isend/Irecv bursts per point (issue 6)\n\n" + render_bursts(burst_recs) + "\n"
    if a.predictions:
        with open(a.predictions, "w") as f:
            tiers = sorted({r["tier"] for r in recs})
            files = {"smpi": "config/machines/smpi_*.toml",
                     "netns": "config/machines/netns100*.toml"}
            f.write(f"# Predicted against measured time per strategy ({', '.join(tiers)})\n\n"
                    "Generated by apps/bench/report.py --predictions; predictions by the cost "
                    "model with the platform's machine file ("
                    + ", ".join(files.get(t, "the records' machine_file") for t in tiers)
                    + ").\n\n" + render_predictions(details))
    if a.md:
        with open(a.md, "w") as f:
            f.write(md + "\n")
    else:
        sys.stdout.write(md + "\n")


if __name__ == "__main__":
    main()
