//===- HostArray.h - host buffers of ga-verify ------------------*- C++ -*-===//
//
// The dense row-major host arrays that ga-verify fills with inputs and reads
// results into, with the element layouts the lowered code uses (f16 and bf16
// as their 16-bit patterns, i1 as one byte, index as 64 bits).
//
//===----------------------------------------------------------------------===//

#ifndef GA_VERIFY_HOSTARRAY_H
#define GA_VERIFY_HOSTARRAY_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::ga::verify {

/// The element types ga-verify can feed and read.
enum class ElemKind { F16, BF16, F32, F64, I1, I8, I16, I32, I64, Index };

/// A dense row-major host array with the element layout the lowered code uses.
struct HostArray {
  ElemKind kind;
  SmallVector<int64_t> shape;
  std::vector<char> bytes;

  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

/// Whether `k` is a floating-point kind.
bool isFloatKind(ElemKind k);
/// Bytes per element of kind `k`.
size_t elemSize(ElemKind k);
/// The kind of element type `t`; none if ga-verify cannot handle it.
std::optional<ElemKind> getElemKind(Type t);

/// Element `i` of `a` as a double (integers converted exactly up to 2^53).
double readElement(const HostArray &a, int64_t i);
/// Element `i` of an integer array `a`, sign-extended (i1 as 0 or 1).
int64_t readInteger(const HostArray &a, int64_t i);
/// Stores `value` as element `i` of `a`, rounded to its kind.
void writeElement(HostArray &a, int64_t i, double value);

/// `t` as MLIR prints it.
std::string typeToString(Type t);

} // namespace mlir::ga::verify

#endif // GA_VERIFY_HOSTARRAY_H
