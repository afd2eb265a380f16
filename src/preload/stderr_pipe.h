// The stderr pipe: how the recorder reads the driver's device assertion lines when the stub was not preloaded (a
// notebook that called enable(), a process that named the shim in CUDA_INJECTION64_PATH alone). Then no libc writer
// of ours interposes (stderr_tap.cpp), so fd 2 itself is moved onto a pipe whose reader thread writes every byte, as
// it comes, to what fd 2 was, and only then hands the same bytes to the device-message parser.
//
// What it costs the user, and why it is still the default there: fd 2 becomes a pipe (isatty(2) turns false), so it
// is not started where fd 2 is a terminal (the user reads the device's lines on the screen already); and bytes
// written just before the process is killed (SIGKILL) may be lost, since they were in the pipe. At exit, and on
// stop(), fd 2 is restored once the pipe is drained: nothing is lost or reordered on a normal exit.
#pragma once

#include <cstddef>
#include <string>

namespace firstassert {

using StderrSink = void (*)(const char* bytes, size_t size);

class StderrPipe {
 public:
  // The process's own (fd 2), fed to the device-message parser.
  static StderrPipe& process();

  explicit StderrPipe(int fd) : fd_(fd) {}
  StderrPipe(const StderrPipe&) = delete;
  StderrPipe& operator=(const StderrPipe&) = delete;

  // Splices the pipe in. False, with a one-line reason in error, when it could not be (fd unchanged then).
  bool start(StderrSink sink, std::string& error);
  // Waits (at most timeout_ms) until every byte written to the fd before the call has been forwarded and fed.
  // True when that happened.
  bool catch_up(int timeout_ms);
  // Restores the fd to what it was, after forwarding what is in the pipe (waiting at most timeout_ms for writers
  // that hold the pipe, such as forked children, to finish; the reader goes on forwarding for them after that).
  void stop(int timeout_ms);
  bool running() const;
  // For a fatal signal's handler (async-signal-safe; nothing when process() was never used): fd 2 goes back to what
  // it was at once, so that the dying process's last words (a crash dump's line, faulthandler's traceback) do not
  // wait in the pipe for a reader that may never run again. What the pipe holds is still forwarded while it runs.
  static void restore_process_fd_in_signal_handler();

  struct State;  // defined where the reader thread uses it

 private:
  int fd_;
  State* state_ = nullptr;  // never freed: a reader left running for a forked child's writes still uses it
};

}  // namespace firstassert
