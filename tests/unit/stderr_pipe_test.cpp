// The stderr pipe on a descriptor of the test's own: the "terminal" is a pipe the test reads, the tapped fd a dup of
// its write end, so the test sees exactly what the user would, and what the parser was fed.
#include "recorder/stderr_pipe.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <thread>

namespace firstassert {
namespace {

std::mutex fed_mutex;
std::string fed;

void collect(const char* bytes, size_t size) {
  std::lock_guard lock(fed_mutex);
  fed.append(bytes, size);
}

std::string fed_so_far() {
  std::lock_guard lock(fed_mutex);
  return fed;
}

struct Identity {
  dev_t dev;
  ino_t ino;
  bool operator==(const Identity&) const = default;
};

Identity identity(int fd) {
  struct stat st {};
  EXPECT_EQ(fstat(fd, &st), 0);
  return {st.st_dev, st.st_ino};
}

// What the user reads: the other end of the pipe the tapped fd pointed at before the tap.
class Screen {
 public:
  Screen() {
    EXPECT_EQ(pipe2(ends_, O_CLOEXEC), 0);
    fcntl(ends_[0], F_SETFL, O_NONBLOCK);
    fcntl(ends_[0], F_SETPIPE_SZ, 1 << 20);
    tapped_ = fcntl(ends_[1], F_DUPFD_CLOEXEC, 10);
    std::lock_guard lock(fed_mutex);
    fed.clear();
  }
  ~Screen() {
    close(ends_[0]);
    close(ends_[1]);
    close(tapped_);
  }
  int tapped() const { return tapped_; }
  int write_end() const { return ends_[1]; }
  // Everything readable now, without waiting.
  std::string take() {
    std::string got;
    char buffer[65536];
    for (ssize_t n; (n = read(ends_[0], buffer, sizeof buffer)) > 0;) got.append(buffer, static_cast<size_t>(n));
    return got;
  }

