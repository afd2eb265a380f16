#include "crash_dump.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "stderr_pipe.h"

namespace firstassert {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM};
constexpr unsigned kLaunches = 32;

const Tracker* tracker = nullptr;
const std::atomic<bool>* report_exists = nullptr;
// Two buffers, so that the path can be changed (firstassert_set_report_dir) while a handler may be reading the other.
char dump_paths[2][4096];
std::atomic<int> current_dump_path{0};
int process_id = 0;
char host_name[256];
struct sigaction previous[65];
std::atomic<bool> dumping{false};

// A fixed buffer and the few formatters the dump needs; all async-signal-safe.
struct Writer {
  char text[1 << 18];
  size_t used = 0;
  void raw(const char* s) {
    while (*s != '\0' && used < sizeof text) text[used++] = *s++;
  }
  void number(unsigned long long v) {
    char digits[24];
    int n = 0;
    do digits[n++] = static_cast<char>('0' + v % 10); while ((v /= 10) != 0);
    while (n > 0 && used < sizeof text) text[used++] = digits[--n];
  }
  void signed_number(long long v) {
    if (v < 0) {
      raw("-");
      number(static_cast<unsigned long long>(-(v + 1)) + 1);
    } else {
      number(static_cast<unsigned long long>(v));
    }
  }
  void hex(unsigned long long v) {
    static const char digits[] = "0123456789abcdef";
    char out[20];
    int n = 0;
    do out[n++] = digits[v & 15]; while ((v >>= 4) != 0);
    raw("\"0x");
    while (n > 0 && used < sizeof text) text[used++] = out[--n];
    raw("\"");
  }
  // A JSON string; bytes outside printable ASCII become '?', so the file stays valid JSON (and UTF-8).
  void string(const char* s) {
    if (s == nullptr) {
      raw("null");
      return;
    }
    raw("\"");
    for (size_t i = 0; s[i] != '\0' && i < 4096 && used + 2 < sizeof text; ++i) {
      unsigned char c = static_cast<unsigned char>(s[i]);
      if (c == '"' || c == '\\') {
        text[used++] = '\\';
        text[used++] = static_cast<char>(c);
      } else {
        text[used++] = c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
      }
    }
    raw("\"");
  }
  void dims(const Dim3& d) {
    raw("[");
    number(d.x);
    raw(", ");
    number(d.y);
    raw(", ");
    number(d.z);
    raw("]");
  }
};

Writer writer;

const char* signal_name(int signal) {
  switch (signal) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGTERM: return "SIGTERM";
    default: return "signal";
  }
}

void write_header(Writer& w, int signal) {
  w.raw("{\n  \"schema\": \"firstassert/1\",\n  \"kind\": \"crash\",\n  \"process\": {\"pid\": ");
  w.number(static_cast<unsigned long long>(process_id));
  w.raw(", \"host\": ");
  w.string(host_name);
  w.raw("},\n  \"final\": true,\n  \"first_error\": null,\n  \"culprit\": null,\n  \"crash\": {\"signal\": ");
  w.number(static_cast<unsigned long long>(signal));
  w.raw(", \"name\": \"");
  w.raw(signal_name(signal));
  w.raw("\"},\n  \"launches_recorded\": ");
}

// Raw program counters and Python names only: nothing may be resolved in a signal handler.
void write_stacks(Writer& w, const LaunchRecord& record) {
  w.raw(", \"native_stack\": [");
  for (unsigned f = 0; f < record.stack_depth && f < kMaxStackFrames; ++f) {
    if (f > 0) w.raw(", ");
    w.raw("{\"pc\": ");
    w.hex(record.stack[f]);
    w.raw("}");
  }
  w.raw("], \"python_stack\": [");
  for (unsigned f = 0; f < record.python_depth && f < kMaxPythonFrames; ++f) {
    if (f > 0) w.raw(", ");
    w.raw("{\"file\": ");
    w.string(record.python[f].file);
    w.raw(", \"function\": ");
    w.string(record.python[f].function);
    w.raw(", \"line\": ");
    w.signed_number(record.python[f].line);
    w.raw("}");
  }
  w.raw("]");
}

