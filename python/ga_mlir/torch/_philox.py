"""Random numbers that do not depend on the number of micro-batches.

PyTorch's CPU generator draws the numbers of a dropout mask one after the
other, so the mask of a sample depends on where the sample sits in the
batch and on how many numbers were drawn before: a step in N micro-batches
draws other masks than the full-batch step, and other masks again for
another N. The compiled step draws its random numbers instead from a
counter-based generator, Philox 4x32-10 (Salmon et al., "Parallel random
numbers: as easy as 1, 2, 3", SC'11; the generator of PyTorch's CUDA
backend and of JAX), written in traced integer tensor ops (int64 tensors
holding 32-bit words), so it is part of the step that --ga-accumulate
rewrites. Each number is a function of

  key     = the step's seed (a 64-bit argument of the step, drawn from
            torch's default generator at each call: torch.manual_seed makes
            runs reproducible, and each call advances the generator),
  counter = (element, sample, draw, 0): the element's offset inside its
            sample, the sample's index in the whole batch, the index of the
            draw in the step (the k-th dropout of the forward),

and nothing else. The sample's index comes from an argument of the step,
`arange(B)`, marked as a per-sample argument: --ga-accumulate slices it per
micro-batch like the inputs, so the micro-batch [s, s + b) sees the global
indices s, ..., s + b - 1, and every micro-batched step draws the numbers
of the full-batch step.

Which dimension of a drawn tensor is the batch one is found by running the
forward eagerly at two batch sizes (B and B - 1) and comparing the shapes of
each draw (a dimension that holds several samples, [B*T, D], is found as
well: its size scales with B).
"""

import contextlib
import gc
import math
import pickle
import random
import sys

import numpy
import torch

from ._common import CompileError

aten = torch.ops.aten

MASK32 = 0xFFFFFFFF
# Philox 4x32's multipliers and Weyl key increments.
PHILOX_M = (0xD2511F53, 0xCD9E8D57)
PHILOX_W = (0x9E3779B9, 0xBB67AE85)
PHILOX_ROUNDS = 10


