// The stderr tap: how firstassert reads the driver's device assertion lines without changing what the user sees.
//
// The driver prints those lines on stderr through libc. Preloaded, this library defines the libc output functions
// the driver may use (write, writev, fwrite, fputs, fprintf, vfprintf and their _chk twins), and those that end
// other writers' lines: a line's newline written apart through putc/fputc (std::cerr << std::endl does, as Kineto's
// log lines do) would otherwise glue that line to the next one (putc_unlocked and fputc_unlocked are inline in
// glibc's optimized headers: such calls never reach a definition here); each calls the real one
// first, with the caller's own arguments, so the bytes, their order, the file descriptor and isatty() are exactly
// as without firstassert, and nothing is held back if the process dies right after. Only then, for stderr, the
// same bytes are handed to the recorder (firstassert_recorder_stderr), whose device-message parser never blocks or
// allocates. A tee of fd 2 through a pipe is only the fallback: it changes isatty(2), and bytes in flight are lost when
// the process is killed. Loaded by dlopen (firstassert_enable) these definitions do not interpose, so the recorder
// takes that fallback then (stderr_pipe.h). Part of the preloaded stub: links nothing but libc.
#include "stderr_tap.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "core/fast_tls.h"
#include "recorder_abi.h"

namespace {

using FeedFn = void (*)(const char*, size_t);
std::atomic<FeedFn> recorder_feed{nullptr};
FIRSTASSERT_FAST_TLS thread_local bool inside_tap = false;  // the recorder's parsing never writes, but stay safe against re-entry

using WriteFn = ssize_t (*)(int, const void*, size_t);
using WritevFn = ssize_t (*)(int, const struct iovec*, int);
using FwriteFn = size_t (*)(const void*, size_t, size_t, FILE*);
using FputsFn = int (*)(const char*, FILE*);
using VfprintfFn = int (*)(FILE*, const char*, va_list);
using VfprintfChkFn = int (*)(FILE*, int, const char*, va_list);
using PutcFn = int (*)(int, FILE*);

template <typename Fn>
Fn next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

// Resolved at load, so that no dlsym runs inside a write (which may be in a signal handler).
std::atomic<WriteFn> real_write{nullptr};
std::atomic<WritevFn> real_writev{nullptr};
std::atomic<FwriteFn> real_fwrite{nullptr};
std::atomic<FputsFn> real_fputs{nullptr};
std::atomic<VfprintfFn> real_vfprintf{nullptr};
std::atomic<VfprintfChkFn> real_vfprintf_chk{nullptr};
std::atomic<PutcFn> real_fputc{nullptr};
std::atomic<PutcFn> real_putc{nullptr};
std::atomic<FwriteFn> real_fwrite_unlocked{nullptr};
std::atomic<FputsFn> real_fputs_unlocked{nullptr};

template <typename Fn>
Fn resolved(std::atomic<Fn>& slot, const char* name) {
  Fn fn = slot.load(std::memory_order_acquire);
  if (fn == nullptr) {
    fn = next<Fn>(name);
    slot.store(fn, std::memory_order_release);
  }
  return fn;
}

__attribute__((constructor)) void resolve_libc_outputs() {
  resolved(real_write, "write");
  resolved(real_writev, "writev");
  resolved(real_fwrite, "fwrite");
  resolved(real_fputs, "fputs");
  resolved(real_vfprintf, "vfprintf");
  resolved(real_vfprintf_chk, "__vfprintf_chk");
  resolved(real_fputc, "fputc");
  resolved(real_putc, "putc");
  resolved(real_fwrite_unlocked, "fwrite_unlocked");
  resolved(real_fputs_unlocked, "fputs_unlocked");
}



bool tapping(int fd) { return fd == STDERR_FILENO && recorder_feed.load(std::memory_order_relaxed) != nullptr && !inside_tap; }
bool tapping(FILE* stream) { return stream == stderr && recorder_feed.load(std::memory_order_relaxed) != nullptr && !inside_tap; }

void feed(const void* data, size_t size) {
  FeedFn fn = recorder_feed.load(std::memory_order_acquire);
  if (fn == nullptr) return;
  int saved = errno;
  inside_tap = true;
  fn(static_cast<const char*>(data), size);
  inside_tap = false;
  errno = saved;
}

void feed_formatted(const char* format, va_list args) {
  int saved = errno;  // the caller's, as after the real printf
  char text[4096];
  int n = vsnprintf(text, sizeof text, format, args);
  errno = saved;
  if (n > 0) feed(text, static_cast<size_t>(n) < sizeof text ? static_cast<size_t>(n) : sizeof text - 1);
}

// fwrite and fwrite_unlocked: what was written, fed.
size_t write_items(std::atomic<FwriteFn>& slot, const char* name, const void* ptr, size_t size, size_t nmemb,
                   FILE* stream) {
  size_t written = resolved(slot, name)(ptr, size, nmemb, stream);
  if (written > 0 && tapping(stream)) feed(ptr, written * size);
  return written;
}

// fputs and fputs_unlocked.
int put_string(std::atomic<FputsFn>& slot, const char* name, const char* s, FILE* stream) {
  int r = resolved(slot, name)(s, stream);
  if (r >= 0 && tapping(stream)) feed(s, strlen(s));
  return r;
}

// One character through a putc-like call: fed as written (the call returns it as an unsigned char, or EOF).
int put_one(std::atomic<PutcFn>& slot, const char* name, int c, FILE* stream) {
  int r = resolved(slot, name)(c, stream);
  if (r != EOF && tapping(stream)) {
    char byte = static_cast<char>(r);
    feed(&byte, 1);
  }
  return r;
}

}  // namespace

