#!/usr/bin/env python3
# ===- run_kit.py - the GPU acceptance kit's run (on the GPU machine) ------===#
#
#   bash DIR/run.sh [--quick] [--out DIR] [--only STEP] [--variant V]
#                   [--models gpt2-124m,llama-1b]
#                   [--budget-only] [--budget-models gpt2,llama]
#
# Runs where there is an NVIDIA GPU, python3, torch and numpy (no LLVM):
#  1. numerics: every corpus step of the kit (each library variant: CUDA
#     graphs on/off x cuBLASLt on/off) on its inputs against the reference
#     computed on the CPU when the kit was built; the zoo models (saved
#     target="cuda" steps, loaded with ga_mlir.torch.load_step) against
#     PyTorch's own full-batch step and our CPU-compiled step; the
#     data-parallel step under torchrun with NCCL (dp_step.py);
#  2. compute-sanitizer memcheck and racecheck on one call of every corpus
#     step (when compute-sanitizer is found);
#  3. timing: our step against PyTorch's own accumulation loop (eager and
#     torch.compile; bf16 autocast for gpt) at every N of the kit;
#  4. the budget sweep of a kit built with --budget (budget_sweep.py; only
#     it with --budget-only): issue #42's benchmark on the GPU;
# and writes report.md. Exit status: 0 when every check passed, 1 when one
# failed, 2 when there is no GPU (nothing is run).
#
# ===----------------------------------------------------------------------===#

import argparse
import ctypes
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

from measure import check_params, device_peak, release

NO_GPU = 2


def stop(message):
    print(f"gpu-kit: error: {message}", file=sys.stderr)
    sys.exit(NO_GPU)


def require_gpu():
    try:
        import numpy  # noqa: F401
        import torch
    except ImportError as e:
        stop(f"the kit needs python3 with torch and numpy ({e})")
    if not torch.cuda.is_available():
        stop("no NVIDIA GPU here (torch.cuda.is_available() is False): the "
             "kit runs compiled GPU code and has nothing to check on this "
             "machine; run it where `nvidia-smi` lists a GPU")
    return torch


def _library_roots():
    """Where the CUDA libraries are: torch's own lib/, the nvidia-* wheels
    beside torch, the toolkit."""
    import torch
    site = os.path.dirname(os.path.dirname(torch.__file__))
    return ([os.path.dirname(torch.__file__),
             os.path.join(os.path.dirname(torch.__file__), "lib")] +
            glob.glob(os.path.join(site, "nvidia", "*", "lib")) +
            glob.glob(os.path.join(site, "nvidia", "*", "*", "lib")) +
            ["/usr/local/cuda/lib64"])


def preload(pattern, soname=None):
    """Loads the first library matching `pattern` in _library_roots (else
    `soname` from the loader's path) globally, so that the sonames of our
    runtime libraries resolve to it; its path, or None."""
    for root in _library_roots():
        for lib in sorted(glob.glob(os.path.join(root, pattern))):
            try:
                ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
                return lib
            except OSError:
                continue
    if soname:
        try:
            ctypes.CDLL(soname, mode=ctypes.RTLD_GLOBAL)
            return soname
        except OSError:
            pass
    return None


def preload_cuda_libraries():
    """cuBLASLt for the libraries' wrapper."""
    return preload("libcublasLt.so.*", "libcublasLt.so.13")


