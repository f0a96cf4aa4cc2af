# ===- budget_sweep.py - one byte budget on the GPU (issue #42) ------------===#
#
# The kit's budget sweep: issue #42's benchmark (bench/remat_budget.py) on the
# GPU. Built here (no GPU): GPT-2 and Llama at the benchmark's sizes (4
# layers, d 256, T 256, vocabulary 512, B 16; kit_models' GPT2 and Llama
# classes, bf16 autocast) compiled for target="cuda"
#   - at every (N, recompute set) of the sweep, and
#   - under max_memory= at 100, 75, 50, 35 and 25 % of the N = 1 `none`
#     step's device peak (step.memory_report()["total_peak"]): the budget
#     chooses N and the set,
# each saved with its memory report. Run there (run_kit.py; alone with
# --budget-only): each step alone against PyTorch's own step (the zoo's
# rule) and bitwise against the `none` step of the same N (recomputation is
# exact), its device peak measured as the kit measures it (torch's allocator
# peak + the step's pool peak + the cuBLASLt workspace: measure.py), the
# steps timed in interleaved rounds, then PyTorch's accumulation loop under
# torch.compile with activation_memory_budget, whose peak is
# torch.cuda.max_memory_allocated; the goals are checked by
# remat_budget.goal_checks, the CPU benchmark's own rule (the kit carries
# remat_budget.py).
#
# ===----------------------------------------------------------------------===#

import gzip
import hashlib
import json
import os
import shutil
import statistics
import tempfile
import time

# The models of bench/remat_budget.py, as the kit's classes (torch only: the
# GPU machine has no transformers), and their sizes: "full" is the
# benchmark's (issue #42's), "tiny" the suite's test of the kit.
MODELS = {"gpt2": "gpt2-124m", "llama": "llama-1b"}
SIZES = {
    "full": dict(layers=4, d=256, heads=4, t=256, vocab=512, batch=16),
    "tiny": dict(layers=1, d=32, heads=2, t=16, vocab=64, batch=4),
}
PERCENTAGES = (100, 75, 50, 35, 25)
SWEEP_NS = (1, 2, 4, 8, 16)
SWEEP_SETS = ("none", "pointwise", "attention", "layers")
TORCH_FRACTIONS = (1.0, 0.5, 0.0)


