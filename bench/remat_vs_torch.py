#!/usr/bin/env python3
"""Issue #42's comparison with torch.compile at equal measured peak: for
each budget of --budgets (percent of the no-recompute N = 1 peak, as in
bench/remat_budget.py), our choice under that byte budget and its measured
peak P; then PyTorch's own accumulation loop with the model under
torch.compile and torch._functorch.config.activation_memory_budget set,
searched for the fastest point whose measured peak is at most P, and the
ratio of throughputs.

The search: for each N of --torch-ns (torch's micro-batches, the same
effective batch), the largest fraction of --fractions, then the smallest,
then the others in decreasing order, until one whose measured peak is at
most the smallest P (a smaller fraction only recomputes more), or the
smallest fraction measures over the largest P (the fractions between are
not tried: a smaller fraction does not always give a smaller peak, so
every point tried is reported with its peak). For each budget,
torch's point is the fastest point tried whose peak is at most its P,
with ours as the clock (below).

Fairness: each torch point is compiled and measured in its own process
(bench/remat_budget.py's worker: a fresh model, optimizer and Inductor
compile, peaks by the same heap counter, libGAHeapCount.so), and the same
process loads our chosen steps (compiled once, from GA_MLIR_CACHE_DIR
after the first) and times them interleaved with the torch point: round
r calls each step --warmup + 1 times and keeps the last call's time. Our
step is the same library in every process, so it is the clock: a torch
point's speed is the median over its rounds of torch's time over ours in
that round (a load that comes and goes weighs on both alike; times from
different processes are never compared), torch's point for a budget is
the fitting point of least such ratio, and the ratio is the speed-up
(with its quartiles over the rounds). One thread for both (OMP, BLAS,
torch.set_num_threads, Inductor's compile threads).

usage: .venv/bin/python bench/remat_vs_torch.py [--quick] [--model gpt2]
           [--budgets 50,25] [--torch-ns 1,2,4,8]
           [--fractions 1.0,0.5,0.2,0.0] [--reps 15] [--warmup 1]
           [--base-peak BYTES] [--json out.json] [--markdown out.md]
       .venv/bin/python bench/remat_vs_torch.py --self-test
       .venv/bin/python bench/remat_vs_torch.py --from-json out.json

--base-peak: the no-recompute N = 1 predicted peak, when known (skips its
compile). Each torch point is an Inductor compile (a minute or more on a
loaded machine); a --quick run of GPT-2 with the default grid compiles
4-16 of them.
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import remat_budget as rb  # noqa: E402

GOAL = rb.TORCH_SPEEDUP_GOAL


def worker(a):
    """Our steps under the budgets a.ours (bytes, a JSON list), then the
    torch points of a.fractions at N = a.n in turn, each timed right
    after its compile interleaved with ours, until one measures at most
    the smallest of our peaks."""
    import torch
    from ga_mlir import steplib
    torch.set_num_threads(1)
    counter = steplib.HeapCounter()
    assert counter.active, "libGAHeapCount.so is not preloaded"
    ours = []
    for budget in json.loads(a.ours):
        row, call = rb._measure_ours(a, {"max_memory": budget}, counter)
        if call is None:
            raise RuntimeError(f"budget {budget}: {row['error']}")
        ours.append((row, call))
    smallest = min(row["measured"] for row, _ in ours)
    largest = max(row["measured"] for row, _ in ours)
    points = []
    for fraction in search_order(a.fractions):
        point, step = rb.torch_point(a.model, a.size, a.n, fraction, counter)
        times = {"torch": []}
        times.update({str(row["max_memory"]): [] for row, _ in ours})
        for _ in range(a.reps):
            times["torch"] += steplib.time_calls(step, a.warmup, 1)
            for row, call in ours:
                times[str(row["max_memory"])] += steplib.time_calls(
                    call, a.warmup, 1)
        point["times"] = times
        points.append(point)
        print("row " + json.dumps(point), file=sys.stderr, flush=True)
        # Fits every budget: a smaller fraction would only recompute more.
        # The smallest fraction over the largest peak: the fractions
        # between are not tried at this N.
        if point["measured"] <= smallest or (
                fraction == min(search_order(a.fractions)) and
                point["measured"] > largest):
            break
    return {"ours": [row for row, _ in ours], "points": points}


def search_order(fractions):
    """The fractions of `fractions` (text) as the search tries them: the
    largest (least recomputation), then the smallest (most), then the
    others from the largest down."""
    f = sorted({float(x) for x in fractions.split(",")}, reverse=True)
    return f[:1] + f[-1:] + f[1:-1] if len(f) > 1 else f


def _ms(times):
    return statistics.median(times) * 1e3


def ratios(point, key):
    """Torch's time over ours (budget `key`) round by round in `point`'s
    process: a load that comes and goes weighs on both calls of a round
    alike."""
    return [t / o for t, o in zip(point["times"]["torch"],
                                  point["times"][key])]


def compare(ours, points, goal_budgets):
    """Per budget: our row, torch's fastest point at or below its measured
    peak, and the speed-up. Ours is the same step in every point's
    process, so it is the clock: torch's fastest point is the one of
    least median ratio of its time over ours in the same rounds (times
    from different processes are not compared), and that median is the
    speed-up; the ratio's quartiles over the rounds come with it."""
    rows = []
    for o in ours:
        key = str(o["max_memory"])
        fit = [p for p in points if p["measured"] <= o["measured"]]
        best = min(fit, key=lambda p: statistics.median(ratios(p, key)),
                   default=None)
        row = {"percent": o["percent"], "budget": o["max_memory"],
               "n": o["n"], "recompute": o["recompute"],
               "measured": o["measured"], "predicted": o["predicted"],
               "torch": None}
        if best:
            r = ratios(best, key)
            row.update(ms=_ms(best["times"][key]), torch={
                "n": best["n"], "fraction": best["fraction"],
                "measured": best["measured"],
                "ms": _ms(best["times"]["torch"])},
                speedup=statistics.median(r),
                quartiles=(statistics.quantiles(r, n=4)[::2]
                           if len(r) > 1 else [r[0], r[0]]))
        row["goal"] = (None if o["percent"] not in goal_budgets else
                       bool(best) and row["speedup"] >= GOAL)
        rows.append(row)
    return rows