def init_nccl(step_dir):
    """The NCCL runtime shipped beside a data-parallel step, with a
    communicator of one rank on this GPU (bootstrapped from the environment,
    as a launcher without MPI does). Returns the library (for
    gaNcclAllReduceCalls and gaNcclFinalize)."""
    import torch
    # libGANcclRuntime.so needs libcudart.so.13 and libnccl.so.2.
    preload("libcudart.so.1*", "libcudart.so.13")
    preload("libnccl.so.2*", "libnccl.so.2")
    nccl = ctypes.CDLL(os.path.join(step_dir, "libGANcclRuntime.so"),
                       mode=ctypes.RTLD_GLOBAL)
    nccl.gaNcclAllReduceCalls.restype = ctypes.c_int64
    hex_id = ctypes.create_string_buffer(257)
    if nccl.gaNcclUniqueIdHex(hex_id) != 0:
        raise RuntimeError("gaNcclUniqueIdHex failed")
    os.environ.update(GA_NCCL_ID=hex_id.value.decode(), GA_NCCL_RANK="0",
                      GA_NCCL_NRANKS="1",
                      GA_NCCL_DEVICE=str(torch.cuda.current_device()))
    if nccl.gaNcclInitFromEnv() != 0:
        raise RuntimeError("gaNcclInitFromEnv failed (see above)")
    return nccl


# ===------------------------------------------------------------------===#
# Corpus steps: a ctypes call of the C interface on device tensors
# ===------------------------------------------------------------------===#

_ELEMENTS = {"f32": "float32", "f64": "float64", "f16": "float16",
             "bf16": "bfloat16", "i64": "int64", "i32": "int32",
             "i16": "int16", "i8": "int8", "i1": "bool",
             "index": "int64"}


_SCALARS = {"f32": ctypes.c_float, "f64": ctypes.c_double,
            "i64": ctypes.c_int64, "i32": ctypes.c_int32,
            "index": ctypes.c_int64}


def parse_type(entry):
    """(shape, element) of a tensor type of step.json; (None, element) of a
    scalar (build_kit.typed)."""
    shape = entry["shape"]
    return (None if shape is None else tuple(shape)), entry["element"]


def call_corpus_library(lib_path, step, inputs):
    """Results (numpy arrays) of one call of the library on `inputs`."""
    import numpy as np
    import torch
    from ga_mlir.torch._call import descriptor, descriptor_type
    lib = ctypes.CDLL(lib_path)
    runtime = ctypes.CDLL(os.path.join(os.path.dirname(lib_path),
                                       "libga_cuda_runtime.so"))
    runtime.mgpuMemFree.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    runtime.gaCudaSetCallerStream.argtypes = [ctypes.c_void_p]
    fn = lib._mlir_ciface_train_step
    fn.restype = None
    args, scalars = [], {}
    for i, (a, entry) in enumerate(zip(inputs, step["args"])):
        shape, element = parse_type(entry)
        if shape is None:  # a scalar, passed by value
            scalars[i] = _SCALARS[element](a.item())
            args.append(None)
            continue
        t = torch.from_numpy(np.ascontiguousarray(a))
        if element == "bf16":
            t = t.view(torch.bfloat16)
        args.append(t.cuda())
    results = [parse_type(t) for t in step["results"]]
    # A scalar result (a gradient norm, say) is a field of its C type in
    # the results struct; a tensor result a memref descriptor.
    Results = type("Results", (ctypes.Structure,), {"_fields_": [
        (f"r{i}", _SCALARS[e] if s is None else descriptor_type(len(s)))
        for i, (s, e) in enumerate(results)]})
    out = Results()
    descs = [descriptor(t) if t is not None else None for t in args]
    call = [ctypes.byref(d) if d is not None else scalars[i]
            for i, d in enumerate(descs)]
    torch.cuda.synchronize()
    runtime.gaCudaSetCallerStream(torch.cuda.current_stream().cuda_stream)
    fn(ctypes.byref(out), *call)
    runtime.gaCudaSetCallerStream(None)
    owned = {t.data_ptr() for t in args if t is not None}
    values, free = [], set()
    for i, (shape, element) in enumerate(results):
        r = getattr(out, f"r{i}")
        if shape is None:
            values.append(np.asarray(r, dtype=_ELEMENTS[element]))
            continue
        dtype = getattr(torch, _ELEMENTS[element])
        size = torch.empty((), dtype=dtype).element_size()
        n = int(np.prod(shape, dtype=np.int64)) if shape else 1
        host = torch.empty(shape, dtype=dtype)
        runtime.gaGpuCopyToHost.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                            ctypes.c_size_t]
        runtime.gaGpuCopyToHost(host.data_ptr(), r.aligned + r.offset * size,
                                n * size)
        values.append(host.float().numpy() if dtype == torch.bfloat16
                      else host.numpy())
        if r.allocated not in owned:
            free.add(r.allocated)
    for pointer in free:
        runtime.mgpuMemFree(pointer, None)
    return values