def philox(counter, key):
    """Philox 4x32-10 of the four 32-bit words `counter` (int64 tensors that
    broadcast together) under the two words `key` (int64 tensors): the first
    word of the output block, in [0, 2**32). Products of two 32-bit words
    wrap modulo 2**64 in int64 and keep their low 64 bits exactly; the high
    word is recovered by a shift and a mask."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for r in range(PHILOX_ROUNDS):
        if r:
            k0 = (k0 + PHILOX_W[0]) & MASK32
            k1 = (k1 + PHILOX_W[1]) & MASK32
        p0 = c0 * PHILOX_M[0]
        p1 = c2 * PHILOX_M[1]
        hi0, lo0 = (p0 >> 32) & MASK32, p0 & MASK32
        hi1, lo1 = (p1 >> 32) & MASK32, p1 & MASK32
        c0, c1, c2, c3 = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0)
    return c0


# The draws that take two words per number (a normal number: Box-Muller of
# two uniform ones).
_TWO_WORDS = ("randn", "randn_like", "normal", "normal_", "normal_functional")


class _Draw:
    """Where the samples are in a drawn tensor: `dim` (None: the draw is
    the same for every sample) holds `per` consecutive entries per
    sample; each number takes `words` words of the generator."""

    def __init__(self, shape, dim=None, per=1, words=1):
        self.shape, self.dim, self.per = tuple(shape), dim, per
        self.words = words


def _batch_layout(shape, other, batch, other_batch):
    """The _Draw of a tensor of `shape` at batch size `batch` that has
    `other` at batch size `other_batch`; None when no single dimension
    scales with the batch."""
    changed = [d for d, (s, t) in enumerate(zip(shape, other)) if s != t]
    if len(shape) != len(other) or len(changed) > 1:
        return None
    if not changed:
        return _Draw(shape)
    d = changed[0]
    if shape[d] % batch or other[d] != shape[d] // batch * other_batch:
        return None
    return _Draw(shape, d, shape[d] // batch)


class RandomDraws:
    """While tracing: the decompositions of PyTorch's random ops into
    Philox numbers keyed by the step's `seed` and `sample_index` arguments
    (the tensors that the trace has as placeholders). `layouts` are the
    _Draws of the forward's draws, in order (see draw_layouts)."""

    def __init__(self, seed, sample_index, layouts, where):
        self.seed, self.sample_index = seed, sample_index
        self.layouts, self.where = layouts, where
        self.count = 0
        self.block = None  # the words of all draws (see _block)

    def _key(self):
        return (self.seed & MASK32, (self.seed >> 32) & MASK32)

    def _sample_shape(self, layout):
        """The shape of one sample's words of a draw (the batch dimension
        holds `per` entries per sample; a last dimension of `words` words
        per number)."""
        return [layout.per if d == layout.dim else s
                for d, s in enumerate(layout.shape)] + [layout.words]

    def _block(self, device):
        """The words of every draw that has a batch dimension, computed at
        once as [B, E] (E: the draws' elements per sample, one after the
        other): one Philox of ~130 elementwise operations for the whole
        step instead of one per draw (each is a loop nest to compile)."""
        elements, draws, self.columns = [], [], {}
        offset = 0
        for k, layout in enumerate(self.layouts):
            if layout.dim is None:
                continue
            size = math.prod(self._sample_shape(layout))
            if size > MASK32:
                raise CompileError(
                    f"{self.where(k)}: error: a random draw of {size} "
                    "numbers per sample: the generator counts at most 2**32 "
                    "per sample",
                    code="random-draw-unsupported")
            elements.append(torch.arange(size, device=device))
            draws.append(torch.full((size,), k, dtype=torch.int64,
                                    device=device))
            self.columns[k] = (offset, size)
            offset += size
        zero = torch.zeros((), dtype=torch.int64, device=device)
        return philox((torch.cat(elements).view(1, -1),
                       self.sample_index.view(-1, 1),
                       torch.cat(draws).view(1, -1), zero), self._key())

    def _unbatched(self, k, shape, device):
        """The words of a draw without a batch dimension (the same for
        every sample: sample index 0) of `shape` (its last dimension the
        words of each number)."""
        offset = torch.arange(math.prod(shape), device=device).view(shape)
        zero = torch.zeros((), dtype=torch.int64, device=device)
        draw = torch.full((), k, dtype=torch.int64, device=device)
        return philox((offset, zero, draw, zero), self._key())

    def bits(self, shape, device):
        """The next draw: 32-bit random words of `shape` (int64), word
        (element, sample, draw) of Philox where `element` is the row-major
        index in the sample's part of the draw; for a draw of `words` > 1
        words per number, of shape `shape + (words,)`."""
        k = self.count
        self.count += 1
        shape = tuple(shape)
        if k >= len(self.layouts) or self.layouts[k].shape != shape:
            raise CompileError(
                f"{self.where(k)}: error: random draw {k} of the step (of "
                f"shape {list(shape)}) is not the one the forward made when "
                "run eagerly: the forward draws random numbers in a "
                "different order when traced, which the compiled step cannot "
                "reproduce",
                code="random-draw-unsupported")
        layout = self.layouts[k]
        full = shape + ((layout.words,) if layout.words > 1 else ())
        if layout.dim is None:
            return self._unbatched(k, full, device)
        if self.block is None:
            self.block = self._block(device)
        offset, size = self.columns[k]
        words = self.block[:, offset:offset + size]
        words = words.reshape(-1, *self._sample_shape(layout))
        d = layout.dim
        if d == 0 and layout.per == 1:
            return words.reshape(full)
        # [B, ..., per, ...] -> [..., B, per, ...] -> [..., B * per, ...]
        return words.movedim(0, d).reshape(full)

    def uniform(self, shape, dtype, device):
        """Uniform numbers in [0, 1) with 24 random bits (exact in
        float32)."""
        bits = self.bits(shape, device) >> 8
        return bits.to(dtype) * (2.0 ** -24)

    def normal(self, shape, dtype, device):
        """Standard normal numbers: Box-Muller of two 24-bit uniform
        numbers u, v of the number's two words, sqrt(-2 log(1 - u)) *
        cos(2 pi v) (|z| < 5.8: 1 - u is at least 2**-24)."""
        words = self.bits(shape, device) >> 8
        u = words[..., 0].to(torch.float32) * (2.0 ** -24)
        v = words[..., 1].to(torch.float32) * (2.0 ** -24)
        z = torch.sqrt(-2.0 * torch.log1p(-u)) * torch.cos(
            (2.0 * math.pi) * v)
        return z.to(dtype)

    def integers(self, low, high, shape, dtype, device):
        """Integers in [low, high): low + the word modulo high - low (the
        word has 32 bits: a bias of at most (high - low) / 2**32)."""
        return (low + self.bits(shape, device) % (high - low)).to(dtype)

    def keep(self, shape, p_one, device):
        """A boolean tensor that is True with probability `p_one` (a
        Python number): the 24-bit number compared with ceil(p * 2**24) as
        integers, so that no rounding decides."""
        threshold = math.ceil(p_one * 2 ** 24)
        return (self.bits(shape, device) >> 8) < threshold

    def table(self):
        """The decomposition table entries of the random ops."""
        def bernoulli_p(self_, p=0.5, generator=None):
            return self.keep(self_.shape, p, self_.device).to(self_.dtype)

        def bernoulli(self_, generator=None):
            u = self.uniform(self_.shape, torch.float32, self_.device)
            return (u < self_).to(self_.dtype)

        def native_dropout(input, p, train):
            if not train or p == 0:
                return input, torch.ones_like(input, dtype=torch.bool)
            mask = self.keep(input.shape, 1 - p, input.device)
            return mask * input * float(1.0 / (1.0 - p)), mask

        def uniform(self_, low=0.0, high=1.0, generator=None):
            u = self.uniform(self_.shape, self_.dtype, self_.device)
            return low + (high - low) * u

        def exponential(self_, lambd=1.0, generator=None):
            # Inverse transform of a uniform u in [0, 1): -log(1 - u) /
            # lambd, 1 - u in (0, 1] (exact in float32: 24 bits).
            u = self.uniform(self_.shape, torch.float32, self_.device)
            return (-torch.log1p(-u) / lambd).to(self_.dtype)

        def randn(size, generator=None, dtype=None, layout=None, device=None,
                  pin_memory=None):
            return self.normal(size, dtype or torch.float32, device)

        def randn_like(self_, dtype=None, layout=None, device=None,
                       pin_memory=None, memory_format=None):
            return self.normal(self_.shape, dtype or self_.dtype,
                               device or self_.device)

        def normal_functional(self_, mean=0.0, std=1.0, generator=None):
            z = self.normal(self_.shape, self_.dtype, self_.device)
            return mean + std * z

        def randint_low(low, high, size, generator=None, dtype=None,
                        layout=None, device=None, pin_memory=None):
            return self.integers(low, high, size, dtype or torch.int64,
                                 device)

        def randint(high, size, generator=None, dtype=None, layout=None,
                    device=None, pin_memory=None):
            return randint_low(0, high, size, dtype=dtype, device=device)

        def rand(size, generator=None, dtype=None, layout=None, device=None,
                 pin_memory=None):
            return self.uniform(size, dtype or torch.float32, device)

        def rand_like(self_, dtype=None, layout=None, device=None,
                      pin_memory=None, memory_format=None):
            return self.uniform(self_.shape, dtype or self_.dtype,
                                device or self_.device)

        def bernoulli_tensor_(self_, p, generator=None):
            u = self.uniform(self_.shape, torch.float32, self_.device)
            return self_.copy_(u < p)

        def in_place(functional):
            # The in-place form (Tensor.bernoulli_, uniform_, exponential_):
            # a step traced without functionalization first (the model's
            # own autograd.Functions, time loops, grouped products: _export)
            # meets these before they become functional; as the same draw,
            # so that the draws keep their order.
            return lambda self_, *args, **kwargs: self_.copy_(
                functional(self_, *args, **kwargs))

        return {aten.bernoulli.p: bernoulli_p,
                aten.bernoulli.default: bernoulli,
                aten.bernoulli_.float: in_place(bernoulli_p),
                aten.bernoulli_.Tensor: bernoulli_tensor_,
                aten.native_dropout.default: native_dropout,
                aten.uniform.default: uniform,
                aten.uniform_.default: in_place(uniform),
                aten.exponential.default: exponential,
                aten.exponential_.default: in_place(exponential),
                aten.randn.default: randn,
                aten.randn_like.default: randn_like,
                aten.normal_functional.default: normal_functional,
                aten.normal_.default: in_place(normal_functional),
                aten.randint.low: randint_low,
                aten.randint.default: randint,
                aten.rand.default: rand,
                aten.rand_like.default: rand_like}


