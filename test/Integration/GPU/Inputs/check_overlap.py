#!/usr/bin/env python3
"""Checks, on the kernel-stage host code of a data-parallel step
(--ga-lower-to-gpu-kernels), where the NCCL all-reduces are, independently of
ga-overlap-all-reduce: it reads the text, follows views to their buffers and
checks the properties the pass must establish.

For the function `train_step`:
  * the host synchronizes once (mgpuStreamSynchronize), after every
    all-reduce, at the end; none inside the micro-batch loop;
  * whether the kernels after the micro-batch loop start with the loop
    body's kernels (the peeled last micro-batch, the same launches in the
    same order) or are a remainder micro-batch, or there is no loop left
    (one micro-batch): printed;
  * every all-reduce is after the loop and before the join, on the
    communication stream (a `gpu.wait async` after the loop), after an event
    the stream waits for;
  * safety (a launch is a gpu.launch_func or a gaCublasLtMatmul call): no
    launch between an all-reduce and the join (the step's stream
    waiting for the communication stream) takes a view of its bucket;
  * earliness: the launch right before each all-reduce (its fork) takes a
    view of its bucket, or the previous all-reduce is in between (several
    all-reduces after one launch);
  * all-reduces before the micro-batch loop (a statistics loop's counts):
    on a stream of their own, joined before the next loop, no launch that
    takes their bucket before the join.
Prints one line per all-reduce (the kernel it follows, how many launches
overlap it before the join) and a summary; exits 1 with a message on a
violation.

usage: check_overlap.py kernels.mlir
"""
import re
import sys

VIEW = re.compile(r"^\s*(%[\w.]+) = memref\.(?:subview|expand_shape|collapse_shape|cast|reinterpret_cast) (%[\w.]+)")
DEF = re.compile(r"^\s*(%[\w.]+)(?:, %[\w.]+)* = (.*)$")
LAUNCH = re.compile(r"gpu\.launch_func async \[[^\]]*\] @\w+::@(\w+) .* args\((.*)\)")
CUBLAS = re.compile(r"call @gaCublasLtMatmul\((.*?)\) :")
ALLREDUCE = re.compile(r"call @gaNcclAllReduce\((%[\w.]+), (%[\w.]+),")


def fail(message):
    sys.exit("check_overlap: " + message)


