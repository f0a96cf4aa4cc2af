// RUN: ga-opt %s -ga-vectorize-math="ops=exp,gelu" -verify-diagnostics

// A function that upstream has no approximation of: refused, at the
// function, with the names it takes.

// expected-error @+1 {{ga-vectorize-math: no approximation of math op 'gelu' (ops takes: acos, asin, atan, atan2, cbrt, cos, erf, erfc, exp, expm1, log, log1p, log2, sin, tanh)}}
func.func @f(%x: vector<8xf32>) -> vector<8xf32> {
  %e = math.exp %x : vector<8xf32>
  return %e : vector<8xf32>
}
