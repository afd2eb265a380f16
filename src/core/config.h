// FIRSTASSERT_* settings, read once at activation. A bad value never stops anything: it yields one warning naming
// the variable, the value and the default used instead.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "log.h"

namespace firstassert {

struct SyncMode {
  enum class Kind { off, all, every, kernel } kind = Kind::off;
  uint64_t every = 0;         // every:N
  std::string kernel_regex;   // kernel:REGEX (ECMAScript), checked to compile
};

enum class Backend { automatic, cupti, interpose };

// How the device's lines are read when the stub was not preloaded (recorder/stderr_pipe.h): through a pipe on fd 2
// unless fd 2 is a terminal (automatic), always (on), or not at all (off).
enum class StderrPipeMode { automatic, on, off };

struct Config {
  static constexpr size_t kDefaultRing = 4096;
  static constexpr size_t kMinRing = 16;
  static constexpr size_t kMaxRing = 65536;  // about 90 MiB of records at 1.4 KiB each
  static constexpr unsigned kDefaultStackDepth = 32;
  static constexpr unsigned kMaxStackDepth = 64;

  std::string report_dir;    // FIRSTASSERT_DIR; empty: the working directory at activation
  size_t ring = kDefaultRing;  // FIRSTASSERT_RING
  std::string cupti_path;    // FIRSTASSERT_CUPTI; empty: search
  LogLevel log = LogLevel::quiet;  // FIRSTASSERT_LOG
  SyncMode sync;             // FIRSTASSERT_SYNC
  unsigned stack_depth = kDefaultStackDepth;  // FIRSTASSERT_STACK_DEPTH
  bool python = true;        // FIRSTASSERT_PYTHON
  bool breadcrumbs = true;   // FIRSTASSERT_BREADCRUMBS
  Backend backend = Backend::automatic;  // FIRSTASSERT_BACKEND: auto, cupti or interpose
  StderrPipeMode stderr_pipe = StderrPipeMode::automatic;  // FIRSTASSERT_STDERR_PIPE: auto, 1 or 0
};

using GetEnv = std::function<const char*(const char*)>;

// Parses the settings; each problem is appended to warnings as one line (without the "firstassert: " prefix).
Config parse_config(const GetEnv& getenv, std::vector<std::string>& warnings);

}  // namespace firstassert