 private:
  int ends_[2] = {-1, -1};
  int tapped_ = -1;
};

void write_text(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    ASSERT_GT(n, 0);
    done += static_cast<size_t>(n);
  }
}

TEST(StderrPipe, EveryWriteIsForwardedAtOnceUnchangedAndFed) {
  Screen screen;
  StderrPipe pipe(screen.tapped());
  std::string error;
  ASSERT_TRUE(pipe.start(collect, error)) << error;
  EXPECT_NE(identity(screen.tapped()), identity(screen.write_end())) << "the fd now points at the pipe";
  std::string written;
  for (int i = 0; i < 200; ++i) {
    // Lines, partial lines and bytes that are not text, of every size up to a few pipe buffers.
    std::string piece = "line " + std::to_string(i) + (i % 3 == 0 ? "\n" : "") + std::string(i * 97 % 5000, 'a' + i % 26);
    piece.push_back(static_cast<char>(i));
    write_text(screen.tapped(), piece);
    written += piece;
    // Held back by nobody: once caught up, the user has every byte so far, with no later write pushing it out.
    ASSERT_TRUE(pipe.catch_up(2000));
  }
  EXPECT_EQ(screen.take(), written);
  EXPECT_EQ(fed_so_far(), written);
  pipe.stop(1000, 1000);
}

TEST(StderrPipe, MoreThanThePipeHoldsIsNotLostNorReordered) {
  Screen screen;
  StderrPipe pipe(screen.tapped());
  std::string error;
  ASSERT_TRUE(pipe.start(collect, error)) << error;
  std::string written, seen;
  std::thread reader([&] {
    // The user's side drains as a terminal would, while the writer outruns the reader thread.
    while (seen.size() < 8u << 20) {
      pollfd p{-1, POLLIN, 0};
      seen += screen.take();
      poll(&p, 0, 1);
    }
  });
  for (int block = 0; written.size() < 8u << 20; ++block) {
    std::string piece(4096, static_cast<char>('A' + block % 26));
    piece += std::to_string(block) + "\n";
    piece.resize(std::min(piece.size(), (8u << 20) - written.size()));
    write_text(screen.tapped(), piece);
    written += piece;
  }
  reader.join();
  EXPECT_TRUE(seen == written) << "what the user read differs from what was written";
  ASSERT_TRUE(pipe.catch_up(2000));
  EXPECT_TRUE(fed_so_far() == written) << "what the parser was fed differs from what was written";
  pipe.stop(1000, 1000);
}

TEST(StderrPipe, StopDrainsThenRestoresTheFd) {
  Screen screen;
  Identity before = identity(screen.tapped());
  StderrPipe pipe(screen.tapped());
  std::string error;
  ASSERT_TRUE(pipe.start(collect, error)) << error;
  ASSERT_TRUE(pipe.running());
  write_text(screen.tapped(), "written through the pipe\n");
  pipe.stop(1000, 1000);
  EXPECT_FALSE(pipe.running());
  EXPECT_EQ(identity(screen.tapped()), before) << "the fd is what it was before the tap";
  write_text(screen.tapped(), "written after the stop\n");
  EXPECT_EQ(screen.take(), "written through the pipe\nwritten after the stop\n");
  EXPECT_EQ(fed_so_far(), "written through the pipe\n") << "after the stop nothing more is fed";

  // It can be started again.
  ASSERT_TRUE(pipe.start(collect, error)) << error;
  write_text(screen.tapped(), "again\n");
  pipe.stop(1000, 1000);
  EXPECT_EQ(screen.take(), "again\n");
  EXPECT_EQ(identity(screen.tapped()), before);
}

TEST(StderrPipe, AFileSomeoneElsePutOnTheFdSinceStaysThere) {
  Screen screen;
  StderrPipe pipe(screen.tapped());
  std::string error;
  ASSERT_TRUE(pipe.start(collect, error)) << error;
  char path[] = "/tmp/stderr_pipe_test.XXXXXX";
  int theirs = mkstemp(path);
  ASSERT_GE(theirs, 0);
  unlink(path);
  ASSERT_GE(dup2(theirs, screen.tapped()), 0);
  pipe.stop(1000, 1000);
  EXPECT_EQ(identity(screen.tapped()), identity(theirs));
  close(theirs);
}

// In a forked test child: fd 2 on the screen, then the process's own pipe on it (the child exits 2 if it cannot).
void pipe_stderr_onto(const Screen& screen) {
  dup2(screen.write_end(), STDERR_FILENO);
  std::string error;
  if (!StderrPipe::process().start(collect, error)) _exit(2);
}

TEST(StderrPipe, AForkedChildWritesStraightToWhatTheFdWas) {
  // The process's own pipe (fd 2) is the one that knows about fork: run it in a child, with fd 2 on a test pipe.
  Screen screen;
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pipe_stderr_onto(screen);
    Identity piped = identity(STDERR_FILENO);
    pid_t grandchild = fork();
    if (grandchild == 0) {
      // No reader thread came along: fd 2 must be the original again, or these bytes would wait for the parent.
      _exit(identity(STDERR_FILENO) == identity(screen.write_end()) && !(identity(STDERR_FILENO) == piped) ? 0 : 3);
    }
    int status = 0;
    waitpid(grandchild, &status, 0);
    write_text(STDERR_FILENO, "parent still piped\n");
    StderrPipe::process().stop(1000, 1000);
    _exit(WIFEXITED(status) && WEXITSTATUS(status) == 0 && fed_so_far() == "parent still piped\n" ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(screen.take(), "parent still piped\n");
}

TEST(StderrPipe, AClosedFdIsRefusedNotTapped) {
  int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  close(fd);  // a descriptor number with nothing behind it, as a job started with 2>&- has
  StderrPipe pipe(fd);
  std::string error;
  EXPECT_FALSE(pipe.start(collect, error));
  EXPECT_NE(error.find("closed"), std::string::npos) << error;
  EXPECT_EQ(fcntl(fd, F_GETFD), -1) << "the pipe must not have taken the free number";
}

void drain_and_die(int) {
  StderrPipe::restore_process_fd_in_signal_handler();
  signal(SIGABRT, SIG_DFL);
  raise(SIGABRT);
}

// A process that dies of a signal right after writing (std::terminate's what(), then abort) still delivers every
// byte: the handler forwards what the pipe holds before the process goes. Repeated, since the reader racing the
// handler is where bytes would be lost.
TEST(StderrPipe, AFatalSignalsHandlerDeliversWhatThePipeHeld) {
  for (int round = 0; round < 20; ++round) {
    Screen screen;
    std::string last_words;
    for (int i = 0; i < 300; ++i) last_words += "terminate called: what(): CUDA error " + std::to_string(i) + "\n";
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      pipe_stderr_onto(screen);
      signal(SIGABRT, drain_and_die);
      write_text(STDERR_FILENO, last_words);
      abort();
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) << status;
    EXPECT_EQ(screen.take(), last_words) << "round " << round;
  }
}

}  // namespace
}  // namespace firstassert
