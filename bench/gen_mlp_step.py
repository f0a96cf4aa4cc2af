#!/usr/bin/env python3
"""Generates a training step of a deep MLP (ReLU, MSE loss, SGD) in upstream
MLIR: a realistic workload for the compile-time benchmark of --ga-accumulate.

    gen_mlp_step.py --layers 100 --width 64 --batch 32 > step.mlir
"""
import argparse


def generate(layers: int, width: int, batch: int) -> str:
    w, b = width, batch
    t2 = f"tensor<{b}x{w}xf32>"
    tw = f"tensor<{w}x{w}xf32>"
    tv = f"tensor<{w}xf32>"
    id2 = "affine_map<(i, j) -> (i, j)>"
    row = "affine_map<(i, j) -> (j)>"
    out = []
    args = [f"%w{i}: {tw}, %b{i}: {tv}" for i in range(layers)]
    results = [f"{tw}, {tv}" for _ in range(layers)]
    out.append(f"func.func @train_step({', '.join(args)}, %lr: f32,")
    out.append(f"    %x: {t2} {{ga.batch = 0 : i64}}, %y: {t2} {{ga.batch = 0 : i64}})")
    out.append(f"    -> ({', '.join(results)}, tensor<f32>) {{")
    out.append("  %zero = arith.constant 0.0 : f32")
    out.append(f"  %scale = arith.constant {1.0 / (b * w):.8e} : f32")
    out.append(f"  %e = tensor.empty() : {t2}")
    out.append(f"  %z = linalg.fill ins(%zero : f32) outs(%e : {t2}) -> {t2}")
    out.append(f"  %ew = tensor.empty() : {tw}")
    out.append(f"  %zw = linalg.fill ins(%zero : f32) outs(%ew : {tw}) -> {tw}")
    out.append(f"  %ev = tensor.empty() : {tv}")
    out.append(f"  %zv = linalg.fill ins(%zero : f32) outs(%ev : {tv}) -> {tv}")
    # Forward: a_{i+1} = relu(a_i W_i + b_i).
    out.append("  %a0 = tensor.cast %x : " + t2 + " to " + t2)
    for i in range(layers):
        out.append(f"  %m{i} = linalg.matmul ins(%a{i}, %w{i} : {t2}, {tw}) outs(%z : {t2}) -> {t2}")
        out.append(f"""  %a{i+1} = linalg.generic {{indexing_maps = [{id2}, {row}, {id2}], iterator_types = ["parallel", "parallel"]}}
      ins(%m{i}, %b{i} : {t2}, {tv}) outs(%e : {t2}) {{
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }} -> {t2}""")
    # Loss: mean squared error; gradient d_L = 2 (a_L - y) / (B W).
    out.append(f"""  %d{layers} = linalg.generic {{indexing_maps = [{id2}, {id2}, {id2}], iterator_types = ["parallel", "parallel"]}}
      ins(%a{layers}, %y : {t2}, {t2}) outs(%e : {t2}) {{
  ^bb0(%p: f32, %t: f32, %o: f32):
    %df = arith.subf %p, %t : f32
    %two = arith.constant 2.0 : f32
    %g = arith.mulf %df, %two : f32
    %gs = arith.mulf %g, %scale : f32
    linalg.yield %gs : f32
  }} -> {t2}""")
    out.append("  %es = tensor.empty() : tensor<f32>")
    out.append("  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>")
    out.append(f"""  %sse = linalg.generic {{indexing_maps = [{id2}, {id2}, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}}
      ins(%a{layers}, %y : {t2}, {t2}) outs(%zs : tensor<f32>) {{
  ^bb0(%p: f32, %t: f32, %acc: f32):
    %df = arith.subf %p, %t : f32
    %sq = arith.mulf %df, %df : f32
    %n = arith.addf %acc, %sq : f32
    linalg.yield %n : f32
  }} -> tensor<f32>""")
    out.append(f"""  %loss = linalg.generic {{indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}}
      ins(%sse : tensor<f32>) outs(%es : tensor<f32>) {{
  ^bb0(%p: f32, %o: f32):
    %l = arith.mulf %p, %scale : f32
    linalg.yield %l : f32
  }} -> tensor<f32>""")
    tmaps = ("[affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, "
             "affine_map<(m, n, k) -> (m, n)>]")
    bmaps = ("[affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, "
             "affine_map<(m, n, k) -> (m, n)>]")
    rets = []
    # Backward, last layer first: g_i = d_{i+1} * relu'(a_{i+1}).
    for i in reversed(range(layers)):
        out.append(f"""  %g{i} = linalg.generic {{indexing_maps = [{id2}, {id2}, {id2}], iterator_types = ["parallel", "parallel"]}}
      ins(%d{i+1}, %a{i+1} : {t2}, {t2}) outs(%e : {t2}) {{
  ^bb0(%dd: f32, %aa: f32, %o: f32):
    %pos = arith.cmpf ogt, %aa, %zero : f32
    %v = arith.select %pos, %dd, %zero : f32
    linalg.yield %v : f32
  }} -> {t2}""")
        out.append(f"  %dw{i} = linalg.matmul indexing_maps = {tmaps} ins(%a{i}, %g{i} : {t2}, {t2}) outs(%zw : {tw}) -> {tw}")
        out.append(f"  %db{i} = linalg.reduce {{ arith.addf }} ins(%g{i} : {t2}) outs(%zv : {tv}) dimensions = [0]")
        out.append(f"  %d{i} = linalg.matmul indexing_maps = {bmaps} ins(%g{i}, %w{i} : {t2}, {tw}) outs(%z : {t2}) -> {t2}")
        for name, grad, ty, dims in (("nw", "dw", tw, 2), ("nb", "db", tv, 1)):
            m = id2 if dims == 2 else "affine_map<(i) -> (i)>"
            its = '"parallel", "parallel"' if dims == 2 else '"parallel"'
            param = "w" if name == "nw" else "b"
            out.append(f"""  %{name}{i} = linalg.generic {{indexing_maps = [{m}, {m}], iterator_types = [{its}]}}
      ins(%{grad}{i} : {ty}) outs(%{param}{i} : {ty}) {{
  ^bb0(%gg: f32, %pp: f32):
    %u = arith.mulf %gg, %lr : f32
    %n = arith.subf %pp, %u : f32
    linalg.yield %n : f32
  }} -> {ty}""")
    for i in range(layers):
        rets.append((f"%nw{i}, %nb{i}", f"{tw}, {tv}"))
    vals = ", ".join(r[0] for r in rets) + ", %loss"
    tys = ", ".join(r[1] for r in rets) + ", tensor<f32>"
    out.append(f"  return {vals} : {tys}")
    out.append("}")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--layers", type=int, default=10)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()
    print(generate(args.layers, args.width, args.batch), end="")


if __name__ == "__main__":
    main()
