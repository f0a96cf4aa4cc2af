//===- VerifyLowered.cpp - check the contract of a pipeline's output ------===//
//
// --ga-verify-lowered: fails at the first op that is neither in an allowed
// dialect nor an allowed op, so that a partial conversion never goes
// unnoticed.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/Passes.h"
#include "ga/IR/Diagnostics.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::ga {
#define GEN_PASS_DEF_VERIFYLOWERED
#include "ga/Codegen/Common/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// The location to report `op` at: its own, or, when it has none (a cast
/// that a conversion made without one), that of the nearest op with one
/// among those it reads from and those that read it, breadth first: without
/// it the refusal names no line of the user's program.
static Location reportLocation(Operation *op) {
  if (!isa<UnknownLoc>(op->getLoc()))
    return op->getLoc();
  llvm::SetVector<Operation *> seen;
  seen.insert(op);
  for (size_t next = 0; next < seen.size() && next < 64; ++next) {
    Operation *current = seen[next];
    if (!isa<UnknownLoc>(current->getLoc()))
      return current->getLoc();
    for (Value operand : current->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        seen.insert(producer);
    for (Operation *user : current->getUsers())
      seen.insert(user);
  }
  return op->getLoc();
}

struct VerifyLoweredPass
    : public ga::impl::VerifyLoweredBase<VerifyLoweredPass> {
  using Base::Base;

  VerifyLoweredPass(const VerifyLoweredOptions &options,
                    std::function<bool(Operation *)> allowed)
      : Base(options), allowed(std::move(allowed)) {}

  void runOnOperation() override {
    llvm::StringSet<> dialects, ops;
    for (const std::string &name : allowedDialects)
      dialects.insert(name);
    for (const std::string &name : allowedOps)
      ops.insert(name);
    ModuleOp module = getOperation();
    WalkResult result = module.walk([&](Operation *op) {
      if (op == module.getOperation() ||
          dialects.contains(op->getName().getDialectNamespace()) ||
          ops.contains(op->getName().getStringRef()) ||
          (allowed && allowed(op)))
        return WalkResult::advance();
      emitError(reportLocation(op))
          << DiagnosticCode::NotLowered << "'" << op->getName()
          << "' was not lowered " << byWhat;
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  /// Further ops that may be left (see createVerifyLowered).
  std::function<bool(Operation *)> allowed;
};

} // namespace

std::unique_ptr<Pass>
mlir::ga::createVerifyLowered(const VerifyLoweredOptions &options,
                              std::function<bool(Operation *)> allowed) {
  return std::make_unique<VerifyLoweredPass>(options, std::move(allowed));
}
