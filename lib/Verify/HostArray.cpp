//===- HostArray.cpp - host buffers of ga-verify --------------------------===//
//
// Element access for HostArray, including the f16/bf16 conversions (done by
// hand: the host compiler need not support _Float16 or __bf16).
//
//===----------------------------------------------------------------------===//

#include "ga/Verify/HostArray.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::ga::verify;

bool mlir::ga::verify::isFloatKind(ElemKind k) {
  return k == ElemKind::F16 || k == ElemKind::BF16 || k == ElemKind::F32 ||
         k == ElemKind::F64;
}

size_t mlir::ga::verify::elemSize(ElemKind k) {
  switch (k) {
  case ElemKind::I1:
  case ElemKind::I8:
    return 1;
  case ElemKind::F16:
  case ElemKind::BF16:
  case ElemKind::I16:
    return 2;
  case ElemKind::F32:
  case ElemKind::I32:
    return 4;
  case ElemKind::F64:
  case ElemKind::I64:
  case ElemKind::Index:
    return 8;
  }
  llvm_unreachable("unknown element kind");
}

std::optional<ElemKind> mlir::ga::verify::getElemKind(Type t) {
  if (t.isF16())
    return ElemKind::F16;
  if (t.isBF16())
    return ElemKind::BF16;
  if (t.isF32())
    return ElemKind::F32;
  if (t.isF64())
    return ElemKind::F64;
  if (t.isIndex())
    return ElemKind::Index;
  if (auto i = dyn_cast<IntegerType>(t)) {
    switch (i.getWidth()) {
    case 1:
      return ElemKind::I1;
    case 8:
      return ElemKind::I8;
    case 16:
      return ElemKind::I16;
    case 32:
      return ElemKind::I32;
    case 64:
      return ElemKind::I64;
    default:
      return std::nullopt;
    }
  }
  return std::nullopt;
}

static uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = ((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff)
    return sign | 0x7c00 | (mant ? 0x200 : 0);
  if (exp >= 31)
    return sign | 0x7c00;
  if (exp <= 0) {
    if (exp < -10)
      return sign;
    mant |= 0x800000;
    uint32_t shift = 14 - exp;
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1)))
      ++half;
    return sign | half;
  }
  uint32_t half = sign | (exp << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
    ++half;
  return half;
}

static float halfToFloat(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ff;
      x = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000 | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

static uint16_t floatToBF16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000)
    return (x >> 16) | 0x40;
  uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return (x + rounding) >> 16;
}

static float bf16ToFloat(uint16_t b) {
  uint32_t x = (uint32_t)b << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

/// The `T` stored at `p`, which may be unaligned for `T`.
template <typename T> static T load(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

/// Stores `v` at `p`, which may be unaligned for `T`.
template <typename T> static void store(char *p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

/// Reads element `i` of `a` as a double (integers exactly up to 2^53).
double mlir::ga::verify::readElement(const HostArray &a, int64_t i) {
  const char *p = a.bytes.data() + i * elemSize(a.kind);
  switch (a.kind) {
  case ElemKind::F16:
    return halfToFloat(load<uint16_t>(p));
  case ElemKind::BF16:
    return bf16ToFloat(load<uint16_t>(p));
  case ElemKind::F32:
    return load<float>(p);
  case ElemKind::F64:
    return load<double>(p);
  case ElemKind::I1:
    return (*p & 1) ? 1 : 0;
  case ElemKind::I8:
    return static_cast<int8_t>(*p);
  case ElemKind::I16:
    return load<int16_t>(p);
  case ElemKind::I32:
    return load<int32_t>(p);
  case ElemKind::I64:
  case ElemKind::Index:
    return static_cast<double>(load<int64_t>(p));
  }
  llvm_unreachable("unknown element kind");
}

/// Reads element `i` of an integer array exactly.
int64_t mlir::ga::verify::readInteger(const HostArray &a, int64_t i) {
  const char *p = a.bytes.data() + i * elemSize(a.kind);
  switch (a.kind) {
  case ElemKind::I64:
  case ElemKind::Index:
    return load<int64_t>(p);
  default:
    return static_cast<int64_t>(readElement(a, i));
  }
}

void mlir::ga::verify::writeElement(HostArray &a, int64_t i, double value) {
  char *p = a.bytes.data() + i * elemSize(a.kind);
  switch (a.kind) {
  case ElemKind::F16:
    return store(p, floatToHalf(static_cast<float>(value)));
  case ElemKind::BF16:
    return store(p, floatToBF16(static_cast<float>(value)));
  case ElemKind::F32:
    return store(p, static_cast<float>(value));
  case ElemKind::F64:
    return store(p, value);
  case ElemKind::I1:
    *p = value != 0 ? 1 : 0;
    return;
  case ElemKind::I8:
    *p = static_cast<int8_t>(value);
    return;
  case ElemKind::I16:
    return store(p, static_cast<int16_t>(value));
  case ElemKind::I32:
    return store(p, static_cast<int32_t>(value));
  case ElemKind::I64:
  case ElemKind::Index:
    return store(p, static_cast<int64_t>(value));
  }
}

std::string mlir::ga::verify::typeToString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}