def make(name, size, device="cpu"):
    """(model, loss_fn, optimizer, batch) of budget model `name` at `size`
    (a SIZES entry), from the kit's seed: the whole batch of B sequences
    whatever N (the step splits it). Llama's as the benchmark's: feed-forward
    width 2d, half as many key-value heads."""
    import kit_models
    config = dict(vocab=size["vocab"], d=size["d"], layers=size["layers"],
                  heads=size["heads"], context=size["t"])
    if name == "llama":
        config.update(kv_heads=size["heads"] // 2, ffn=2 * size["d"])
    model, loss_fn, batch = kit_models.make(MODELS[name], seed=0,
                                            device=device, n=1,
                                            config=config,
                                            micro_batch=size["batch"])
    return model, loss_fn, kit_models.optimizer_for(model), batch


# ===------------------------------------------------------------------===#
# Build (here)
# ===------------------------------------------------------------------===#

def build(kit, names, size_name, ns, sets, percentages, log, extra=None):
    """Compiles and saves every budget model's sweep and budget steps under
    kit/budget/<model>/; returns the manifest entry {model: {...}}."""
    size = SIZES[size_name]
    entries = {}
    for name in names:
        if name not in MODELS:
            raise SystemExit(f"build_kit: unknown budget model {name!r} "
                             f"(one of {', '.join(MODELS)})")
        out = os.path.join(kit, "budget", name)
        points = [(n, s) for n in ns for s in sets]
        if (1, "none") not in points:  # the base the budgets scale
            points.insert(0, (1, "none"))
        sweep = [_compile(out, name, size, f"n{n}-{s}", log, extra,
                          micro_batches=n, recompute=s) for n, s in points]
        base = next(r for r in sweep if r["label"] == "n1-none")
        if "predicted" not in base:
            raise SystemExit(f"build_kit: {name}: the N = 1 step failed: "
                             f"{base['error']}")
        budgets = []
        for p in percentages:
            budget = base["predicted"] * p // 100
            row = _compile(out, name, size, f"budget{p}", log, extra,
                           max_memory=budget)
            budgets.append(dict(row, percent=p, budget=budget))
        entries[name] = {"size": size, "sets": list(sets), "base": base,
                         "sweep": sweep, "budgets": budgets}
    return entries


def _compile(out, name, size, label, log, extra, **options):
    """One step of `name` compiled for the GPU with `options` and saved as
    out/label (the library gzip-compressed: the fatbins of sm_80 and sm_90
    shrink about 5x, which keeps a full sweep within the kit's size) with its
    memory report: its row (n, recompute, predicted, the planner's figure),
    or {label, error, code} when refused. A library identical to one saved
    before for this model is not saved again: the row names it (`same_as`)."""
    from ga_mlir.torch import CompileError, compile_train_step
    model, loss_fn, opt, batch = make(name, size)
    t0 = time.perf_counter()
    try:
        step = compile_train_step(model, loss_fn, opt, batch, target="cuda",
                                  accumulator_type="f32",
                                  **dict(extra or {}, **options))
    except CompileError as error:
        # The compiler's own words (a budget names the smallest peak).
        diagnostic = next((d for d in error.diagnostics
                           if d.code == error.code), None)
        reason = (diagnostic.message if diagnostic else
                  str(error).strip().splitlines()[0]).strip()[:400]
        log(f"budget {name} {label}: refused ({error.code}): {reason}")
        return {"label": label, "error": reason, "code": error.code}
    d = os.path.join(out, label)
    step.save(d)
    report = step.memory_report()
    with open(os.path.join(d, "memory_report.json"), "w") as f:
        json.dump(report, f)
    choice = step.chosen_configuration() or {}
    row = {"label": label, "n": step.chosen_micro_batches(),
           "recompute": choice.get("recompute") or
           options.get("recompute", "none"),
           "predicted": report["total_peak"],
           "workspaces": report.get("workspaces", 0),
           "chosen_predicted_peak": choice.get("predicted_peak"),
           "setup": time.perf_counter() - t0}
    same = _same_step(out, label)
    if same:
        shutil.rmtree(d)
        row["same_as"] = same
    else:
        with open(os.path.join(d, "libstep.so"), "rb") as f, \
                gzip.open(os.path.join(d, "libstep.so.gz"), "wb") as g:
            shutil.copyfileobj(f, g)
        os.remove(os.path.join(d, "libstep.so"))
    log(f"budget {name} {label}: N={row['n']} {row['recompute']}, "
        f"predicted device peak {row['predicted']} B, " +
        (f"the same step as {same}" if same else "saved") +
        f" ({row['setup']:.0f} s)")
    return row


def _same_step(out, label):
    """The label of a step saved before under `out` whose files equal those
    of out/label (the library against its compressed copy), or None."""
    here = os.path.join(out, label)
    names = sorted(os.listdir(here))
    for other in sorted(os.listdir(out)):
        there = os.path.join(out, other)
        if other == label or sorted(f.replace(".gz", "") for f in
                                    os.listdir(there)) != names:
            continue
        if all(_read(os.path.join(here, f)) == _read(os.path.join(there, f))
               for f in names):
            return other
    return None


def _read(path):
    """The bytes of `path`, or of path.gz decompressed."""
    if not os.path.exists(path):
        with gzip.open(path + ".gz", "rb") as f:
            return f.read()
    with open(path, "rb") as f:
        return f.read()


def step_dir(kit, name, row, scratch):
    """A directory load_step takes for `row`'s step: its saved files, the
    library decompressed, under `scratch`."""
    label = row.get("same_as") or row["label"]
    src = os.path.join(kit, "budget", name, label)
    dst = os.path.join(scratch, name, label)
    if not os.path.exists(dst):
        os.makedirs(dst)
        for f in os.listdir(src):
            with open(os.path.join(dst, f.replace(".gz", "")), "wb") as g:
                g.write(_read(os.path.join(src, f.replace(".gz", ""))))
            os.chmod(os.path.join(dst, f.replace(".gz", "")), 0o755)
    return dst


# ===------------------------------------------------------------------===#
# Run (on the GPU machine)
# ===------------------------------------------------------------------===#

def run(kit, manifest, results, reps, models=None, torch_ns=None,
        fractions=TORCH_FRACTIONS):
    """The budget sweep of every model of manifest["budget"] (or `models`):
    appends one {"kind": "budget", ...} result per model, in the shape of
    bench/remat_budget.py's (its goal_checks and markdown read it)."""
    import torch
    import remat_budget
    for name, entry in manifest.get("budget", {}).items():
        if models and name not in models:
            continue
        result = {"kind": "budget", "model": name, "size": entry["size"],
                  "sets": entry["sets"], "base": dict(entry["base"]),
                  "sweep": [dict(r) for r in entry["sweep"]],
                  "budgets": [dict(r) for r in entry["budgets"]],
                  "torch": []}
        rows = [r for r in result["sweep"] + result["budgets"]
                if "error" not in r]
        scratch = tempfile.mkdtemp(prefix="ga-budget-")
        points = Points(kit, name, entry["size"], scratch, torch)
        try:
            _numerics_and_peaks(points, rows)
            _bitwise(result)
            _time_ours(points, rows, reps)
            base = next(r for r in result["sweep"]
                        if r["label"] == entry["base"]["label"])
            result["base"].update({k: base.get(k) for k in
                                   ("measured", "ms")})
            targets = [r["measured"] for r in result["budgets"]
                       if r.get("measured") and r["percent"] in
                       remat_budget.TORCH_GOAL_BUDGETS]
            result["torch"] = _torch_points(
                points, torch_ns or sorted({r["n"] for r in rows}),
                fractions, targets, reps)
        except Exception as e:  # noqa: BLE001
            result["message"] = f"{type(e).__name__}: {e}"[:400]
        shutil.rmtree(scratch, ignore_errors=True)
        try:
            result["checks"] = [{"goal": g, "ok": ok, "detail": d} for
                                g, ok, d in remat_budget.goal_checks(result)]
        except (KeyError, TypeError) as e:  # a row the run left unmeasured
            result["checks"] = []
            result.setdefault("message", f"goal checks: {type(e).__name__}:"
                              f" {e}")
        # Fails the kit: a wrong step, a budget exceeded, a run that died.
        result["pass"] = "message" not in result and all(
            r.get("pass", True) for r in rows) and all(
            c["ok"] is not False for c in result["checks"]
            if c["goal"] == "measured <= budget")
        results.append(result)
        print(f"budget {name}: " + json.dumps(result["checks"]), flush=True)


class Points:
    """One budget model's steps on this GPU: fresh models from the kit's
    seed, and its saved steps loaded on them."""

    def __init__(self, kit, name, size, scratch, torch):
        self.kit, self.name, self.size = kit, name, size
        self.scratch, self.torch = scratch, torch

    def fresh(self):
        """(model, loss_fn, optimizer, batch) on the GPU."""
        return make(self.name, self.size, device="cuda")

    def load(self, row):
        """(the step of `row` on a fresh model, that model, the batch)."""
        from ga_mlir.torch import load_step
        model, _, opt, batch = self.fresh()
        step = load_step(step_dir(self.kit, self.name, row, self.scratch),
                         model, opt)
        return step, model, batch


def _numerics_and_peaks(points, rows):
    """Each step alone (nothing else of ours loaded): one call from the
    kit's seed against PyTorch's own accumulation step at the same N (the
    zoo's rule), a digest of the state it leaves (for the bitwise check),
    then its device peak over a second call."""
    import kit_models
    import measure
    torch = points.torch
    refs = {}
    for row in rows:
        n = row["n"]
        if n not in refs:
            measure.release(torch)
            model, loss_fn, opt, batch = points.fresh()
            loss = kit_models.torch_accumulation_step(model, loss_fn, opt,
                                                      batch, n).item()
            refs[n] = (loss, {k: v.detach().clone() for k, v in
                              model.state_dict().items()})
        measure.release(torch)
        step, model, batch = points.load(row)
        loss = step(*batch).item()
        torch.cuda.synchronize()
        row["loss"], row["digest"] = loss, state_digest(model, torch)
        ref_loss, ref_state = refs[n]
        row["loss_error"] = abs(loss - ref_loss) / abs(ref_loss)
        row["param_max_diff"], row["param_off"] = measure.check_params(
            model, ref_state)
        row["pass"] = (row["loss_error"] <= 2e-2 and
                       row["param_max_diff"] <= 2.5e-3 and
                       row["param_off"] <= 0.01)
        torch_peak, pool_peak = measure.device_peak(lambda: step(*batch),
                                                    torch)
        row["measured_torch_peak"], row["measured_pool_peak"] = \
            torch_peak, pool_peak
        if pool_peak is not None:
            row["measured"] = torch_peak + pool_peak + row["workspaces"]
        print(f"budget {points.name} {row['label']}: loss {loss:.6f} "
              f"(PyTorch {ref_loss:.6f}), measured {row.get('measured')} B,"
              f" predicted {row['predicted']} B", flush=True)
        step = model = None
    refs.clear()
    measure.release(torch)


def state_digest(model, torch):
    """SHA-256 of the bytes of every entry of the model's state, in name
    order: equal digests, bitwise-equal states."""
    digest = hashlib.sha256()
    for _, v in sorted(model.state_dict().items()):
        digest.update(v.detach().cpu().contiguous().view(-1).view(
            torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def _bitwise(result):
    """Recomputation is exact: every step's state equals, bit for bit, that
    of the sweep's `none` step of the same N (when both ran)."""
    none = {r["n"]: r.get("digest") for r in result["sweep"]
            if r.get("recompute") == "none"}
    for r in result["sweep"] + result["budgets"]:
        if r.get("digest") and none.get(r["n"]):
            r["bitwise_none"] = r["digest"] == none[r["n"]]
            r["pass"] = r.get("pass", True) and r["bitwise_none"]


def _time_ours(points, rows, reps):
    """Every step timed in interleaved rounds (one call each per round,
    after one warm-up), each with its own model and optimizer."""
    torch = points.torch
    calls = []
    for row in rows:
        step, model, batch = points.load(row)
        calls.append((row, (lambda s=step, b=batch: s(*b))))
        row["times"] = []
    for _, fn in calls:
        fn()
    torch.cuda.synchronize()
    for _ in range(reps):
        for row, fn in calls:
            start = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            row["times"].append(time.perf_counter() - start)
    for row, _ in calls:
        row["ms"] = statistics.median(row["times"]) * 1e3
    calls.clear()


def _torch_points(points, ns, fractions, targets, reps):
    """PyTorch's accumulation loop with the model under torch.compile and
    activation_memory_budget: N ascending, each fraction in turn; stops once
    every target peak (our measured peaks at the goal budgets) has a point
    at or under it."""
    import torch._functorch.config as functorch_config
    import kit_models
    import measure
    torch = points.torch
    found = []
    try:
        for n in ns:
            for fraction in fractions:
                measure.release(torch)
                functorch_config.activation_memory_budget = fraction
                found.append(_torch_point(points, n, fraction, reps,
                                          kit_models))
                print(f"budget {points.name} torch.compile N={n} fraction "
                      f"{fraction}: {found[-1]}", flush=True)
                if targets and all(any(p.get("measured", 1 << 62) <= t
                                       for p in found) for t in targets):
                    return found
    finally:
        functorch_config.activation_memory_budget = 1.0
    return found


def _torch_point(points, n, fraction, reps, kit_models):
    """One torch.compile point: {n, fraction, measured (the allocator's
    peak over a step: everything the step holds), ms, times, setup}."""
    torch = points.torch
    point = {"n": n, "fraction": fraction}
    try:
        model, loss_fn, opt, batch = points.fresh()
        compiled = torch.compile(model)

        def step():
            kit_models.torch_accumulation_step(compiled, loss_fn, opt,
                                               batch, n)
        t0 = time.perf_counter()
        step()
        step()  # the optimizer state exists, recompiles are done
        torch.cuda.synchronize()
        point["setup"] = time.perf_counter() - t0
        torch.cuda.reset_peak_memory_stats()
        step()
        torch.cuda.synchronize()
        point["measured"] = torch.cuda.max_memory_allocated()
        point["times"] = []
        for _ in range(reps):
            start = time.perf_counter()
            step()
            torch.cuda.synchronize()
            point["times"].append(time.perf_counter() - start)
        point["ms"] = statistics.median(point["times"]) * 1e3
    except Exception as e:  # noqa: BLE001
        point["error"] = f"{type(e).__name__}: {e}"[:300]
    return point


# ===------------------------------------------------------------------===#
# Report
# ===------------------------------------------------------------------===#

def report_lines(results):
    """The report's section: remat_budget's tables of every budget result,
    then each step's numerics."""
    budget = [r for r in results if r["kind"] == "budget"]
    if not budget:
        return []
    import remat_budget
    ready = [r for r in budget if r["checks"]]
    lines = ["", remat_budget.markdown(
        ready, "## One byte budget chooses N and the recompute set "
        "(device bytes; issue #42)") if ready else
        "## One byte budget chooses N and the recompute set", ""]
    lines += ["| model | step | N | set | loss rel. error | max param diff "
              "| bitwise = none | result |", "|---|---|---|---|---|---|---|"
              "---|"]
    for r in budget:
        if "message" in r:
            lines.append(f"| {r['model']} | - | | | | | | FAIL "
                         f"{r['message']} |")
        for row in r["sweep"] + r["budgets"]:
            if "error" in row:
                lines.append(f"| {r['model']} | {row['label']} | | | | | | "
                             f"refused at build: {row['error'][:120]} |")
                continue
            lines.append(
                f"| {r['model']} | {row['label']} | {row['n']} | "
                f"{row['recompute']} | "
                f"{_fmt(row.get('loss_error'))} | "
                f"{_fmt(row.get('param_max_diff'))} | "
                f"{ {True: 'yes', False: 'NO', None: '-'}[row.get('bitwise_none')]} | "
                f"{'PASS' if row.get('pass') else 'FAIL'} |")
    return lines


def _fmt(v, spec=".3g"):
    return "-" if v is None else format(v, spec)


# ===------------------------------------------------------------------===#
# Self-test (here: no GPU)
# ===------------------------------------------------------------------===#

def self_test():
    """The run's bookkeeping on a synthetic result: the bitwise check, the
    goal checks and the report, each failure flagged; the saved steps'
    compression and deduplication."""
    def row(label, n, s, predicted, measured, ms, digest, **kw):
        return dict(label=label, n=n, recompute=s, predicted=predicted,
                    measured=measured, ms=ms, times=[ms / 1e3],
                    digest=digest, loss_error=1e-4, param_max_diff=1e-4,
                    pass_=None, **kw)
    sweep = [row("n1-none", 1, "none", 1000, 1000, 5.0, "a"),
             row("n4-none", 4, "none", 600, 600, 6.0, "b"),
             row("n4-layers", 4, "layers", 400, 402, 6.5, "b")]
    budgets = [row("budget100", 1, "none", 1000, 1000, 5.0, "a",
                   percent=100, budget=1000, chosen_predicted_peak=1000),
               row("budget50", 4, "layers", 400, 402, 6.5, "b", percent=50,
                   budget=500, chosen_predicted_peak=400),
               {"label": "budget25", "percent": 25, "budget": 250,
                "error": "the smallest static device peak is 400 B"}]
    for r in sweep + budgets:
        r.pop("pass_", None)
        r["pass"] = True
    result = {"kind": "budget", "model": "synthetic", "sets": ["none",
              "layers"], "size": SIZES["tiny"], "base": dict(sweep[0]),
              "sweep": sweep, "budgets": budgets,
              "torch": [{"n": 4, "fraction": 1.0, "measured": 390,
                         "ms": 9.0, "times": [0.009]}]}
    _bitwise(result)
    assert all(r["bitwise_none"] for r in sweep + budgets[:2])
    import remat_budget
    result["checks"] = [{"goal": g, "ok": ok, "detail": d} for g, ok, d
                        in remat_budget.goal_checks(result)]
    assert all(c["ok"] is not False for c in result["checks"]), result
    text = "\n".join(report_lines([result]))
    assert "| synthetic | budget25 |" in text and "refused at build" in text
    assert "| 50 % |" in text and "1.38x" in text, text
    # A recomputed step whose state differs from `none`'s fails.
    bad = json.loads(json.dumps(result))
    bad["sweep"][2]["digest"] = "c"
    _bitwise(bad)
    assert bad["sweep"][2]["pass"] is False
    # Saved steps: compressed, an identical one named instead of saved.
    with tempfile.TemporaryDirectory() as kit:
        out = os.path.join(kit, "budget", "m")
        for label, data in (("a", b"x" * 100), ("b", b"y" * 100),
                            ("c", b"x" * 100)):
            os.makedirs(os.path.join(out, label))
            with open(os.path.join(out, label, "libstep.so"), "wb") as f:
                f.write(data)
            same = _same_step(out, label)
            if same:
                shutil.rmtree(os.path.join(out, label))
                continue
            with gzip.open(os.path.join(out, label, "libstep.so.gz"),
                           "wb") as g:
                g.write(data)
            os.remove(os.path.join(out, label, "libstep.so"))
        assert sorted(os.listdir(out)) == ["a", "b"], os.listdir(out)
        assert _same_step(out, "b") is None
        got = step_dir(kit, "m", {"label": "c", "same_as": "a"},
                       os.path.join(kit, "scratch"))
        assert open(os.path.join(got, "libstep.so"), "rb").read() == \
            b"x" * 100
    print("budget_sweep self-test: OK")


if __name__ == "__main__":
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    # The kit carries remat_budget.py beside this file; the repository
    # keeps it in bench/.
    sys.path[:0] = [here, os.path.join(here, "..", "..", "bench")]
    if sys.argv[1:] != ["--self-test"]:
        sys.exit("usage: budget_sweep.py --self-test (the kit's run and "
                 "build import this module)")
    self_test()
