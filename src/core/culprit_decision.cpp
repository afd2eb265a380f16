#include "culprit_decision.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "demangle.h"
#include "stream_key.h"

namespace firstassert {
namespace {

std::string hex(uintptr_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
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

uint64_t key_of(const LaunchRecord& r) { return stream_key(r.stream, r.per_thread_default_stream, r.thread); }

// A launch's stream and generation: the handle, and when that stream ended (StreamProgress::kLive: it lives).
using Generation = std::pair<uint64_t, uint64_t>;
using Chain = std::tuple<uint64_t, uint64_t, int32_t>;  // stream key, generation end, launching thread

class Generations {
 public:
  explicit Generations(const Evidence& e) {
    for (const StreamEnd& end : e.stream_ends) ends_[end.stream_key].insert(end.at);
    if (e.progress) {
      for (const StreamProgress& p : e.progress->pairs) {
        if (p.ended_at != StreamProgress::kLive) ends_[p.stream_key].insert(p.ended_at);
      }
    }
  }
  // The end of the generation a launch numbered seq belongs to: the first end after it.
  uint64_t end_of(uint64_t key, uint64_t seq) const {
    auto it = ends_.find(key);
    if (it == ends_.end()) return StreamProgress::kLive;
    auto end = it->second.upper_bound(seq);
    return end == it->second.end() ? StreamProgress::kLive : *end;
  }
  // The first launch number the generation can hold.
  uint64_t start_of(uint64_t key, uint64_t end) const {
    auto it = ends_.find(key);
    if (it == ends_.end()) return 0;
    auto at = it->second.lower_bound(end);
    return at == it->second.begin() ? 0 : *std::prev(at);
  }

 private:
  std::map<uint64_t, std::set<uint64_t>> ends_;
};

// Whether a launch numbered in [from, to) may have been lost: dropped from the ring and not proven by a device sync.
bool lost_between(const Evidence& e, uint64_t from, uint64_t to) {
  from = std::max(from, e.synced_before);
  if (from >= to) return false;
  if (from < e.horizon) return true;
  auto it = std::lower_bound(e.missing.begin(), e.missing.end(), from);
  return it != e.missing.end() && *it < to;
}

struct OpenSet {
  std::vector<LaunchRecord> launches;  // can have failed
  std::vector<bool> first_of_followed;  // per launch: the first unfinished launch of a pair the breadcrumbs follow
  size_t waiting = 0;                  // launches set aside: they waited on an event for unfinished work
  bool complete = true;                // every launch that can have failed is among them
  bool by_breadcrumbs = false;
  bool unfollowed = false;             // some (stream, thread) had no breadcrumb: all its unfinished launches are in
  size_t streams = 0;                  // streams with a launch among them
  std::string incomplete_why;
};

// The launches that can have failed, by the stream breadcrumbs: per (stream, thread), the first not known complete.
OpenSet open_by_breadcrumbs(const Evidence& e) {
  OpenSet open;
  open.by_breadcrumbs = true;
  Generations generations(e);
  std::map<Generation, uint64_t> completed;  // per stream generation, the highest breadcrumb
  // Per (stream, generation, thread), the pair that follows it now: the newest, when a thread id came back.
  std::map<Chain, const StreamProgress*> followed;
  auto shared = [&](uint64_t key) {
    return std::find(e.shared_default_streams.begin(), e.shared_default_streams.end(), key) !=
           e.shared_default_streams.end();
  };
  for (const StreamProgress& p : e.progress->pairs) {
    if (shared(p.stream_key)) continue;  // another device's writes share the slot: they prove nothing here
    uint64_t& c = completed[{p.stream_key, p.ended_at}];
    c = std::max(c, p.completed_before);
    const StreamProgress*& f = followed[{p.stream_key, p.ended_at, p.thread}];
    if (f == nullptr || p.born_at > f->born_at) f = &p;
  }
  std::map<Chain, std::vector<const LaunchRecord*>> chains;  // oldest first
  for (const LaunchRecord& r : e.pending) {
    uint64_t key = key_of(r);
    chains[{key, generations.end_of(key, r.seq), r.thread}].push_back(&r);
  }
  size_t lost_pairs = 0;
  for (const auto& [chain, launches] : chains) {
    const auto& [key, end, thread] = chain;
    if (shared(key)) {
      // A default stream of several devices: every launch of it not proven complete by a sync is open.
      for (const LaunchRecord* r : launches) open.launches.push_back(*r);
      open.unfollowed = true;
      continue;
    }
    auto c = completed.find({key, end});
    uint64_t before = c != completed.end() ? c->second : 0;
    auto pair = followed.find(chain);
    if (pair == followed.end()) {
      // Not followed now: given back once all of it completed, or never followed (its stream's first launch came
      // when the context was already lost). Launches of the second kind cannot be told apart: all are open.
      for (const LaunchRecord* r : launches) {
        if (r->seq >= before && r->seq >= e.progress->unlisted_complete_before) {
          open.launches.push_back(*r);
          open.unfollowed = true;
        }
      }
      continue;
    }
    const StreamProgress& p = *pair->second;
    // Launches numbered before the pair was followed were another pair's (a thread id used again): that one was
    // given back once they had all completed.
    for (const LaunchRecord* r : launches) {
      if (r->seq < p.born_at && r->seq >= before && r->seq >= e.progress->unlisted_complete_before) {
        open.launches.push_back(*r);
        open.unfollowed = true;
      }
    }
    auto first = std::find_if(launches.begin(), launches.end(),
                              [&](const LaunchRecord* r) { return r->seq >= before && r->seq >= p.born_at; });
    uint64_t from = std::max({before, p.born_at, generations.start_of(key, end)});
    uint64_t upto = first != launches.end() ? (*first)->seq : std::max(p.launched_before, from);
    if (lost_between(e, from, upto)) ++lost_pairs;
    if (first != launches.end()) {
      open.launches.push_back(**first);
      open.first_of_followed.resize(open.launches.size());
      open.first_of_followed.back() = true;
    }
  }
  open.first_of_followed.resize(open.launches.size());
  // Pairs with work outstanding and no launch left to show for it (the pair a chain was read against is checked).
  for (const StreamProgress& p : e.progress->pairs) {
    if (shared(p.stream_key)) continue;
    Chain chain{p.stream_key, p.ended_at, p.thread};
    if (chains.count(chain) != 0 && followed[chain] == &p) continue;
    uint64_t before = completed[{p.stream_key, p.ended_at}];
    uint64_t from = std::max({before, p.born_at, generations.start_of(p.stream_key, p.ended_at)});
    if (p.launched_before > from && lost_between(e, from, p.launched_before)) ++lost_pairs;
  }
  if (!e.shared_default_streams.empty() && lost_between(e, 0, e.launches)) ++lost_pairs;
  if (lost_pairs > 0) {
    open.complete = false;
    open.incomplete_why = "the first unfinished launch of " + plural(lost_pairs, "stream", "streams") +
                          " is no longer in the launch ring (it holds the last " + std::to_string(e.ring_capacity) +
                          " launches; FIRSTASSERT_RING keeps more)";
  }
  return open;
}

// Sets aside the open launches that waited (cudaStreamWaitEvent, by the thread that launched them, before it did) on
// an event the same thread recorded after a launch of its own the breadcrumbs show unfinished: that launch's
// breadcrumb was queued before the event, so the event never completed and the waiting launch never started. One
// thread made the record, the wait and both launches, so their order is the host's own. Only the first unfinished
// launch of a followed pair counts as unfinished here; nothing is set aside if nothing would be left.
void set_aside_waiting(const Evidence& e, OpenSet& open) {
  Generations generations(e);
  std::vector<bool> waiting(open.launches.size(), false);
  size_t count = 0;
  for (size_t i = 0; i < open.launches.size(); ++i) {
    const LaunchRecord& c = open.launches[i];
    uint64_t key = key_of(c);
    uint64_t born = generations.start_of(key, generations.end_of(key, c.seq));
    for (const StreamWait& w : e.waits) {
      if (w.stream_key != key || w.thread != c.thread || w.upstream.thread != c.thread || w.from > c.seq ||
          w.from < born)
        continue;
      for (size_t j = 0; j < open.launches.size() && !waiting[i]; ++j) {
        const LaunchRecord& up = open.launches[j];
        waiting[i] = open.first_of_followed[j] && j != i && key_of(up) == w.upstream.stream_key &&
                     up.thread == w.upstream.thread && up.seq < w.upstream.before &&
                     (w.upstream.context == 0 || up.context == 0 || up.context == w.upstream.context);
      }
      if (waiting[i]) break;
    }
    count += waiting[i];
  }
  if (count == 0 || count == open.launches.size()) return;
  std::vector<LaunchRecord> kept;
  for (size_t i = 0; i < open.launches.size(); ++i) {
    if (!waiting[i]) kept.push_back(open.launches[i]);
  }
  open.launches = std::move(kept);
  open.first_of_followed.clear();
  open.waiting = count;
}

// Without breadcrumbs: every launch not proven complete by a sync.
OpenSet open_by_syncs(const Evidence& e) {
  OpenSet open;
  open.launches = e.pending;
  if (lost_between(e, 0, e.launches)) {
    open.complete = false;
    open.incomplete_why = "no sync proved complete the launches the launch ring no longer holds (it holds the last " +
                          std::to_string(e.ring_capacity) + " launches; FIRSTASSERT_RING keeps more)";
  }
  return open;
}

// A graph launch left open is the kernel nodes of its replay that can have failed, when its breadcrumbs say.
void expand_graphs(const Evidence& e, std::vector<LaunchRecord>& open) {
  std::vector<LaunchRecord> expanded;
  for (const LaunchRecord& r : open) {
    size_t before = expanded.size();
    if (r.graph && e.replayed_nodes) {
      for (const LaunchRecord& node : e.replayed_nodes(r)) {
        if (node.graph_open) expanded.push_back(node);
      }
    }
    if (expanded.size() == before) expanded.push_back(r);
  }
  open = std::move(expanded);
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

bool newest_first(const LaunchRecord& a, const LaunchRecord& b) {
  return a.seq != b.seq ? a.seq > b.seq : a.graph_node > b.graph_node;
}

std::string dims_text(const uint32_t (&d)[3]) {
  return "[" + std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]) + "]";
}

}  // namespace

void cut_candidates(Decision& d, size_t most) {
  if (d.candidates.size() <= most) return;
  auto same = [](const LaunchRecord& a, const LaunchRecord& b) { return a.seq == b.seq && a.graph_node == b.graph_node; };
  std::vector<size_t> order(d.candidates.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // By group (fitting first), then oldest first; the one shown before all.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    bool shown_a = d.culprit && same(d.candidates[a], *d.culprit), shown_b = d.culprit && same(d.candidates[b], *d.culprit);
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
  Decision d;
  // A launch that returned the sticky error never ran (it only learned of an earlier fault): not a candidate.
  if (!e.launch_blocking) std::erase_if(e.pending, [](const LaunchRecord& r) { return r.returned != 0; });
  OpenSet open = e.progress ? open_by_breadcrumbs(e) : open_by_syncs(e);
  if (open.complete && e.generations_known_from > 0 &&
      std::any_of(e.pending.begin(), e.pending.end(),
                  [&](const LaunchRecord& r) { return r.seq < e.generations_known_from; })) {
    open.complete = false;
    open.incomplete_why = "too many streams were destroyed to tell every stream's launches apart";
  }
  if (open.by_breadcrumbs && open.complete) set_aside_waiting(e, open);
  expand_graphs(e, open.launches);
  std::sort(open.launches.begin(), open.launches.end(), newest_first);
  std::set<uint64_t> streams;
  for (const LaunchRecord& r : open.launches) streams.insert(key_of(r));
  open.streams = streams.size();

  // The device's own words: which open launches can have printed its assertion lines.
  std::vector<const LaunchRecord*> fitting;
  const DeviceMessage* fitted = nullptr;
  for (const DeviceMessage& m : e.messages) {
    for (const LaunchRecord& r : open.launches) {
      if (fits_message(r, m)) fitting.push_back(&r);
    }
    if (!fitting.empty()) {
      fitted = &m;
      break;
    }
  }
  d.candidates = open.launches;

  const size_t n = open.launches.size();
  std::string set_words;
  if (!open.by_breadcrumbs) {
    set_words = plural(n, "launch", "launches") + " not seen to complete when " + e.api + " reported " + e.error;
  } else if (!open.unfollowed) {
    set_words = plural(n, "launch", "launches") + " (the first unfinished launch of each launching thread on " +
                plural(open.streams, "stream", "streams") + ")";
  } else {
    set_words = plural(n, "launch", "launches") + " on " + plural(open.streams, "stream", "streams") +
                " (the first unfinished launch of each thread the stream breadcrumbs follow, and every unfinished "
                "launch of those they do not)";
  }
  std::string waiting_words =
      open.waiting == 0 ? std::string()
                        : "; " + plural(open.waiting, "launch", "launches") +
                              " on other streams waited (through an event) on unfinished work and cannot have run";
  if (!open.complete) {
    d.confidence = "unknown";
    d.reason = "the failing launch cannot be named: " + open.incomplete_why;
    if (n > 0) d.reason += "; of those that may have failed, " + set_words + " are listed";
    return d;
  }
  if (n == 0) {
    d.confidence = "unknown";
    d.reason = e.pending.empty() && e.launches == 0
                   ? "firstassert recorded no launch before " + e.api + " reported " + e.error +
                         ": the failing work was launched before firstassert started, or was not a kernel"
                   : "every launch firstassert recorded had completed when " + e.api + " reported " + e.error +
                         ": the failing work was not a recorded launch (launched before firstassert started, or "
                         "not a kernel)";
    return d;
  }
  if (n == 1) {
    const LaunchRecord& only = open.launches.front();
    d.culprit = only;
    d.confidence = "exact";
    if (only.graph_node != 0) {
      d.reason = graph_reason(only, e.replayed_nodes ? e.replayed_nodes(only) : std::vector<LaunchRecord>{},
                              open.by_breadcrumbs, open.waiting);
    } else if (only.returned != 0) {
      d.reason = "this launch returned " + e.error + " itself, under CUDA_LAUNCH_BLOCKING=1 (it returns once its kernel "
                 "ran), and every other recorded launch had completed" +
                 std::string(open.by_breadcrumbs ? " (stream breadcrumbs)" : " (syncs that succeeded)");
    } else if (open.by_breadcrumbs) {
      d.reason = "stream breadcrumbs: every launch before this one on stream " + hex(only.stream) +
                 " completed and this one did not, and every launch on other streams had completed" +
                 (open.waiting == 0 ? "" : " or waited on unfinished work") + waiting_words;
    } else {
      d.reason = "the only launch not seen to complete when " + e.api + " reported " + e.error;
    }
    // The device's line may name a device function the kernel calls rather than the kernel: said, not hidden.
    if (!e.messages.empty() && std::none_of(e.messages.begin(), e.messages.end(), [&](const DeviceMessage& m) {
          return fits_message(only, m);
        })) {
      d.reason += "; the device's assertion line (" + std::string(e.messages.front().function) +
                  ") does not name this kernel: a device function it calls, or a kernel firstassert did not record";
    }
    return d;
  }
  std::string fit_words;
  if (fitted != nullptr) {
    fit_words = names_no_kernel(*fitted) ? "block " + dims_text(fitted->block) + " and thread " +
                                               dims_text(fitted->thread) + " of the device's assertion line"
                                         : "the device's assertion line (" + short_name(*fitted) + ", block " +
                                               dims_text(fitted->block) + ", thread " + dims_text(fitted->thread) + ")";
  }
  if (fitting.size() == 1) {
    d.culprit = *fitting.front();
    d.confidence = "likely";
    d.reason = set_words + " could have failed" + waiting_words + "; only this one fits " + fit_words;
    return d;
  }
  d.confidence = "window";
  // The oldest of those that fit (or of all): shown, not claimed.
  const LaunchRecord* shown = fitting.empty() ? &open.launches.back() : fitting.back();
  d.culprit = *shown;
  d.reason = "the failing launch is one of " + set_words + waiting_words;
  if (!fitting.empty()) {
    d.reason += "; " + std::to_string(fitting.size()) + " of them fit " + fit_words;
    // Those that fit first: they are the window.
    std::vector<LaunchRecord> ordered;
    for (const LaunchRecord* r : fitting) ordered.push_back(*r);
    for (const LaunchRecord& r : open.launches) {
      if (std::find(fitting.begin(), fitting.end(), &r) == fitting.end()) ordered.push_back(r);
    }
    d.candidates = std::move(ordered);
    d.fitting = fitting.size();
  } else if (!e.messages.empty()) {
    d.reason += "; none of them fits the device's assertion line";
  } else {
    d.reason += "; the device printed no assertion line that tells them apart";
  }
  d.reason += "; the oldest" + std::string(fitting.empty() ? "" : " that fits") + " is shown, not claimed";
  return d;
}

}  // namespace firstassert