def compare(got, ref, tolerances):
    """(the largest ratio of an element's error to its tolerance, whether
    every result is bit-identical). `tolerances` per result: ga-verify's
    derived tolerance of each float element (steplib.derived_tolerances,
    computed where the kit was built), or for an integer result the
    elements that may differ; the step passes when the ratio is <= 1."""
    import numpy as np
    worst, exact = 0.0, True
    for g, r, t in zip(got, ref, tolerances):
        g, r, t = np.asarray(g), np.asarray(r), np.asarray(t)
        if t.dtype == np.bool_:
            differ = (g != r) & ~t
            err = float("inf") if differ.any() else 0.0
            exact = exact and bool(np.all(g == r))
        else:
            g, r = g.astype(np.float64), r.astype(np.float64)
            same = (g == r) | (np.isnan(g) & np.isnan(r))
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(same, 0.0, np.abs(g - r) / t)
            # NaN or Inf in one result only: no tolerance covers it.
            ratio = np.nan_to_num(ratio, nan=np.inf)
            err = float(np.max(ratio)) if ratio.size else 0.0
            exact = exact and bool(np.all(same))
        worst = max(worst, err)
    return worst, exact


def run_corpus(kit, only, variant_filter, results):
    """Every corpus step, each in a child process: a kernel that faults
    leaves the CUDA context unusable (every later call fails with the same
    sticky error), so one faulting step must not take the others with it.
    A step whose child dies is run again one variant per child, so that the
    report says which variants fault."""
    for step_dir in sorted(glob.glob(os.path.join(kit, "corpus", "*"))):
        name = os.path.basename(step_dir)
        if only and name != only:
            continue
        rows, error = corpus_child(kit, name, variant_filter)
        if error is None:
            results.extend(rows)
            continue
        step = json.load(open(os.path.join(step_dir, "step.json")))
        for variant in step["libraries"]:
            if variant_filter and variant != variant_filter:
                continue
            rows, error = corpus_child(kit, name, variant)
            if error is None:
                results.extend(rows)
                continue
            results.append({"kind": "corpus", "step": name,
                            "variant": variant, "N": step["micro_batches"],
                            "error": float("nan"), "pass": False,
                            "message": error})
            print(f"corpus {name} [{variant}]: FAIL ({error})", flush=True)


def run_child(cmd):
    """(rows, None) that the child process `cmd` wrote to the file named by
    its `--rows` argument, or (None, why it died: exit status and the last
    lines of its output). The child's output is echoed as it is."""
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".json") as rows_file:
        r = subprocess.run(cmd + ["--rows", rows_file.name],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, env=os.environ)
        sys.stdout.write(r.stdout)
        sys.stdout.flush()
        try:
            with open(rows_file.name) as f:
                return json.load(f), None
        except (OSError, ValueError):
            tail = [line for line in r.stdout.splitlines() if line.strip()]
            return None, (f"exit {r.returncode}: " +
                          " | ".join(tail[-3:]))[:400]