# The draws (overload packets) with a decomposition above; the others (is_random)
# are refused at their line.
SUPPORTED = ("bernoulli", "bernoulli_", "rand", "rand_like", "uniform",
             "uniform_", "native_dropout", "exponential", "exponential_",
             "randn", "randn_like", "normal_", "normal_functional",
             "randint")


def is_random(op):
    """Whether the op overload `op` draws random numbers: what PyTorch
    declares of it (the nondeterministic_seeded tag: every op that reads
    the generator, poisson, binomial and _standard_gamma included), not a
    list of names."""
    return torch.Tag.nondeterministic_seeded in getattr(op, "tags", ())


def _draws(name, args, kwargs):
    """Whether a call of the random op `name` draws: RReLU draws its slopes
    in training mode only (its `training` argument, the fifth)."""
    if not name.startswith("rrelu_with_noise"):
        return True
    return bool(kwargs.get("training", args[4] if len(args) > 4 else False))


class _Recorder(torch.utils._python_dispatch.TorchDispatchMode):
    """Records the shape of each random op's draw, in order."""

    def __init__(self):
        super().__init__()
        self.shapes = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func.overloadpacket.__name__
        out = func(*args, **kwargs)
        if is_random(func) and _draws(name, args, kwargs):
            from ._locations import current_user_line
            first = out[0] if isinstance(out, tuple) else out
            self.shapes.append((name, tuple(first.shape),
                                current_user_line()))
        return out


