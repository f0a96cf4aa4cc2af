# RUN: env GA_BUILD_DIR=%ga_obj_root GA_MLIR_CACHE_DIR=%t.cache %torch_python %ga_src_root/examples/torch_mlp_digits.py | FileCheck %s
#
# examples/torch_mlp_digits.py: an MLP trained on scikit-learn's bundled
# digits with compile_train_step(..., micro_batches=4) next to PyTorch (the
# example exits 1 if the parameters drift apart by more than 1e-4).

# CHECK: compiled in {{.*}} s: batch 128 in 4 micro-batches of 32
# CHECK: step  loss (ga-mlir)  loss (PyTorch)  max |param diff|
# CHECK:    0 {{ *}}[[LOSS:[0-9.]+]] {{ *}}[[LOSS]] {{ *}}{{.*}}e-{{0[5-9]|[1-9][0-9]}}
# CHECK:   29 {{.*}}
# CHECK: test accuracy after 30 steps: 0.{{[5-9]}}
