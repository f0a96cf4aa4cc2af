// A product through libga_cublaslt_runtime.so (beta = 1: accumulate into C):
// on a machine without a usable driver or GPU the wrapper must stop at its
// first call with a message naming the failing call and exit status 3, before
// touching the (host) pointers it is given.
#include "GACublasLt.h"

#include <stdio.h>

int main(void) {
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, c[4] = {0};
  printf("workspace: %lld bytes\n", (long long)gaCublasLtWorkspaceSize());
  fflush(stdout);
  gaCublasLtMatmul(/*stream=*/0, /*transA=*/0, /*transB=*/0, 2, 2, 3, a, 3, b,
                   2, c, 2, GA_CUDA_R_32F, GA_CUDA_R_32F, 1.0f, 1.0f, 0);
  printf("multiplied: %f\n", c[0]);
  return 0;
}
