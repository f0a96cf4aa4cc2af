"""ga-compile: a training step to a self-contained shared library.

The one implementation of the ahead-of-time chain

    the driver (ga_mlir.driver: the rewrite, the lowering for the CPU or
    CUDA, in process) -> mlir-translate --mlir-to-llvmir -> llc
      -> clang -shared

used by the `ga-compile` tool (tools/ga-compile), the PyTorch frontend
(ga_mlir.torch), ga_mlir.steplib, the benchmarks and the GPU acceptance kit
(scripts/gpu-kit.sh). The library it writes depends at run time only on libc,
libm, the CUDA driver (libcuda.so.1), cuBLASLt and NCCL when the step calls
them, OpenBLAS for CPU steps lowered with blas=1, and our small runtime
libraries, which are copied beside it and found through RUNPATH $ORIGIN:
never on LLVM or MLIR, so that it runs on a machine that has neither.

For --target=cuda the kernels are embedded as one fatbin per GPU module
holding a cubin for every chip of `chips` (default sm_80 and sm_90) and the
PTX of the first (JIT-compiled by the driver on newer GPUs): the NVVM
pipeline writes PTX (format=isa), ptxas assembles it once per chip and
fatbinary bundles the images; the objects are read and replaced through the
parsed IR (ga_mlir.rewrite_gpu_objects, libGACAPI.so's C API).

Needs no Python package beyond the standard library, and libGACAPI.so of
the same build or install tree (the driver, and the GPU objects).
"""

import argparse
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

from . import build_dir as package_build_dir
from ._codes import CodedError, compiler_code

LLVM_BIN = os.environ.get("GA_LLVM_BIN", "/usr/lib/llvm-22/bin")
DEFAULT_CHIPS = ("sm_80", "sm_90")

# Run-time libraries of compiled steps: (library file, link name, the
# prefixes of the symbols it defines). A step's undefined symbols (llvm-nm
# -u of its object) decide which it needs.
_RUNTIMES = [
    ("libga_cuda_runtime.so", "ga_cuda_runtime", ("mgpu", "gaGpu", "gaCuda")),
    ("libga_cublaslt_runtime.so", "ga_cublaslt_runtime", ("gaCublasLt",)),
    ("libGANcclRuntime.so", "GANcclRuntime", ("gaNccl",)),
    ("libga_cpu_runtime.so", "ga_cpu_runtime", ("memrefCopy",)),
    # torchrun steps: the collectives forwarded to torch.distributed.
    ("libGAHostCollectives.so", "GAHostCollectives", ("gaHost",)),
]


class CompileError(CodedError):
    """A stage of the chain failed: the message names it and carries the
    tool's diagnostics. `code` is required (ga_mlir._codes: the compiler's
    code, or one of FRONTEND_CODES). A class apart from
    ga_mlir.torch.CompileError: the frontend turns this one into its own
    (`except aot.CompileError`) without catching its own refusals."""


class Toolchain:
    """Where the pieces are: ga-opt and our runtime libraries (a build or
    install tree: bin/ and lib/), LLVM's tools, the CUDA toolkit (as
    lib/ga_cuda_runtime.env of the build records it)."""

    def __init__(self, build_dir=None):
        candidates = [build_dir, os.environ.get("GA_BUILD_DIR"),
                      package_build_dir()]
        self.root = next((d for d in candidates if d and os.path.exists(
            os.path.join(d, "bin", "ga-opt"))), None)
        if self.root is None:
            looked = ", ".join(os.path.join(d, "bin") for d in candidates
                               if d)
            raise CompileError(f"no ga-opt in {looked}: build ga-mlir first "
                               "(bash scripts/setup.sh), or pass --build-dir "
                               "/ set GA_BUILD_DIR",
                               code="toolchain-missing")
        self.ga_opt = os.path.join(self.root, "bin", "ga-opt")
        self.lib_dir = os.path.join(self.root, "lib")
        self.cuda = {}
        env_file = os.path.join(self.lib_dir, "ga_cuda_runtime.env")
        if os.path.exists(env_file):
            with open(env_file) as f:
                self.cuda = dict(line.strip().split("=", 1) for line in f
                                 if "=" in line)

    def tool(self, name):
        return os.path.join(LLVM_BIN, name)

    def cuda_bin(self, name):
        """A CUDA toolkit program (ptxas, fatbinary)."""
        d = self.cuda.get("GA_CUDA_BIN_DIR")
        path = os.path.join(d, name) if d else shutil.which(name)
        if not path or not os.path.exists(path):
            raise CompileError(f"{name} not found: --target=cuda needs the "
                               "CUDA toolkit (ga-mlir built with it)",
                               code="toolchain-missing")
        return path

    def export_cuda_home(self):
        """Sets CUDA_HOME in this process's environment to the toolkit the
        build found, unless CUDA_HOME, CUDA_ROOT or CUDA_PATH is set: the
        NVVM lowering (in process, ga_mlir.driver) finds libdevice (math
        functions in kernels) through it."""
        d = self.cuda.get("GA_CUDA_BIN_DIR")
        if d and not any(os.environ.get(v) for v in ("CUDA_HOME", "CUDA_ROOT",
                                                     "CUDA_PATH")):
            os.environ["CUDA_HOME"] = os.path.dirname(d)


