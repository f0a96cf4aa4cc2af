// A program that uses the CUDA runtime library directly: on a machine without
// a usable driver or GPU it must stop with a message naming the failing CUDA
// call and a non-zero exit status, not crash.
#include "GACudaRuntime.h"

#include <stdio.h>

int main(void) {
  // The query never exits: -1 means no usable driver/device.
  printf("gaGpuDeviceCount: %d\n", gaGpuDeviceCount());
  fflush(stdout);
  GAStream stream = mgpuStreamCreate();
  void *buffer = mgpuMemAlloc(1024, stream, false);
  mgpuStreamSynchronize(stream);
  printf("allocated %p on stream %p\n", buffer, (void *)stream);
  mgpuMemFree(buffer, stream);
  mgpuStreamDestroy(stream);
  return 0;
}
