//===- Isolation.h - run code in a child process ----------------*- C++ -*-===//
//
// ga-verify runs everything that may crash (the pipeline under test, the
// compiled steps) in forked children, so that a crash is reported as an error
// naming what was being done (the phase) instead of taking the caller down.
//
//===----------------------------------------------------------------------===//

#ifndef GA_VERIFY_ISOLATION_H
#define GA_VERIFY_ISOLATION_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <sys/types.h>

namespace mlir::ga::verify {

/// Tells the supervising process (runIsolated) what this process is doing
/// now, so that a crash can be reported with it. Nothing without one.
void setPhase(const llvm::Twine &phase);

/// Reads `fd` until end of file (retrying interrupted reads) and closes it.
std::string drainPipe(int fd);

/// Waits for child `pid` (retrying interrupted waits); its wait status.
int waitForChild(pid_t pid);

/// Runs `body` in a forked child whose `out` stream is captured into
/// `output`. Returns the child's exit status; if the child crashed, returns
/// -1 and sets `crash` to "crashed (<signal>) while <last phase>". If no
/// child can be started, runs `body` here. Fork before any MLIRContext (and
/// its thread pool) exists in this process.
int runIsolated(llvm::function_ref<int(llvm::raw_ostream &out)> body,
                std::string &output, std::string &crash);

} // namespace mlir::ga::verify

#endif // GA_VERIFY_ISOLATION_H