def _run(cmd, what, verbose=False, env=None, stdin=None):
    if verbose:
        print("+ " + " ".join(cmd), file=sys.stderr)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env,
                       input=stdin)
    if r.returncode != 0:
        raise CompileError(f"{what} failed:\n{r.stderr.strip()}",
                           code="tool-failed")
    return r.stdout


#===----------------------------------------------------------------------===#
# Fatbins for several chips
#===----------------------------------------------------------------------===#

def embed_fatbins(text, chips, tools, work, verbose=False):
    """`text` (the LLVM-dialect output of --ga-lower-to-nvvm with format=isa)
    with the PTX object of every gpu.binary replaced by a fatbin: a cubin
    per chip of `chips` (ptxas -arch) and the PTX itself. The number of
    objects replaced is returned too. The objects are read and replaced
    through the parsed IR (ga_mlir.rewrite_gpu_objects, the C API), not by
    editing the printed module."""
    from . import PipelineError, rewrite_gpu_objects
    ptxas, fatbinary = tools.cuda_bin("ptxas"), tools.cuda_bin("fatbinary")
    count = 0

    def bundle(obj):
        nonlocal count
        if obj.format != "assembly" or not obj.target.startswith(
                "#nvvm.target"):
            return None
        ptx = os.path.join(work, f"module{count}.ptx")
        with open(ptx, "wb") as f:
            f.write(obj.data)
        images = []
        for chip in chips:
            cubin = os.path.join(work, f"module{count}.{chip}.cubin")
            _run([ptxas, f"-arch={chip}", "-O3", ptx, "-o", cubin],
                 f"ptxas -arch={chip}", verbose)
            images.append(f"--image3=kind=elf,sm={chip[3:]},file={cubin}")
        images.append(f"--image3=kind=ptx,sm={chips[0][3:]},file={ptx}")
        fatbin = os.path.join(work, f"module{count}.fatbin")
        _run([fatbinary, "--64", f"--create={fatbin}"] + images,
             "fatbinary", verbose)
        count += 1
        with open(fatbin, "rb") as f:
            return f.read()

    try:
        return rewrite_gpu_objects(text, bundle)
    except PipelineError as e:
        raise CompileError(f"reading the GPU objects failed:\n{e}",
                           code="tool-failed") \
            from None


#===----------------------------------------------------------------------===#
# The chain
#===----------------------------------------------------------------------===#

# ga-compile's --accumulate options (the names of --ga-accumulate's) as the
# driver's fields (ga_mlir.driver.CompileOptions), with their kinds.
_ACCUMULATE_FIELDS = {
    "micro-batches": ("micro_batches", int),
    "micro-batch-size": ("micro_batch_size", int),
    "max-memory": ("max_memory", str),
    "batch-args": ("batch_args", "pairs"),
    "allow-ghost-batch": ("allow_ghost_batch", bool),
    "recompute-statistics": ("recompute_statistics", bool),
    "fuse": ("fuse", bool),
    "accumulator-type": ("accumulator_type", str),
    "recompute": ("recompute", str),
    "func": ("func_name", str),
}


