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
      `MiB` or `GiB`): N and the recompute set (`--ga-rematerialize`)
      together, the configuration of least estimated time whose total peak
      fits the budget. The peak of a candidate is the total peak of
      `--ga-memory-report` (arguments, heap and static storage): a copy of
      the module is rewritten by `--ga-accumulate` with N micro-batches and
      the recompute set and bufferized as `--ga-lower-to-cpu` (its defaults,
      or the options in `cpu`) bufferizes it, and the memory-usage analysis
      counts its buffers. Candidates run from N = 1 up to B for each set
      (`none`, `pointwise` and `products`, or the one `recompute` names;
      `products` only lowers the peak with `cpu={share-buffers=1}`, where
      the recomputed values take the storage of the dead ones); N with the
      same micro-batch sizes (ceil(B/N), floor(B/N)) have the same buffers
      and are measured once. The estimated time is the step's arithmetic
      work with that set (iterations times payload operations of its linalg
      ops: products, element-wise work and what is recomputed) plus N times
      the parameters' elements (every micro-batch reads them again): for a
      fixed set the smallest N that fits, and recomputation only where it
      lets a smaller N fit or nothing fits without it. A smaller budget
      never gives a larger peak: the candidates only shrink. With
      `micro-batches=N` as well, N is fixed and only the set is chosen.
      The choice is recorded as `ga.micro_batches`, `ga.recompute`,
      `ga.predicted_peak` and `ga.recompute_work` (the work the
      recomputation adds). When nothing fits, the error at the function
      names the smallest peak and its configuration.

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
           "Memory budget (bytes, or with KiB/MiB/GiB): the smallest N whose "
           "static peak fits">,
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
           "out-params=1`; default: the pipeline's defaults)">
  ];
  let statistics = [
    Statistic<"numCandidates", "candidates",
              "Candidate micro-batch counts rewritten and measured">
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
    ListOption<"argumentRoles", "roles", "std::string",
               "The class of every argument of the reported functions, in "
               "order (parameters, optimizer_state, inputs), as `ga.role` "
               "declares it; default: from batch dependence">
  ];
}

#endif // GA_MEMORY_PASSES_TD
