"""Minimiser of ga-fuzz findings.

Two stages, each kept only while the step still fails the same way:
  1. features: regenerate the case with one generator feature disabled
     (gen.Gen draws the same random numbers either way);
  2. results: drop one result of the step, then every statement and argument
     that no longer contributes to a result (a dead-code pass on the text).
"""

import copy
import os
import re
import time

import gen

NAME_RE = re.compile(r"%[A-Za-z_][\w$.]*|%\d+")


def statements(body):
    """Splits body lines into top-level statements (an op with its regions)."""
    stmts = []
    for line in body:
        if line.startswith("  %") or not stmts:
            stmts.append([line])
        else:
            stmts[-1].append(line)
    return stmts


def defs(stmt):
    lhs = stmt[0].split(" = ", 1)[0].strip()
    return [d.split(":")[0] for d in lhs.split(", ")]


def uses(stmt):
    names = set()
    for line in stmt:
        for m in NAME_RE.findall(line.split(" = ", 1)[1] if line is stmt[0] else line):
            names.add(m.split("#")[0])
    return names


def dce(step):
    """Drops statements and arguments that no result depends on."""
    st = copy.copy(step)
    stmts = statements(step.body)
    live = set(n.split("#")[0] for n, _ in step.results)
    keep = []
    for s in reversed(stmts):
        if any(d in live for d in defs(s)):
            keep.append(s)
            live |= uses(s)
    keep.reverse()
    st.body = [l for s in keep for l in s]
    st.args = [a for a in step.args if a[0] in live or "ga.batch" in a[2]]
    st.features = set(step.features)
    st.render()
    return st


TYPE_PATTERNS = [re.compile(p) for p in (
    r"-> (tensor<[^>]*>)\s*$", r"into (tensor<[^>]*>)\s*$", r" to (tensor<[^>]*>)\s*$",
    r"outs\(%\S+ : (tensor<[^>]*>)\)", r": (tensor<[^>]*>)\s*$")]


def def_type(stmt):
    """The type of a single-result statement's value (tensors only), or None."""
    if len(defs(stmt)) != 1 or ":" in stmt[0].split(" = ", 1)[0]:
        return None
    last = stmt[-1].strip()
    if len(stmt) > 1 and last.startswith("} -> "):
        t = last[5:].strip()
        return t if t.startswith("tensor<") else None
    if len(stmt) > 1:
        return None
    for p in TYPE_PATTERNS:
        m = p.search(stmt[0])
        if m:
            return m.group(1)
    return None


def replace_uses(step, old, new):
    st = copy.copy(step)
    pat = re.compile(re.escape(old) + r"(?![\w$.])")
    st.body = [pat.sub(new, l) if not l.startswith("  " + old + " ") else l for l in step.body]
    st.results = [(new if n == old else n, t) for n, t in step.results]
    st.features = set(step.features)
    st.render()
    return st


def bypasses(step):
    """Candidate steps in which one statement's value is replaced by an earlier
    value of the same type (an argument or one of its operands first)."""
    stmts = statements(step.body)
    arg_types = [(n, t) for n, t, _ in step.args]
    earlier = []
    out = []
    for s in stmts:
        t = def_type(s)
        if t is not None:
            d = defs(s)[0]
            ops = [n for n in uses(s)]
            cands = [n for n, tt in earlier + arg_types if tt == t and n in ops]
            cands += [n for n, tt in arg_types if tt == t and n not in cands]
            cands += [n for n, tt in earlier if tt == t and n not in cands]
            out.append((d, cands[:2]))
            # tensor.empty has no defined contents: never a replacement (a
            # reduction into it would read garbage, a false finding).
            if "tensor.empty" not in s[0]:
                earlier.append((d, t))
    return list(reversed(out))


def reduce(tools, step, outcome, detail, work, name, classify, nseeds, seed_base,
           case_seed=None, force=(), disable=(), budget_s=120):
    """Returns (smaller step, detail) failing with the same outcome.

    A mismatch is checked on the ga-verify seed that showed it only."""
    m = re.search(r"--seed=(\d+)", detail)
    if outcome == "mismatch" and m:
        nseeds, seed_base = 1, int(m.group(1))
    t0 = time.time()
    path = os.path.join(work, name + "-red.mlir")
    best_detail = [None]

    def fails(st):
        if time.time() - t0 > budget_s:
            return False
        with open(path, "w") as f:
            f.write(st.text)
        o, d = classify(tools, path, st, nseeds, seed_base)
        if o == outcome:
            best_detail[0] = d
            return True
        return False

    best = step
    dis = set(disable)
    # 1. features
    if case_seed is not None:
        for feat in sorted(step.features):
            if feat not in gen.PROBS or feat in force:
                continue
            cand = gen.generate(case_seed, force, dis | {feat})
            if cand.micro_batches != best.micro_batches:
                continue
            if fails(cand):
                dis.add(feat)
                best = cand
    # 2. results
    best = dce(best)
    i = len(best.results) - 1
    while i >= 0 and len(best.results) > 1:
        cand = copy.copy(best)
        cand.results = best.results[:i] + best.results[i + 1:]
        cand = dce(cand)
        if fails(cand):
            best = cand
        i -= 1
    # 3. bypass statements: use an earlier value of the same type instead
    changed = True
    while changed and time.time() - t0 < budget_s:
        changed = False
        for d, cands in bypasses(best):
            if not any(d in defs(x) for x in statements(best.body)):
                continue
            for c in cands:
                cand = dce(replace_uses(best, d, c))
                if len(cand.body) < len(best.body) and fails(cand):
                    best = cand
                    changed = True
                    break
    if best_detail[0] is None:
        fails(best)
    best.disabled = sorted(dis)
    return best, best_detail[0] or ""
