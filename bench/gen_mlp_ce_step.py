#!/usr/bin/env python3
"""Generates a training step of an MLP classifier in upstream MLIR: ReLU hidden
layers, softmax cross-entropy on integer labels (mean over the batch) and SGD
with momentum in PyTorch's convention (v = mu v + g ; p = p - lr v). Same
structure as test/Integration/Inputs/steps/mlp_momentum.mlir, any depth/width.

    gen_mlp_ce_step.py --dims 784,1024,1024,10 --batch 256 > step.mlir

Arguments: w0, b0, ..., w{L-1}, b{L-1}, then the velocities in the same order,
lr and mu (0-d tensors), x [B, dims[0]] and labels [B] (i64).
Results: new params, new velocities (same order), loss (0-d).
With --optimizer adamw: w0..b{L-1}, first moments, second moments, step (i64),
lr, beta1, beta2, eps, weight_decay (f32), x, labels; results: new params,
first and second moments, loss (torch.optim.AdamW's update).
With --grads-only: no velocities/lr/mu arguments; results are the gradients and the loss.
"""
import argparse

ID2 = "affine_map<(i, j) -> (i, j)>"
ROW = "affine_map<(i, j) -> (i)>"
COL = "affine_map<(i, j) -> (j)>"
S2 = "affine_map<(i, j) -> ()>"
ID1 = "affine_map<(i) -> (i)>"
S1 = "affine_map<(i) -> ()>"
ID0 = "affine_map<() -> ()>"
LHS = "affine_map<(m, n, k) -> (m, k)>"
LHS_T = "affine_map<(m, n, k) -> (k, m)>"
RHS = "affine_map<(m, n, k) -> (k, n)>"
RHS_T = "affine_map<(m, n, k) -> (n, k)>"
OUT = "affine_map<(m, n, k) -> (m, n)>"


def t(*shape, ty="f32"):
    return "tensor<" + "".join(f"{s}x" for s in shape) + ty + ">"


