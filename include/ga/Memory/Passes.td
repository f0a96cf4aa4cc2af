//===- Passes.td - memory passes of training steps ---------*- tablegen -*-===//
//
// The passes that measure the memory of a training step by running the
// rewrite and the CPU bufferization on copies of it (lib/Memory). They sit
// above the pipeline stages they run (GAPipelineStages) and below the
// --ga-accumulate pipeline that adds --ga-choose-micro-batches.
//
//===----------------------------------------------------------------------===//

#ifndef GA_MEMORY_PASSES_TD
#define GA_MEMORY_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// ChooseMicroBatches
//===----------------------------------------------------------------------===//

def ChooseMicroBatches : Pass<"ga-choose-micro-batches", "ModuleOp"> {
  let summary = "Choose the number of micro-batches from a micro-batch size "
                "or a memory budget";
  let description = [{
    Resolves the configuration in the words of Megatron and DeepSpeed into the
    number of micro-batches N of each training step (every function with
    `ga.batch` arguments, or those named by `func`), and records it on the
    function as the discardable attribute `ga.micro_batches`:

    * `micro-batch-size=M`: N = ceil(B / M) for the step's batch size B
      (M >= B gives N = 1; a remainder is handled as by `--ga-micro-batch`).
    * `max-memory=<bytes>` (a number of bytes, optionally followed by `KiB`,
      `MiB`, `GiB`, `TiB`, or `kB`, `MB`, `GB`, `TB` in powers of 1000): N
      and the recompute set (`--ga-rematerialize`) together, the
      configuration of least estimated time whose total peak fits the
      budget. The peak of a candidate is the total peak of
      `--ga-memory-report` (arguments, heap and static storage): a copy of
      the module is rewritten by `--ga-accumulate` with N micro-batches and
      the recompute set and bufferized as `--ga-lower-to-cpu` (its defaults,
      or the options in `cpu`) bufferizes it, and the memory-usage analysis
      counts its buffers. Candidates run from N = 1 up to B for each set
      (`none`, `pointwise` and `products`, or the one `recompute` names;
      `products` only lowers the peak with `cpu={share-buffers=1}`, where
      the recomputed values take the storage of the dead ones); N with the
      same micro-batch sizes (ceil(B/N), floor(B/N)) have the same buffers
      and are measured once. The estimated time of a candidate is counted
      on the step rewritten with its N and set: its arithmetic work
      (iterations times payload operations of its linalg ops: products,
      element-wise work, what is recomputed, the accumulation of every
      micro-batch) plus `memory-cost` operations per byte its ops read from
      beyond a cache of `cache-size` bytes (`memory-cost=0`: the work
      alone, one rewrite per set; ties go to the smaller N). Every N of a
      set is counted from two rewrites of it, N = 1 and N = B: the first
      is walked with its micro-batch loops replayed as N's loops (B mod N
      trips of ceil(B/N) samples, then floor(B/N)), the bytes of its
      per-sample values and the work of its per-sample ops (B times those
      of N = B) scaled by the micro-batch size; a set whose two rewrites
      differ otherwise is rewritten for each N (`verify-traffic` does both
      and remarks the two costs). The traffic is that of an LRU
      cache replayed over the tensors the ops read in the order they run
      (a loop's first iteration, then its steady state weighed by the
      other trips): a read misses when the live bytes touched since its
      value was last touched, its own included, exceed the cache; a value
      takes the storage that bufferization gives it (the init it is
      written into, the source of a reshape) and a dead storage leaves the
      cache (its buffer is reused). A smaller N costs fewer per-micro-batch
      reads of the parameters and accumulators but keeps larger
      activations from the forward to the backward, which miss once they
      outgrow the cache; recomputation adds work and makes the backward
      read fresh values. The time of every candidate is estimated first
      (one rewrite each, no bufferization); the candidates
      are then measured in the order of their estimated time (ties by N,
      then in the order of the sets) and only up to the first that fits,
      since every later one takes at least as long: that is the choice
      (`ga.candidates_measured` records how many were bufferized). Only
      when nothing fits is every candidate measured, to name the smallest
      peak. A smaller budget never gives a larger peak: the choice of a
      larger budget is chosen again when it fits the smaller one (the
      fastest of fewer candidates), and otherwise its peak is above the
      smaller budget, which the new choice's is not. With `micro-batches=N` as well, N is fixed and only the
      set is chosen. The choice is recorded as `ga.micro_batches`,
      `ga.recompute`, `ga.predicted_peak`, `ga.recompute_work` (the work
      the recomputation adds, against `none` at the same N),
      `ga.estimated_work` and `ga.moved_bytes` (the two terms of its
      estimated time) and `ga.candidates_measured`. `reserved`
      keeps bytes of the budget for what the caller allocates to return
      the step's results (the PyTorch frontend's loss tensor): a candidate
      fits when its peak plus them is within the budget, and the predicted
      peak and the smallest budget an error names include them. When
      nothing fits, the error at the function names the smallest peak and
      its configuration. With `in-place`
      (the pairs the library writes in place) and `roles`, a candidate is
      measured in the form of the library and with the classes that
      `--ga-memory-report` gives it, so that the predicted peak is the
      report's total peak of the compiled step.

    Both need a batch size known at compile time: a dynamic batch is refused
    at the function (use `dynamic-micro-batches=true` and pass N at run
    time). The options contradict each other (an error) when
    `micro-batch-size`, `max-memory`, `dynamic-micro-batches` or
    `micro-batches` (but for `micro-batches` with `max-memory`) are given
    together. With `apply`, the pass then runs the whole `--ga-accumulate`
    rewrite of each step with its N and recompute set and drops the
    attributes: this is how
    `--ga-accumulate="micro-batch-size=M"` and `"max-memory=..."` work.

    Before (`--ga-choose-micro-batches="micro-batch-size=5"`):

    ```mlir
    func.func @step(%w: tensor<8xf32>, %x: tensor<12x8xf32> {ga.batch = 0 : i64}) ...
    ```

    After:

    ```mlir
    func.func @step(%w: tensor<8xf32>, %x: tensor<12x8xf32> {ga.batch = 0 : i64})
        ... attributes {ga.micro_batches = 3 : i64}
    ```
  }];
  let options = [
    Option<"microBatchSize", "micro-batch-size", "int64_t", /*default=*/"0",
           "Samples per micro-batch M (>= 1): N = ceil(B / M)">,
    Option<"maxMemory", "max-memory", "std::string", /*default=*/"\"\"",
           "Memory budget (bytes, or with KiB/MiB/GiB/TiB or kB/MB/GB/TB): "
           "the N and recompute set of least estimated time whose static "
           "peak fits">,
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"0",
           "A number of micro-batches given as well (0: none): with "
           "max-memory it fixes N and only the recompute set is chosen; "
           "with micro-batch-size it contradicts">,
    Option<"dynamicMicroBatches", "dynamic-micro-batches", "bool",
           /*default=*/"false",
           "Whether N is a run-time argument; only checked for "
           "contradiction">,
    ListOption<"funcNames", "func", "std::string",
               "Functions to configure (default: every function with "
               "ga.batch arguments)">,
    Option<"accumulateOptions", "accumulate", "std::string",
           /*default=*/"\"\"",
           "Further --ga-accumulate options for the rewrite of the "
           "candidates and for `apply` (e.g. `recompute-statistics=1`)">,
    Option<"apply", "apply", "bool", /*default=*/"false",
           "Run the --ga-accumulate rewrite with the chosen N">,
    Option<"recompute", "recompute", "std::string", /*default=*/"\"auto\"",
           "The recompute set (--ga-rematerialize): none, pointwise or "
           "products fix "
           "it; auto chooses it with N under max-memory (none otherwise)">,
    Option<"cpuOptions", "cpu", "std::string", /*default=*/"\"\"",
           "--ga-lower-to-cpu options of the target whose bufferization the "
           "budget is compared with (e.g. `static-temporaries=1 "
           "out-params=1`; default: the pipeline's defaults)">,
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "The target whose bufferization the budget is compared with, as "
           "--ga-memory-report's `target`: cpu (heap bytes) or cuda (device "
           "bytes of the GPU step and its library workspaces)">,
    Option<"gpuOptions", "gpu", "std::string", /*default=*/"\"\"",
           "--ga-lower-to-nvvm options of the GPU step with target=cuda "
           "(e.g. `cublas=0`; default: the pipeline's defaults)">,
    ListOption<"inPlace", "in-place", "std::string",
               "result:argument pairs that the library writes in place "
               "(--ga-write-results-in-place): the candidates are measured "
               "in that form, as --ga-memory-report measures the library, "
               "so the new parameters and states take no buffers of their "
               "own">,
    Option<"reserved", "reserved", "int64_t", /*default=*/"0",
           "Bytes of the budget kept for what the caller allocates to "
           "return the step's results (the PyTorch frontend's tensors): "
           "a candidate fits when its total peak plus these bytes is at "
           "most max-memory, and the predicted peak includes them">,
    ListOption<"argumentRoles", "roles", "std::string",
               "The report class of every argument (parameters, "
               "optimizer_state or inputs), as --ga-memory-report's `roles`; "
               "default: inferred from the step">,
    Option<"cacheSize", "cache-size", "std::string", /*default=*/"\"\"",
           "The cache of the time model (bytes, or with a unit as "
           "max-memory): a read of a value touched more than this many "
           "live bytes ago comes from memory (default: this host's per-core "
           "L2 cache for "
           "target=cpu, 0 for target=cuda)">,
    Option<"memoryCost", "memory-cost", "double", /*default=*/"6.0",
           "Operations of the time model per byte read from beyond the "
           "cache: the ratio of the arithmetic rate to the memory "
           "bandwidth (6 fits the steps of bench/remat_budget.py on a "
           "2-core EPYC, docs/Results.md); 0 leaves the traffic out">,
    Option<"verifyTraffic", "verify-traffic", "bool", /*default=*/"false",
           "Also rewrite the step for every N of a set whose cost is "
           "modeled from two rewrites, and remark both costs (a check of "
           "the model)">
  ];
  let statistics = [
    Statistic<"numCandidates", "candidates",
              "Candidates (N and recompute set) rewritten and bufferized; "
              "those after the first that fits are pruned">
  ];
}

