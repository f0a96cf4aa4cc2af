# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo %torch_python %s | FileCheck %s
#
# An exported PyTorch step says the domains of its optimizer's arguments
# (`ga.init`): second moments, their maxima and step counts are positive,
# the 0-d settings (lr, betas, eps, weight decay) in [0, 1). ga-verify then
# draws inputs the step is defined on: without the marks it drew negative
# second moments, every AdamW update was a square root of a negative number
# and 4 of the 21 results had a NaN reference (FAIL 17/21, checked).

import re

import torch
from torch.nn import functional as F

import ga_mlir
from ga_mlir.torch._export import export_train_step

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(),
                            torch.nn.Linear(8, 3))
opt = torch.optim.AdamW(model.parameters(), lr=1e-2, amsgrad=True)
x, y = torch.randn(6, 4), torch.randint(0, 3, (6,))
ir, spec = export_train_step(
    model, lambda m, x, y: F.cross_entropy(m(x), y), opt, (x, y))
marks = re.findall(r'%arg(\d+): tensor<[^>]*> \{ga\.init = "(\w+)"\}', ir)
# Per parameter: step, exp_avg, exp_avg_sq, max_exp_avg_sq (exp_avg is not
# marked), then the four settings of the group.
# CHECK: positive: 4 6 7 8 10 11 12 14 15 16 18 19
# CHECK: uniform: 20 21 22 23
for kind in ("positive", "uniform"):
    args = [int(a) for a, k in marks if k == kind]
    print(f"{kind}:", *sorted(args))
inputs = spec.batch_args()
report = ga_mlir.verify(ir, pipeline="builtin.module(ga-accumulate{"
                        "micro-batches=2 batch-args=" +
                        ",".join(str(a) for a, _ in inputs) + "})",
                        func="train_step")
# CHECK: verify: pass True, 21 results
print(f"verify: pass {report['pass']}, {len(report['results'])} results",
      report.get("error", ""))