def _option_value(flag, name, text, kind):
    """`text`, the value of option `name` of `flag`, as `kind`."""
    try:
        if kind is bool:
            if text.lower() not in ("1", "0", "true", "false"):
                raise ValueError
            return text.lower() in ("1", "true")
        if kind is int:
            return int(text)
        if kind == "pairs":
            return tuple(tuple(int(v) for v in (p.split(":") + ["0"])[:2])
                         for p in text.split(",") if p)
        return text
    except ValueError:
        raise CompileError(f"{flag}: {name}={text}: expected "
                           f"{'0 or 1' if kind is bool else 'a number'}",
                           code="invalid-argument"
                           ) from None


def _split_options(flag, text):
    """The `name=value` options of `text` (as on ga-opt's command line; a
    value may be quoted) as a dict."""
    options = {}
    for word in shlex.split(text or ""):
        name, sep, value = word.partition("=")
        if not sep:
            raise CompileError(f"{flag}: expected name=value, got '{word}'",
                               code="invalid-argument")
        options[name] = value
    return options


def driver_options(target, accumulate=None, lower_options="",
                   chips=DEFAULT_CHIPS, mpi=False):
    """ga-compile's options as the driver's (ga_mlir.driver.CompileOptions):
    the rewrite by --ga-accumulate's options `accumulate` (None: the step is
    lowered as it is), the lowering for `target` by its pipeline's options
    `lower_options`, with the C interface (and for CUDA, PTX for the first
    of `chips`, which link_library assembles for each); `mpi`: the
    collectives as MPI_Allreduce calls (the driver's mpi_collectives, for
    the CPU)."""
    from . import driver
    if target not in ("cpu", "cuda"):
        raise CompileError(f"unknown target '{target}' (cpu or cuda)",
                           code="invalid-argument")
    if mpi and target != "cpu":
        raise CompileError("--mpi lowers collectives for --target=cpu (the "
                           "CUDA lowering calls NCCL)",
                           code="options-contradict")
    fields = {"rewrite": accumulate is not None, "target": target,
              "mpi_collectives": bool(mpi)}
    for name, value in _split_options("--accumulate", accumulate).items():
        if name not in _ACCUMULATE_FIELDS:
            raise CompileError(f"--accumulate: unknown option '{name}' ("
                               + ", ".join(sorted(_ACCUMULATE_FIELDS)) + ")",
                               code="invalid-argument")
        field, kind = _ACCUMULATE_FIELDS[name]
        fields[field] = _option_value("--accumulate", name, value, kind)
    given = _split_options("--lower-options", lower_options)
    if target == "cuda" and given.keys() & {"format", "chip"}:
        raise CompileError("--target=cuda chooses format and chip itself "
                           "(--chips for the architectures)",
                           code="options-contradict")
    names = driver.CPU_OPTIONS if target == "cpu" else driver.NVVM_OPTIONS
    lowering = {"c_interface": True}
    if target == "cuda":
        lowering.update(format="isa", chip=chips[0], features="+ptx80")
    for name, value in given.items():
        key = name.replace("-", "_")
        if key not in names:
            raise CompileError(
                f"--lower-options: unknown option '{name}' of --target="
                f"{target} (" + ", ".join(sorted(
                    n.replace("_", "-") for n in names)) + ")",
                code="invalid-argument")
        kind = str if key in driver.STRING_OPTIONS else \
            int if key in driver.COUNT_OPTIONS else bool
        lowering[key] = _option_value("--lower-options", name, value, kind)
    fields["cpu" if target == "cpu" else "nvvm"] = lowering
    return driver.CompileOptions(**fields)


def lower(source, target, accumulate=None, lower_options="",
          chips=DEFAULT_CHIPS, tools=None, verbose=False, name="<stdin>",
          mpi=False):
    """The LLVM-dialect module of the step `source` (IR text): rewritten by
    --ga-accumulate's options `accumulate` unless None, lowered for
    `target` (with MPI collectives when `mpi`), in this process by the
    driver (ga_mlir.driver)."""
    from . import PipelineError, driver
    options = driver_options(target, accumulate, lower_options, chips, mpi)
    tools = tools or Toolchain()
    if target == "cuda":
        tools.export_cuda_home()
    if verbose:
        print(f"+ ga_mlir.driver.compile({options})", file=sys.stderr)
    try:
        return driver.compile(source, options, filename=name).module
    except PipelineError as error:
        raise CompileError("ga-mlir refused the step:\n" + "".join(
            str(d) for d in error.diagnostics).strip(),
            compiler_code(error.diagnostics), error.diagnostics) from None