//===----------------------------------------------------------------------===//
// MemoryReport
//===----------------------------------------------------------------------===//

def MemoryReport : Pass<"ga-memory-report", "ModuleOp"> {
  let summary = "Report the static memory use of training steps";
  let description = [{
    Prints, for each training step, how many heap bytes its buffers take once
    bufferized as `--ga-lower-to-cpu` bufferizes it (one-shot bufferization
    with in-place accumulators, buffer-loop-hoisting, deallocation):
    parameters, optimizer state, per-sample inputs, gradient accumulators,
    returned buffers, the peak of the temporaries live at the same time
    (activations, their gradients, scratch), the static storage (temporaries
    and accumulators that `static-temporaries=1` puts in globals, counted in
    their classes as well), and the total peak: everything the step holds,
    every argument, the peak of its own heap allocations and its static
    storage (what `max-memory` compares with the budget). Heap bytes are
    what the lowered code asks `malloc` for: elements plus the allocation's
    alignment. `roles=` names the class of every argument (as `ga.role`
    does), so that it does not depend on how the step was rewritten.
    See docs/Memory.md for how each class is defined and how the figures
    compare with the heap measured while the compiled step runs.

    With `target=cuda` the step is bufferized as `--ga-lower-to-nvvm` (with
    the options in `gpu`) bufferizes it, up to and including
    `--ga-place-buffers-on-device`: the figures are device bytes of its
    `gpu.alloc` buffers, in the element types the GPU step stores (bf16
    activations under autocast take 2 bytes an element), `workspaces` is
    the cuBLASLt workspace the runtime holds when the step has library
    products (part of `total_peak`), and `host` the peak of the host
    buffers that are left (deallocation's bookkeeping; not in `total_peak`).
    The JSON rows name their `target`. With `loop-profile` they also list,
    at each point of the micro-batch loop's body, the bytes of the buffers
    whose contents are live there (from the first op that accesses one to
    the last; one of a run-time size, its own heap block, from its
    allocation to its deallocation), the all-gather buffers apart by
    argument and the reduce-scatter buffers apart: on a step bufferized with
    `share-buffers=0`, a lower bound of the peak of every step that differs
    from it only by the collectives moved out of the loop.

    Without `sweep`, each function is reported as it is (a step already
    rewritten, or the full-batch step). With `sweep=1,2,4,8`, each step with
    `ga.batch` arguments is rewritten by `--ga-accumulate` with each N (and
    the options in `accumulate`) on a copy, and reported per N. The module is
    not changed.

    Example (`--ga-memory-report="sweep=1,4"` on
    test/Integration/Inputs/steps/linreg_mean.mlir, B = 12; bytes):

    ```
    function     N  micro  parameters  optimizer_state  inputs  accumulators  results  temporaries  recomputed  static  total_peak
    @train_step  1     12          36                0     432             0      232          276           0       0         976
    @train_step  4      3          36                0     432           232      164           76           0       0         940
    ```
  }];
  let options = [
    ListOption<"sweep", "sweep", "int64_t",
               "Numbers of micro-batches to report (default: the functions "
               "as they are)">,
    Option<"format", "format", "std::string", /*default=*/"\"table\"",
           "table or json">,
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "File to write the report to (-: standard output)">,
    ListOption<"funcNames", "func", "std::string",
               "Functions to report (default: every function with ga.batch "
               "arguments, or every function definition without sweep)">,
    Option<"accumulateOptions", "accumulate", "std::string",
           /*default=*/"\"\"",
           "Further --ga-accumulate options for the sweep (e.g. "
           "`recompute-statistics=1`)">,
    Option<"cpuOptions", "cpu", "std::string", /*default=*/"\"\"",
           "--ga-lower-to-cpu options whose bufferization is measured (e.g. "
           "`blas=1 out-params=1`)">,
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "The target whose bufferization is measured: cpu (heap bytes of "
           "--ga-lower-to-cpu) or cuda (device bytes of --ga-lower-to-nvvm "
           "up to --ga-place-buffers-on-device, with the cuBLASLt "
           "workspace)">,
    Option<"gpuOptions", "gpu", "std::string", /*default=*/"\"\"",
           "--ga-lower-to-nvvm options whose bufferization is measured with "
           "target=cuda (e.g. `cublas=0`)">,
    ListOption<"argumentRoles", "roles", "std::string",
               "The class of every argument of the reported functions, in "
               "order (parameters, optimizer_state, inputs), as `ga.role` "
               "declares it; default: from batch dependence">,
    Option<"loopProfile", "loop-profile", "bool", /*default=*/"false",
           "With format=json, each row's `loop_profile`: at each point of "
           "the micro-batch loop's body, [bytes live, bytes of "
           "reduce-scatter buffers, [[argument, bytes] of each all-gather "
           "buffer]], a buffer live from the first op that accesses it to "
           "the last (one of a run-time size from its allocation to its "
           "deallocation; meaningful with the cpu option share-buffers=0; the "
           "sharded-parameter planner's lower bound)">
  ];
}

//===----------------------------------------------------------------------===//
// ShardPlan
//===----------------------------------------------------------------------===//

def ShardPlan : Pass<"ga-shard-plan", "ModuleOp"> {
  let summary = "Choose the sharded-parameter plan (FSDP/ZeRO-3) and N under "
                "a per-rank memory budget";
  let description = [{
    Prints the plan that `--ga-shard-parameters` then executes (its
    `keep-gathered` and `reduce-after-loop` lists) and the number of
    micro-batches N. The module is the step after `--ga-shard-parameters`
    with its default plan (every parameter re-gathered where the loop reads
    it, every gradient reduce-scattered per micro-batch); `costs` is the
    `plan-output` file that pass wrote, and `base-peaks` the per-rank peak
    (the largest over the ranks, `--ga-memory-report`'s total peak) of that
    default plan for each candidate N in `micro-batches`.

    The sharded parameters are grouped in program order (of their first
    all-gather) into buckets of at most `bucket-size` bytes. Per bucket two
    choices: kept gathered (one all-gather per step instead of one per
    micro-batch and reader; the whole parameters stay resident: + their
    bytes) and reduced after the loop (one reduce-scatter per step instead
    of one per micro-batch; the full accumulator instead of the rank's rows:
    + the bytes of the rows the rank with the fewest rows does not hold).
    Both figures bound the peak from above (the default plan's transient
    copies are not subtracted). For each N whose base peak fits
    `max-memory`, the choices of most bytes saved that fit (every subset
    for up to 16 choices, else greedily by bytes saved per byte resident);
    among the N, the plan of fewest bytes moved, then the smallest N (least
    time: the fewest loop iterations), then the fewest collectives. Without
    `max-memory`, every bucket is resharded after use (FSDP's default, the
    lowest memory) at the first N. When no N fits, the error at the
    function (`budget-not-met`) names the smallest per-rank budget that
    would fit.

    Example (`--ga-shard-plan="costs=plan.json world=2 micro-batches=1,2
    base-peaks=4000,3000 max-memory=3600"`, two parameters of 256 bytes in
    one bucket, each gathered once per micro-batch and reduced per
    micro-batch):

    ```
    shard plan of @train_step: N = 1, predicted per-rank peak 3512 bytes
    (every bucket resharded: 3000), ... keep-gathered=0,1 reduce-after-loop=
    bucket 0: arguments 0,1 (512 bytes): gathered once, reduced ...
    ```

    (printed on one line per plan and per bucket; `format=json` gives the
    same as one JSON object, the frontend's form).
  }];
  let options = [
    Option<"funcName", "func", "std::string", /*default=*/"\"train_step\"",
           "The sharded step">,
    Option<"costs", "costs", "std::string", /*default=*/"\"\"",
           "The plan-output JSON of --ga-shard-parameters (default plan)">,
    Option<"world", "world", "int64_t", /*default=*/"1",
           "Ranks of the group">,
    ListOption<"microBatches", "micro-batches", "int64_t",
               "Candidate numbers of micro-batches">,
    ListOption<"basePeaks", "base-peaks", "int64_t",
               "Per-rank peak bytes of the default plan for each candidate">,
    Option<"maxMemory", "max-memory", "std::string", /*default=*/"\"\"",
           "Per-rank budget (bytes, optionally KiB, MiB, GiB, TiB or kB, "
           "MB, GB, TB); empty: every bucket resharded">,
    Option<"bucketSize", "bucket-size", "int64_t", /*default=*/"26214400",
           "Bytes of the parameters of one bucket at most (0: one "
           "parameter a bucket)">,
    Option<"format", "format", "std::string", /*default=*/"\"text\"",
           "text or json">,
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "File to write the plan to (-: standard output)">
  ];
  let statistics = [
    Statistic<"numBuckets", "buckets", "Buckets of sharded parameters">
  ];
}

#endif // GA_MEMORY_PASSES_TD
