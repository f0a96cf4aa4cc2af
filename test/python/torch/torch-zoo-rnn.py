# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The model zoo, part 7: a bidirectional nn.GRU (batch_first).

import sys

import model_zoo

model_zoo.quiet()
CASES = [
    ("gru-bidirectional", "sgd", 3),
    ("gru-bidirectional", "adamw", 4),
]
# CHECK: gru-bidirectional sgd N=3: {{.*}} OK
# CHECK: gru-bidirectional adamw N=4: {{.*}} OK
sys.exit(model_zoo.run(CASES))
