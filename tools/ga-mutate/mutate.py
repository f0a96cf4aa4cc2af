"""Mutation operators of ga-mutate: small random edits of an MLIR text.

Every operator takes a random.Random and the lines of a module and returns
the mutated lines and a short description, or None when it found nothing to
edit. They are textual on purpose: the mutants that upstream MLIR still
parses and verifies are valid IR nobody would write by hand (an index of -1,
an affine map that reads another dimension, an op swapped for its sibling),
which is what the passes must survive.
"""

import re

# Integer literals that are not part of a name (%12, %arg0, #map1, d0, f32,
# 4x8), of a float (1.0e+00) or of a hexadecimal constant.
INT_RE = re.compile(r"(?<![\w%#.^@$x])-?\d+(?![\w.x])")
FLOAT_RE = re.compile(r"(?<![\w%#.^@$])-?\d+\.\d*(?:e[+-]?\d+)?(?![\w])")
SHAPED_RE = re.compile(r"\b(tensor|memref|vector)<([^<>]*)>")
SSA_USE_RE = re.compile(r"%[A-Za-z_][\w$.]*|%\d+")
OP_RE = re.compile(r"\b(arith|math|linalg|tensor|scf|memref|func|bufferization)"
                   r"\.[a-z_]+\b(?! =)")
AFFINE_RE = re.compile(r"affine_map<\(([^)]*)\)(?:\[[^\]]*\])? -> \(([^)]*)\)>")
ELEMENT_TYPES = ("f32", "f64", "f16", "bf16", "i1", "i8", "i32", "i64", "index")
KEYWORD_SWAPS = (
    ("parallel", "reduction"), ("reduction", "parallel"),
    ("addf", "mulf"), ("mulf", "subf"), ("subf", "divf"), ("maximumf", "minimumf"),
    ("addi", "muli"), ("cmpf ogt", "cmpf olt"), ("outs(", "ins("),
    ("ins(", "outs("), ("linalg.matmul", "linalg.batch_matmul"),
    ("linalg.reduce", "linalg.map"), ("linalg.generic", "linalg.map"),
    ("tensor.empty", "bufferization.alloc_tensor"), ("scf.yield", "linalg.yield"),
    ("collapse_shape", "expand_shape"), ("expand_shape", "collapse_shape"),
)


def interesting_ints(value, rng):
    """Values that break index arithmetic: negative, zero, ranks, boundaries."""
    pool = [-1, 0, 1, 2, 3, 4, 5, 7, 8, 16, 63, 64, 65, 127, -2, value + 1, value - 1,
            value * 2, -value, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 62, 2 ** 63 - 1,
            -2 ** 63, 1 << 40]
    return rng.choice(pool)


def interesting_floats(rng):
    return rng.choice(("0.0", "-0.0", "1.0", "-1.0", "3.40282347E+38", "1.0e+308",
                       "0x7FC00000", "1.401298e-45", "2.5"))


def _pick(rng, lines, regex, skip_comments=True):
    """A random (line index, match) of regex in lines, or None."""
    hits = []
    for i, line in enumerate(lines):
        if skip_comments and line.lstrip().startswith("//"):
            continue
        for m in regex.finditer(line):
            hits.append((i, m))
    return rng.choice(hits) if hits else None


def _replace(lines, i, start, end, text):
    out = list(lines)
    out[i] = lines[i][:start] + text + lines[i][end:]
    return out


def mutate_int(rng, lines):
    hit = _pick(rng, lines, INT_RE)
    if not hit:
        return None
    i, m = hit
    new = str(interesting_ints(int(m.group(0)), rng))
    return _replace(lines, i, m.start(), m.end(), new), "int %s -> %s" % (m.group(0), new)


def mutate_float(rng, lines):
    hit = _pick(rng, lines, FLOAT_RE)
    if not hit:
        return None
    i, m = hit
    new = interesting_floats(rng)
    return _replace(lines, i, m.start(), m.end(), new), "float %s -> %s" % (m.group(0), new)


def mutate_shape(rng, lines):
    """Changes, adds or drops one dimension of a shaped type, or its element."""
    hit = _pick(rng, lines, SHAPED_RE)
    if not hit:
        return None
    i, m = hit
    parts = m.group(2).split("x")
    # Only simple shapes (no layouts or encodings): `4x?x8xf32`.
    if "," in m.group(2) or not parts:
        return None
    dims, elem = parts[:-1], parts[-1]
    choice = rng.randrange(4)
    if choice == 0 and dims:
        k = rng.randrange(len(dims))
        dims[k] = rng.choice(("?", "0", "1", "2", "3", "5", "7", "8", "64"))
    elif choice == 1:
        dims.insert(rng.randrange(len(dims) + 1), rng.choice(("1", "2", "?", "4")))
    elif choice == 2 and dims:
        del dims[rng.randrange(len(dims))]
    else:
        elem = rng.choice(ELEMENT_TYPES)
    new = "%s<%s>" % (m.group(1), "x".join(dims + [elem]))
    return _replace(lines, i, m.start(), m.end(), new), "type %s -> %s" % (m.group(0), new)


