//===- ByteCount.h - byte counts as users write them ------------*- C++ -*-===//
//
// The one reader of memory budgets (max-memory, cache-size, the shard plan's
// per-rank budget) for the passes, the C API and, through it, Python.
//
//===----------------------------------------------------------------------===//

#ifndef GA_MEMORY_BYTECOUNT_H
#define GA_MEMORY_BYTECOUNT_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::ga {

/// Parses a byte count: a number (with an optional fraction), optionally
/// followed by a unit, case-insensitive: B; KiB, MiB, GiB, TiB (powers of
/// 1024); kB, MB, GB, TB (powers of 1000, as PyTorch's and accelerate's
/// users write device memory). Spaces around the unit are allowed. The result
/// is rounded down to whole bytes; negative, non-finite and out-of-range
/// counts fail.
FailureOr<int64_t> parseByteCount(StringRef text);

/// The units parseByteCount takes, for diagnostics ("B, KiB, ... or TB").
StringRef getByteCountUnits();

/// "1.50 MiB (1572864 bytes)".
std::string formatByteCount(int64_t bytes);

} // namespace mlir::ga

#endif // GA_MEMORY_BYTECOUNT_H