def self_test():
    """The search order and the comparison on synthetic points, without a
    model: torch's point is the one at or below our peak of least ratio
    to ours in its own rounds (not of least time across processes), never
    one above the peak, and the goal fails below 1.1x."""
    assert search_order("1.0,0.5,0.2,0.0") == [1.0, 0.0, 0.5, 0.2]
    assert search_order("0.3") == [0.3]

    def point(n, fraction, measured, torch_ms, ours_ms):
        return {"n": n, "fraction": fraction, "measured": measured,
                "times": {"torch": [torch_ms / 1e3],
                          "500": [ours_ms[0] / 1e3],
                          "250": [ours_ms[1] / 1e3]}}
    ours = [{"percent": 50, "max_memory": 500, "n": 4, "recompute": "none",
             "measured": 480, "predicted": 480},
            {"percent": 25, "max_memory": 250, "n": 8,
             "recompute": "products", "measured": 240, "predicted": 240}]
    # N = 1 has the least ratio but is over both peaks. N = 8 at 1.0 ran
    # faster than N = 4 at 1.0 (11 against 12 ms) in a quieter process:
    # against ours in its own rounds it is slower (2.2x against 1.2x).
    # N = 8 at 0.0 alone fits 240, at ours' time (1.0x).
    points = [point(1, 1.0, 900, 5.0, (5.0, 5.0)),
              point(4, 1.0, 470, 12.0, (10.0, 10.0)),
              point(8, 1.0, 260, 11.0, (5.0, 5.0)),
              point(8, 0.0, 230, 20.0, (9.0, 20.0))]
    rows = compare(ours, points, (50, 25))
    picked = [(r["torch"]["n"], r["torch"]["fraction"]) for r in rows]
    assert picked == [(4, 1.0), (8, 0.0)], picked
    assert [round(r["speedup"], 3) for r in rows] == [1.2, 1.0], rows
    assert [r["goal"] for r in rows] == [True, False], rows
    print(json.dumps({"picked": picked,
                      "speedup": [round(r["speedup"], 3) for r in rows],
                      "goal": [r["goal"] for r in rows]}))
    print("self-test: OK")


