#include "stderr_pipe.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace firstassert {

struct StderrPipe::State {
  int fd = -1;          // the fd moved onto the pipe
  int original = -1;    // what the fd was, kept (close-on-exec) to forward to and to restore
  int read_end = -1;    // non-blocking: a signal handler drains it too
  dev_t pipe_dev = 0;   // the pipe's identity, to tell whether the fd still is ours when restoring
  ino_t pipe_ino = 0;
  StderrSink sink = nullptr;
  pthread_t reader{};
  std::atomic<bool> busy{false};      // a chunk has been taken from the pipe and is not yet forwarded and fed
  std::atomic<bool> finished{false};  // the reader saw the end of the pipe (every writer closed it)
  char chunk[64 * 1024];
};

namespace {

std::atomic<StderrPipe*> atfork_target{nullptr};
std::atomic<StderrPipe*> process_pipe{nullptr};  // process()'s, once made: a signal handler must not make it

void write_all(int fd, const char* bytes, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // what fd 2 was is gone: the bytes are still parsed, as the user could not read them anyway
    bytes += n;
    size -= static_cast<size_t>(n);
  }
}

void* read_pipe(void* argument) {
  auto* state = static_cast<StderrPipe::State*>(argument);
  for (;;) {
    pollfd readable{state->read_end, POLLIN, 0};
    if (::poll(&readable, 1, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    // Marked busy before the bytes leave the pipe: catch_up() reads the pipe's fill first, then this flag.
    state->busy.store(true);
    ssize_t n = ::read(state->read_end, state->chunk, sizeof state->chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
      state->busy.store(false);
      continue;
    }
    if (n <= 0) {
      state->busy.store(false);
      break;
    }
    write_all(state->original, state->chunk, static_cast<size_t>(n));
    state->sink(state->chunk, static_cast<size_t>(n));
    state->busy.store(false);
  }
  state->finished.store(true);
  return nullptr;
}

void sleep_ms(int ms) {
  timespec pause{0, ms * 1000000L};
  while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {
  }
}

int64_t now_ms() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000 + t.tv_nsec / 1000000;
}

bool still_ours(const StderrPipe::State& state) {
  struct stat now {};
  return fstat(state.fd, &now) == 0 && now.st_dev == state.pipe_dev && now.st_ino == state.pipe_ino;
}

// A copy of fd at 3 or above, close-on-exec: the pipe's ends must never take the place of a closed 0, 1 or 2.
int high_copy(int fd) {
  int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  close(fd);
  return copy;
}

bool waiting_ended(const StderrPipe::State& state, int64_t deadline) {
  while (!state.finished.load()) {
    if (now_ms() >= deadline) return false;
    sleep_ms(1);
  }
  return true;
}

}  // namespace

StderrPipe& StderrPipe::process() {
  static StderrPipe* pipe = new StderrPipe(STDERR_FILENO);  // never destroyed: the exit handler runs after statics
  process_pipe.store(pipe, std::memory_order_release);
  return *pipe;
}

bool StderrPipe::running() const { return state_.load() != nullptr; }

namespace {

// A pipe whose ends, and a copy of the watched fd, sit above the low numbers a program may count on; false with
// error said, nothing left open.
bool open_pipe_and_copy(int fd, int ends[2], int& original, std::string& error) {
  if (pipe2(ends, O_CLOEXEC) != 0) {
    error = std::string("cannot make a pipe for stderr: ") + std::strerror(errno);
    return false;
  }
  ends[0] = high_copy(ends[0]);
  ends[1] = high_copy(ends[1]);
  original = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (ends[0] < 0 || ends[1] < 0 || original < 0) {
    error = std::string("cannot keep a copy of stderr: ") + std::strerror(errno);
    for (int open_fd : {ends[0], ends[1], original}) {
      if (open_fd >= 0) close(open_fd);
    }
    return false;
  }
  fcntl(ends[0], F_SETFL, O_NONBLOCK);
  fcntl(ends[1], F_SETPIPE_SZ, 1 << 20);  // room for a burst while the reader is descheduled; the default is fine too
  return true;
}

// The reader takes none of the program's signals: they stay with the threads that expect them.
int start_reader(pthread_t& reader, void* (*body)(void*), void* state) {
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  int created = pthread_create(&reader, nullptr, body, state);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return created;
}

}  // namespace