def _host_states():
    """The states of the generators a model may draw from outside torch:
    numpy's global one (np.random.rand, ...) and Python's (random.random,
    ...)."""
    return numpy.random.get_state(), random.getstate()


@contextlib.contextmanager
def host_generators_kept():
    """Leaves numpy's and Python's global generators as they were: the
    frontend runs the forward eagerly (the probe, the draws' layouts),
    which must not consume the user's numbers."""
    states = _host_states()
    try:
        yield
    finally:
        numpy.random.set_state(states[0])
        random.setstate(states[1])


def _subclasses(kinds):
    """`kinds` and every class derived from them, now."""
    found, stack = set(), list(kinds)
    while stack:
        kind = stack.pop()
        if kind not in found:
            found.add(kind)
            stack.extend(type.__subclasses__(kind))
    return found


def _held_generators():
    """The generators other than numpy's and Python's global ones that
    exist now (a numpy Generator from np.random.default_rng(), a
    RandomState, a random.Random the model holds), each with a function of
    its state."""
    kinds = {numpy.random.Generator: lambda g: g.bit_generator.state,
             numpy.random.RandomState: lambda g: g.get_state(),
             random.Random: lambda g: g.getstate()}
    # (random.SystemRandom has no state: not watched.) The objects' own
    # classes are looked up in a set: isinstance over the whole heap took
    # 0.1 s with 400 k objects, and reads __class__, which some objects
    # answer with a deprecation warning (torch.distributed.reduce_op).
    classes = _subclasses(kinds) - _subclasses([random.SystemRandom])
    return [(g, next(kinds[k] for k in kinds if isinstance(g, k)))
            for g in gc.get_objects() if type(g) in classes and
            g is not numpy.random.mtrand._rand and g is not random._inst]


