// RUN: ga-opt %s -ga-gpu-kernel-report="vocab=512" -verify-diagnostics -o /dev/null
// RUN: not ga-opt %s -ga-gpu-kernel-report="format=yaml" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORMAT

// The logits check needs the tokens per micro-batch.
// expected-error @below {{ga-gpu-kernel-report: vocab needs tokens (the tokens per micro-batch) to size the logits}}
module {
  func.func @f() {
    return
  }
}

// The report is text or JSON.
// FORMAT: error: ga-gpu-kernel-report: unknown format 'yaml' (expected text or json)