bool StderrPipe::start(StderrSink sink, std::string& error) {
  std::lock_guard lock(mutex_);
  if (state_.load() != nullptr) return true;
  if (fcntl(fd_, F_GETFD) == -1) {
    error = "stderr is closed: there is nothing to read the device's lines from";
    return false;
  }
  int ends[2];
  int original = -1;
  if (!open_pipe_and_copy(fd_, ends, original, error)) return false;
  auto* state = new State;
  state->fd = fd_;
  state->sink = sink;
  state->read_end = ends[0];
  state->original = original;
  struct stat pipe_stat {};
  fstat(ends[1], &pipe_stat);
  state->pipe_dev = pipe_stat.st_dev;
  state->pipe_ino = pipe_stat.st_ino;
  if (int created = start_reader(state->reader, read_pipe, state); created != 0) {
    error = std::string("cannot start the stderr reader: ") + std::strerror(created);
    close(ends[0]);
    close(ends[1]);
    close(original);
    delete state;
    return false;
  }
  if (dup2(ends[1], fd_) < 0) {
    error = std::string("cannot move stderr onto the pipe: ") + std::strerror(errno);
    close(ends[1]);  // the reader sees the end of the pipe and stops
    pthread_join(state->reader, nullptr);
    close(ends[0]);
    close(original);
    delete state;
    return false;
  }
  close(ends[1]);
  state_.store(state);
  if (this == process_pipe.load() && atfork_target.exchange(this) == nullptr)
    pthread_atfork(nullptr, nullptr, give_fd_back_in_child);
  return true;
}

// A forked child gets no reader thread: it writes to what fd 2 was, straight away.
void StderrPipe::give_fd_back_in_child() {
  StderrPipe* target = atfork_target.load();
  State* s = target != nullptr ? target->state_.load() : nullptr;
  if (s == nullptr) return;
  if (still_ours(*s)) dup2(s->original, s->fd);
  close(s->read_end);
  close(s->original);
  target->state_.store(nullptr);
}

void StderrPipe::restore_process_fd_in_signal_handler() {
  StderrPipe* pipe = process_pipe.load(std::memory_order_acquire);
  State* state = pipe != nullptr ? pipe->state_.load() : nullptr;
  if (state == nullptr || !still_ours(*state)) return;
  // The reader may never run again: once it has forwarded the chunk in its hands (a short wait), what is in the pipe
  // goes out from here (read(), write(), nanosleep() and clock_gettime() are async-signal-safe; the read end does not
  // block), then the fd is given back.
  for (int64_t deadline = now_ms() + 200; state->busy.load() && now_ms() < deadline;) sleep_ms(1);
  char bytes[4096];
  for (int rounds = 0; rounds < 256; ++rounds) {
    ssize_t n = ::read(state->read_end, bytes, sizeof bytes);
    if (n <= 0) break;
    write_all(state->original, bytes, static_cast<size_t>(n));
  }
  dup2(state->original, state->fd);
}

bool StderrPipe::catch_up(int timeout_ms) {
  std::lock_guard lock(mutex_);
  State* state = state_.load();
  if (state == nullptr) return true;
  int64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    int queued = 0;
    if (ioctl(state->read_end, FIONREAD, &queued) != 0) return false;
    if (queued == 0 && !state->busy.load()) return true;
    if (state->finished.load() || now_ms() >= deadline) return false;
    sleep_ms(1);
  }
}

void StderrPipe::stop(int drain_ms, int eof_ms) {
  catch_up(drain_ms);  // what was written before goes out before what is written after
  std::lock_guard lock(mutex_);
  State* state = state_.exchange(nullptr);
  if (state == nullptr) return;
  // Someone else may have put their own file on the fd since: theirs stays (our pipe's write end went with it).
  if (still_ours(*state)) dup2(state->original, state->fd);
  if (!waiting_ended(*state, now_ms() + eof_ms)) {
    pthread_detach(state->reader);  // a child still writes into the pipe: keep forwarding for it
    return;
  }
  pthread_join(state->reader, nullptr);
  close(state->read_end);
  close(state->original);
  // The state itself is kept: a signal handler that loaded it before the exchange above may still read it.
}

}  // namespace firstassert