def mutate_ssa(rng, lines):
    """Replaces a use of one SSA value by another name of the module."""
    names = sorted({n for line in lines for n in SSA_USE_RE.findall(line)})
    hit = _pick(rng, lines, SSA_USE_RE)
    if not hit or len(names) < 2:
        return None
    i, m = hit
    new = rng.choice(names)
    return _replace(lines, i, m.start(), m.end(), new), "value %s -> %s" % (m.group(0), new)


def mutate_op(rng, lines):
    """Replaces an op name by another op name of the module."""
    names = sorted({n.group(0) for line in lines for n in OP_RE.finditer(line)})
    hit = _pick(rng, lines, OP_RE)
    if not hit or len(names) < 2:
        return None
    i, m = hit
    new = rng.choice(names)
    return _replace(lines, i, m.start(), m.end(), new), "op %s -> %s" % (m.group(0), new)


def mutate_keyword(rng, lines):
    swaps = [(i, s) for i, line in enumerate(lines) for s in KEYWORD_SWAPS if s[0] in line
             and not line.lstrip().startswith("//")]
    if not swaps:
        return None
    i, (old, new) = rng.choice(swaps)
    out = list(lines)
    out[i] = lines[i].replace(old, new, 1)
    return out, "keyword %s -> %s" % (old, new)


def mutate_affine(rng, lines):
    """Edits one result of an affine map: another dimension, a constant, a
    sum, a floordiv / mod, or one result more or less."""
    hit = _pick(rng, lines, AFFINE_RE)
    if not hit:
        return None
    i, m = hit
    dims = [d.strip() for d in m.group(1).split(",") if d.strip()]
    results = [r.strip() for r in m.group(2).split(",")] if m.group(2).strip() else []
    if not dims:
        return None
    choice = rng.randrange(5)
    d = rng.choice(dims)
    if choice == 0 and results:
        results[rng.randrange(len(results))] = d
    elif choice == 1 and results:
        results[rng.randrange(len(results))] = rng.choice(("0", "1", "-1", "5"))
    elif choice == 2 and results:
        k = rng.randrange(len(results))
        results[k] = "%s %s" % (results[k], rng.choice(
            ("+ %s" % d, "floordiv 2", "mod 3", "* 2", "- 1", "floordiv 0", "mod -1")))
    elif choice == 3 and results:
        del results[rng.randrange(len(results))]
    else:
        results.insert(rng.randrange(len(results) + 1), d)
    new = m.group(0)[:m.start(2) - m.start(0)] + ", ".join(results) + ")>"
    return _replace(lines, i, m.start(), m.end(), new), "map %s -> %s" % (m.group(0), new)


def _body_lines(lines):
    return [i for i, line in enumerate(lines)
            if line.strip() and not line.lstrip().startswith("//")
            and not line.lstrip().startswith(("module", "func.func", "}"))]


def mutate_line(rng, lines):
    """Deletes, duplicates, swaps or moves a line of a body."""
    body = _body_lines(lines)
    if len(body) < 2:
        return None
    out = list(lines)
    a, b = rng.sample(body, 2)
    choice = rng.randrange(4)
    if choice == 0:
        del out[a]
        return out, "delete line %d" % (a + 1)
    if choice == 1:
        out.insert(a, lines[a])
        return out, "duplicate line %d" % (a + 1)
    if choice == 2:
        out[a], out[b] = out[b], out[a]
        return out, "swap lines %d and %d" % (a + 1, b + 1)
    line = out.pop(a)
    out.insert(b, line)
    return out, "move line %d to %d" % (a + 1, b + 1)


def mutate_batch_attr(rng, lines):
    """Moves, drops or adds a `ga.batch` argument attribute."""
    ga_re = re.compile(r"\{ga\.batch = (\d+)( : i64)?\}")
    hit = _pick(rng, lines, ga_re)
    if not hit:
        return None
    i, m = hit
    choice = rng.randrange(3)
    if choice == 0:
        new = ""
    elif choice == 1:
        new = "{ga.batch = %d}" % rng.choice((-1, 0, 1, 2, 3, 64))
    else:
        new = "{ga.batch = %s : i32}" % m.group(1)
    return _replace(lines, i, m.start(), m.end(), new), "batch attr %s -> %r" % (m.group(0), new)


# Operator name -> (function, weight).
OPERATORS = {
    "int": (mutate_int, 6),
    "float": (mutate_float, 1),
    "type": (mutate_shape, 4),
    "value": (mutate_ssa, 3),
    "op": (mutate_op, 2),
    "keyword": (mutate_keyword, 2),
    "map": (mutate_affine, 3),
    "line": (mutate_line, 3),
    "batch": (mutate_batch_attr, 1),
}


def mutate(rng, lines, count):
    """Applies `count` random operators (retrying those that found nothing);
    returns the lines and the list of descriptions."""
    names = sorted(OPERATORS)
    weights = [OPERATORS[n][1] for n in names]
    done = []
    for _ in range(count):
        for _attempt in range(8):
            name = rng.choices(names, weights)[0]
            result = OPERATORS[name][0](rng, lines)
            if result:
                lines, what = result
                done.append(what)
                break
    return lines, done
