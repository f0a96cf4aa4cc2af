/*===- consumer-capi.c - a C program on the installed ga-mlir C API -------===*
 *
 * Usage: consumer-capi FILE PIPELINE [FUNC]
 * Loads the ga dialect through its handle (upstream C API style), parses FILE
 * and prints it, then runs PIPELINE on it with mlirGARunPipeline and prints
 * the result, then shows that a bad pipeline reports a diagnostic and reads a
 * memory budget as the compiler does (mlirGAParseByteCount). With FUNC,
 * first prints the types of that function (mlirGAInspectFunction).
 *
 *===----------------------------------------------------------------------===*/

#include "ga-c/Driver.h"
#include "ga-c/Inspect.h"
#include "ga-c/Registration.h"
#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#include <stdio.h>
#include <stdlib.h>

static void printToStdout(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

static void printType(int isResult, MlirStringRef type,
                      MlirStringRef elementType, intptr_t rank,
                      const int64_t *shape, void *userData) {
  (void)userData;
  printf("// %s %.*s: %.*s of rank %ld", isResult ? "result" : "argument",
         (int)type.length, type.data, (int)elementType.length, elementType.data,
         (long)rank);
  for (intptr_t i = 0; i < rank; ++i)
    printf(" %ld", (long)shape[i]);
  printf("\n");
}

static char *readFile(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)size + 1);
  if (text && fread(text, 1, (size_t)size, f) != (size_t)size) {
    free(text);
    text = NULL;
  }
  if (text)
    text[size] = '\0';
  fclose(f);
  return text;
}

int main(int argc, char **argv) {
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: consumer-capi FILE PIPELINE [FUNC]\n");
    return 2;
  }
  char *input = readFile(argv[1]);
  if (!input) {
    fprintf(stderr, "error: cannot read %s\n", argv[1]);
    return 1;
  }

  /* Upstream style: a context, a registry (with everything ga needs, in one
     call), the ga dialect handle. */
  MlirContext context = mlirContextCreate();
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirGARegisterAll(registry);
  mlirContextAppendDialectRegistry(context, registry);
  mlirDialectRegistryDestroy(registry);
  MlirDialect ga =
      mlirDialectHandleLoadDialect(mlirGetDialectHandle__ga__(), context);
  MlirStringRef ns = mlirDialectGetNamespace(ga);
  printf("// loaded dialect: %.*s\n", (int)ns.length, ns.data);
  MlirModule module =
      mlirModuleCreateParse(context, mlirStringRefCreateFromCString(input));
  if (mlirModuleIsNull(module)) {
    fprintf(stderr, "error: cannot parse %s\n", argv[1]);
    return 1;
  }
  printf("// parsed:\n");
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  printf("\n");
  mlirModuleDestroy(module);
  mlirContextDestroy(context);

  if (argc == 4) {
    MlirGAFunctionInfo info;
    if (mlirLogicalResultIsFailure(
            mlirGAInspectFunction(mlirStringRefCreateFromCString(input),
                                  mlirStringRefCreateFromCString(argv[1]),
                                  mlirStringRefCreateFromCString(argv[3]),
                                  &info, printType, printToStdout, NULL)))
      return 1;
    printf("// @%s: %ld arguments, %ld results\n", argv[3],
           (long)info.numArguments, (long)info.numResults);
  }

  /* The convenience entry point. */
  printf("// after %s:\n", argv[2]);
  MlirLogicalResult result =
      mlirGARunPipeline(mlirStringRefCreateFromCString(input),
                        mlirStringRefCreateFromCString(argv[2]), printToStdout,
                        printToStdout, NULL);
  if (mlirLogicalResultIsFailure(result))
    return 1;

  printf("// bad pipeline:\n");
  result = mlirGARunPipeline(mlirStringRefCreateFromCString(input),
                             mlirStringRefCreateFromCString("ga-no-such-pass"),
                             printToStdout, printToStdout, NULL);
  printf("// result: %s\n",
         mlirLogicalResultIsSuccess(result) ? "success" : "failure");
  free(input);
  int64_t bytes = 0;
  MlirLogicalResult parsed =
      mlirGAParseByteCount(mlirStringRefCreateFromCString("1.5GB"), &bytes);
  printf("// 1.5GB: %s, %lld bytes\n",
         mlirLogicalResultIsSuccess(parsed) ? "read" : "refused",
         (long long)bytes);
  return mlirLogicalResultIsFailure(result) ? 0 : 1;
}
