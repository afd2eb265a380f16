#include "activation.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/rewrite_cadence.h"
#include "core/tracker.h"
#include "core/graph_table.h"
#include "device/breadcrumbs.h"
#include "device/graph_breadcrumbs.h"
#include "crash_dump.h"
#include "device_message_tap.h"
#include "interpose.h"
#include "report/process_info.h"
#include "report/report_file.h"
#include "report/report_json.h"
#include "report/summary.h"
#include "source/context_devices.h"
#include "sources.h"
#include "stderr_pipe.h"
#include "stack/module_map.h"

#ifndef FIRSTASSERT_VERSION
#define FIRSTASSERT_VERSION "unknown"
#endif

namespace firstassert {
namespace {

// Everything the shim keeps. Allocated once and never freed: callbacks may still arrive while the process exits.
struct Shim {
  Config config;
  ProcessInfo process;
  Tracker tracker;
  Breadcrumbs breadcrumbs;
  GraphTable graphs;
  GraphBreadcrumbs graph_breadcrumbs;
  SyncPolicy sync;
  ReportFile report;
  ToolInfo tool;
  std::mutex report_mutex;  // one writer at a time: detection and exit may race
  std::atomic<bool> report_written{false};
  std::map<uint64_t, std::string> launch_values;  // under report_mutex (set_launch_values)

  std::string report_dir;

  Shim(Config c, ProcessInfo p, std::string dir)
      : config(std::move(c)),
        process(std::move(p)),
        tracker(config.ring),
        graph_breadcrumbs(graphs, config.breadcrumbs),
        sync(config.sync),
        report(dir, process.host, process.pid),
        report_dir(std::move(dir)) {}

  std::string crash_dump_path() const {
    return report_dir + "/firstassert-" + process.host + "-" + std::to_string(process.pid) + ".crash.json";
  }

