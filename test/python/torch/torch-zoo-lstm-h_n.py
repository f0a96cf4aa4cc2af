# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
# XFAIL: *
#
# The model zoo, part 8: a 2-layer nn.LSTM whose classifier reads h_n[-1].
# The batch-first form of the LSTM stacks the layers' last states along a
# new first dimension (h_n is [layers, B, H]), and --ga-accumulate refuses
# that stack ("concatenating along the batch dimension mixes batches")
# although no samples mix: expected to fail until the batch analysis
# (lib/Analysis, issue #22 item 4) handles stack/concat along a non-batch
# dimension.

import sys

import model_zoo

model_zoo.quiet()
CASES = [
    ("lstm-h_n", "sgd", 3),
    ("lstm-h_n", "adamw", 4),
]
# CHECK: lstm-h_n sgd N=3: {{.*}} OK
# CHECK: lstm-h_n adamw N=4: {{.*}} OK
sys.exit(model_zoo.run(CASES))