void write_launch(Writer& w, const LaunchRecord& record) {
  w.raw("{\"seq\": ");
  w.number(record.seq);
  w.raw(", \"mangled\": ");
  w.string(record.kernel);
  w.raw(", \"graph\": ");
  w.raw(record.graph ? "true" : "false");
  w.raw(", \"grid\": ");
  w.dims(record.grid);
  w.raw(", \"block\": ");
  w.dims(record.block);
  w.raw(", \"shared_mem\": ");
  w.number(record.shared_mem);
  w.raw(", \"stream\": ");
  w.hex(record.stream);
  w.raw(", \"device\": ");
  w.signed_number(record.device);
  w.raw(", \"thread\": ");
  w.signed_number(record.thread);
  w.raw(", \"time_ns\": ");
  w.signed_number(record.wall_ns);
  write_stacks(w, record);
  w.raw("}");
}

// The newest kLaunches launches the ring still holds, newest first.
void write_recent_launches(Writer& w) {
  uint64_t total = tracker->ring().total();
  w.number(total);
  w.raw(",\n  \"recent_launches\": [");
  static LaunchRecord record;  // 1.4 KiB: static, not on a possibly exhausted stack
  unsigned written = 0;
  for (uint64_t i = 0; i < kLaunches && i < total; ++i) {
    if (!tracker->ring().find(total - 1 - i, record)) continue;
    Tracker::with_wall_time(record);
    w.raw(written++ == 0 ? "\n    " : ",\n    ");
    write_launch(w, record);
  }
  w.raw("\n  ]\n}\n");
}

// A new file only (O_EXCL, no link followed): a dump never overwrites what is there.
void write_file(const Writer& w, const char* path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return;
  size_t done = 0;
  while (done < w.used) {
    ssize_t n = write(fd, w.text + done, w.used - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
  static const char line[] = "firstassert: the process is dying of a signal with no CUDA error recorded; its recent "
                             "launches: ";
  (void)!write(STDERR_FILENO, line, sizeof line - 1);
  (void)!write(STDERR_FILENO, path, strlen(path));
  (void)!write(STDERR_FILENO, "\n", 1);
}

void dump(int signal) {
  Writer& w = writer;
  w.used = 0;
  write_header(w, signal);
  write_recent_launches(w);
  write_file(w, dump_paths[current_dump_path.load(std::memory_order_acquire)]);
}

void on_fatal_signal(int signal, siginfo_t* info, void* context) {
  int saved = errno;
  StderrPipe::restore_process_fd_in_signal_handler();
  // Only the first fatal signal dumps, and only when no report names the first CUDA error already. A SIGTERM is a
  // request to stop (a pool stopping its helper processes, such as torch.compile's compile workers, which inherit the
  // preload): a process that launched nothing has nothing to say then.
  bool stopped_idle = signal == SIGTERM && tracker != nullptr && tracker->ring().total() == 0;
  if (!dumping.exchange(true) && tracker != nullptr && !tracker->has_primary() &&
      !report_exists->load(std::memory_order_acquire) && !stopped_idle)
    dump(signal);
  errno = saved;
  // Then as if we were never there: the program's handler, or the default action.
  const struct sigaction& old = previous[signal];
  if ((old.sa_flags & SA_SIGINFO) != 0 && old.sa_sigaction != nullptr) {
    old.sa_sigaction(signal, info, context);
    return;
  }
  if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
    old.sa_handler(signal);
    return;
  }
  sigaction(signal, &old, nullptr);
  if (signal == SIGABRT || signal == SIGTERM || (info != nullptr && info->si_code <= 0)) raise(signal);
  // A fault returns to the faulting instruction, which faults again, now with the default action.
}

}  // namespace

void move_crash_dump(const std::string& path) {
  int next = 1 - current_dump_path.load(std::memory_order_relaxed);
  std::memset(dump_paths[next], 0, sizeof dump_paths[next]);
  std::strncpy(dump_paths[next], path.c_str(), sizeof dump_paths[next] - 1);
  current_dump_path.store(next, std::memory_order_release);
}

void install_crash_dump(const Tracker& t, const std::atomic<bool>& report_written, const std::string& path, int pid,
                        const std::string& host) {
  tracker = &t;
  report_exists = &report_written;
  process_id = pid;
  move_crash_dump(path);
  std::strncpy(host_name, host.c_str(), sizeof host_name - 1);
  for (int signal : kSignals) {
    struct sigaction current {};
    if (sigaction(signal, nullptr, &current) != 0 || current.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_sigaction = on_fatal_signal;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    if (sigaction(signal, &action, &previous[signal]) != 0) continue;
  }
}

}  // namespace firstassert
