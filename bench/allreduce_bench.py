#!/usr/bin/env python3
"""Collectives, bytes and wall time per effective step of data-parallel
gradient accumulation over MPI: naive (an all-reduce of the gradients after
every micro-batch, what a framework does without no_sync) against ours
(--ga-accumulate: the all-reduce deferred after the micro-batch loop,
--ga-bucket-gradients: one collective per bucket, in place).

The model is the data-parallel MLP of test/Integration/MPI/Inputs/dp_mlp.mlir.in
widened to IN x HIDDEN x 10 (default 256 x 512 x 10: 136,714 parameters,
547 KB of f32 gradients, one 25 MiB bucket + the loss). Every rank holds
--batch samples per effective step, split into N micro-batches.

* ours: the step rewritten with N micro-batches, bucketed, lowered with
  MPI_Allreduce (the driver's mpi_collectives); one call per effective
  step.
* naive: the step compiled for ONE micro-batch of --batch/N samples (the
  same rewrite with N = 1, so the same buckets, as DDP buckets too), called
  N times per effective step: each call runs forward, backward, the bucketed
  all-reduce and the (tiny) SGD update. The "unbucketed" column counts the
  original step, one all-reduce per gradient, N times.

Collectives and bytes are counted by a PMPI layer around MPI_Allreduce (they
are measured for every N = 1..16 from one step of each variant; the naive
count is N times the count of one micro-step call). Wall time is measured with
2 ranks for the N that divide the batch, as the mean over --steps effective
steps after one warm-up step.

    python3 bench/allreduce_bench.py --build build
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INPUTS = os.path.join(ROOT, "test", "Integration", "MPI", "Inputs")
BUCKET_BYTES = 25 * 1024 * 1024


def widen(template: str, features: int, hidden: int) -> str:
    """The test template at IN features and HIDDEN units: its declared
    placeholders @IN@ and @HID@ filled (as the tests fill them with 16 and
    32)."""
    return template.replace("@IN@", str(features)).replace(
        "@HID@", str(hidden))


def build(args, template, batch, n, out):
    """Compiles the step (N micro-batches, or the original step for n = 0)
    and links it with the driver and the PMPI counter."""
    with open(out + ".mlir", "w") as f:
        f.write(template.replace("@B@", str(batch)))
    from ga_mlir import driver  # from --build's tree (sys.path, main)
    # The driver's typed options: the rewrite at N (none for n = 0), the
    # collectives bucketed (25 MiB, --ga-lower-to-cpu-mpi's default) and
    # lowered to MPI_Allreduce, the C interface.
    lowered = driver.compile(
        open(out + ".mlir").read(), driver.CompileOptions(
            micro_batches=n, rewrite=bool(n), bucket_size=BUCKET_BYTES,
            mpi_collectives=True, cpu={"c_interface": True}),
        filename=out + ".mlir").module
    with open(out + ".llvm.mlir", "w") as f:
        f.write(lowered)
    subprocess.run([args.mlir_translate, "--mlir-to-llvmir", out + ".llvm.mlir",
                    "-o", out + ".ll"], check=True)
    subprocess.run([args.llc, "-O2", "-filetype=obj", "-relocation-model=pic",
                    out + ".ll", "-o", out + ".o"], check=True)
    subprocess.run([args.mpicc, "-O2", os.path.join(INPUTS, "dp_driver.c"),
                    os.path.join(INPUTS, "pmpi_count.c"), out + ".o", "-o", out,
                    "-lm"], check=True)


def run(args, binary, ranks, per_rank, steps, warmup=0):
    """(collectives, bytes, seconds) per call of the step on rank 0."""
    spec = (f"p:{args.features}x{args.hidden}:f32:u0.05,p:{args.hidden}:f32:u0.1,"
            f"p:{args.hidden}x10:f32:u0.05,p:10:f32:u0.1,"
            f"b:{per_rank * ranks}x{args.features}:f32:u1,"
            f"b:{per_rank * ranks}:i64:r10")
    out = subprocess.run(
        ["timeout", "600", args.mpirun, "-np", str(ranks), binary,
         "--global-batch", str(per_rank * ranks), "--inputs", spec,
         "--results", "2,1,2,1,0", "--reference", binary + ".out",
         "--steps", str(steps), "--warmup", str(warmup)],
        check=True, capture_output=True, text=True).stdout
    return read_counts(out)


def read_counts(out):
    """(collectives, bytes, seconds) from rank 0's line of dp_driver.c, the
    driver's own report: `rank 0/R: MPI_Allreduce calls per step = C, bytes
    per step = B, time per step = S s`."""
    for line in out.splitlines():
        if not line.startswith("rank 0/") or "MPI_Allreduce calls" not in line:
            continue
        fields = dict(item.split(" = ", 1) for item in
                      line.split(": ", 1)[1].split(", "))
        return (int(fields["MPI_Allreduce calls per step"]),
                int(fields["bytes per step"]),
                float(fields["time per step"].split()[0]))
    sys.exit("unexpected driver output:\n" + out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"),
                        help="build directory with bin/ga-opt")
    parser.add_argument("--batch", type=int, default=64,
                        help="samples per rank per effective step")
    parser.add_argument("--features", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--steps", type=int, default=10,
                        help="effective steps timed per variant and N")
    parser.add_argument("--max-n", type=int, default=16)
    parser.add_argument("--no-time", action="store_true",
                        help="only count collectives and bytes")
    args = parser.parse_args()
    llvm = "/usr/lib/llvm-22/bin"
    sys.path.insert(0, os.path.join(os.path.abspath(args.build),
                                    "python_packages"))
    # LLVM 22's tools (an older llc on PATH cannot read LLVM 22 IR).
    args.mlir_translate = os.path.join(llvm, "mlir-translate")
    args.llc = os.path.join(llvm, "llc")
    args.mpicc = shutil.which("mpicc.mpich") or "mpicc"
    args.mpirun = shutil.which("mpirun.mpich") or "mpirun"

    with open(os.path.join(INPUTS, "dp_mlp.mlir.in")) as f:
        template = widen(f.read(), args.features, args.hidden)
    params = args.features * args.hidden + args.hidden + args.hidden * 10 + 10
    work = tempfile.mkdtemp(prefix="ga-allreduce-bench-")
    print(f"model: MLP {args.features} x {args.hidden} x 10, {params} "
          f"parameters ({params * 4} bytes of f32 gradients); "
          f"{args.batch} samples per rank per effective step; "
          f"{args.ranks} ranks (MPICH, one machine)")

    # Counts: ours for every N (one effective step each); naive from one call
    # of the micro-step (its count does not depend on the micro-batch size).
    smallest = max(1, args.batch // args.max_n)
    naive_micro = os.path.join(work, "naive_micro")
    build(args, template, smallest, 1, naive_micro)
    naive_calls, naive_bytes, _ = run(args, naive_micro, args.ranks, smallest, 1)
    unbucketed = os.path.join(work, "unbucketed_micro")
    build(args, template, smallest, 0, unbucketed)
    plain_calls, _, _ = run(args, unbucketed, args.ranks, smallest, 1)
    divisors = [n for n in range(1, args.max_n + 1) if args.batch % n == 0]
    timed = {}
    print("\ncollectives and bytes per effective step (per rank)")
    print(f"{'N':>3} | {'naive calls':>11} {'(unbucketed)':>12} "
          f"{'naive bytes':>12} | {'ours calls':>10} {'ours bytes':>10}")
    for n in range(1, args.max_n + 1):
        ours = os.path.join(work, f"ours_{n}")
        build(args, template, args.batch, n, ours)
        timing = not args.no_time and n in divisors
        calls, nbytes, seconds = run(args, ours, args.ranks, args.batch,
                                     args.steps if timing else 1,
                                     1 if timing else 0)
        if timing:
            timed[n] = seconds
        print(f"{n:>3} | {n * naive_calls:>11} {n * plain_calls:>12} "
              f"{n * naive_bytes:>12} | {calls:>10} {nbytes:>10}")
    if args.no_time:
        return

    print(f"\nwall time per effective step with {args.ranks} ranks "
          f"(mean of {args.steps} steps after one warm-up)")
    print(f"{'N':>3} {'micro':>5} | {'naive ms':>9} | {'ours ms':>8} | "
          f"{'naive / ours':>12}")
    for n in divisors:
        micro = args.batch // n
        naive = os.path.join(work, f"naive_{micro}")
        if not os.path.exists(naive):
            build(args, template, micro, 1, naive)
        _, _, per_call = run(args, naive, args.ranks, micro,
                             args.steps * n, n)
        naive_ms = per_call * n * 1e3
        ours_ms = timed[n] * 1e3
        print(f"{n:>3} {micro:>5} | {naive_ms:>9.2f} | {ours_ms:>8.2f} | "
              f"{naive_ms / ours_ms:>12.2f}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
