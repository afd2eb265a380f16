// The decision in brief (decide_culprit; the rules and the confidences are in culprit_decision.h):
//  1. Drop the launches that returned the sticky error: they only learned of an earlier fault and never ran (not so
//     under CUDA_LAUNCH_BLOCKING=1, where a launch returns once its kernel ran).
//  2. Find the launches that can have failed (open_launches.cpp), newest first:
//     a. with the stream breadcrumbs, per (stream generation, launching thread) the first launch not known complete,
//        and every unfinished one of the pairs they do not follow, less those whose call began after an unfinished
//        launch on the same stream had been queued with its breadcrumb (by any thread); without them, every launch no
//        sync proved complete;
//     b. whether that set is whole: the ring still holds every launch that may belong in it, and every stream end
//        that tells a pending launch's generation is still known;
//     c. with breadcrumbs and a whole set, the launches that waited (through an event recorded behind an unfinished
//        launch, the calls ordered by their queue marks) on unfinished work set aside;
//     d. a graph launch left open becomes the kernel nodes of its replay that can have failed.
//  3. Not whole: unknown, nothing named.
//  4. None open: unknown; the failing work was not a launch firstassert recorded.
//  5. One open: exact, that launch.
//  6. Several: which fit the device's assertion line (the first line any of them fits). Exactly one: likely, that one.
//  7. Otherwise a window: the oldest that fits (or the oldest) is shown, not claimed; those that fit are listed first.
// Each outcome writes its own reason from the same few phrases (set_words, waiting_words, fit_words), which never say
// more than the evidence shows.
#include "culprit_decision.h"

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "demangle.h"
#include "hex_text.h"
#include "open_launches.h"
#include "plural.h"

namespace firstassert {
namespace {

std::string dims_text(const uint32_t (&d)[3]) {
  return "[" + std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]) + "]";
}

std::string short_name(const LaunchRecord& r) {
  return r.kernel != nullptr ? short_kernel_name(demangle(r.kernel)) : std::string();
}

// The function a device line names, as short_name() gives kernels: PyTorch's asserts print __func__
// ("nll_loss_forward_reduce_cuda_kernel_2d"), a plain assert() prints __PRETTY_FUNCTION__ ("void k(int *)", or
// "void k<T>(T *) [with T = float]").
std::string short_name(const DeviceMessage& m) {
  std::string function = m.function;
  if (size_t with = function.find(" [with "); with != std::string::npos) function.resize(with);
  return short_kernel_name(function);
}

// A line that names no kernel: the body of a lambda (PyTorch's elementwise kernels print operator()), Triton's
// "unknown", a Windows build's missing function.
bool names_no_kernel(const DeviceMessage& m) {
  std::string_view function = m.function;
  return function.empty() || function == "unknown" || function.find("operator()") != std::string_view::npos ||
         function.find("lambda") != std::string_view::npos || m.has(kMessageNoFunction);
}

// --- Step 1: a launch that returned the sticky error never ran (unless under CUDA_LAUNCH_BLOCKING=1) ---

void drop_launches_that_never_ran(Evidence& e) {
  if (!e.launch_blocking) std::erase_if(e.pending, [](const LaunchRecord& r) { return r.returned != 0; });
}

// --- Step 6: the device's own words ---

// The open launches that can have printed the first of the device's assertion lines that any of them can have
// printed, newest first (pointers into open.launches), and that line.
struct Fit {
  std::vector<const LaunchRecord*> launches;
  const DeviceMessage* line = nullptr;
};

Fit fit_device_lines(const Evidence& e, const OpenSet& open) {
  Fit fit;
  for (const DeviceMessage& m : e.messages) {
    for (const LaunchRecord& r : open.launches) {
      if (fits_message(r, m)) fit.launches.push_back(&r);
    }
    if (!fit.launches.empty()) {
      fit.line = &m;
      break;
    }
  }
  return fit;
}

// --- The phrases the reasons are made of ---

// What the open set is: "N launches ..." and how they were found.
std::string set_words(const Evidence& e, const OpenSet& open) {
  std::string launches = plural(open.launches.size(), "launch", "launches");
  if (!open.by_breadcrumbs) return launches + " not seen to complete when " + e.api + " reported " + e.error;
  if (!open.unfollowed)
    return launches + " (the first unfinished launch of each launching thread on " +
           plural(open.streams, "stream", "streams") + ")";
  return launches + " on " + plural(open.streams, "stream", "streams") +
         " (the first unfinished launch of each thread the stream breadcrumbs follow, and every unfinished launch of "
         "those they do not)";
}

// The launches set aside because they waited on unfinished work, if any.
std::string waiting_words(const OpenSet& open) {
  if (open.waiting == 0) return std::string();
  return "; " + plural(open.waiting, "launch", "launches") +
         " on other streams waited (through an event) on unfinished work and cannot have run";
}

