#include "open_launches.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "stream_key.h"

namespace firstassert {
namespace {

uint64_t key_of(const LaunchRecord& r) {
  return stream_key(r.stream, r.per_thread_default_stream, r.thread, r.device);
}

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

// A default stream launched onto from several devices: another device's writes share its slot, so its breadcrumbs
// prove nothing.
bool shared_default(const Evidence& e, uint64_t key) {
  return std::find(e.shared_default_streams.begin(), e.shared_default_streams.end(), key) !=
         e.shared_default_streams.end();
}

void add_open(OpenSet& open, const LaunchRecord& r, bool first_of_followed) {
  open.launches.push_back(r);
  open.first_of_followed.push_back(first_of_followed);
}

// An unfinished launch of a (stream, thread) the breadcrumbs do not follow: open, with every other such one.
void add_unfollowed(OpenSet& open, const LaunchRecord& r) {
  add_open(open, r, false);
  open.unfollowed = true;
}

// --- With breadcrumbs: per (stream, generation, thread), the first launch not known complete ---

// What the breadcrumbs say, read once: how far each stream generation completed, and which pair follows each chain.
struct BreadcrumbReading {
  std::map<Generation, uint64_t> completed;  // per stream generation, the highest breadcrumb
  // Per (stream, generation, thread), the pair that follows it now: the newest, when a thread id came back.
  std::map<Chain, const StreamProgress*> followed;