def generate(dims, batch, grads_only=False, optimizer="momentum"):
    B, L = batch, len(dims) - 1
    C = dims[-1]
    o = []
    zeros = {}

    def zero(*shape):
        key = tuple(shape)
        if key not in zeros:
            n = "_".join(str(s) for s in shape) or "s"
            o.append(f"  %e_{n} = tensor.empty() : {t(*shape)}")
            o.append(f"  %z_{n} = linalg.fill ins(%zero : f32) outs(%e_{n} : {t(*shape)}) -> {t(*shape)}")
            zeros[key] = (f"%e_{n}", f"%z_{n}")
        return zeros[key]

    ptys = []
    for i in range(L):
        ptys += [t(dims[i], dims[i + 1]), t(dims[i + 1])]
    pn = []
    for i in range(L):
        pn += [f"w{i}", f"b{i}"]
    args = [f"%{n}: {ty}" for n, ty in zip(pn, ptys)]
    if optimizer == "adamw":
        args += [f"%m_{n}: {ty}" for n, ty in zip(pn, ptys)]
        args += [f'%v_{n}: {ty} {{ga.init = "positive"}}' for n, ty in zip(pn, ptys)]
        args += ["%step: i64 {ga.range = [1, 100]}", '%lr: f32 {ga.init = "uniform"}',
                 '%beta1: f32 {ga.init = "uniform"}', '%beta2: f32 {ga.init = "uniform"}',
                 '%eps: f32 {ga.init = "positive"}', '%weight_decay: f32 {ga.init = "uniform"}']
    else:
        args += [f"%v_{n}: {ty}" for n, ty in zip(pn, ptys)]
        args += ['%lr: tensor<f32> {ga.init = "uniform"}', '%mu: tensor<f32> {ga.init = "uniform"}']
    args += [f"%x: {t(B, dims[0])} {{ga.batch = 0 : i64}}",
             f"%labels: {t(B, ty='i64')} {{ga.batch = 0 : i64, ga.range = [0, {C}]}}"]
    rtys = ptys * (3 if optimizer == "adamw" else 2) + ["tensor<f32>"]
    if grads_only:
        args = [a for a in args if a.startswith(("%w", "%b", "%x", "%labels"))]
        rtys = ptys + ["tensor<f32>"]
    o.append("func.func @train_step(" + ",\n    ".join(args) + ")")
    o.append("    -> (" + ", ".join(rtys) + ") {")
    o.append("  %zero = arith.constant 0.0 : f32")
    o.append("  %one = arith.constant 1.0 : f32")
    o.append("  %ninf = arith.constant 0xFF800000 : f32")
    o.append(f"  %inv_b = arith.constant {1.0 / B:.9e} : f32")
    # forward
    a = "%x"
    for i in range(L):
        m, n = dims[i], dims[i + 1]
        e, z = zero(B, n)
        o.append(f"  %xw{i} = linalg.matmul ins({a}, %w{i} : {t(B, m)}, {t(m, n)}) outs({z} : {t(B, n)}) -> {t(B, n)}")
        o.append(f"""  %z{i} = linalg.generic {{indexing_maps = [{ID2}, {COL}, {ID2}], iterator_types = ["parallel", "parallel"]}}
      ins(%xw{i}, %b{i} : {t(B, n)}, {t(n)}) outs({e} : {t(B, n)}) {{
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  }} -> {t(B, n)}""")
        if i < L - 1:
            o.append(f"""  %a{i + 1} = linalg.generic {{indexing_maps = [{ID2}, {ID2}], iterator_types = ["parallel", "parallel"]}}
      ins(%z{i} : {t(B, n)}) outs({e} : {t(B, n)}) {{
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }} -> {t(B, n)}""")
            a = f"%a{i + 1}"
    lg = f"%z{L - 1}"
    ebc, _ = zero(B, C)
    eb, zb = zero(B)
    es, zs = zero()
    o.append(f"  %ninf_b = linalg.fill ins(%ninf : f32) outs({eb} : {t(B)}) -> {t(B)}")
    o.append(f"  %mx = linalg.reduce {{ arith.maximumf }} ins({lg} : {t(B, C)}) outs(%ninf_b : {t(B)}) dimensions = [1]")
    o.append(f"""  %ex = linalg.generic {{indexing_maps = [{ID2}, {ROW}, {ID2}], iterator_types = ["parallel", "parallel"]}}
      ins({lg}, %mx : {t(B, C)}, {t(B)}) outs({ebc} : {t(B, C)}) {{
  ^bb0(%l: f32, %m: f32, %o: f32):
    %d = arith.subf %l, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  }} -> {t(B, C)}""")
    o.append(f"  %se = linalg.reduce {{ arith.addf }} ins(%ex : {t(B, C)}) outs({zb} : {t(B)}) dimensions = [1]")
    o.append(f"""  %onehot = linalg.generic {{indexing_maps = [{ROW}, {ID2}], iterator_types = ["parallel", "parallel"]}}
      ins(%labels : {t(B, ty='i64')}) outs({ebc} : {t(B, C)}) {{
  ^bb0(%lab: i64, %o: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %eq = arith.cmpi eq, %ji, %lab : i64
    %v = arith.select %eq, %one, %zero : f32
    linalg.yield %v : f32
  }} -> {t(B, C)}""")
    o.append(f"""  %picked = linalg.generic {{indexing_maps = [{ID2}, {ID2}, {ROW}], iterator_types = ["parallel", "reduction"]}}
      ins(%onehot, {lg} : {t(B, C)}, {t(B, C)}) outs({zb} : {t(B)}) {{
  ^bb0(%h: f32, %l: f32, %acc: f32):
    %p = arith.mulf %h, %l : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }} -> {t(B)}""")
    o.append(f"""  %nll = linalg.generic {{indexing_maps = [{ID1}, {ID1}, {ID1}, {ID1}], iterator_types = ["parallel"]}}
      ins(%se, %mx, %picked : {t(B)}, {t(B)}, {t(B)}) outs({eb} : {t(B)}) {{
  ^bb0(%s: f32, %m: f32, %p: f32, %o: f32):
    %ls = math.log %s : f32
    %lse = arith.addf %ls, %m : f32
    %n = arith.subf %lse, %p : f32
    linalg.yield %n : f32
  }} -> {t(B)}""")
    o.append(f"  %sum = linalg.reduce {{ arith.addf }} ins(%nll : {t(B)}) outs({zs} : tensor<f32>) dimensions = [0]")
    o.append(f"""  %loss = linalg.generic {{indexing_maps = [{ID0}, {ID0}], iterator_types = []}}
      ins(%sum : tensor<f32>) outs({es} : tensor<f32>) {{
  ^bb0(%s: f32, %o: f32):
    %m = arith.mulf %s, %inv_b : f32
    linalg.yield %m : f32
  }} -> tensor<f32>""")
    # backward
    o.append(f"""  %dz{L - 1} = linalg.generic {{indexing_maps = [{ID2}, {ROW}, {ID2}, {ID2}], iterator_types = ["parallel", "parallel"]}}
      ins(%ex, %se, %onehot : {t(B, C)}, {t(B)}, {t(B, C)}) outs({ebc} : {t(B, C)}) {{
  ^bb0(%e: f32, %s: f32, %h: f32, %o: f32):
    %p = arith.divf %e, %s : f32
    %d = arith.subf %p, %h : f32
    %g = arith.mulf %d, %inv_b : f32
    linalg.yield %g : f32
  }} -> {t(B, C)}""")
    for i in reversed(range(L)):
        m, n = dims[i], dims[i + 1]
        ai = "%x" if i == 0 else f"%a{i}"
        _, zmn = zero(m, n)
        _, zn = zero(n)
        o.append(f"  %dw{i} = linalg.matmul indexing_maps = [{LHS_T}, {RHS}, {OUT}] ins({ai}, %dz{i} : {t(B, m)}, {t(B, n)}) outs({zmn} : {t(m, n)}) -> {t(m, n)}")
        o.append(f"  %db{i} = linalg.reduce {{ arith.addf }} ins(%dz{i} : {t(B, n)}) outs({zn} : {t(n)}) dimensions = [0]")
        if i > 0:
            ebm, zbm = zero(B, m)
            o.append(f"  %da{i} = linalg.matmul indexing_maps = [{LHS}, {RHS_T}, {OUT}] ins(%dz{i}, %w{i} : {t(B, n)}, {t(m, n)}) outs({zbm} : {t(B, m)}) -> {t(B, m)}")
            o.append(f"""  %dz{i - 1} = linalg.generic {{indexing_maps = [{ID2}, {ID2}, {ID2}], iterator_types = ["parallel", "parallel"]}}
      ins(%da{i}, %z{i - 1} : {t(B, m)}, {t(B, m)}) outs({ebm} : {t(B, m)}) {{
  ^bb0(%g: f32, %z: f32, %o: f32):
    %pos = arith.cmpf ogt, %z, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  }} -> {t(B, m)}""")
    if grads_only:
        rets = [f"%d{n}" for n in pn] + ["%loss"]
        o.append(f"  return {', '.join(rets)} : {', '.join(rtys)}")
        o.append("}")
        return "\n".join(o) + "\n"
    if optimizer == "adamw":
        return adamw(o, pn, ptys, rtys)
    # SGD with momentum
    for name, ty in zip(pn, ptys):
        two = "x" in ty[7:-5] and ty.count("x") == 2
        idm, sm = (ID2, S2) if two else (ID1, S1)
        its = '"parallel", "parallel"' if two else '"parallel"'
        o.append(f"  %en_{name} = tensor.empty() : {ty}")
        o.append(f"  %env_{name} = tensor.empty() : {ty}")
        o.append(f"""  %n_{name}, %nv_{name} = linalg.generic {{indexing_maps = [{idm}, {idm}, {idm}, {sm}, {sm}, {idm}, {idm}], iterator_types = [{its}]}}
      ins(%{name}, %d{name}, %v_{name}, %lr, %mu : {ty}, {ty}, {ty}, tensor<f32>, tensor<f32>)
      outs(%en_{name}, %env_{name} : {ty}, {ty}) {{
  ^bb0(%p: f32, %g: f32, %v: f32, %l: f32, %m: f32, %o1: f32, %o2: f32):
    %mv = arith.mulf %m, %v : f32
    %vn = arith.addf %mv, %g : f32
    %u = arith.mulf %l, %vn : f32
    %pn = arith.subf %p, %u : f32
    linalg.yield %pn, %vn : f32, f32
  }} -> ({ty}, {ty})""")
    rets = [f"%n_{n}" for n in pn] + [f"%nv_{n}" for n in pn] + ["%loss"]
    o.append(f"  return {', '.join(rets)} : {', '.join(rtys)}")
    o.append("}")
    return "\n".join(o) + "\n"


