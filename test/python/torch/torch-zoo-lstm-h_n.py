# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The model zoo, part 8: a 2-layer nn.LSTM whose classifier reads h_n[-1].
# The batch-first form of the LSTM stacks the layers' last states along a
# new first dimension (h_n is [layers, B, H]): a stack along a non-batch
# dimension, which mixes no samples, so the batch analysis proves it local
# to its sample (lib/Analysis, the slicing rule of BatchSlicing.h) and the
# step is exact.

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
