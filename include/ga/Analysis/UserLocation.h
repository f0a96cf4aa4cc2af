//===- UserLocation.h - the source line a diagnostic names ------*- C++ -*-===//
//
// A frontend gives each op the location of the source line it came from
// (torch-mlir: the Python line of the traced node), but some ops have none:
// ops that the frontend or a lowering created without a line of their own
// (the sum of a tensor's gradients from its several uses, a constant). A
// diagnostic at such an op would name no line. It names the line of the
// nearest op that has one along the op's def-use chains instead: most often
// the op that the line-less op was made for, which reads its result.
//
//===----------------------------------------------------------------------===//

#ifndef GA_ANALYSIS_USERLOCATION_H
#define GA_ANALYSIS_USERLOCATION_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

namespace mlir::ga {

/// Whether `loc` names a source file (somewhere in it: a call site, a fused
/// or a named location).
bool hasFileLocation(Location loc);

/// The location of `op` when it names a source file; else that of the
/// nearest op that does, breadth first over the users of its results and
/// the producers of its operands (users first at each distance, nested ops
/// through their parents), at most `limit` ops looked at; else the op's
/// own.
Location getUserLocation(Operation *op, unsigned limit = 256);

/// Attaches to `diag` the note `message` at the user location of `origin`,
/// the op a value was reduced over the batch at, when it is known (non-null):
/// the refusal then names the user's line of the reduction too.
void attachOriginNote(Diagnostic &diag, Operation *origin,
                      const Twine &message);

} // namespace mlir::ga

#endif // GA_ANALYSIS_USERLOCATION_H
