"""The generator's feature tables.

Every optional feature of a generated step is drawn with its own probability
(``PROBS``); ``Gen.on`` draws one random number per feature whether or not the
feature is forced or disabled, so forcing or disabling a feature keeps the
random stream of every other draw. New features are added at the end of the
draw order (see ``gen.Gen.generate``), never in the middle: a case generated
without them is the case older versions generated under the same name.
"""

# Features whose steps couple samples: a refusal is the expected answer.
COUPLING = {"batchnorm", "sample_slice", "capture_other_sample", "diag_batch",
            "compound_batch", "batch_position", "argmax_batch_inner", "reduce_in_for",
            "if_on_sample", "ordered_inner", "capture_stat_param",
            "pad_other_sample",
            # a reduction over the batch in an scf.if whose condition
            # compares the loss (micro-batches could take other branches)
            "guarded_on_loss",
            # an accumulation chain whose init is read per sample and depends
            # on parameters: coupled (exact with recompute-statistics)
            "chain_init_coupled",
            # not coupling, but refused by design ("collapsing the batch
            # dimension into an outer dimension interleaves samples")
            "reshape_interleaved"}

# Probability of each optional feature.
PROBS = {
    "dyn_batch": 0.3,          # ? instead of a static batch size
    "batch_dim1": 0.35,        # x: [F, B] with ga.batch = 1
    "rank3_input": 0.3,        # a second per-sample input [B, T, D]
    "reshape": 0.35,           # collapse [B, T, D] -> [B*T, D], expand [B, F] -> [B, P, Q]
    "transposed_matmul": 0.4,  # linalg.matmul with transposing indexing_maps
    "named_ops": 0.5,          # linalg.transpose/broadcast/reduce/add/mul
    "per_sample_reduce": 0.4,  # reductions over non-batch dims only
    "broadcast_param": 0.3,    # a parameter broadcast to [B, H], then used per sample
    "compound_expr": 0.3,      # d floordiv 2 / d mod k on non-batch dims
    "gather": 0.35,            # tensor.extract %logits[linalg.index 0, label] (torch-mlir CE)
    "capture_same_sample": 0.2,  # tensor.extract %h[linalg.index 0, const] of a captured per-sample tensor
    "capture_param": 0.25,     # tensor.extract of a parameter at a computed index
    "scf_if": 0.25,            # per-sample values through an scf.if
    "scf_for": 0.25,           # stacked layers in an scf.for
    "loop_chain": 0.2,         # scf.for whose iter_args rotate (batchness arrives after k iterations)
    "dim_in_region": 0.25,     # tensor.dim of the batch inside scf.if/scf.for
    "no_ps_operand": 0.2,      # ops with no per-sample operand producing batch-shaped tensors
    "tensor_arith": 0.2,       # arith/math directly on tensors
    "slice_features": 0.2,     # extract_slice / concat / insert_slice along non-batch dims
    "softmax": 0.1,            # linalg.softmax over a non-batch dim (decomposed by the lowering)
    "data_stat": 0.15,         # a data-only batch statistic (mean of an input) in per-sample math
    "capture_stat": 0.1,       # a batch statistic read with tensor.extract in a per-sample payload
    "capture_stat_param": 0.05,  # the same of a parameter-dependent value (coupled)
    "outs_carry": 0.15,        # a per-sample value as the outs operand read by the payload
    "if_mixed": 0.15,          # scf.if whose else branch yields a broadcast parameter
    "reduce_in_for": 0.04,     # a reduction over the batch inside an scf.for (refusal expected)
    "if_on_sample": 0.04,      # scf.if on a value read from sample 0 (coupled)
    # ga-accumulate options
    "opt_fuse0": 0.1,          # fuse=0
    "opt_dyn_micro": 0.1,      # dynamic-micro-batches=true (N as a trailing index argument)
    "opt_batch_args": 0.1,     # batch-args=... instead of ga.batch attributes
    "opt_recompute": 0.5,      # recompute-statistics=true when a BatchNorm is generated: exact
    "batch_dim_in_opt": 0.15,  # the batch size as a number in the optimizer (after the loop)
    "multi_result": 0.3,       # one generic, two reductions over the batch (add + max)
    "int_metric": 0.35,        # argmax per sample, correct-count as an integer sum over the batch
    "max_reduce": 0.25,        # max over the batch of the per-sample loss
    "argmax_batch": 0.2,       # (max, index) over the batch with selects
    "count_in_grad": 0.3,      # data-only count (mask sum) used in per-sample gradient terms
    "count_shared_multi": 0.2,  # the count shares a multi-result reduction with parameter-dependent sums
    "accum_chain": 0.2,        # a gradient reduction whose init is another reduction
    "init_nonzero": 0.2,       # a reduction initialised with a parameter instead of 0
    "per_sample_result": 0.2,  # a per-sample value returned
    "clip_if": 0.2,            # gradient clipping with scf.if on a reduced norm
    "int_batch_reduce": 0.15,  # maxsi over the batch of integer labels
    "ordered_reduce": 0.15,    # acc = 0.9 acc + x over the batch (order-dependent)
    "bool_mask": 0.15,         # an i1 per-sample argument in a select
    # Drawn after every feature above (older cases keep their random stream):
    "named_contract": 0.25,    # linalg.dot/vecmat/matvec/batch_matmul/batch_reduce_matmul, batch reduced
    "more_combiners": 0.25,    # min/minnum/maxnum/product over the batch, integer minsi/ori
    "reshape_interleaved": 0.3,  # collapse [T, B, D] -> [T*B, D] (samples interleaved), then per row
    "f64": 0.1,                # the whole step in float64 (every f32 of the text)
    # Coupled (must be refused):
    "batchnorm": 0.06,
    "sample_slice": 0.04,
    "capture_other_sample": 0.05,
    "diag_batch": 0.04,
    "compound_batch": 0.04,
    "batch_position": 0.04,    # float(linalg.index of the batch dim) in per-sample math
    # Drawn after every feature above (issue #20's shapes):
    "uniform_maps": 0.25,      # a batch-shaped parameter table read through floordiv / B-1-i / (i, i)
    "stack_batch": 0.25,       # torch.stack of per-sample values: concat along the batch, expand [2, B]
    "chain_init_input": 0.15,  # an accumulation chain whose init is also read per sample
    "pad_other_sample": 0.04,  # tensor.pad whose region reads sample 0 (refusal expected)
    "guarded_reduction": 0.2,  # reductions over the batch inside scf.if on lr > 0.5 (or, coupled, on the loss)
    "pad_at_sample": 0.1,      # tensor.pad whose region reads its own index along the batch (exact)
}

# Forward features, each used at least once when drawn.
FORWARD = ["reshape", "named_ops", "per_sample_reduce", "compound_expr", "capture_same_sample",
           "capture_param", "scf_if", "scf_for", "loop_chain", "no_ps_operand", "tensor_arith",
           "slice_features", "softmax", "data_stat", "if_mixed", "reduce_in_for", "if_on_sample",
           "capture_stat", "capture_stat_param", "outs_carry"]

F32_EPS = 2.0 ** -24