// The launches set aside because they were queued behind an unfinished launch's breadcrumb, if any.
std::string queued_words(const OpenSet& open) {
  if (open.queued_behind == 0) return std::string();
  return "; " + plural(open.queued_behind, "launch", "launches") +
         " cannot have run: each call began after the call of an unfinished launch on the same stream had returned, "
         "so each was queued behind that launch and its breadcrumb (or after the context was lost)";
}

// The device's line, as far as it told the launches apart.
std::string fit_words(const DeviceMessage& line) {
  if (names_no_kernel(line))
    return "block " + dims_text(line.block) + " and thread " + dims_text(line.thread) +
           " of the device's assertion line";
  return "the device's assertion line (" + short_name(line) + ", block " + dims_text(line.block) + ", thread " +
         dims_text(line.thread) + ")";
}

// Why the set may lack the launch that failed.
std::string missing_words(const Evidence& e, const OpenSet& open) {
  std::string ring =
      "(it holds the last " + std::to_string(e.ring_capacity) + " launches; FIRSTASSERT_RING keeps more)";
  switch (open.missing) {
    case Missing::first_unfinished_dropped:
      return "the first unfinished launch of " + plural(open.dropped_streams, "stream", "streams") +
             " is no longer in the launch ring " + ring;
    case Missing::unsynced_dropped:
      return "no sync proved complete the launches the launch ring no longer holds " + ring;
    case Missing::generations_forgotten:
      return "too many streams were destroyed to tell every stream's launches apart";
    case Missing::nothing:
      break;
  }
  return std::string();
}

// Why one kernel node of a replay is the one that failed.
std::string graph_reason(const LaunchRecord& node, const std::vector<LaunchRecord>& nodes, bool stream_breadcrumbs,
                         size_t waiting) {
  size_t completed = std::count_if(nodes.begin(), nodes.end(), [](const LaunchRecord& n) {
    return n.graph_state == GraphNodeState::completed;
  });
  std::string reason = "graph breadcrumbs: in the replay that failed, " + std::to_string(completed) + " of the graph's " +
                       std::to_string(nodes.size()) + " kernel nodes completed, and node " +
                       std::to_string(node.graph_node) +
                       " is the only one left that did not while every kernel node it waits for did";
  reason += stream_breadcrumbs ? "; the stream breadcrumbs show every earlier launch on stream " + hex(node.stream) +
                                     " completed and every launch on other streams had completed" +
                                     (waiting == 0 ? "" : " or waited on unfinished work")
                               : "; no other launch was outstanding";
  return reason;
}

// --- Steps 3 to 7: the outcomes ---

// 3. The set is not whole: nothing is named; those known that may have failed are listed.
Decision unknown_set_not_whole(const Evidence& e, OpenSet& open) {
  Decision d;
  d.confidence = "unknown";
  d.reason = "the failing launch cannot be named: " + missing_words(e, open);
  if (!open.launches.empty()) d.reason += "; of those that may have failed, " + set_words(e, open) + " are listed";
  d.candidates = std::move(open.launches);
  return d;
}

// 4. Nothing can have failed: the failing work was not a launch firstassert recorded.
Decision unknown_none_open(const Evidence& e) {
  Decision d;
  d.confidence = "unknown";
  d.reason = e.pending.empty() && e.launches == 0
                 ? "firstassert recorded no launch before " + e.api + " reported " + e.error +
                       ": the failing work was launched before firstassert started, or was not a kernel"
                 : "every launch firstassert recorded had completed when " + e.api + " reported " + e.error +
                       ": the failing work was not a recorded launch (launched before firstassert started, or not a "
                       "kernel)";
  return d;
}

// Why the one open launch is exact, by the evidence that left it alone.
std::string exact_reason(const Evidence& e, const OpenSet& open, const LaunchRecord& only) {
  if (only.graph_node != 0)
    return graph_reason(only, e.replayed_nodes ? e.replayed_nodes(only) : std::vector<LaunchRecord>{},
                        open.by_breadcrumbs, open.waiting) +
           queued_words(open);
  if (only.returned != 0)
    return "this launch returned " + e.error +
           " itself, under CUDA_LAUNCH_BLOCKING=1 (it returns once its kernel ran), and every other recorded launch "
           "had completed" +
           std::string(open.by_breadcrumbs ? " (stream breadcrumbs)" : " (syncs that succeeded)");
  if (open.by_breadcrumbs)
    return "stream breadcrumbs: every launch before this one on stream " + hex(only.stream) +
           " completed and this one did not, and every launch on other streams had completed" +
           (open.waiting == 0 ? "" : " or waited on unfinished work") + waiting_words(open) + queued_words(open);
  return "the only launch not seen to complete when " + e.api + " reported " + e.error;
}

