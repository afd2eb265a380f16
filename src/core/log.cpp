#include "log.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>

namespace firstassert {
namespace {

std::atomic<LogLevel> level{LogLevel::quiet};

void emit(const char* format, va_list args) {
  char line[2048];
  int prefix = std::snprintf(line, sizeof line, "firstassert: ");
  int body = std::vsnprintf(line + prefix, sizeof line - static_cast<size_t>(prefix) - 1, format, args);
  size_t length = static_cast<size_t>(prefix) + (body < 0 ? 0 : static_cast<size_t>(body));
  if (length > sizeof line - 2) length = sizeof line - 2;  // truncated: still one line
  line[length++] = '\n';
  int saved_errno = errno;  // the program may be inspecting errno around the call we observed
  const char* p = line;
  while (length > 0) {
    ssize_t n = ::write(STDERR_FILENO, p, length);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    p += n;
    length -= static_cast<size_t>(n);
  }
  errno = saved_errno;
}

}  // namespace

void set_log_level(LogLevel l) { level.store(l, std::memory_order_relaxed); }
LogLevel log_level() { return level.load(std::memory_order_relaxed); }

// The level check comes before any formatting: a quiet run pays nothing for info and debug lines.
#define FIRSTASSERT_EMIT_AT(minimum)                 \
  if (log_level() < (minimum)) return;               \
  va_list args;                                      \
  va_start(args, format);                            \
  emit(format, args);                                \
  va_end(args)

void say(const char* format, ...) { FIRSTASSERT_EMIT_AT(LogLevel::quiet); }
void info(const char* format, ...) { FIRSTASSERT_EMIT_AT(LogLevel::info); }
void debug(const char* format, ...) { FIRSTASSERT_EMIT_AT(LogLevel::debug); }

}  // namespace firstassert
