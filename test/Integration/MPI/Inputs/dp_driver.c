//===- dp_driver.c - run a compiled data-parallel step under MPI ----------===//
//
// Calls `_mlir_ciface_train_step` of a step compiled with
// --ga-lower-to-cpu-mpi="c-interface=1" (every argument and result a tensor,
// i.e. a memref descriptor). Inputs are generated from a seed as functions of
// their GLOBAL index, so that rank r of R holds rows [r*G/R, (r+1)*G/R) of
// the global batch G of every per-sample input and a single process holds
// them all.
//
//   dp_driver --global-batch G --inputs SPEC --results RANKS
//             (--reference FILE | --check FILE) [options]
//
//   SPEC   comma-separated inputs, in argument order: KIND:DIMS:TYPE[:GEN]
//          KIND p (parameter, same on every rank) or b (per-sample, the
//          first dimension is the global batch), DIMS like 16x32 (a 0-d
//          tensor is "s"), TYPE f32 or i64, GEN u<scale> (uniform in
//          [-scale, scale], default u1), r<V> (integers in [0, V)), m<pct>
//          (1 with probability pct/100, else 0).
//   RANKS  comma-separated ranks of the f32 results (e.g. 2,1,2,1,0).
//
//   --reference FILE  write the results (run on the full batch, 1 process)
//   --check FILE      compare every result with FILE on every rank: the
//                     normwise relative error max|a-b|/max|b| must be at
//                     most --tol (default 1e-5)
//   --expect-allreduce K  MPI_Allreduce calls per step must be K
//   --steps S         run the step S times (same inputs), report time/step
//   --warmup W        run it W more times first, untimed
//   --fail-rank R     rank R fails before the step (--fail-mode exit|abort)
//
// A failed check or count: every rank prints its result, the failing ones a
// message, and the job exits with status 2. Bad usage ends it with MPI_Abort.
//
//===----------------------------------------------------------------------===//

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ga_mpi_init(void);
void ga_mpi_finalize(void);
int64_t ga_pmpi_allreduce_calls(void);
int64_t ga_pmpi_allreduce_bytes(void);

#define MAX_ARGS 16
#define MAX_RANK 4

typedef void (*Step1)(void *, void *);
typedef void (*Step2)(void *, void *, void *);
typedef void (*Step3)(void *, void *, void *, void *);
typedef void (*Step4)(void *, void *, void *, void *, void *);
typedef void (*Step5)(void *, void *, void *, void *, void *, void *);
typedef void (*Step6)(void *, void *, void *, void *, void *, void *, void *);
typedef void (*Step7)(void *, void *, void *, void *, void *, void *, void *,
                      void *);
typedef void (*Step8)(void *, void *, void *, void *, void *, void *, void *,
                      void *, void *);
typedef void (*Step9)(void *, void *, void *, void *, void *, void *, void *,
                      void *, void *, void *);

// The step, with typed pointer parameters; called through the pointer types
// above (all arguments are pointers, so the calls are ABI-identical).
extern void _mlir_ciface_train_step();

static int rank = 0, nranks = 1;

static void die(const char *fmt, const char *arg) {
  fprintf(stderr, "dp_driver: rank %d: ", rank);
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n");
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 2);
  exit(2);
}

typedef struct {
  char kind; // 'p' or 'b'
  int rank;
  int64_t dims[MAX_RANK]; // global
  int isInt;
  char gen;
  double genArg;
  // The memref descriptor: allocated, aligned, offset, sizes, strides.
  int64_t desc[3 + 2 * MAX_RANK];
} Input;

static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static double uniform01(uint64_t seed, int input, int64_t index) {
  uint64_t h =
      mix(seed ^ mix((uint64_t)input * 1000003ull + 17) ^ mix((uint64_t)index));
  return (double)(h >> 11) / 9007199254740992.0;
}

static void parseInput(Input *in, char *spec) {
  char *kind = strtok(spec, ":");
  char *dims = strtok(NULL, ":");
  char *type = strtok(NULL, ":");
  char *gen = strtok(NULL, ":");
  if (!kind || !dims || !type || (kind[0] != 'p' && kind[0] != 'b'))
    die("bad input spec '%s'", spec);
  in->kind = kind[0];
  in->rank = 0;
  if (strcmp(dims, "s") != 0) {
    char *save = NULL;
    for (char *d = strtok_r(dims, "x", &save); d;
         d = strtok_r(NULL, "x", &save)) {
      if (in->rank == MAX_RANK)
        die("rank above %s", "4");
      in->dims[in->rank++] = atoll(d);
    }
  }
  in->isInt = strcmp(type, "i64") == 0;
  if (!in->isInt && strcmp(type, "f32") != 0)
    die("unknown element type '%s'", type);
  in->gen = gen ? gen[0] : 'u';
  in->genArg = gen && gen[1] ? atof(gen + 1) : 1.0;
  if (in->kind == 'b' && in->rank == 0)
    die("per-sample input without a batch dimension: '%s'", kind);
}

