//===- Isolation.cpp - run code in a child process ------------------------===//
//
// Each invocation of a compiled step runs in a forked child (unless
// RunnerOptions::noFork) so that a step that crashes (an out-of-range label, a
// failed cf.assert) is reported as an error instead of taking the verifier
// down; runIsolated does the same for the whole verification, so that a crash
// in the pipeline under test is reported with the phase it happened in.
//
//===----------------------------------------------------------------------===//

#include "ga/Verify/Isolation.h"

#include "ga/Verify/Runner.h"

#include "llvm/Support/FormatVariadic.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::ga::verify;

/// Write end of the pipe to the supervising process, -1 without one.
static int phaseFd = -1;

void mlir::ga::verify::setPhase(const llvm::Twine &phase) {
  if (phaseFd < 0)
    return;
  std::string line = phase.str() + "\n";
  ssize_t unused = write(phaseFd, line.data(), line.size());
  (void)unused;
}

std::string mlir::ga::verify::drainPipe(int fd) {
  std::string data;
  char buf[1 << 16];
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    data.append(buf, n);
  }
  close(fd);
  return data;
}

int mlir::ga::verify::waitForChild(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

/// Writes all of `data` to `fd`; false if the pipe broke.
static bool writeAll(int fd, StringRef data) {
  const char *p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    left -= n;
  }
  return true;
}

llvm::Expected<std::vector<HostArray>>
mlir::ga::verify::runStep(Compiled &compiled,
                          const std::vector<HostArray> &inputs,
                          ArrayRef<Slot> results, StringRef which,
                          double &seconds, const RunnerOptions &options) {
  setPhase("running the " + which + " step");
  if (options.noFork)
    return deserializeResults(
        invokeEntry(compiled, inputs, results, options.repeat), results,
        seconds, compiled, which);
  int fds[2];
  if (pipe(fds) != 0)
    return llvm::createStringError("pipe() failed");
  llvm::outs().flush();
  llvm::errs().flush();
  pid_t pid = fork();
  if (pid < 0)
    return llvm::createStringError("fork() failed");
  if (pid == 0) {
    close(fds[0]);
    // A crash of the step is reported by the parent: no LLVM stack dump here.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP})
      signal(sig, SIG_DFL);
    // Whatever the step prints (cf.assert messages) goes to stderr, so that
    // --json output on stdout stays a single document.
    dup2(2, 1);
    setvbuf(stdout, nullptr, _IONBF, 0);
    std::string data = invokeEntry(compiled, inputs, results, options.repeat);
    if (!writeAll(fds[1], data))
      _exit(3);
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string data = drainPipe(fds[0]);
  int status = waitForChild(pid);
  if (WIFSIGNALED(status))
    return llvm::createStringError(
        llvm::formatv("the {0} step crashed ({1}) while running; an "
                      "out-of-range index (check ga.range of integer "
                      "arguments), a failed assertion, {2}",
                      which, strsignal(WTERMSIG(status)),
                      compiled.library.empty()
                          ? "or a miscompile"
                          : "a miscompile, or '" + compiled.library +
                                "' does not run this step (built from another "
                                "step or pipeline, or linked without "
                                "-Wl,-Bsymbolic and calling another library's "
                                "function of the step's name)")
            .str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return llvm::createStringError(
        llvm::formatv("the {0} step exited with status {1} while running",
                      which, WEXITSTATUS(status))
            .str());
  return deserializeResults(data, results, seconds, compiled, which);
}

int mlir::ga::verify::runIsolated(
    llvm::function_ref<int(llvm::raw_ostream &out)> body, std::string &output,
    std::string &crash) {
  int phases[2], results[2];
  if (pipe(phases) != 0) {
    llvm::raw_string_ostream out(output);
    return body(out);
  }
  if (pipe(results) != 0) {
    close(phases[0]);
    close(phases[1]);
    llvm::raw_string_ostream out(output);
    return body(out);
  }
  llvm::outs().flush();
  llvm::errs().flush();
  pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {phases[0], phases[1], results[0], results[1]})
      close(fd);
    llvm::raw_string_ostream out(output);
    return body(out);
  }
  if (pid == 0) {
    close(phases[0]);
    close(results[0]);
    phaseFd = phases[1];
    std::string data;
    int status;
    {
      llvm::raw_string_ostream out(data);
      status = body(out);
    }
    llvm::outs().flush();
    llvm::errs().flush();
    _exit(writeAll(results[1], data) ? status : 3);
  }
  close(phases[1]);
  close(results[1]);
  // The results pipe first: the child writes it last and may fill it, while
  // its few phase lines fit in the phase pipe's buffer.
  output = drainPipe(results[0]);
  std::string lines = drainPipe(phases[0]);
  int status = waitForChild(pid);
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  StringRef phase = StringRef(lines).rtrim('\n').rsplit('\n').second;
  if (phase.empty())
    phase = StringRef(lines).rtrim('\n');
  crash = llvm::formatv("crashed ({0}) while {1}", strsignal(WTERMSIG(status)),
                        phase)
              .str();
  return -1;
}