  // final_at: when final, "exit" or "shutdown" (report_json.h).
  bool write_report(const Findings& findings, bool final, const char* final_at = "exit") {
    std::lock_guard lock(report_mutex);
    std::vector<LoadedModule> modules = loaded_modules();
    ToolInfo now = tool;
    sources::describe(now);  // the source may have changed (CUPTI handed to another tool, a disable)
    ReportInput input{process, findings, modules, now, final, wall_ns(), &launch_values, final_at};
    std::string error;
    try {
      if (report.write(report_json(input), error)) {
        report_written.store(true, std::memory_order_release);
        return true;
      }
    } catch (const std::exception& e) {
      error = std::string("cannot build the report: ") + e.what();
    }
    say("%s", error.c_str());
    return false;
  }
};

std::once_flag once;
Shim* shim = nullptr;
std::atomic<bool> recording{false};
std::mutex switch_mutex;  // firstassert_disable() and firstassert_enable() after it, one at a time
bool disabled = false;

std::string working_directory() {
  char cwd[PATH_MAX];
  return getcwd(cwd, sizeof cwd) != nullptr ? std::string(cwd) : std::string(".");
}

// What the first summary said. What is read after it (the device's assertion lines, which the driver prints at the
// next synchronization; launches numbered after the error; the breadcrumbs read again) can sharpen the answer by
// exit: a window narrowed to one launch. Written once, before `answered` is set: the exit handler may run on
// another thread while the first error is being summarized.
struct Answer {
  uint64_t culprit_seq = 0;
  bool named = false;
  const char* confidence = nullptr;
};
Answer first_answer;
std::atomic<bool> answered{false};

Answer answer_of(const Findings& findings) {
  return {findings.culprit ? findings.culprit->seq : 0, findings.culprit.has_value(), findings.confidence};
}

void on_primary(const Findings& findings) {
  bool written = shim->write_report(findings, false);
  first_answer = answer_of(findings);
  answered.store(true, std::memory_order_release);
  for (const std::string& line : summary_lines(findings, written ? shim->report.path() : std::string()))
    say("%s", line.c_str());
}

// What the job's side said of the values of the culprit's call (set_launch_values), when the culprit is claimed
// (exact or likely); "" otherwise.
std::string claimed_culprit_values(const Findings& findings) {
  if (!findings.culprit || findings.confidence == nullptr) return {};
  std::string_view confidence = findings.confidence;
  if (confidence != "exact" && confidence != "likely") return {};
  std::lock_guard lock(shim->report_mutex);
  auto found = shim->launch_values.find(findings.culprit->seq);
  if (found == shim->launch_values.end()) return {};
  nlohmann::json values = nlohmann::json::parse(found->second, nullptr, false);
  if (!values.is_object() || !values.contains("text") || !values["text"].is_string()) return {};
  return values["text"].get<std::string>();
}

// At exit: when what was read since changed the answer, the summary again, said as such.
void say_changed_answer(const Findings& findings) {
  if (!answered.load(std::memory_order_acquire)) return;
  Answer now = answer_of(findings);
  if (now.named == first_answer.named && now.culprit_seq == first_answer.culprit_seq &&
      std::string_view(now.confidence) == first_answer.confidence)
    return;
  say("what was read after the summary above (the device's assertion lines, later launches, the breadcrumbs) "
      "changes its answer:");
  for (const std::string& line : summary_lines(findings, shim->report.path())) say("%s", line.c_str());
  std::string values = claimed_culprit_values(findings);
  if (!values.empty()) say("values of the culprit's call: %s", values.c_str());
}

// The report counts the secondary errors as they come: rewritten at the first, then at most every two seconds
// (core/rewrite_cadence.h), so that a process killed rather than exited (a notebook kernel) leaves a complete one.
RewriteCadence rewrites;

void on_secondary(uint64_t count) {
  if (source::stopped() || !rewrites.due(count, monotonic_ns())) return;
  shim->write_report(shim->tracker.findings(), false);
}

// A refused launch is known exactly at once. The first one is written to a report straight away (while no sticky
// error has been seen), so that it survives however the process ends: normally, by an uncaught exception, or by a
// signal. The exit handler rewrites it.
void on_launch_error(const LaunchError& error, bool first) {
  if (!first || source::stopped()) return;
  say("%s", launch_error_line(error).c_str());
  if (shim->tracker.has_primary() || !shim->report.path().empty()) return;
  if (shim->write_report(shim->tracker.findings(), false)) say("report: %s", shim->report.path().c_str());
}

// At exit (or when the process says it is about to end: finish_report) the report is rewritten with the secondary
// errors that followed (or first written, when launches were refused but no sticky error came); a run without
// errors leaves no file and prints nothing. Only the exit handler speaks, once: with the line written while a
// notebook kernel shut down, ipykernel 6 with fd capture (a Python thread forwarding fd 2) ended in SIGABRT about
// once in 25 restarts, and never in 30 without it; most likely the forwarding thread still wrote as the
// interpreter finalized (CPython aborts a daemon thread's write to a buffered stream then).
std::atomic<bool> finish_said{false};

bool write_final_report(const char* final_at, bool say_it) {
  if (shim == nullptr || source::stopped()) return false;  // a forked child never writes its parent's report
  // A healthy run reads nothing: findings() copies the whole ring (4,096 slots by default).
  if (!shim->tracker.has_findings()) return false;
  Findings findings = shim->tracker.findings();  // holds one or the other: neither is ever taken back
  if (!findings.has_primary) return shim->write_report(findings, true, final_at);  // the refused launches, final
  bool written = shim->write_report(findings, true, final_at);
  if (!written || !say_it || finish_said.exchange(true)) return written;
  say_changed_answer(findings);
  if (findings.secondary_count > 0) {
    say("%llu secondary error%s followed the first; report updated: %s",
        static_cast<unsigned long long>(findings.secondary_count), findings.secondary_count == 1 ? "" : "s",
        shim->report.path().c_str());
  }
  return true;
}

void at_exit() { write_final_report("exit", true); }

// How long the stderr pipe may take to forward what is in it at exit or when asked for a fresh report.
constexpr int kPipeCatchUpMs = 500;

// Not preloaded, no libc writer of ours sees the driver's device lines: fd 2 is read through a pipe instead.
bool start_stderr_pipe(StderrPipeMode mode) {
  if (mode == StderrPipeMode::off) return false;
  if (StderrPipe::process().running()) return true;
  if (mode == StderrPipeMode::automatic && isatty(STDERR_FILENO) == 1) {
    info("stderr is a terminal: the device's assertion lines are shown there but not read into the report "
         "(FIRSTASSERT_STDERR_PIPE=1 reads them through a pipe, which makes stderr a pipe)");
    return false;
  }
  std::string error;
  if (!StderrPipe::process().start(feed_device_messages, error)) {
    say("%s; the device's assertion lines are not read", error.c_str());
    return false;
  }
  // Registered after at_exit, so it runs first: the report written at exit has every line the pipe held.
  static std::once_flag at_exit_stop;
  std::call_once(at_exit_stop, [] { std::atexit([] { StderrPipe::process().stop(kPipeCatchUpMs, 0); }); });
  return true;
}

// Loaded by dlopen (a notebook), firstassert cannot see another tool's cuptiSubscribe to hand CUPTI over: say so once.
void say_cupti_is_held() {
  if (!sources::holds_cupti()) return;
  say("recording holds CUPTI: a profiler started from now on (torch.profiler, Nsight Systems) is refused it; "
      "firstassert.disable() (C: firstassert_disable()) gives it back");
}

void bring_up(ActivatedBy by) {
  std::vector<std::string> warnings;
  Config config = parse_config([](const char* name) { return std::getenv(name); }, warnings);
  set_log_level(config.log);
  for (const std::string& w : warnings) say("%s", w.c_str());

  std::string dir = config.report_dir.empty() ? working_directory() : config.report_dir;
  shim = new Shim(config, current_process_info(), dir);
  shim->tool.version = FIRSTASSERT_VERSION;
  shim->tracker.on_primary(on_primary);
  shim->tracker.on_secondary(on_secondary);
  shim->tracker.on_launch_error(on_launch_error);
  source::Recording uses{&shim->tracker, nullptr, &shim->graph_breadcrumbs, &shim->sync, config.stack_depth,
                         config.python};
  shim->tracker.set_graph_probe([](uintptr_t exec) { return shim->graphs.nodes_of(exec); });
  shim->tracker.set_device_probe(source::devices_seen);
  if (config.breadcrumbs) {
    uses.breadcrumbs = &shim->breadcrumbs;
    shim->breadcrumbs.set_launch_count([] { return shim->tracker.launch_count(); });
    shim->breadcrumbs.on_stream_end([](uint64_t key, uint64_t at) { shim->tracker.stream_ended(key, at); });
    shim->tracker.set_progress_probe([] { return shim->breadcrumbs.progress(); });
  }

  source::start(uses);
  std::string message;
  if (!sources::start(config.backend, config.cupti_path, message)) {
    say("%s; recording is off", message.c_str());
    return;
  }
  recording.store(true, std::memory_order_release);
  start_stderr_tap();
  std::atexit(at_exit);
  if (!interpose::available()) {
    start_stderr_pipe(config.stderr_pipe);
    say_cupti_is_held();
  }
  // A forked child (a DataLoader worker) is another process: the parent's recording is not its own.
  pthread_atfork(nullptr, nullptr, [] { source::stop_in_this_process(); });
  install_crash_dump(shim->tracker, shim->report_written, shim->crash_dump_path(), shim->process.pid,
                     shim->process.host);
  info("%s (activated by %s; ring of %zu launches; reports go to %s)", message.c_str(),
       by == ActivatedBy::injection ? "the CUDA driver" : "firstassert_enable()", config.ring, dir.c_str());
}

// firstassert_enable() after firstassert_disable(): the same recording, from the same source as at bring-up.
void resume() {
  std::lock_guard lock(switch_mutex);
  if (!disabled || source::stopped()) return;
  std::string message;
  if (!sources::start(shim->config.backend, shim->config.cupti_path, message)) {
    say("%s; recording stays off", message.c_str());
    return;
  }
  disabled = false;
  recording.store(true, std::memory_order_release);
  if (!interpose::available()) {
    start_stderr_pipe(shim->config.stderr_pipe);
    say_cupti_is_held();
  }
  info("%s again (firstassert_enable())", message.c_str());
}

}  // namespace

bool activate(ActivatedBy by) {
  try {
    std::call_once(once, bring_up, by);
    if (shim != nullptr && !recording.load(std::memory_order_acquire)) resume();
  } catch (...) {
    // Nothing may escape into the program: an allocation failure here only turns recording off.
    say("could not start (out of memory?); recording is off");
    return false;
  }
  return recording.load(std::memory_order_acquire) && sources::recording();
}

bool disable() {
  if (shim == nullptr || source::stopped()) return false;  // a forked child's locks may be held by a lost thread
  std::lock_guard lock(switch_mutex);
  if (!recording.load(std::memory_order_acquire)) return false;
  StderrPipe::process().stop(kPipeCatchUpMs, kPipeCatchUpMs / 5);
  sources::stop();
  recording.store(false, std::memory_order_release);
  disabled = true;
  info("recording is off (firstassert_disable()): CUPTI is free for another tool; firstassert_enable() resumes");
  return true;
}

std::string report_path() {
  if (shim == nullptr) return {};
  std::lock_guard lock(shim->report_mutex);
  return shim->report.path();
}

bool refresh_report() {
  if (shim == nullptr || source::stopped()) return false;  // after firstassert_disable() too: the findings stand
  StderrPipe::process().catch_up(kPipeCatchUpMs);
  if (!shim->report_written.load(std::memory_order_acquire)) return false;
  return shim->write_report(shim->tracker.findings(), false);
}

bool finish_report() {
  StderrPipe::process().catch_up(kPipeCatchUpMs);
  return write_final_report("shutdown", false);
}

uint64_t launch_count() {
  if (shim == nullptr || !recording.load(std::memory_order_acquire)) return kNotRecording;
  return shim->tracker.launch_count();
}

// Bounded: the job's side describes the culprit and the candidates of one report, a few launches.
constexpr size_t kMaxLaunchValues = 64;

bool set_launch_values(uint64_t seq, std::string json_object) {
  if (shim == nullptr || source::stopped()) return false;
  std::lock_guard lock(shim->report_mutex);
  if (shim->launch_values.size() >= kMaxLaunchValues && shim->launch_values.count(seq) == 0) return false;
  shim->launch_values[seq] = std::move(json_object);
  return true;
}

std::string set_report_dir(const std::string& dir) {
  if (shim == nullptr) return dir;  // not started: the caller's FIRSTASSERT_DIR is read at activation
  std::lock_guard lock(shim->report_mutex);
  if (!shim->report.path().empty()) return shim->report_dir;  // a report is written: it stays where it is
  shim->report = ReportFile(dir, shim->process.host, shim->process.pid);
  shim->report_dir = dir;
  move_crash_dump(shim->crash_dump_path());
  return dir;
}

bool stderr_pipe(bool on) {
  if (!on) {
    StderrPipe::process().stop(kPipeCatchUpMs, kPipeCatchUpMs / 5);
    return false;
  }
  // Preloaded, the libc writers read the lines already.
  if (!recording || source::stopped() || interpose::available()) return false;
  return start_stderr_pipe(shim->config.stderr_pipe);
}

}  // namespace firstassert