// 5. One launch can have failed: it did.
Decision exact_the_only_one(const Evidence& e, OpenSet& open) {
  Decision d;
  const LaunchRecord& only = open.launches.front();
  d.culprit = only;
  d.confidence = "exact";
  d.reason = exact_reason(e, open, only);
  // The device's line may name a device function the kernel calls rather than the kernel: said, not hidden.
  auto fits = [&](const DeviceMessage& m) { return fits_message(only, m); };
  if (!e.messages.empty() && std::none_of(e.messages.begin(), e.messages.end(), fits)) {
    d.reason += "; the device's assertion line (" + std::string(e.messages.front().function) +
                ") does not name this kernel: a device function it calls, or a kernel firstassert did not record";
  }
  d.candidates = std::move(open.launches);
  return d;
}

// 6. Several can have failed, and only one fits the device's line.
Decision likely_the_one_that_fits(const Evidence& e, OpenSet& open, const Fit& fit) {
  Decision d;
  d.culprit = *fit.launches.front();
  d.confidence = "likely";
  d.reason = set_words(e, open) + " could have failed" + waiting_words(open) + queued_words(open) +
             "; only this one fits " + fit_words(*fit.line);
  d.candidates = std::move(open.launches);
  return d;
}

// 7. Several can have failed, and the device's line does not tell them apart: the oldest that fits (or of all) is
// shown, not claimed, and those that fit are listed first: they are the window.
Decision window_of_those_open(const Evidence& e, OpenSet& open, const Fit& fit) {
  Decision d;
  d.confidence = "window";
  d.culprit = fit.launches.empty() ? open.launches.back() : *fit.launches.back();
  d.reason = "the failing launch is one of " + set_words(e, open) + waiting_words(open) + queued_words(open);
  if (!fit.launches.empty()) {
    d.reason += "; " + std::to_string(fit.launches.size()) + " of them fit " + fit_words(*fit.line);
  } else if (!e.messages.empty()) {
    d.reason += "; none of them fits the device's assertion line";
  } else {
    d.reason += "; the device printed no assertion line that tells them apart";
  }
  d.reason += "; the oldest" + std::string(fit.launches.empty() ? "" : " that fits") + " is shown, not claimed";
  if (fit.launches.empty()) {
    d.candidates = std::move(open.launches);
    return d;
  }
  for (const LaunchRecord* r : fit.launches) d.candidates.push_back(*r);
  for (const LaunchRecord& r : open.launches) {
    if (std::find(fit.launches.begin(), fit.launches.end(), &r) == fit.launches.end()) d.candidates.push_back(r);
  }
  d.fitting = fit.launches.size();
  return d;
}

}  // namespace

void cut_candidates(Decision& d, size_t most) {
  if (d.candidates.size() <= most) return;
  std::vector<size_t> order(d.candidates.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // By group (fitting first), then oldest first; the one shown before all.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    bool shown_a = d.culprit && same_launch(d.candidates[a], *d.culprit),
         shown_b = d.culprit && same_launch(d.candidates[b], *d.culprit);
    if (shown_a != shown_b) return shown_a;
    bool fit_a = a < d.fitting, fit_b = b < d.fitting;
    if (fit_a != fit_b) return fit_a;
    return d.candidates[a].seq < d.candidates[b].seq;
  });
  std::vector<bool> kept(d.candidates.size(), false);
  for (size_t i = 0; i < most; ++i) kept[order[i]] = true;
  std::vector<LaunchRecord> cut;
  size_t fitting = 0;
  for (size_t i = 0; i < d.candidates.size(); ++i) {
    if (!kept[i]) continue;
    fitting += i < d.fitting;
    cut.push_back(d.candidates[i]);
  }
  d.candidates = std::move(cut);
  d.fitting = fitting;
}

bool fits_message(const LaunchRecord& launch, const DeviceMessage& m) {
  if (launch.graph && launch.graph_node == 0) return true;  // a whole graph: any of its kernels may have printed it
  if (!names_no_kernel(m) && (launch.kernel == nullptr || short_name(launch) != short_name(m))) return false;
  if (m.dialect != DeviceDialect::cuda || m.has(kMessageGarbled)) return true;
  // A graph's kernel node keeps the configuration it was captured or added with; an executable graph's node can be
  // given another since (cudaGraphExecKernelNodeSetParams, not followed): its grid and block prove nothing.
  if (launch.graph_node != 0) return true;
  const uint32_t grid[3] = {launch.grid.x, launch.grid.y, launch.grid.z};
  const uint32_t block[3] = {launch.block.x, launch.block.y, launch.block.z};
  for (int i = 0; i < 3; ++i) {
    if (grid[i] != 0 && m.block[i] >= grid[i]) return false;
    if (block[i] != 0 && m.thread[i] >= block[i]) return false;
  }
  return true;
}

Decision decide_culprit(Evidence e) {
  drop_launches_that_never_ran(e);
  OpenSet open = open_launches(e);
  if (!open.complete()) return unknown_set_not_whole(e, open);
  if (open.launches.empty()) return unknown_none_open(e);
  if (open.launches.size() == 1) return exact_the_only_one(e, open);
  Fit fit = fit_device_lines(e, open);
  if (fit.launches.size() == 1) return likely_the_one_that_fits(e, open, fit);
  return window_of_those_open(e, open, fit);
}

}  // namespace firstassert
