// RUN: ga-opt %s -ga-gpu-kernel-report="vocab=512" -verify-diagnostics -o /dev/null

// The logits check needs the tokens per micro-batch.
// expected-error @below {{ga-gpu-kernel-report: vocab needs tokens (the tokens per micro-batch) to size the logits}}
module {
  func.func @f() {
    return
  }
}