def main():
    text = open(sys.argv[1]).read()
    match = re.search(r"func\.func @train_step\(.*?\n  }\n", text, re.S)
    if not match:
        fail("no func.func @train_step")
    lines = match.group(0).splitlines()
    views, defs = {}, {}
    for line in lines:
        if m := VIEW.match(line):
            views[m.group(1)] = m.group(2)
        if m := DEF.match(line):
            defs[m.group(1)] = m.group(2)

    def root(value):
        while value in views:
            value = views[value]
        return value

    def bucket_of(pointer):
        # inttoptr(index_cast(aligned base [+ offset]))
        m = re.match(r"llvm\.inttoptr (%[\w.]+)", defs.get(pointer, ""))
        m = m and re.match(r"arith\.index_cast (%[\w.]+)", defs.get(m.group(1), ""))
        address = m and m.group(1)
        m = address and re.match(r"arith\.addi (%[\w.]+),", defs.get(address, ""))
        if m:
            address = m.group(1)
        m = address and re.match(r"memref\.extract_aligned_pointer_as_index (%[\w.]+)",
                                 defs.get(address, ""))
        if not m:
            fail(f"the buffer of an all-reduce is not recognized ({pointer})")
        return root(m.group(1))

    def launch_roots(line):
        # A kernel launch (its memref arguments) or a cuBLASLt call (the
        # buffers its pointers address; null pointers address none).
        if m := CUBLAS.search(line):
            return "gaCublasLtMatmul", {bucket_of(v) for v in re.findall(r"%[\w.]+", m.group(1))
                                        if defs.get(v, "").startswith("llvm.inttoptr")}
        m = LAUNCH.search(line)
        return m.group(1), {root(arg.split(" : ")[0].strip())
                            for arg in re.findall(r"(%[\w.]+) :", m.group(2))}

    def is_launch(line):
        return "gpu.launch_func" in line or CUBLAS.search(line)

    # The last micro-batch loop: a top-level scf.for with launches (none
    # when the step had one micro-batch: the pass replaced the loop by its
    # body).
    loop_start = loop_end = -1
    for i, line in enumerate(lines):
        if line.startswith("    %") and " = scf.for " in line:
            end = lines.index("    }", i)
            if any(is_launch(l) for l in lines[i:end]):
                loop_start, loop_end = i, end
    body = [launch_roots(l)[0] for l in lines[loop_start:loop_end] if is_launch(l)]

    syncs = [i for i, l in enumerate(lines) if "call @mgpuStreamSynchronize(" in l]
    calls = [i for i, l in enumerate(lines) if ALLREDUCE.search(l)]
    if not calls:
        fail("no all-reduce")
    # All-reduces of an earlier loop (the statistics loop's counts, read by
    # the micro-batch loop): on a communication stream of their own, joined
    # before the next loop, no launch taking their bucket before the join.
    loops = [i for i, l in enumerate(lines)
             if l.startswith("    %") and " = scf.for " in l]
    early = [c for c in calls if c < loop_start]
    for n, c in enumerate(early):
        stream, pointer = ALLREDUCE.search(lines[c]).groups()
        bucket = bucket_of(pointer)
        if defs.get(stream) != "gpu.wait async":
            fail(f"early all-reduce {n} is not on a new stream")
        join = next((i for i, l in enumerate(lines) if i > c and re.search(
            rf"call @mgpuStreamDestroy\({re.escape(stream)}\)", l)), None)
        if join is None or "mgpuStreamWaitEvent" not in lines[join - 2]:
            fail(f"early all-reduce {n}: no join of its stream")
        if any(c < i < join for i in loops):
            fail(f"early all-reduce {n}: a loop starts before its join")
        for i, l in enumerate(lines[c + 1:join], c + 1):
            if is_launch(l) and bucket in launch_roots(l)[1]:
                fail(f"early all-reduce {n}: a launch takes its bucket "
                     "before the join")
    if early:
        print(f"all-reduces before the micro-batch loop: {len(early)}, "
              "joined before it")
    calls = [c for c in calls if c > loop_start]
    if len(syncs) != 1 or syncs[0] < calls[-1]:
        fail(f"expected one host synchronization after the all-reduces, found {len(syncs)}")
    if any(loop_start <= c <= loop_end for c in calls + syncs):
        fail("an all-reduce or a synchronization inside the micro-batch loop")

    after = [(i, *launch_roots(l)) for i, l in enumerate(lines)
             if i > loop_end and is_launch(l)]
    if not body:
        last = "the only micro-batch, no loop"
    elif [name for _, name, _ in after[:len(body)]] == body:
        last = "peeled from the loop"
    else:
        last = "after the loop (a remainder)"

    # The communication stream: the first all-reduce's, a new stream.
    comm = ALLREDUCE.search(lines[calls[0]]).group(1)
    if defs.get(comm) != "gpu.wait async":
        fail("the first all-reduce is not on a new stream")
    if not any(l.strip().startswith(comm + " = ") for l in lines[loop_end + 1:calls[0]]):
        fail("the communication stream is not created after the loop")
    joins = [i for i, l in enumerate(lines)
             if re.search(rf"call @mgpuStreamDestroy\({re.escape(comm)}\)", l)]
    if len(joins) != 1 or "mgpuStreamWaitEvent" not in lines[joins[0] - 2]:
        fail("no join of the communication stream")
    join = joins[0]

    previous = None
    for n, c in enumerate(calls):
        stream, pointer = ALLREDUCE.search(lines[c]).groups()
        bucket = bucket_of(pointer)
        if stream != comm:
            fail(f"all-reduce {n} is not on the communication stream")
        if not loop_end < c < join:
            fail(f"all-reduce {n} is not after the loop and before the join")
        if not any(f"call @mgpuStreamWaitEvent({comm}," in l for l in lines[loop_end + 1:c]):
            fail(f"all-reduce {n}: the communication stream waits for no event before it")
        for i, name, roots in after:
            if c < i < join and bucket in roots:
                fail(f"all-reduce {n}: {name} takes its bucket {bucket} before the join")
        before = [(i, name, roots) for i, name, roots in after if i < c]
        fork_i, fork_name, fork_roots = before[-1]
        if bucket not in fork_roots and not (previous is not None and previous > fork_i):
            fail(f"all-reduce {n} could be earlier: {fork_name} right before it "
                 f"does not take its bucket {bucket}")
        overlapped = sum(1 for i, _, _ in after if c < i < join)
        print(f"all-reduce {n}: after {fork_name}, {overlapped} launches before the join")
        previous = c
    print(f"all-reduces: {len(calls)}; last micro-batch: {last}; "
          f"loop body: {len(body)} launches; 1 host synchronization")


if __name__ == "__main__":
    main()
