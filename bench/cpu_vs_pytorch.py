#!/usr/bin/env python3
"""CPU benchmark: our AOT-compiled gradient-accumulation step vs PyTorch's
canonical accumulation loop, in one run on the same machine.

Model: MLP 784-1024-1024-10, ReLU, softmax cross-entropy on integer
labels, batch B = 256, SGD with momentum (mu = 0.9, lr = 0.01) and AdamW
(lr = 1e-3, betas (0.9, 0.999), eps = 1e-8, weight decay 0.01 on every
parameter, as torch.optim.AdamW over model.parameters()), N = 1, 2, 4, 8, 16
micro-batches, at 1 and 2 threads.

  ours:    bench/gen_mlp_ce_step.py | ga-opt --ga-accumulate=micro-batches=N
           --ga-lower-to-cpu="$LOWER" | mlir-translate | llc -O3 -mcpu=native
           | clang -shared -lopenblas, called through ctypes (_ga_packed_train_step)
  PyTorch: for each micro-batch: forward, loss / N, backward; optimizer.step();
           optimizer.zero_grad()

Each measurement runs in its own process (peak RSS = ru_maxrss of that
process; "+RSS" is the growth over the process right after its imports).
GA overhead = t(N) / (N * t_fwd+bwd(B/N)), where t_fwd+bwd is our compiled
forward + backward step (gradients only, no optimizer) at batch B/N; it counts
the optimizer (run once per step) as overhead. "ovh-opt" takes it out:
t(N) / (N * t_fwd+bwd(B/N) + t_opt) with t_opt = t(1) - t_fwd+bwd(B).

usage: .venv/bin/python bench/cpu_vs_pytorch.py --build build [--threads 1,2]
"""
import argparse
import ctypes
import json
import os
import resource
import statistics
import subprocess
import sys
import time

DIMS = [784, 1024, 1024, 10]
# How a user who calls the step in a loop builds it: CBLAS for the products,
# results into buffers the caller keeps (out-params), temporaries in static
# storage, AVX-512 vectors, code for this CPU (llc -mcpu=native).
LOWER = "blas=1 c-interface=1 out-params=1 static-temporaries=1 vector-width=512"
HERE = os.path.dirname(os.path.abspath(__file__))
LLVM = "/usr/lib/llvm-22/bin"

# The workers use the ctypes memref descriptors and the timing loop of
# ga_mlir.steplib (numpy only), from the source tree.
sys.path.insert(0, os.path.join(HERE, "..", "python"))


def maxrss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# ----------------------------------------------------------------- inputs
def make_inputs(batch, seed=0):
    import numpy as np
    rng = np.random.default_rng(seed)
    params = []
    for i in range(len(DIMS) - 1):
        bound = 1.0 / DIMS[i] ** 0.5
        params.append(rng.uniform(-bound, bound, (DIMS[i], DIMS[i + 1])).astype(np.float32))
        params.append(rng.uniform(-bound, bound, (DIMS[i + 1],)).astype(np.float32))
    x = rng.standard_normal((batch, DIMS[0])).astype(np.float32)
    labels = rng.integers(0, DIMS[-1], (batch,)).astype(np.int64)
    return params, x, labels