def link_library(lowered, output, target, mcpu=None, chips=DEFAULT_CHIPS,
                 tools=None, keep=None, verbose=False):
    """Translates, compiles and links the LLVM-dialect module `lowered`
    (text) into the shared library `output`, copying the runtime libraries it
    needs beside it. Returns the list of those libraries (file names).
    Nothing is written at `output` unless every stage succeeds."""
    tools = tools or Toolchain()
    work = keep or tempfile.mkdtemp(prefix="ga-compile-")
    os.makedirs(work, exist_ok=True)
    try:
        if target == "cuda":
            lowered, _ = embed_fatbins(lowered, list(chips), tools, work,
                                       verbose)
        mlir, ll, obj = (os.path.join(work, "step" + e)
                         for e in (".llvm.mlir", ".ll", ".o"))
        with open(mlir, "w") as f:
            f.write(lowered)
        _run([tools.tool("mlir-translate"), "--mlir-to-llvmir", mlir, "-o",
              ll], "mlir-translate", verbose)
        _run([tools.tool("llc"), "-O3", "-filetype=obj",
              "-relocation-model=pic", ll, "-o", obj] + _CODE_MODEL +
             ([f"-mcpu={mcpu}"] if mcpu else []), "llc", verbose)
        undefined = _run([tools.tool("llvm-nm"), "-u", "--format=just-symbols",
                          obj], "llvm-nm").split()
        runtimes, flags = _runtime_libraries(undefined, tools)
        out_dir = os.path.dirname(os.path.abspath(output))
        os.makedirs(out_dir, exist_ok=True)
        tmp_out = os.path.join(work, os.path.basename(output))
        # -Bsymbolic: the C interface calls the step itself; compiler-rt:
        # builtins that llc may call (bf16 truncation); --no-undefined: a
        # symbol no listed library defines is an error here, not at load.
        _run([tools.tool("clang"), "-shared", "-Wl,-Bsymbolic",
              "--rtlib=compiler-rt", "-Wl,--no-undefined", "-Wl,--as-needed",
              obj, "-o", tmp_out, "-Wl,-rpath,$ORIGIN"] + flags + ["-lm"],
             "clang (link)", verbose)
        for lib in runtimes:
            dest = os.path.join(out_dir, lib)
            src = os.path.join(tools.lib_dir, lib)
            if os.path.realpath(src) != os.path.realpath(dest):
                shutil.copy2(src, dest + ".tmp")
                os.replace(dest + ".tmp", dest)
        shutil.move(tmp_out, output)
        return runtimes
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


# x86-64's medium code model: globals over 64 KiB (the static temporaries of
# a large step) in .lbss, addressed with 64-bit offsets, so that a step whose
# static storage passes the small model's 2 GiB reach links (the small
# model's "relocation truncated to fit: R_X86_64_PC32 against .bss"); the
# others and the code stay as near as before.
_CODE_MODEL = (["-code-model=medium", "-large-data-threshold=65536"]
               if platform.machine() in ("x86_64", "AMD64") else [])


def _runtime_libraries(undefined, tools):
    """(our runtime libraries, linker flags) that define `undefined`."""
    runtimes, flags = [], [f"-L{tools.lib_dir}"]
    for lib, link, prefixes in _RUNTIMES:
        if any(s.startswith(prefixes) for s in undefined):
            if not os.path.exists(os.path.join(tools.lib_dir, lib)):
                raise CompileError(
                    f"the step calls {link}'s functions but {tools.lib_dir} "
                    f"has no {lib} (built when its toolkit is found)",
                    code="toolchain-missing")
            runtimes.append(lib)
            flags.append(f"-l{link}")
    if any(s.startswith("cblas_") for s in undefined):
        flags.append("-lopenblas")
    if any(s.startswith("MPI_") for s in undefined):
        # --mpi lowers to the MPICH ABI (convert-ga-to-mpi's default).
        flags.append("-lmpich")
    if runtimes:
        # Our CUDA runtimes link the driver (libcuda.so.1); here that may be
        # the toolkit's stub, which the linker must find to check them.
        stub = tools.cuda.get("GA_CUDA_DRIVER_LIB")
        if stub:
            flags.append(f"-Wl,-rpath-link,{os.path.dirname(stub)}")
    if any(s.startswith("omp_") or s.startswith("__kmpc") for s in undefined):
        flags.append("-fopenmp")
    return runtimes, flags


