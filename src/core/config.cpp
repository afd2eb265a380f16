#include "config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <regex>
#include <string_view>

namespace firstassert {
namespace {

std::string describe(std::string_view value) {
  // Values are quoted and cut short: a hostile variable must not flood stderr.
  std::string shown(value.substr(0, 80));
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return "\"" + shown + (value.size() > 80 ? "...\"" : "\"");
}

bool parse_unsigned(std::string_view text, uint64_t& out) {
  if (text.empty()) return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size();
}

struct Reader {
  const GetEnv& getenv;
  std::vector<std::string>& warnings;

  // nullptr when unset; an empty value counts as set (and is usually bad).
  const char* raw(const char* name) const { return getenv(name); }

  void warn(const char* name, std::string_view value, const std::string& problem, const std::string& instead) {
    warnings.push_back(std::string(name) + "=" + describe(value) + " " + problem + "; using " + instead);
  }

  uint64_t number(const char* name, uint64_t fallback, uint64_t low, uint64_t high) {
    const char* value = raw(name);
    if (value == nullptr) return fallback;
    uint64_t n = 0;
    if (!parse_unsigned(value, n)) {
      warn(name, value, "is not a whole number", std::to_string(fallback));
      return fallback;
    }
    if (n < low || n > high) {
      warn(name, value, "is outside " + std::to_string(low) + ".." + std::to_string(high), std::to_string(fallback));
      return fallback;
    }
    return n;
  }

  bool flag(const char* name, bool fallback) {
    const char* value = raw(name);
    if (value == nullptr) return fallback;
    std::string_view v(value);
    if (v == "1" || v == "on" || v == "true" || v == "yes") return true;
    if (v == "0" || v == "off" || v == "false" || v == "no") return false;
    warn(name, v, "is not 0 or 1", fallback ? "1" : "0");
    return fallback;
  }
};

SyncMode parse_sync(Reader& r) {
  SyncMode mode;
  const char* value = r.raw("FIRSTASSERT_SYNC");
  if (value == nullptr) return mode;
  std::string_view v(value);
  if (v == "off" || v == "0") return mode;
  if (v == "all" || v == "1") {
    mode.kind = SyncMode::Kind::all;
    return mode;
  }
  if (v.starts_with("every:")) {
    uint64_t n = 0;
    if (parse_unsigned(v.substr(6), n) && n >= 1) {
      mode.kind = n == 1 ? SyncMode::Kind::all : SyncMode::Kind::every;
      mode.every = n;
      return mode;
    }
    r.warn("FIRSTASSERT_SYNC", v, "needs a positive count after every:", "off");
    return mode;
  }
  if (v.starts_with("kernel:")) {
    std::string pattern(v.substr(7));
    try {
      if (pattern.empty()) throw std::regex_error(std::regex_constants::error_collate);
      std::regex check(pattern, std::regex::ECMAScript);
      mode.kind = SyncMode::Kind::kernel;
      mode.kernel_regex = pattern;
    } catch (const std::regex_error&) {
      r.warn("FIRSTASSERT_SYNC", v, "is not a valid kernel:REGEX (ECMAScript)", "off");
    }
    return mode;
  }
  r.warn("FIRSTASSERT_SYNC", v, "is not off, all, every:N or kernel:REGEX", "off");
  return mode;
}

LogLevel parse_log(Reader& r) {
  const char* level = r.raw("FIRSTASSERT_LOG");
  if (level == nullptr) return Config{}.log;
  std::string_view v(level);
  if (v == "quiet") return LogLevel::quiet;
  if (v == "info") return LogLevel::info;
  if (v == "debug") return LogLevel::debug;
  r.warn("FIRSTASSERT_LOG", v, "is not quiet, info or debug", "quiet");
  return LogLevel::quiet;
}

// A directory this process can write reports in; "" (the working directory) otherwise, said.
std::string parse_report_dir(Reader& r) {
  const char* dir = r.raw("FIRSTASSERT_DIR");
  if (dir == nullptr) return {};
  struct stat st {};
  if (*dir == '\0') {
    r.warn("FIRSTASSERT_DIR", dir, "is empty", "the working directory");
  } else if (::stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    r.warn("FIRSTASSERT_DIR", dir, "is not a directory", "the working directory");
  } else if (::access(dir, W_OK | X_OK) != 0) {
    r.warn("FIRSTASSERT_DIR", dir, "is not writable", "the working directory");
  } else {
    return dir;
  }
  return {};
}

std::string parse_cupti_path(Reader& r) {
  const char* path = r.raw("FIRSTASSERT_CUPTI");
  if (path == nullptr) return {};
  if (*path == '\0') r.warn("FIRSTASSERT_CUPTI", path, "is empty", "the usual search");
  return path;
}

Backend parse_backend(Reader& r) {
  const char* backend = r.raw("FIRSTASSERT_BACKEND");
  if (backend == nullptr) return Config{}.backend;
  std::string_view v(backend);
  if (v == "auto") return Backend::automatic;
  if (v == "cupti") return Backend::cupti;
  if (v == "interpose") return Backend::interpose;
  r.warn("FIRSTASSERT_BACKEND", v, "is not auto, cupti or interpose", "auto");
  return Backend::automatic;
}

StderrPipeMode parse_stderr_pipe(Reader& r) {
  const char* pipe = r.raw("FIRSTASSERT_STDERR_PIPE");
  if (pipe == nullptr) return Config{}.stderr_pipe;
  std::string_view v(pipe);
  if (v == "auto") return StderrPipeMode::automatic;
  if (v == "1" || v == "on") return StderrPipeMode::on;
  if (v == "0" || v == "off") return StderrPipeMode::off;
  r.warn("FIRSTASSERT_STDERR_PIPE", v, "is not auto, 1 or 0", "auto");
  return StderrPipeMode::automatic;
}

}  // namespace

Config parse_config(const GetEnv& getenv, std::vector<std::string>& warnings) {
  Reader r{getenv, warnings};
  Config c;
  c.log = parse_log(r);
  c.report_dir = parse_report_dir(r);
  c.ring = static_cast<size_t>(r.number("FIRSTASSERT_RING", Config::kDefaultRing, Config::kMinRing, Config::kMaxRing));
  c.cupti_path = parse_cupti_path(r);
  c.sync = parse_sync(r);
  c.stack_depth = static_cast<unsigned>(
      r.number("FIRSTASSERT_STACK_DEPTH", Config::kDefaultStackDepth, 0, Config::kMaxStackDepth));
  c.backend = parse_backend(r);
  c.stderr_pipe = parse_stderr_pipe(r);
  c.python = r.flag("FIRSTASSERT_PYTHON", true);
  c.breadcrumbs = r.flag("FIRSTASSERT_BREADCRUMBS", true);
  return c;
}

}  // namespace firstassert