def corpus_child(kit, name, variant):
    """(rows, None) of one step (one variant when `variant`) run in a child
    process, or (None, why it died)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--kit", kit,
           "--only", name, "--numerics-only", "--in-process"]
    if variant:
        cmd += ["--variant", variant]
    return run_child(cmd)


def run_corpus_in_process(kit, only, variant_filter, results):
    import numpy as np
    for step_dir in sorted(glob.glob(os.path.join(kit, "corpus", "*"))):
        name = os.path.basename(step_dir)
        if only and name != only:
            continue
        step = json.load(open(os.path.join(step_dir, "step.json")))
        inputs = list(np.load(os.path.join(step_dir, "inputs.npz")).values())
        ref = list(np.load(os.path.join(step_dir, "reference.npz")).values())
        # The CPU reference keeps a bf16 result as its raw 16 bits (numpy
        # has no bf16): widened to the float32 of the same value, as the
        # GPU's results are.
        ref = [(r.astype(np.uint32) << 16).view(np.float32)
               if parse_type(t)[1] == "bf16" else r
               for r, t in zip(ref, step["results"])]
        tolerances = list(np.load(
            os.path.join(step_dir, "tolerance.npz")).values())
        tol = 1.0  # error / derived tolerance, element by element
        nccl = None
        if step.get("data_parallel"):
            try:
                nccl = init_nccl(step_dir)
            except Exception as e:  # noqa: BLE001 (reported, not raised)
                for variant in step["libraries"]:
                    results.append({"kind": "corpus", "step": name,
                                    "variant": variant, "pass": False,
                                    "N": step["micro_batches"],
                                    "tolerance": tol,
                                    "error": float("nan"),
                                    "message": f"NCCL: {e}"})
                    print(f"corpus {name} [{variant}]: FAIL (NCCL: {e})",
                          flush=True)
                continue
        for variant, lib in step["libraries"].items():
            if variant_filter and variant != variant_filter:
                continue
            row = {"kind": "corpus", "step": name, "variant": variant,
                   "N": step["micro_batches"], "tolerance": tol}
            try:
                calls = nccl.gaNcclAllReduceCalls() if nccl else 0
                got = call_corpus_library(os.path.join(step_dir, lib), step,
                                          inputs)
                row["error"], _ = compare(got, ref, tolerances)
                row["pass"] = row["error"] <= tol
                if nccl:
                    # A world of one: the mean is the gradient itself; the
                    # all-reduces must still have run.
                    row["all_reduces"] = nccl.gaNcclAllReduceCalls() - calls
                    row["pass"] = row["pass"] and row["all_reduces"] > 0
            except Exception as e:  # noqa: BLE001 (reported, not raised)
                row["error"], row["pass"] = float("nan"), False
                row["message"] = f"{type(e).__name__}: {e}"
            results.append(row)
            if nccl:
                print(f"corpus {name} [{variant}]: "
                      f"{row.get('all_reduces', 0)} NCCL all-reduces",
                      flush=True)
            print(f"corpus {name} [{variant}]: error {row['error']:.3g} "
                  f"(tolerance {tol:g}): "
                  f"{'PASS' if row['pass'] else 'FAIL'}"
                  f"{' ' + row['message'] if 'message' in row else ''}",
                  flush=True)


# ===------------------------------------------------------------------===#
# compute-sanitizer
# ===------------------------------------------------------------------===#

def find_sanitizer():
    for p in (shutil.which("compute-sanitizer"),
              "/usr/local/cuda/bin/compute-sanitizer",
              *glob.glob("/usr/local/cuda*/bin/compute-sanitizer")):
        if p and os.path.exists(p):
            return p
    return None


def run_sanitizers(kit, only, results):
    sanitizer = find_sanitizer()
    if not sanitizer:
        print("compute-sanitizer not found: skipped", flush=True)
        return False
    for step_dir in sorted(glob.glob(os.path.join(kit, "corpus", "*"))):
        name = os.path.basename(step_dir)
        if only and name != only:
            continue
        for tool in ("memcheck", "racecheck"):
            cmd = [sanitizer, "--tool", tool, "--error-exitcode", "9",
                   sys.executable, os.path.abspath(__file__), "--kit", kit,
                   "--only", name, "--variant", "graphs+cublaslt",
                   "--numerics-only", "--in-process"]
            r = subprocess.run(cmd, capture_output=True, text=True,
                               env=os.environ)
            summary = [line for line in (r.stdout + r.stderr).splitlines()
                       if "ERROR SUMMARY" in line or "RACECHECK SUMMARY"
                       in line]
            # The first report of a failing run names the kernel, the access
            # and the address: what a fix starts from.
            first = [line.strip() for line in (r.stdout + r.stderr)
                     .splitlines() if line.startswith("=========")
                     and "COMPUTE-SANITIZER" not in line][:6]
            row = {"kind": "sanitizer", "step": name, "tool": tool,
                   "pass": r.returncode == 0,
                   "summary": summary[-1].strip() if summary else
                   f"exit {r.returncode}"}
            if r.returncode != 0:
                row["message"] = " | ".join(first)[:600]
            results.append(row)
            print(f"{tool} {name}: {row['summary']}", flush=True)
    return True


# ===------------------------------------------------------------------===#
# Zoo models: numerics and timing against PyTorch
# ===------------------------------------------------------------------===#

def scale_micro_batch(kit, name, n):
    """The sequences per micro-batch of a saved scale-model step (its first
    input is [B, T] with B = n micro-batches), or None (the model's
    default)."""
    path = os.path.join(kit or "", "zoo", name, f"n{n}", "step.json")
    if not kit or not os.path.exists(path):
        return None
    return json.load(open(path))["inputs"][0][0][0] // n


def fresh(kit, name, torch, kit_models, n=1):
    if name in kit_models.SCALE:
        # No weights travel: the model and the batch (n micro-batches of the
        # saved step's size) are drawn on the GPU from the kit's seed.
        model, loss_fn, batch = kit_models.make(
            name, seed=0, device="cuda", n=n,
            micro_batch=scale_micro_batch(kit, name, n))
        return model, loss_fn, kit_models.optimizer_for(model), batch
    model, loss_fn, _ = kit_models.make(name)
    model.load_state_dict(torch.load(os.path.join(kit, "zoo", name,
                                                  "init.pt")))
    model = model.cuda()
    batch = tuple(t.cuda() for t in torch.load(
        os.path.join(kit, "zoo", name, "batch.pt")))
    return model, loss_fn, kit_models.optimizer_for(model), batch


def run_zoo_numerics(kit, manifest, results):
    import torch
    import kit_models
    import scale_models
    from ga_mlir.torch import load_step
    for name in manifest["zoo"]:
        for n in manifest["ns"]:
            if name in kit_models.SCALE:
                ref = scale_models.reference(kit, name, n, fresh, torch,
                                             kit_models)
            else:
                ref = torch.load(os.path.join(kit, "zoo", name,
                                              "reference.pt"))
            model, _, opt, batch = fresh(kit, name, torch, kit_models, n)
            row = {"kind": "zoo", "model": name, "N": n}
            try:
                step = load_step(os.path.join(kit, "zoo", name, f"n{n}"),
                                 model, opt)
                loss = step(*batch).item()
                torch.cuda.synchronize()
                tol = 1e-4 if name == "mlp" else 2e-2
                row["loss_error"] = abs(loss - ref["pytorch_loss"]) / abs(
                    ref["pytorch_loss"])
                row["param_max_diff"], row["param_off"] = check_params(
                    model, ref["pytorch"])
                row["pass"] = (row["loss_error"] <= tol and
                               row["param_max_diff"] <= 2.5e-3 and
                               row["param_off"] <= 0.01)
            except Exception as e:  # noqa: BLE001
                row["pass"], row["message"] = False, f"{type(e).__name__}: {e}"
            results.append(row)
            print(f"zoo {name} N={n}: {row}", flush=True)


def time_calls(fn, warmup, reps):
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def predicted_memory(kit, name, n):
    """The static report of the saved GPU step (build_kit's
    memory_report.json: step.memory_report() of the target="cuda" step), or
    None."""
    path = os.path.join(kit, "zoo", name, f"n{n}", "memory_report.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def run_timing(kit, manifest, reps, results):
    import torch
    import kit_models
    import scale_models
    from ga_mlir.torch import load_step
    for name in manifest["zoo"]:
        for n in manifest["ns"]:
            row = {"kind": "timing", "model": name, "N": n}
            release(torch)
            try:
                scale = name in kit_models.SCALE
                if scale:
                    reps = min(reps, 5)
                model, loss_fn, opt, batch = fresh(kit, name, torch,
                                                   kit_models, n)
                step = load_step(os.path.join(kit, "zoo", name, f"n{n}"),
                                 model, opt)
                row["ours_ms"] = time_calls(lambda: step(*batch), 3, reps)
                row["ours_peak"] = scale_models.peak_memory(
                    lambda: step(*batch), torch)
                # The prediction beside what the step held (the first call
                # is behind us: the workspace exists, graphs are captured).
                predicted = predicted_memory(kit, name, n)
                if predicted:
                    row["predicted_device_peak"] = predicted["total_peak"]
                    row["predicted_workspaces"] = predicted["workspaces"]
                    torch_peak, pool_peak = device_peak(
                        lambda: step(*batch), torch)
                    row["measured_torch_peak"] = torch_peak
                    row["measured_pool_peak"] = pool_peak
                    print(f"memory {name} N={n}: predicted device peak "
                          f"{predicted['total_peak']} bytes (workspaces "
                          f"{predicted['workspaces']}); measured: "
                          f"torch.cuda.max_memory_allocated {torch_peak}, "
                          f"the step's pool peak {pool_peak}", flush=True)
                step = model = opt = None  # freed before the next
                model, loss_fn, opt, batch = fresh(kit, name, torch,
                                                   kit_models, n)
                eager = (lambda: kit_models.torch_accumulation_step(
                    model, loss_fn, opt, batch, n))
                row["eager_ms"] = time_calls(eager, 3, reps)
                row["eager_peak"] = scale_models.peak_memory(eager, torch)
                model = opt = None
                model, loss_fn, opt, batch = fresh(kit, name, torch,
                                                   kit_models, n)
                compiled = torch.compile(model)
                row["compile_ms"] = time_calls(
                    lambda: kit_models.torch_accumulation_step(
                        compiled, loss_fn, opt, batch, n), 3, reps)
                if scale:
                    scale_models.figures(row, model, batch, torch)
                compiled = model = opt = None
                torch.cuda.empty_cache()
            except Exception as e:  # noqa: BLE001
                row["message"] = f"{type(e).__name__}: {e}"
            results.append(row)
            print(f"timing {name} N={n}: {row}", flush=True)


# ===------------------------------------------------------------------===#
# Report
# ===------------------------------------------------------------------===#

def run_data_parallel(kit, manifest):
    """The rows of the torchrun child dp_step.py (one per model of
    manifest["dp"]), or one failing row saying why it died."""
    if not manifest.get("dp"):
        return []
    rows, why = run_child(
        [sys.executable, "-m", "torch.distributed.run", "--standalone",
         "--nproc_per_node=1",
         os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "dp_step.py"), "--kit", kit])
    if rows is not None:
        return rows
    return [{"kind": "dp", "model": ",".join(manifest["dp"]),
             "pass": False, "message": f"torchrun {why}"[:400]}]


def data_parallel_report_lines(results):
    """The report's section of the data-parallel rows."""
    rows = [r for r in results if r["kind"] == "dp"]
    if not rows:
        return []
    lines = ["## Data-parallel step (torchrun, NCCL; load_step) against "
             "PyTorch's full-batch step", "",
             "| model | N | world | collectives per step (frontend / "
             "NCCL calls) | loss rel. error | max param diff | params "
             "off | ms per step | result |",
             "|---|---|---|---|---|---|---|---|---|"]
    def fmt(v, spec=".3g"):
        return "-" if v is None else format(v, spec)

    for r in rows:
        lines.append(
            f"| {r['model']} | {r.get('N', '-')} | {r.get('world', '-')} | "
            f"{r.get('collectives', '-')} / {r.get('nccl_calls', '-')} | "
            f"{fmt(r.get('loss_error'))} | {fmt(r.get('param_max_diff'))} | "
            f"{fmt(r.get('param_off'))} | {fmt(r.get('ours_ms'), '.3f')} | "
            f"{'PASS' if r['pass'] else 'FAIL'} {r.get('message', '')} |")
    return lines + [""]