_C_EVENTS = frozenset(("c_call", "c_return", "c_exception"))


@contextlib.contextmanager
def _held_draws_watched(found):
    """While the body runs: the user's line of the first draw from a
    generator that _held_generators finds (this runs only when such a
    generator exists). Its numbers would be constants of the trace as
    well; a change of its state (a draw, a seed) is refused.

    A random.Random's state changes only in its C methods (random,
    getrandbits, seed, setstate): a profile function compares the states
    around each call of a C method bound to a held generator (a change
    made where no Python line calls it, map(r.random, ...), is found at
    the next such call or at the end). numpy's methods are Cython
    functions, which a profile function does not see: with a numpy
    generator held, each line's state is compared with the last one."""
    from ._locations import UNLOCATED, current_user_line, kept_frame
    held = _held_generators()
    if not held:
        yield
        return
    before = [pickle.dumps(state(g)) for g, state in held]

    def drew(at, line):
        if found or all(pickle.dumps(state(g)) == b
                        for (g, state), b in zip(held, before)):
            return
        # At the end (no frame): a change no watched event saw.
        where = UNLOCATED if at is None else \
            f"{at.f_code.co_filename}:{line}" if line and kept_frame(
                at.f_code.co_filename, at.f_code.co_name) else \
            current_user_line()
        found.append((where, "a generator of its own (a numpy Generator, "
                      "RandomState or random.Random)"))

    if all(isinstance(g, random.Random) for g, _ in held):
        watched = {id(g) for g, _ in held}

        def calls(frame, event, arg):
            # (Only C functions: a Python function's return value may be
            # any object, whose __getattr__ could run code.)
            if event in _C_EVENTS and \
                    id(getattr(arg, "__self__", None)) in watched:
                drew(frame, frame.f_lineno)

        hooks = sys.getprofile, sys.setprofile, calls
    else:
        last = {}

        def local(frame, event, arg):
            # The draw ran since the last event: on the frame's previous
            # line.
            drew(frame, last.get(id(frame)))
            last[id(frame)] = frame.f_lineno
            return local

        def watch(frame, event, arg):
            # A call: the draw ran on the caller's line.
            drew(frame.f_back, frame.f_back and frame.f_back.f_lineno)
            return local

        hooks = sys.gettrace, sys.settrace, watch
    get, install, hook = hooks
    previous = get()
    install(hook)
    try:
        yield
    finally:
        install(previous)
    drew(None, None)
    held.clear()  # the closures' cycle would keep the user's objects