# ----------------------------------------------------------------- ours (ctypes)
def worker_ours(a):
    import numpy as np
    from ga_mlir._entry import PackedCall, packed_entry_point
    from ga_mlir.steplib import memref_descriptor, time_calls
    base = maxrss_mb()
    lib = ctypes.CDLL(a.lib)
    fn = packed_entry_point(lib, a.lib)
    params, x, labels = make_inputs(256)
    mb = 256 // a.n if a.grads_only else 256
    x, labels = x[:mb].copy(), labels[:mb].copy()
    arrays = list(params)
    scalars = []
    if a.grads_only:
        nstate = 0
    elif a.optimizer == "adamw":
        nstate = 2
        arrays += [np.zeros_like(p) for p in params]  # first moments
        arrays += [np.zeros_like(p) for p in params]  # second moments
        scalars = [ctypes.c_int64(1), ctypes.c_float(1e-3), ctypes.c_float(0.9), ctypes.c_float(0.999),
                   ctypes.c_float(1e-8), ctypes.c_float(0.01)]
    else:
        nstate = 1
        arrays += [np.zeros_like(p) for p in params]
        arrays += [np.array(0.01, np.float32), np.array(0.9, np.float32)]
    head = len(arrays)
    arrays += [x, labels]
    descs = [memref_descriptor(arr) for arr in arrays]
    args = descs[:head] + scalars + descs[head:]
    # Results go to buffers the caller allocates once (out-params=1 in LOWER),
    # as PyTorch keeps its parameters, states and gradients.
    outs = []
    for _ in range(1 + nstate):
        outs += [np.empty_like(p) for p in params]
    outs.append(np.zeros((), np.float32))
    odescs = [memref_descriptor(o) for o in outs]
    packed = PackedCall(args + odescs)
    loss = None

    def call():
        nonlocal loss
        packed(fn)
        loss = float(outs[-1])

    times = time_calls(call, a.warmup, a.reps)
    return {"times": times, "loss": loss, "rss": maxrss_mb(), "rss_base": base}


# ----------------------------------------------------------------- PyTorch
def worker_torch(a):
    import numpy as np
    from ga_mlir.steplib import time_calls
    import torch
    torch.set_num_threads(int(a.threads))
    base = maxrss_mb()
    params, x, labels = make_inputs(256)
    lins = [torch.nn.Linear(DIMS[i], DIMS[i + 1]) for i in range(len(DIMS) - 1)]
    with torch.no_grad():
        for i, lin in enumerate(lins):
            lin.weight.copy_(torch.from_numpy(params[2 * i].T.copy()))
            lin.bias.copy_(torch.from_numpy(params[2 * i + 1]))
    layers = []
    for lin in lins:
        layers += [lin, torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1])
    crit = torch.nn.CrossEntropyLoss()
    if a.optimizer == "adamw":
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    xs = torch.from_numpy(x).chunk(a.n)
    ys = torch.from_numpy(labels).chunk(a.n)
    loss_sum = None

    def step():
        nonlocal loss_sum
        total = 0.0
        for xm, ym in zip(xs, ys):
            loss = crit(model(xm), ym) / a.n
            loss.backward()
            total += loss.item()
        opt.step()
        opt.zero_grad()
        loss_sum = total

    # The first step's loss uses the same initial weights as ours.
    step()
    first = loss_sum
    times = time_calls(step, a.warmup, a.reps)
    return {"times": times, "loss": first, "rss": maxrss_mb(), "rss_base": base}


def worker_peak(a):
    """Single-process sgemm peak: 1024^3 SGEMM through PyTorch (OpenBLAS)."""
    import torch
    from ga_mlir.steplib import time_calls
    torch.set_num_threads(int(a.threads))
    m = torch.randn(1024, 1024)
    n = torch.randn(1024, 1024)
    times = time_calls(lambda: torch.mm(m, n), 3, 10)
    return {"times": times, "rss": maxrss_mb(), "rss_base": 0.0}


def merge(acc, run):
    """Pools the times of several runs of one worker; keeps the peak RSS."""
    if acc is None:
        return dict(run)
    acc["times"] = acc["times"] + run["times"]
    if run["rss"] > acc["rss"]:
        acc["rss"], acc["rss_base"] = run["rss"], run["rss_base"]
    return acc


# ----------------------------------------------------------------- driver
def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, check=True, **kw)


def compile_step(build, work, name, n, batch, grads_only, optimizer="momentum"):
    mlir = os.path.join(work, f"{name}.mlir")
    so = os.path.join(work, f"lib{name}.so")
    gen = [sys.executable, os.path.join(HERE, "gen_mlp_ce_step.py"),
           "--dims", ",".join(map(str, DIMS)), "--batch", str(batch)]
    if grads_only:
        gen.append("--grads-only")
    else:
        gen += ["--optimizer", optimizer]
    with open(mlir, "w") as f:
        subprocess.run(gen, check=True, stdout=f)
    # The full steps go through the rewrite for every N (N = 1 too); the
    # forward+backward reference steps (grads_only) do not.
    acc = "" if grads_only else f'--ga-accumulate="micro-batches={n}" '
    sh(f'{build}/bin/ga-opt {mlir} {acc}--ga-lower-to-cpu="{LOWER}" | '
       f'{LLVM}/mlir-translate --mlir-to-llvmir > {work}/{name}.ll && '
       f'{LLVM}/llc -O3 -mcpu=native -filetype=obj -relocation-model=pic {work}/{name}.ll -o {work}/{name}.o && '
       f'clang-22 -shared {work}/{name}.o -o {so} -lopenblas -lm')
    return so