namespace firstassert::stub {
void attach_stderr_tap(void (*recorder)(const char*, size_t)) { recorder_feed.store(recorder, std::memory_order_release); }
}  // namespace firstassert::stub

#define FIRSTASSERT_INTERPOSE extern "C" __attribute__((visibility("default")))

FIRSTASSERT_INTERPOSE ssize_t write(int fd, const void* buf, size_t count) {
  WriteFn fn = real_write.load(std::memory_order_acquire);
  ssize_t n = fn != nullptr ? fn(fd, buf, count) : syscall(SYS_write, fd, buf, count);
  if (n > 0 && tapping(fd)) feed(buf, static_cast<size_t>(n));
  return n;
}

FIRSTASSERT_INTERPOSE ssize_t writev(int fd, const struct iovec* iov, int iovcnt) {
  WritevFn fn = real_writev.load(std::memory_order_acquire);
  ssize_t n = fn != nullptr ? fn(fd, iov, iovcnt) : syscall(SYS_writev, fd, iov, iovcnt);
  if (n > 0 && tapping(fd)) {
    size_t left = static_cast<size_t>(n);
    for (int i = 0; i < iovcnt && left > 0; ++i) {
      size_t part = iov[i].iov_len < left ? iov[i].iov_len : left;
      feed(iov[i].iov_base, part);
      left -= part;
    }
  }
  return n;
}

FIRSTASSERT_INTERPOSE size_t fwrite(const void* ptr, size_t size, size_t nmemb, FILE* stream) {
  return write_items(real_fwrite, "fwrite", ptr, size, nmemb, stream);
}

FIRSTASSERT_INTERPOSE int fputs(const char* s, FILE* stream) { return put_string(real_fputs, "fputs", s, stream); }

FIRSTASSERT_INTERPOSE int vfprintf(FILE* stream, const char* format, va_list args) {
  va_list copy;
  va_copy(copy, args);
  int r = resolved(real_vfprintf, "vfprintf")(stream, format, args);
  if (r > 0 && tapping(stream)) feed_formatted(format, copy);
  va_end(copy);
  return r;
}

FIRSTASSERT_INTERPOSE int fprintf(FILE* stream, const char* format, ...) {
  va_list args;
  va_start(args, format);
  int r = vfprintf(stream, format, args);
  va_end(args);
  return r;
}

FIRSTASSERT_INTERPOSE int __vfprintf_chk(FILE* stream, int flag, const char* format, va_list args) {
  va_list copy;
  va_copy(copy, args);
  int r = resolved(real_vfprintf_chk, "__vfprintf_chk")(stream, flag, format, args);
  if (r > 0 && tapping(stream)) feed_formatted(format, copy);
  va_end(copy);
  return r;
}

FIRSTASSERT_INTERPOSE int __fprintf_chk(FILE* stream, int flag, const char* format, ...) {
  va_list args;
  va_start(args, format);
  int r = __vfprintf_chk(stream, flag, format, args);
  va_end(args);
  return r;
}

FIRSTASSERT_INTERPOSE int fputc(int c, FILE* stream) { return put_one(real_fputc, "fputc", c, stream); }

FIRSTASSERT_INTERPOSE int putc(int c, FILE* stream) { return put_one(real_putc, "putc", c, stream); }

FIRSTASSERT_INTERPOSE size_t fwrite_unlocked(const void* ptr, size_t size, size_t nmemb, FILE* stream) {
  return write_items(real_fwrite_unlocked, "fwrite_unlocked", ptr, size, nmemb, stream);
}

FIRSTASSERT_INTERPOSE int fputs_unlocked(const char* s, FILE* stream) {
  return put_string(real_fputs_unlocked, "fputs_unlocked", s, stream);
}