@contextlib.contextmanager
def _host_draws_refused():
    """Runs the body with the functions of numpy.random and random that
    draw from their global generators wrapped to record the user's line of
    the first draw; CompileError there. A number drawn while the step is
    traced is a constant of the trace: the compiled step would use the same
    numbers at every call (silently: a frozen mask), so it is refused,
    unless the forward itself seeded that generator with a Python number
    before it drew (BigBird's random blocks: np.random.seed(layer) in
    training): its draws are then the same at every call, and the
    constants are what the forward computes (the compiled step leaves the
    generators' states as they were, where the forward leaves them
    seeded). The calls are watched, not only the states: a forward that
    draws and then seeds may end in the state it started from. A function
    imported under another name is not wrapped: its draw is refused
    without a line (the state changed), or at the seed that follows it.
    Generators of the model's own (np.random.default_rng(), RandomState,
    random.Random) are watched too (_held_draws_watched): their draws were
    frozen silently before."""
    from ._locations import UNLOCATED, current_user_line
    found, seeded = [], set()
    states = {numpy.random: numpy.random.get_state, random: random.getstate}
    entry = {m: pickle.dumps(get()) for m, get in states.items()}

    def changed(module):
        return pickle.dumps(states[module]()) != entry[module]

    def recording(module, name, function):
        def call(*args, **kwargs):
            value = args[0] if args else next(iter(kwargs.values()), None)
            # Seeded with a number and nothing drawn before (by a function
            # not wrapped, too): what it draws from here on is the same at
            # every call. A seed of None (the system's entropy) draws.
            if name == "seed" and isinstance(value, int) and \
                    module not in seeded and not changed(module):
                seeded.add(module)
            elif not found and module not in seeded and \
                    name not in ("get_state", "getstate"):
                found.append((current_user_line(),
                              f"{module.__name__}.{name}"))
            return function(*args, **kwargs)
        return call

    wrapped = [(numpy.random, "seed", numpy.random.seed)]
    for module, owner in ((numpy.random, numpy.random.mtrand._rand),
                          (random, random._inst)):
        for name, value in list(vars(module).items()):
            if callable(value) and getattr(value, "__self__", None) is owner:
                wrapped.append((module, name, value))
    for module, name, value in wrapped:
        setattr(module, name, recording(module, name, value))
    try:
        with _held_draws_watched(found):
            yield
    finally:
        for module, name, value in wrapped:
            setattr(module, name, value)
    if not found and all(m in seeded or not changed(m) for m in states):
        return
    where, what = found[0] if found else (UNLOCATED, "numpy or random")
    raise CompileError(
        f"{where}: error: the forward draws random numbers with {what}, "
        "outside torch: the trace would keep the numbers it drew as "
        "constants, the same at every call of the compiled step; draw them "
        "with torch (torch.rand, torch.bernoulli, torch.randn, ...), which "
        "the compiled step draws per sample, or pass them as an input of "
        "the step" + ("" if "own" in what else " (or seed the generator "
                      "with a number before drawing, when the numbers are "
                      "meant to be the same at every step)"),
        code="random-draw-unsupported")


def record_draws(run):
    """The (op name, shape, user's line) of each random draw of `run()`.
    A draw from numpy's or Python's generator is refused unless the forward
    seeded it first (_host_draws_refused); their states are left as they
    were."""
    recorder = _Recorder()
    with host_generators_kept(), _host_draws_refused():
        with torch.random.fork_rng(devices=[]), recorder:
            run()
    return recorder.shapes


def draw_layouts(full, smaller, batch, smaller_batch):
    """The _Draws of the draws `full` (record_draws at batch size `batch`)
    given `smaller` (at `smaller_batch`; None when the batch has one sample
    or the forward could not run on fewer samples): None for a draw whose
    batch dimension cannot be told, with the reason."""
    layouts = []
    for k, (name, shape, _) in enumerate(full):
        if smaller is None:
            # One sample: nothing to tell apart (the element's offset is its
            # index in the whole tensor either way). Else the one dimension
            # of size B, or none.
            dims = [d for d, s in enumerate(shape) if s == batch]
            if batch != 1 and len(dims) != 1:
                return None, k
            layouts.append(_Draw(shape, dims[0] if dims else None,
                                 words=2 if name in _TWO_WORDS else 1))
            continue
        if k >= len(smaller) or smaller[k][0] != name:
            return None, k
        layout = _batch_layout(shape, smaller[k][1], batch, smaller_batch)
        if layout is None:
            return None, k
        layout.words = 2 if name in _TWO_WORDS else 1
        layouts.append(layout)
    return layouts, None

