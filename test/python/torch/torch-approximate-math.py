# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The speed options of the CPU lowering, split_row_reductions (row sums in
# vector lanes) and approximate_math (polynomial exp, tanh, erf on vectors),
# on by default (every other zoo test runs them): here both off, sequential
# row sums and libm, through compile_train_step on models whose steps are
# made of what they change: GPT-2 (softmax, GELU's tanh, cross-entropy's
# log-sum-exp) and BERT (LayerNorm, erf GELU, dropout). Judged by the zoo's
# criterion against PyTorch's float32 and float64 steps. A wrong value is
# refused in Python's words.

import sys

import model_zoo
from ga_mlir.torch import compile_train_step

model_zoo.quiet()
EXACT = dict(split_row_reductions=False, approximate_math=False)
CASES = [("gpt2", "sgd", 4), ("gpt2", "adamw", 4), ("bert-dropout", "sgd", 3)]
# CHECK: gpt2 sgd N=4: {{.*}} OK
# CHECK: gpt2 adamw N=4: {{.*}} OK
# CHECK: bert-dropout sgd N=3: {{.*}} OK
failures = model_zoo.run(CASES, **EXACT)

import torch  # noqa: E402

model = torch.nn.Linear(4, 2)
try:
    compile_train_step(model, lambda m, x: m(x).sum(),
                       torch.optim.SGD(model.parameters(), lr=0.1),
                       example_inputs=(torch.randn(4, 4),), micro_batches=2,
                       approximate_math="yes")
    print("accepted")
except TypeError as error:
    print(error)
# CHECK: compile_train_step: approximate_math must be True or False, got 'yes'

# The switches reach --ga-lower-to-cpu (the pipeline's defaults unless
# given).
from ga_mlir.torch._options import library_cpu_options  # noqa: E402

print(" ".join(f"{k}={v}" for k, v in library_cpu_options(EXACT).items()
               if "math" in k or "row_" in k))
print([k for k in library_cpu_options({}) if "math" in k or "row_" in k])
# CHECK: approximate_math=False split_row_reductions=False
# CHECK-NEXT: []
sys.exit(failures)