/// Allocates and fills this rank's part of `in` (input number `which`).
static void materialize(Input *in, int which, int64_t globalBatch,
                        uint64_t seed) {
  int64_t local[MAX_RANK];
  int64_t rowOffset = 0;
  for (int d = 0; d < in->rank; ++d)
    local[d] = in->dims[d];
  if (in->kind == 'b') {
    if (in->dims[0] != globalBatch)
      die("per-sample input whose first dimension is not the global batch%s",
          "");
    local[0] = globalBatch / nranks;
    rowOffset = local[0] * rank;
  }
  int64_t count = 1, rowSize = 1;
  for (int d = 0; d < in->rank; ++d)
    count *= local[d];
  for (int d = 1; d < in->rank; ++d)
    rowSize *= local[d];
  void *data = malloc((size_t)(count ? count : 1) * 8);
  for (int64_t i = 0; i < count; ++i) {
    int64_t global = rowOffset * rowSize + i;
    double u = uniform01(seed, which, global);
    if (in->isInt) {
      int64_t v = in->gen == 'r' ? (int64_t)(u * in->genArg) : 0;
      ((int64_t *)data)[i] = v;
    } else {
      float v;
      if (in->gen == 'm')
        v = u < in->genArg / 100.0 ? 1.0f : 0.0f;
      else
        v = (float)((2.0 * u - 1.0) * in->genArg);
      ((float *)data)[i] = v;
    }
  }
  in->desc[0] = (int64_t)(intptr_t)data;
  in->desc[1] = (int64_t)(intptr_t)data;
  in->desc[2] = 0;
  int64_t stride = 1;
  for (int d = in->rank - 1; d >= 0; --d) {
    in->desc[3 + d] = local[d];
    in->desc[3 + in->rank + d] = stride;
    stride *= local[d];
  }
}