  // Every launch of the generation numbered below this completed (0: none known).
  uint64_t completed_before(uint64_t key, uint64_t end) const {
    auto c = completed.find({key, end});
    return c != completed.end() ? c->second : 0;
  }
};

BreadcrumbReading read_breadcrumbs(const Evidence& e) {
  BreadcrumbReading reading;
  for (const StreamProgress& p : e.progress->pairs) {
    if (shared_default(e, p.stream_key)) continue;
    uint64_t& c = reading.completed[{p.stream_key, p.ended_at}];
    c = std::max(c, p.completed_before);
    const StreamProgress*& f = reading.followed[{p.stream_key, p.ended_at, p.thread}];
    if (f == nullptr || p.born_at > f->born_at) f = &p;
  }
  return reading;
}

using Chains = std::map<Chain, std::vector<const LaunchRecord*>>;  // each oldest first

// The pending launches by (stream, generation, launching thread).
Chains chains_of_pending(const Evidence& e, const Generations& generations) {
  Chains chains;
  for (const LaunchRecord& r : e.pending) {
    uint64_t key = key_of(r);
    chains[{key, generations.end_of(key, r.seq), r.thread}].push_back(&r);
  }
  return chains;
}

// Whether neither the stream's breadcrumbs (every launch below `before` completed) nor the pairs given back (every
// launch they followed completed) prove the launch complete.
bool not_known_complete(const Evidence& e, const LaunchRecord& r, uint64_t before) {
  return r.seq >= before && r.seq >= e.progress->unlisted_complete_before;
}

// A chain no pair follows now: given back once all of it completed, or never followed (its stream's first launch came
// when the context was already lost). Launches of the second kind cannot be told apart: every unfinished one is open.
void open_unfollowed_chain(const Evidence& e, const std::vector<const LaunchRecord*>& launches, uint64_t before,
                           OpenSet& open) {
  for (const LaunchRecord* r : launches) {
    if (not_known_complete(e, *r, before)) add_unfollowed(open, *r);
  }
}

// A chain the pair p follows: its first launch not known complete is open (the later ones queue behind it and its
// breadcrumb). Launches numbered before the pair was followed were another pair's (a thread id used again), given
// back once they had all completed: open as unfollowed ones, if not known complete. Returns whether the first
// unfinished launch may be one the ring dropped.
bool open_followed_chain(const Evidence& e, const Generations& generations, const Chain& chain,
                         const std::vector<const LaunchRecord*>& launches, const StreamProgress& p, uint64_t before,
                         OpenSet& open) {
  for (const LaunchRecord* r : launches) {
    if (r->seq < p.born_at && not_known_complete(e, *r, before)) add_unfollowed(open, *r);
  }
  auto first = std::find_if(launches.begin(), launches.end(),
                            [&](const LaunchRecord* r) { return r->seq >= before && r->seq >= p.born_at; });
  const auto& [key, end, thread] = chain;
  uint64_t from = std::max({before, p.born_at, generations.start_of(key, end)});
  uint64_t upto = first != launches.end() ? (*first)->seq : std::max(p.launched_before, from);
  if (first != launches.end()) add_open(open, **first, true);
  return lost_between(e, from, upto);
}

// Pairs with work outstanding and no pending launch left to show for it (the pair a chain was read against is
// checked with its chain): how many may have had their first unfinished launch dropped from the ring.
size_t dropped_without_launches(const Evidence& e, const Generations& generations, const BreadcrumbReading& reading,
                                const Chains& chains) {
  size_t dropped = 0;
  for (const StreamProgress& p : e.progress->pairs) {
    if (shared_default(e, p.stream_key)) continue;
    Chain chain{p.stream_key, p.ended_at, p.thread};
    if (chains.count(chain) != 0 && reading.followed.at(chain) == &p) continue;
    uint64_t before = reading.completed.at({p.stream_key, p.ended_at});
    uint64_t from = std::max({before, p.born_at, generations.start_of(p.stream_key, p.ended_at)});
    if (p.launched_before > from && lost_between(e, from, p.launched_before)) ++dropped;
  }
  return dropped;
}

// Whether the breadcrumbs leave a launch unfinished: its own pair's slot, when the pair that follows its (stream,
// thread) now took its breadcrumb, else (a pair given back, its slot used again) whatever proves it complete.
bool unfinished(const Evidence& e, const BreadcrumbReading& reading, const LaunchRecord& r, uint64_t key,
                uint64_t end) {
  uint64_t before = reading.completed_before(key, end);
  auto pair = reading.followed.find({key, end, r.thread});
  if (pair != reading.followed.end() && r.seq >= pair->second->born_at) return r.seq >= before;
  return not_known_complete(e, r, before);
}

// A stream as calls order it: its key, its generation, and its device for a default stream (each device has one under
// the same key).
using OrderedStream = std::tuple<uint64_t, uint64_t, uintptr_t>;

// The stream a launch was queued on, or nothing where the key does not name one stream (a default stream shared by
// several devices, or one whose device is not known).
std::optional<OrderedStream> ordered_stream(const Evidence& e, const Generations& generations, uint64_t key,
                                            uint64_t seq, uintptr_t context) {
  if (shared_default(e, key) || (is_default_stream_key(key) && context == 0)) return std::nullopt;
  return OrderedStream{key, generations.end_of(key, seq), is_default_stream_key(key) ? context : 0};
}

// Per stream, the smallest queue mark of a launch the breadcrumbs leave unfinished (LaunchFields::queue_mark): any
// call that began at or after it lies behind that launch's breadcrumb, which never ran, and the stream runs its work
// in the order it was queued, so nothing queued behind it started. (A launch whose breadcrumb the driver refused
// because the context was already lost holds back the same: what was queued after it never ran.)
std::map<OrderedStream, uint64_t> first_unfinished_marks(const Evidence& e, const Generations& generations,
                                                         const BreadcrumbReading& reading) {
  std::map<OrderedStream, uint64_t> marks;
  for (const LaunchRecord& r : e.pending) {
    if (r.queue_mark == 0) continue;  // holds back nothing
    std::optional<OrderedStream> stream = ordered_stream(e, generations, key_of(r), r.seq, r.context);
    if (!stream) continue;
    const auto& [key, end, device] = *stream;
    if (!unfinished(e, reading, r, key, end)) continue;
    auto [it, added] = marks.emplace(*stream, r.queue_mark);
    if (!added) it->second = std::min(it->second, r.queue_mark);
  }
  return marks;
}

// Keeps the open launches not marked aside; none are set aside if none would be left. Returns how many were.
size_t set_aside(OpenSet& open, const std::vector<bool>& aside) {
  size_t count = std::count(aside.begin(), aside.end(), true);
  if (count == 0 || count == open.launches.size()) return 0;
  OpenSet kept;
  for (size_t i = 0; i < open.launches.size(); ++i) {
    if (!aside[i]) add_open(kept, open.launches[i], open.first_of_followed[i]);
  }
  open.launches = std::move(kept.launches);
  open.first_of_followed = std::move(kept.first_of_followed);
  open.unfollowed = std::find(open.first_of_followed.begin(), open.first_of_followed.end(), false) !=
                    open.first_of_followed.end();
  return count;
}

// Sets aside the open launches whose call began after an unfinished launch on the same stream had been queued with
// its breadcrumb, whichever thread made either. Calls that overlapped in time order nothing: of the launches of
// several threads onto one stream only those stay whose order on it is unknown. One thread's calls never overlap, so
// this orders its own launches too, as its chain does.
void set_aside_queued_behind(const Evidence& e, const Generations& generations,
                             const std::map<OrderedStream, uint64_t>& first_unfinished, OpenSet& open) {
  std::vector<bool> behind(open.launches.size(), false);
  for (size_t i = 0; i < open.launches.size(); ++i) {
    const LaunchRecord& c = open.launches[i];
    std::optional<OrderedStream> stream = ordered_stream(e, generations, key_of(c), c.seq, c.context);
    if (c.marks_at_entry == 0 || !stream) continue;
    auto first = first_unfinished.find(*stream);
    // Its own mark is taken after its call began: a launch is never behind itself.
    behind[i] = first != first_unfinished.end() && first->second <= c.marks_at_entry;
  }
  open.queued_behind = set_aside(open, behind);
}

// Sets aside the open launches that waited on an event (cudaStreamWaitEvent) whose record was queued behind an
// unfinished launch: the record's call began after that launch on the recorded stream had been queued with its
// breadcrumb, so the event never completed; the wait's call returned before the launch's call began, so the launch is
// queued behind the wait on its stream and never started. Calls order them whichever threads made them.
void set_aside_waiting(const Evidence& e, const Generations& generations,
                       const std::map<OrderedStream, uint64_t>& first_unfinished, OpenSet& open) {
  std::vector<bool> waiting(open.launches.size(), false);
  for (size_t i = 0; i < open.launches.size(); ++i) {
    const LaunchRecord& c = open.launches[i];
    uint64_t key = key_of(c);
    uint64_t born = generations.start_of(key, generations.end_of(key, c.seq));
    for (const StreamWait& w : e.waits) {
      const StreamWait::Upstream& up = w.upstream;
      if (w.stream_key != key || w.mark == 0 || w.mark > c.marks_at_entry || w.from < born || up.marks_at_entry == 0)
        continue;
      std::optional<OrderedStream> recorded = ordered_stream(e, generations, up.stream_key, up.before, up.context);
      auto first = recorded ? first_unfinished.find(*recorded) : first_unfinished.end();
      waiting[i] = first != first_unfinished.end() && first->second <= up.marks_at_entry;
      if (waiting[i]) break;
    }
  }
  open.waiting = set_aside(open, waiting);
}

// The launches that can have failed, by the stream breadcrumbs: per (stream, thread), the first not known complete.
OpenSet open_by_breadcrumbs(const Evidence& e) {
  OpenSet open;
  open.by_breadcrumbs = true;
  Generations generations(e);
  BreadcrumbReading reading = read_breadcrumbs(e);
  Chains chains = chains_of_pending(e, generations);
  size_t dropped = 0;
  for (const auto& [chain, launches] : chains) {
    const auto& [key, end, thread] = chain;
    if (shared_default(e, key)) {
      // A default stream of several devices: every launch of it not proven complete by a sync is open.
      for (const LaunchRecord* r : launches) add_unfollowed(open, *r);
      continue;
    }
    uint64_t before = reading.completed_before(key, end);
    auto pair = reading.followed.find(chain);
    if (pair == reading.followed.end()) {
      open_unfollowed_chain(e, launches, before, open);
    } else if (open_followed_chain(e, generations, chain, launches, *pair->second, before, open)) {
      ++dropped;
    }
  }
  dropped += dropped_without_launches(e, generations, reading, chains);
  if (!e.shared_default_streams.empty() && lost_between(e, 0, e.launches)) ++dropped;
  if (dropped > 0) {
    open.missing = Missing::first_unfinished_dropped;
    open.dropped_streams = dropped;
    return open;
  }
  std::map<OrderedStream, uint64_t> first_unfinished = first_unfinished_marks(e, generations, reading);
  set_aside_queued_behind(e, generations, first_unfinished, open);
  set_aside_waiting(e, generations, first_unfinished, open);
  return open;
}

// --- Without breadcrumbs ---

// Every launch not proven complete by a sync.
OpenSet open_by_syncs(const Evidence& e) {
  OpenSet open;
  open.launches = e.pending;
  if (lost_between(e, 0, e.launches)) open.missing = Missing::unsynced_dropped;
  return open;
}

// --- Then ---

// Whether stream ends that tell a pending launch's generation were forgotten.
bool generations_forgotten(const Evidence& e) {
  return e.generations_known_from > 0 &&
         std::any_of(e.pending.begin(), e.pending.end(),
                     [&](const LaunchRecord& r) { return r.seq < e.generations_known_from; });
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

bool newest_first(const LaunchRecord& a, const LaunchRecord& b) {
  return a.seq != b.seq ? a.seq > b.seq : a.graph_node > b.graph_node;
}

size_t count_streams(const std::vector<LaunchRecord>& launches) {
  std::set<uint64_t> streams;
  for (const LaunchRecord& r : launches) streams.insert(key_of(r));
  return streams.size();
}

}  // namespace

OpenSet open_launches(const Evidence& e) {
  OpenSet open = e.progress ? open_by_breadcrumbs(e) : open_by_syncs(e);
  if (open.complete() && generations_forgotten(e)) open.missing = Missing::generations_forgotten;
  // first_of_followed no longer matches the launches once graphs are opened.
  expand_graphs(e, open.launches);
  std::sort(open.launches.begin(), open.launches.end(), newest_first);
  open.streams = count_streams(open.launches);
  return open;
}

}  // namespace firstassert
