// The stderr pipe: how the recorder reads the driver's device assertion lines when the stub was not preloaded (a
// notebook that called enable(), a process that named the shim in CUDA_INJECTION64_PATH alone). Then no libc writer
// of ours interposes (stderr_tap.cpp), so fd 2 itself is moved onto a pipe whose reader thread writes every byte, as
// it comes, to what fd 2 was, and only then hands the same bytes to the device-message parser.
//
// What it costs the user, and why it is still the default there: fd 2 becomes a pipe (isatty(2) turns false), so it
// is not started where fd 2 is a terminal (the user reads the device's lines on the screen already) or closed. Bytes
// written just before the process ends without exit handlers (SIGKILL, _exit) may be lost with the pipe; a fatal
// signal that reaches the recorder's handler drains the pipe first. At exit, and on stop(), fd 2 is restored once
// the pipe is drained: nothing is lost or reordered on a normal exit. A child that outlives the process (spawned
// without fork handlers, or exec'd) keeps the pipe as its stderr and gets SIGPIPE once nobody reads it.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
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
  // Restores the fd to what it was, after forwarding what is in the pipe (at most drain_ms), then waits at most eof_ms
  // for other writers that hold the pipe (children) to close it; the reader goes on forwarding for them after that.
  void stop(int drain_ms, int eof_ms);
  bool running() const;
  // For a fatal signal's handler (async-signal-safe; nothing when process() was never used): what the pipe holds is
  // forwarded from the handler itself and fd 2 goes back to what it was, so that the dying process's last words
  // (std::terminate's what(), a crash dump's line, faulthandler's traceback) do not die in the pipe.
  static void restore_process_fd_in_signal_handler();

  struct State;  // defined where the reader thread uses it

 private:
  static void give_fd_back_in_child();  // pthread_atfork's child handler for the process's pipe

  int fd_;
  // Never freed: a reader left running for a child's writes, or a signal handler, may still use one.
  std::atomic<State*> state_{nullptr};
  std::mutex mutex_;  // one start, catch_up or stop at a time (Python threads may call them together)
};

}  // namespace firstassert