static void callStep(int nargs, int64_t *results, Input *inputs) {
  void *a[MAX_ARGS];
  for (int i = 0; i < nargs; ++i)
    a[i] = inputs[i].desc;
  void *fn = (void *)_mlir_ciface_train_step;
  switch (nargs) {
  case 1:
    ((Step1)fn)(results, a[0]);
    break;
  case 2:
    ((Step2)fn)(results, a[0], a[1]);
    break;
  case 3:
    ((Step3)fn)(results, a[0], a[1], a[2]);
    break;
  case 4:
    ((Step4)fn)(results, a[0], a[1], a[2], a[3]);
    break;
  case 5:
    ((Step5)fn)(results, a[0], a[1], a[2], a[3], a[4]);
    break;
  case 6:
    ((Step6)fn)(results, a[0], a[1], a[2], a[3], a[4], a[5]);
    break;
  case 7:
    ((Step7)fn)(results, a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
    break;
  case 8:
    ((Step8)fn)(results, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
    break;
  case 9:
    ((Step9)fn)(results, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]);
    break;
  default:
    die("unsupported number of arguments%s", "");
  }
}

int main(int argc, char **argv) {
  int64_t globalBatch = 0, expectAllreduce = -1, steps = 1, failRank = -1,
          warmup = 0;
  const char *inputSpec = NULL, *resultSpec = NULL, *reference = NULL,
             *check = NULL, *failMode = "exit";
  double tol = 1e-5;
  uint64_t seed = 1234;

  // Line-buffered: what a rank printed survives the teardown of a failed job.
  setvbuf(stdout, NULL, _IOLBF, 0);
  ga_mpi_init();
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  for (int i = 1; i < argc; ++i) {
    const char *opt = argv[i];
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!val)
      die("missing value of %s", opt);
    ++i;
    if (!strcmp(opt, "--global-batch"))
      globalBatch = atoll(val);
    else if (!strcmp(opt, "--inputs"))
      inputSpec = val;
    else if (!strcmp(opt, "--results"))
      resultSpec = val;
    else if (!strcmp(opt, "--reference"))
      reference = val;
    else if (!strcmp(opt, "--check"))
      check = val;
    else if (!strcmp(opt, "--tol"))
      tol = atof(val);
    else if (!strcmp(opt, "--expect-allreduce"))
      expectAllreduce = atoll(val);
    else if (!strcmp(opt, "--steps"))
      steps = atoll(val);
    else if (!strcmp(opt, "--warmup"))
      warmup = atoll(val);
    else if (!strcmp(opt, "--seed"))
      seed = strtoull(val, NULL, 10);
    else if (!strcmp(opt, "--fail-rank"))
      failRank = atoll(val);
    else if (!strcmp(opt, "--fail-mode"))
      failMode = val;
    else
      die("unknown option %s", opt);
  }
  if (!globalBatch || !inputSpec || !resultSpec || (!reference && !check))
    die("usage: see the header of dp_driver.c%s", "");
  if (globalBatch % nranks)
    die("the global batch is not divisible by the number of ranks%s", "");

  Input inputs[MAX_ARGS];
  int nargs = 0;
  char *specCopy = strdup(inputSpec);
  char *save = NULL;
  for (char *s = strtok_r(specCopy, ",", &save); s;
       s = strtok_r(NULL, ",", &save)) {
    if (nargs == MAX_ARGS)
      die("too many inputs%s", "");
    char *one = strdup(s);
    parseInput(&inputs[nargs], one);
    materialize(&inputs[nargs], nargs, globalBatch, seed);
    ++nargs;
  }

  int resultRanks[MAX_ARGS];
  int nresults = 0;
  int64_t words = 0;
  char *resCopy = strdup(resultSpec);
  for (char *s = strtok_r(resCopy, ",", &save); s;
       s = strtok_r(NULL, ",", &save)) {
    resultRanks[nresults] = atoi(s);
    words += 3 + 2 * resultRanks[nresults];
    ++nresults;
  }
  int64_t *results = calloc((size_t)words, sizeof(int64_t));

  if (rank == failRank) {
    fprintf(stderr,
            "dp_driver: rank %d: injected failure before the step "
            "(%s)\n",
            rank, failMode);
    fflush(stderr);
    if (!strcmp(failMode, "abort"))
      abort();
    exit(3);
  }

  double elapsed = 0;
  int64_t calls = 0, bytes = 0;
  for (int64_t s = 0; s < warmup; ++s) {
    callStep(nargs, results, inputs);
    int64_t *w = results;
    for (int r = 0; r < nresults; ++r) {
      free((void *)(intptr_t)w[0]);
      w += 3 + 2 * resultRanks[r];
    }
  }
  for (int64_t s = 0; s < steps; ++s) {
    int64_t calls0 = ga_pmpi_allreduce_calls();
    int64_t bytes0 = ga_pmpi_allreduce_bytes();
    double t0 = MPI_Wtime();
    callStep(nargs, results, inputs);
    elapsed += MPI_Wtime() - t0;
    calls = ga_pmpi_allreduce_calls() - calls0;
    bytes = ga_pmpi_allreduce_bytes() - bytes0;
    if (s + 1 < steps) {
      int64_t *w = results;
      for (int r = 0; r < nresults; ++r) {
        free((void *)(intptr_t)w[0]);
        w += 3 + 2 * resultRanks[r];
      }
    }
  }

  // Results as flat float arrays.
  float *values[MAX_ARGS];
  int64_t counts[MAX_ARGS];
  int64_t *w = results;
  for (int r = 0; r < nresults; ++r) {
    int rk = resultRanks[r];
    float *aligned = (float *)(intptr_t)w[1];
    int64_t offset = w[2];
    int64_t count = 1;
    for (int d = 0; d < rk; ++d)
      count *= w[3 + d];
    values[r] = aligned + offset;
    counts[r] = count;
    w += 3 + 2 * rk;
  }

  printf("rank %d/%d: MPI_Allreduce calls per step = %lld, bytes per step "
         "= %lld, time per step = %.6f s\n",
         rank, nranks, (long long)calls, (long long)bytes,
         elapsed / (double)steps);

  if (reference) {
    FILE *f = fopen(reference, "wb");
    if (!f)
      die("cannot write %s", reference);
    for (int r = 0; r < nresults; ++r)
      fwrite(values[r], sizeof(float), (size_t)counts[r], f);
    fclose(f);
    printf("rank %d/%d: reference written\n", rank, nranks);
  }
  int bad = 0;
  char reason[160] = "";
  if (check) {
    FILE *f = fopen(check, "rb");
    if (!f)
      die("cannot read %s", check);
    double worst = 0;
    int worstResult = -1;
    for (int r = 0; r < nresults; ++r) {
      float *ref = malloc((size_t)counts[r] * sizeof(float));
      if (fread(ref, sizeof(float), (size_t)counts[r], f) != (size_t)counts[r])
        die("%s is shorter than the results", check);
      double diff = 0, scale = 0;
      for (int64_t i = 0; i < counts[r]; ++i) {
        double d = (double)values[r][i] - (double)ref[i];
        if (d < 0)
          d = -d;
        double m = ref[i] < 0 ? -ref[i] : ref[i];
        if (d > diff || d != d)
          diff = d;
        if (m > scale)
          scale = m;
      }
      double rel = scale > 0 ? diff / scale : diff;
      if (rel > worst || rel != rel) {
        worst = rel;
        worstResult = r;
      }
      free(ref);
    }
    fclose(f);
    printf("rank %d/%d: max relative error %.3g (result #%d), tolerance %.0e\n",
           rank, nranks, worst, worstResult, tol);
    fflush(stdout);
    if (!(worst <= tol)) {
      bad = 1;
      snprintf(reason, sizeof reason,
               "results differ from the full-batch reference (relative "
               "error %.3g)",
               worst);
    }
  }
  if (expectAllreduce >= 0 && calls != expectAllreduce) {
    bad = 1;
    snprintf(reason, sizeof reason,
             "MPI_Allreduce calls per step: %lld, expected %lld",
             (long long)calls, (long long)expectAllreduce);
  }
  // Every rank learns whether any failed, so that the job ends with a
  // status (no rank is killed while its output is still buffered).
  int anyBad = 0;
  MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (bad)
    fprintf(stderr, "dp_driver: rank %d: %s\n", rank, reason);
  fflush(stderr);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf(anyBad ? "SOME RANKS FAILED\n" : "ALL RANKS OK\n");
  fflush(stdout);
  ga_mpi_finalize();
  return anyBad ? 2 : 0;
}