def fmt(v, spec=".3g"):
    return "-" if v is None else format(v, spec)


def write_report(path, device, cublaslt, results, sanitizer_found):
    import torch
    lines = ["# GPU acceptance kit report", "",
             f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
             f"- device: {device}", f"- torch {torch.__version__}, CUDA "
             f"{torch.version.cuda}; cuBLASLt: {cublaslt or 'not found'}", ""]
    corpus = [r for r in results if r["kind"] == "corpus"]
    if corpus:
        lines += ["## Corpus steps against the CPU reference", "",
                  "| step | N | library | max error / tolerance | limit "
                  "| result |", "|---|---|---|---|---|---|"]
        for r in corpus:
            lines.append(f"| {r['step']} | {r['N']} | {r['variant']} | "
                         f"{fmt(r.get('error'))} | {r['tolerance']:g} | "
                         f"{'PASS' if r['pass'] else 'FAIL'} "
                         + (f"({r['all_reduces']} NCCL all-reduces) "
                            if "all_reduces" in r else "")
                         + f"{r.get('message', '')} |")
        lines.append("")
    zoo = [r for r in results if r["kind"] == "zoo"]
    if zoo:
        lines += ["## Zoo models (load_step) against PyTorch's full-batch "
                  "step", "", "| model | N | loss rel. error | max param "
                  "diff | params off | result |", "|---|---|---|---|---|---|"]
        for r in zoo:
            lines.append(f"| {r['model']} | {r['N']} | "
                         f"{fmt(r.get('loss_error'))} | "
                         f"{fmt(r.get('param_max_diff'))} | "
                         f"{fmt(r.get('param_off'))} | "
                         f"{'PASS' if r['pass'] else 'FAIL'} "
                         + (f"({r['all_reduces']} NCCL all-reduces) "
                            if "all_reduces" in r else "")
                         + f"{r.get('message', '')} |")
        lines.append("")
    lines += data_parallel_report_lines(results)
    san = [r for r in results if r["kind"] == "sanitizer"]
    lines += ["## compute-sanitizer", ""]
    if sanitizer_found is None:
        lines += ["Not run (--quick).", ""]
    elif not sanitizer_found:
        lines += ["compute-sanitizer not found: not run.", ""]
    for r in san:
        lines.append(f"- {r['tool']} {r['step']}: {r['summary']} "
                     f"({'PASS' if r['pass'] else 'FAIL'})")
    timing = [r for r in results if r["kind"] == "timing"]
    if timing:
        lines += ["", "## Time per training step (ms, median)", "",
                  "| model | N | ours | PyTorch eager | torch.compile | "
                  "ours / eager | ours / compile |",
                  "|---|---|---|---|---|---|---|"]
        for r in timing:
            o, e, c = r.get("ours_ms"), r.get("eager_ms"), r.get("compile_ms")
            lines.append(
                f"| {r['model']} | {r['N']} | {fmt(o, '.3f')} | "
                f"{fmt(e, '.3f')} | {fmt(c, '.3f')} | "
                f"{fmt(o / e if o and e else None, '.2f')} | "
                f"{fmt(o / c if o and c else None, '.2f')} | "
                f"{r.get('message', '')}")
    lines += memory_report_lines(timing)
    import scale_models
    lines += scale_models.report_lines(timing)
    import budget_sweep
    lines += budget_sweep.report_lines(results)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def memory_report_lines(timing):
    """The report's table of predicted against measured device memory:
    measured = torch's allocator peak (the arguments) + the step's pool peak
    + the cuBLASLt workspace the prediction counts."""
    rows = [r for r in timing if "predicted_device_peak" in r]
    if not rows:
        return []
    mib = float(1 << 20)
    lines = ["", "## Device memory of our step: predicted (static report of "
             "the GPU step) and measured (MiB)", "",
             "| model | N | predicted | torch.cuda.max_memory_allocated | "
             "step's pool peak | workspace | measured total | "
             "predicted / measured |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        p, t = r["predicted_device_peak"], r.get("measured_torch_peak")
        pool, w = r.get("measured_pool_peak"), r.get("predicted_workspaces")
        total = t + pool + w if None not in (t, pool, w) else None
        lines.append(
            f"| {r['model']} | {r['N']} | {fmt(p / mib, '.2f')} | "
            f"{fmt(t and t / mib, '.2f')} | {fmt(pool and pool / mib, '.2f')}"
            f" | {fmt(w and w / mib, '.2f')} | "
            f"{fmt(total and total / mib, '.2f')} | "
            f"{fmt(p / total if total else None, '.3f')} |")
    return lines


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kit", default=os.path.dirname(os.path.abspath(
        __file__)))
    p.add_argument("--out")
    p.add_argument("--only", help="one corpus step")
    p.add_argument("--variant", help="one library variant")
    p.add_argument("--numerics-only", action="store_true")
    p.add_argument("--in-process", action="store_true",
                   help="run the corpus steps in this process (a child's "
                        "mode: a fault ends the run)")
    p.add_argument("--rows", help="write the corpus rows here (JSON)")
    p.add_argument("--quick", action="store_true",
                   help="no sanitizers, fewer timing repetitions")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--models", help="zoo models to run (default: all the "
                   "kit holds), e.g. gpt2-124m")
    p.add_argument("--budget-only", action="store_true",
                   help="only the budget sweep (a kit built with --budget)")
    p.add_argument("--budget-models", help="of the kit's budget sweeps "
                   "(default all), e.g. gpt2")
    p.add_argument("--budget-torch-ns", help="torch.compile's N of the "
                   "budget sweep (default the sweep's)")
    p.add_argument("--budget-fractions", default="1.0,0.5,0.0",
                   help="torch.compile's activation_memory_budget values")
    a = p.parse_args()
    torch = require_gpu()
    sys.path.insert(0, a.kit)
    sys.path.insert(0, os.path.join(a.kit, "python"))
    cublaslt = preload_cuda_libraries()
    torch.cuda.init()
    manifest = json.load(open(os.path.join(a.kit, "manifest.json")))
    if a.models:
        manifest["zoo"] = [m for m in manifest["zoo"]
                           if m in a.models.split(",")]
    results = []
    if a.budget_only:
        manifest.update(corpus=[], zoo=[], dp=[])
    if a.in_process:
        run_corpus_in_process(a.kit, a.only, a.variant, results)
    elif not a.budget_only:
        run_corpus(a.kit, a.only, a.variant, results)
    if a.rows:
        with open(a.rows, "w") as f:
            json.dump(results, f, default=str)
    if a.numerics_only:
        return 0 if all(r["pass"] for r in results) else 1
    run_zoo_numerics(a.kit, manifest, results)
    # The torch data-parallel step, under torchrun (NCCL).
    results.extend(run_data_parallel(a.kit, manifest))
    sanitizer_found = None
    if not a.quick and not a.budget_only:
        sanitizer_found = run_sanitizers(a.kit, a.only, results)
    run_timing(a.kit, manifest, 5 if a.quick else a.reps, results)
    # Issue #42's sweep: one byte budget chooses N and the recompute set.
    import budget_sweep
    budget_sweep.run(
        a.kit, manifest, results, 5 if a.quick else a.reps,
        models=a.budget_models and a.budget_models.split(","),
        torch_ns=a.budget_torch_ns and [
            int(n) for n in a.budget_torch_ns.split(",")],
        fractions=[float(f) for f in a.budget_fractions.split(",")])
    device = torch.cuda.get_device_name(0)
    out = a.out or os.environ.get("OUT") or a.kit
    os.makedirs(out, exist_ok=True)
    report = write_report(os.path.join(out, "report.md"), device, cublaslt,
                          results, sanitizer_found)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    print(open(report).read())
    checked = [r for r in results if "pass" in r]
    return 0 if all(r["pass"] for r in checked) else 1


if __name__ == "__main__":
    sys.exit(main())