def markdown(result, header):
    mb = rb._mb
    lines = [header, "",
             "| budget | bytes | chosen | measured peak P | ms/step | "
             "torch.compile at <= P | its peak | torch ms/step | speed-up "
             "(quartiles) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in result["compare"]:
        t = r["torch"]
        lines.append(
            f"| {r['percent']} % | {r['budget']:,} | N = {r['n']}, "
            f"{r['recompute']} | {r['measured']:,} | " +
            (f"{r['ms']:.2f} | N = {t['n']}, budget {t['fraction']} | "
             f"{t['measured']:,} | {t['ms']:.2f} | {r['speedup']:.2f}x "
             f"({r['quartiles'][0]:.2f}-{r['quartiles'][1]:.2f}) |"
             if t else "- | none at or below P | | | |"))
    lines += ["", "Every torch.compile point tried (measured peak, "
              "ms/step; ours in the same rounds):", "",
              "| N | activation_memory_budget | measured | MiB | ms/step "
              "| ours by budget: ms/step (torch / ours) | compile s |",
              "|---|---|---|---|---|---|---|"]
    for p in result["points"]:
        if "error" in p:
            lines.append(f"| {p['n']} | error: {p['error']} ||||||")
            continue
        ours = ", ".join(f"{k}: {_ms(v):.2f} "
                         f"({statistics.median(ratios(p, k)):.2f}x)"
                         for k, v in p["times"].items() if k != "torch")
        lines.append(f"| {p['n']} | {p['fraction']} | {p['measured']:,} | "
                     f"{mb(p['measured'])} | {_ms(p['times']['torch']):.2f}"
                     f" | {ours} | {p['setup']:.0f} |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--self-test", action="store_true")
    p.add_argument("--from-json", default=None,
                   help="the tables of a saved --json run, compared again")
    p.add_argument("--model", default="gpt2")
    p.add_argument("--budgets", default="50,25")
    p.add_argument("--torch-ns", default="1,2,4,8")
    p.add_argument("--fractions", default="1.0,0.5,0.2,0.0")
    p.add_argument("--options", default="share_buffers=true")
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--base-peak", type=int, default=None)
    p.add_argument("--json", default=None)
    p.add_argument("--markdown", default=None)
    # Worker flags.
    p.add_argument("--worker", default=None, choices=["search"])
    p.add_argument("--size", default="full", choices=sorted(rb.SIZES))
    p.add_argument("--n", type=int, default=1)
    p.add_argument("--ours", default="[]")
    a = p.parse_args()
    if a.worker:
        print(json.dumps(worker(a)))
        return
    if a.self_test:
        self_test()
        return
    if a.from_json:
        with open(a.from_json) as f:
            run = json.load(f)
        r = run["result"]
        r["compare"] = compare(r["ours"], [q for q in r["points"]
                                           if "times" in q],
                               rb.TORCH_GOAL_BUDGETS)
        print(markdown(r, run["header"]))
        return
    if a.quick:
        a.size = "quick"
    percents = [int(b) for b in a.budgets.split(",")]
    run = rb.Run(f"remat_vs_torch {'--quick ' if a.quick else ''}{a.model} ")
    print(run.header, flush=True)
    log = run.log

    base = a.base_peak
    if base is None:
        res = rb.run_worker(worker="ours", model=a.model, size=a.size,
                            reps=1, warmup=0, options=a.options,
                            configs=json.dumps([{"n": 1,
                                                 "recompute": "none"}]))
        base = res["rows"][0]["predicted"]
    budgets = rb.budgets_for(base, percents)
    log(f"base peak {base} B; budgets " +
        ", ".join(f"{q} %: {b} B" for q, b in budgets))
    ours, points = None, []
    for n in (int(n) for n in a.torch_ns.split(",")):
        res = rb.run_worker(script=__file__, worker="search", model=a.model,
                            size=a.size, n=n, fractions=a.fractions,
                            ours=json.dumps([b for _, b in budgets]),
                            reps=a.reps, warmup=a.warmup,
                            options=a.options)
        if "error" in res:
            points.append({"n": n, "error": res["error"]})
            log(f"torch N = {n}: {res['error']}")
            continue
        ours = ours or [dict(r, percent=q) for (q, _), r in
                        zip(budgets, res["ours"])]
        for point in res["points"]:
            points.append(point)
            log(f"torch N = {n} budget {point['fraction']}: measured "
                f"{point['measured']} B, {_ms(point['times']['torch']):.2f}"
                f" ms (compiled in {point['setup']:.0f} s)")
    if ours is None:
        raise RuntimeError("no worker ran")
    result = {"model": a.model, "size": rb.SIZES[a.size], "base": base,
              "ours": ours, "points": points,
              "compare": compare(ours, [q for q in points if "times" in q],
                                 rb.TORCH_GOAL_BUDGETS)}
    run.finish(a, "result", result, markdown, "rounds")


if __name__ == "__main__":
    main()