def run_worker(kind, threads, **kw):
    env = dict(os.environ)
    for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        env.pop(v, None)
    env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = str(threads)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", kind, "--threads", str(threads)]
    for k, v in kw.items():
        if v is True:
            cmd.append("--" + k.replace("_", "-"))
        elif v is not None and v is not False:
            cmd += ["--" + k.replace("_", "-"), str(v)]
    out = subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build")
    p.add_argument("--work", default=None, help="directory for the compiled steps (default BUILD/bench-cpu)")
    p.add_argument("--ns", default="1,2,4,8,16")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--optimizers", default="momentum,adamw")
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--rounds", type=int, default=3,
                   help="interleaved rounds of ours / fwd+bwd / PyTorch per configuration")
    p.add_argument("--plot", default=None, help="PNG path (default WORK/cpu_vs_pytorch.png; needs matplotlib)")
    # worker mode
    p.add_argument("--worker", choices=["ours", "torch", "peak"])
    p.add_argument("--lib")
    p.add_argument("--n", type=int, default=1)
    p.add_argument("--grads-only", action="store_true")
    p.add_argument("--optimizer", default="momentum")
    a = p.parse_args()

    if a.worker:
        if a.worker == "ours":
            r = worker_ours(a)
        elif a.worker == "torch":
            r = worker_torch(a)
        else:
            r = worker_peak(a)
        print(json.dumps(r))
        return

    build = os.path.abspath(a.build)
    work = os.path.abspath(a.work or os.path.join(build, "bench-cpu"))
    os.makedirs(work, exist_ok=True)
    ns = [int(v) for v in a.ns.split(",")]
    threads = [int(v) for v in a.threads.split(",")]
    t0 = time.time()
    print("load average at start: %.2f %.2f %.2f on %d CPUs" % (os.getloadavg() + (os.cpu_count(),)))
    opts = a.optimizers.split(",")
    libs, glibs = {}, {}
    for n in ns:
        for o in opts:
            libs[o, n] = compile_step(build, work, f"step_{o}_n{n}", n, 256, False, o)
        glibs[n] = compile_step(build, work, f"fwdbwd_b{256 // n}", 1, 256 // n, True)
    print(f"compiled {len(libs) + len(glibs)} steps in {time.time() - t0:.1f} s ({work})", flush=True)

    flops = 6 * 256 * sum(DIMS[i] * DIMS[i + 1] for i in range(len(DIMS) - 1))
    rows = []
    med = statistics.median
    for opt, th in [(o, t) for o in opts for t in threads]:
        peak = run_worker("peak", th)
        peak_gf = 2 * 1024 ** 3 / med(peak["times"]) / 1e9
        print(f"\n== {opt}, {th} thread(s); SGEMM 1024^3 peak (PyTorch/OpenBLAS): {peak_gf:.1f} GFLOP/s; "
              f"model GEMM work {flops / 1e9:.2f} GFLOP per step", flush=True)
        hdr = (f"{'N':>3} {'ours ms':>8} {'torch ms':>9} {'ours/torch':>10} {'ours smp/s':>10} {'torch smp/s':>11} "
               f"{'GA ovh':>6} {'ovh-opt':>7} {'t(N)/t(1)':>9} {'ours GF/s':>9} {'ours RSS MB':>12} {'torch RSS MB':>13} "
               f"{'loss ours':>9} {'loss torch':>10} {'min ours':>8} {'min torch':>9}")
        print(hdr)
        t1 = tfb1 = None
        for n in ns:
            # Interleaved rounds: a slow phase of a shared machine hits both
            # sides alike instead of one configuration.
            ours = fb = tor = None
            for _ in range(a.rounds):
                o = run_worker("ours", th, lib=libs[opt, n], n=n, optimizer=opt, reps=a.reps, warmup=a.warmup)
                f = run_worker("ours", th, lib=glibs[n], n=n, grads_only=True, reps=a.reps, warmup=a.warmup)
                t = run_worker("torch", th, n=n, optimizer=opt, reps=a.reps, warmup=a.warmup)
                ours, fb, tor = merge(ours, o), merge(fb, f), merge(tor, t)
            to, tt, tf = med(ours["times"]), med(tor["times"]), med(fb["times"])
            t1 = t1 or to
            tfb1 = tfb1 or tf
            topt = max(t1 - tfb1, 0.0) if ns[0] == 1 else 0.0
            row = dict(optimizer=opt, threads=th, n=n, ours_ms=to * 1e3, torch_ms=tt * 1e3, ratio=to / tt,
                       ours_sps=256 / to, torch_sps=256 / tt, overhead=to / (n * tf), overhead_opt=to / (n * tf + topt), rel1=to / t1,
                       gflops=flops / to / 1e9, peak_gflops=peak_gf,
                       ours_rss=ours["rss"], ours_drss=ours["rss"] - ours["rss_base"],
                       torch_rss=tor["rss"], torch_drss=tor["rss"] - tor["rss_base"],
                       loss_ours=ours["loss"], loss_torch=tor["loss"], fwdbwd_ms=tf * 1e3,
                       ours_min_ms=min(ours["times"]) * 1e3, torch_min_ms=min(tor["times"]) * 1e3)
            rows.append(row)
            print(f"{n:>3} {row['ours_ms']:>8.2f} {row['torch_ms']:>9.2f} {row['ratio']:>10.3f} "
                  f"{row['ours_sps']:>10.0f} {row['torch_sps']:>11.0f} {row['overhead']:>6.3f} {row['overhead_opt']:>7.3f} {row['rel1']:>9.3f} "
                  f"{row['gflops']:>9.1f} {row['ours_rss']:>5.0f} (+{row['ours_drss']:>4.0f}) "
                  f"{row['torch_rss']:>5.0f} (+{row['torch_drss']:>4.0f}) "
                  f"{row['loss_ours']:>9.5f} {row['loss_torch']:>10.5f} "
                  f"{row['ours_min_ms']:>8.2f} {row['torch_min_ms']:>9.2f}", flush=True)
    print(f"\ntotal {time.time() - t0:.0f} s; median of {a.rounds} x {a.reps} runs (interleaved rounds, "
          f"{a.warmup} warm-up runs each); "
          "load average at end: %.2f %.2f %.2f" % os.getloadavg())
    with open(os.path.join(work, "cpu_vs_pytorch.json"), "w") as f:
        json.dump(rows, f, indent=1)
    plot = a.plot or os.path.join(work, "cpu_vs_pytorch.png")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not available: no plot")
        return
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for opt, th in [(o, t) for o in opts for t in threads]:
        rs = [r for r in rows if r["threads"] == th and r["optimizer"] == opt]
        x = [r["n"] for r in rs]
        ax1.plot(x, [r["ours_ms"] for r in rs], "o-", label=f"ours, {opt}, {th} thr")
        ax1.plot(x, [r["torch_ms"] for r in rs], "s--", label=f"PyTorch, {opt}, {th} thr")
        ax2.plot(x, [r["ours_drss"] for r in rs], "o-", label=f"ours, {opt}, {th} thr")
        ax2.plot(x, [r["torch_drss"] for r in rs], "s--", label=f"PyTorch, {opt}, {th} thr")
    ax1.set_yscale("log")
    for ax, yl in ((ax1, "step time (ms, median)"), (ax2, "peak RSS growth (MB)")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("micro-batches N (B = 256)")
        ax.set_ylabel(yl)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("MLP 784-1024-1024-10: ga-mlir AOT (BLAS, vectors, static temporaries) vs PyTorch accumulation loop")
    fig.tight_layout()
    fig.savefig(plot, dpi=100)
    print(f"plot: {plot}")


if __name__ == "__main__":
    main()