def adamw(o, pn, ptys, rtys):
    """torch.optim.AdamW (no amsgrad, no clipping), weight decay on every parameter:
    p = p (1 - lr wd); m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
    p = p - lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)."""
    o.append("""  %tf = arith.sitofp %step : i64 to f32
  %b1t = math.powf %beta1, %tf : f32
  %b2t = math.powf %beta2, %tf : f32
  %bc1 = arith.subf %one, %b1t : f32
  %bc2 = arith.subf %one, %b2t : f32
  %step_size = arith.divf %lr, %bc1 : f32
  %sbc2 = math.sqrt %bc2 : f32
  %lrwd = arith.mulf %lr, %weight_decay : f32
  %decay = arith.subf %one, %lrwd : f32
  %omb1 = arith.subf %one, %beta1 : f32
  %omb2 = arith.subf %one, %beta2 : f32""")
    for name, ty in zip(pn, ptys):
        two = ty.count("x") == 2
        idm = ID2 if two else ID1
        its = '"parallel", "parallel"' if two else '"parallel"'
        o.append(f"  %en_{name} = tensor.empty() : {ty}")
        o.append(f"""  %n_{name}, %nm_{name}, %nv_{name} = linalg.generic {{indexing_maps = [{idm}, {idm}, {idm}, {idm}, {idm}, {idm}, {idm}], iterator_types = [{its}]}}
      ins(%{name}, %d{name}, %m_{name}, %v_{name} : {ty}, {ty}, {ty}, {ty})
      outs(%en_{name}, %en_{name}, %en_{name} : {ty}, {ty}, {ty}) {{
  ^bb0(%p: f32, %g: f32, %m: f32, %v: f32, %o1: f32, %o2: f32, %o3: f32):
    %pd = arith.mulf %p, %decay : f32
    %m1 = arith.mulf %beta1, %m : f32
    %m2 = arith.mulf %omb1, %g : f32
    %mn = arith.addf %m1, %m2 : f32
    %v1 = arith.mulf %beta2, %v : f32
    %gg = arith.mulf %g, %g : f32
    %v2 = arith.mulf %omb2, %gg : f32
    %vn = arith.addf %v1, %v2 : f32
    %sq = math.sqrt %vn : f32
    %dn = arith.divf %sq, %sbc2 : f32
    %de = arith.addf %dn, %eps : f32
    %r = arith.divf %mn, %de : f32
    %u = arith.mulf %step_size, %r : f32
    %pn = arith.subf %pd, %u : f32
    linalg.yield %pn, %mn, %vn : f32, f32, f32
  }} -> ({ty}, {ty}, {ty})""")
    rets = [f"%n_{n}" for n in pn] + [f"%nm_{n}" for n in pn] + [f"%nv_{n}" for n in pn] + ["%loss"]
    o.append(f"  return {', '.join(rets)} : {', '.join(rtys)}")
    o.append("}")
    return "\n".join(o) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--dims", default="784,1024,1024,10")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--grads-only", action="store_true",
                   help="forward + backward only: return the gradients and the loss (no optimizer)")
    p.add_argument("--optimizer", choices=["momentum", "adamw"], default="momentum")
    a = p.parse_args()
    print(generate([int(d) for d in a.dims.split(",")], a.batch, a.grads_only, a.optimizer), end="")


if __name__ == "__main__":
    main()