def compile_step(source, output, target="cpu", accumulate=None,
                 lower_options="", lowered=False, mcpu=None,
                 chips=DEFAULT_CHIPS, build_dir=None, keep=None,
                 verbose=False, name="<stdin>", mpi=False):
    """The whole chain: the step `source` (IR text; an LLVM-dialect module
    when `lowered`) to the shared library `output`, its collectives as MPI
    calls when `mpi`. Returns the runtime libraries copied beside it."""
    tools = Toolchain(build_dir)
    if not lowered:
        source = lower(source, target, accumulate, lower_options, chips,
                       tools, verbose, name, mpi)
        if keep:
            os.makedirs(keep, exist_ok=True)
            with open(os.path.join(keep, "step.lowered.mlir"), "w") as f:
                f.write(source)
    return link_library(source, output, target, mcpu, chips, tools, keep,
                        verbose)


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="ga-compile",
        description="A training step (.mlir) to a self-contained shared "
        "library for the CPU or a CUDA GPU.")
    p.add_argument("input", help="the step (.mlir; '-' for stdin)")
    p.add_argument("-o", dest="output", required=True,
                   help="the shared library to write (lib*.so)")
    p.add_argument("--target", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--accumulate", metavar="OPTS",
                   help="run --ga-accumulate with these options first, "
                   "e.g. 'micro-batches=4'")
    p.add_argument("--lower-options", default="", metavar="OPTS",
                   help="more options of --ga-lower-to-cpu or "
                   "--ga-lower-to-nvvm, e.g. 'blas=1' or 'cublas=0'")
    p.add_argument("--mpi", action="store_true",
                   help="the data-parallel step's collectives as "
                   "MPI_Allreduce calls (MPICH ABI; --target=cpu), as "
                   "--ga-lower-to-cpu-mpi lowers them; the library links "
                   "libmpich")
    p.add_argument("--lowered", action="store_true",
                   help="the input is already an LLVM-dialect module")
    p.add_argument("--mcpu", help="llc's -mcpu (default: generic)")
    p.add_argument("--chips", default=",".join(DEFAULT_CHIPS),
                   help="GPU architectures of the fatbin (default "
                   "sm_80,sm_90)")
    p.add_argument("--build-dir", help="the ga-mlir build or install tree")
    p.add_argument("--keep", metavar="DIR",
                   help="keep the intermediate files in DIR")
    p.add_argument("-v", action="store_true", help="print the commands")
    a = p.parse_args(argv)
    chips = [c.strip() for c in a.chips.split(",") if c.strip()]
    try:
        if not chips or any(not re.fullmatch(r"sm_\d+a?", c) for c in chips):
            raise CompileError(f"--chips={a.chips}: expected sm_NN,...",
                               code="invalid-argument")
        if not a.output.endswith(".so"):
            raise CompileError(f"-o {a.output}: the output is a shared "
                               "library (*.so)",
                               code="invalid-argument")
        try:
            source = sys.stdin.read() if a.input == "-" else \
                open(a.input).read()
        except OSError as e:
            raise CompileError(f"cannot read {a.input}: {e.strerror}",
                               code="file-unreadable")
        runtimes = compile_step(
            source, a.output, a.target, a.accumulate, a.lower_options,
            a.lowered, a.mcpu, chips, a.build_dir, a.keep, a.v,
            name=a.input, mpi=a.mpi)
    except CompileError as e:
        print(f"ga-compile: error: {e}", file=sys.stderr)
        return 1
    if a.v:
        print("runtime libraries beside it: " + (", ".join(runtimes) or
                                                 "none"), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
