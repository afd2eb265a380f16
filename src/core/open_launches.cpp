#include "open_launches.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "stream_key.h"

namespace firstassert {
namespace {

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
bool unfinished(const Evidence& e, const BreadcrumbReading& reading, const LaunchRecord& r, uint64_t key, uint64_t end) {
  uint64_t before = reading.completed_before(key, end);
  auto pair = reading.followed.find({key, end, r.thread});
  if (pair != reading.followed.end() && r.seq >= pair->second->born_at) return r.seq >= before;
  return not_known_complete(e, r, before);
}

// Sets aside the open launches whose call began after another unfinished launch on the same stream had been queued
// with its breadcrumb, whichever thread made either (LaunchFields::queue_mark): that breadcrumb never ran, and the
// stream runs its work in the order it was queued, so nothing queued behind it started. (A launch whose breadcrumb
// the driver refused because the context was already lost holds back the same: what was queued after it never ran.) Calls that overlapped in time
// order nothing: of the launches of several threads onto one stream only those stay whose order on it is unknown.
// One thread's calls never overlap, so this orders its own launches too, as its chain does. Per stream generation
// (and device, for a default stream, whose key each device has), the unfinished launch queued first is enough to
// compare against. Nothing is set aside if nothing would be left.
void set_aside_queued_behind(const Evidence& e, const Generations& generations, const BreadcrumbReading& reading,
                             OpenSet& open) {
  using Stream = std::tuple<uint64_t, uint64_t, uintptr_t>;  // key, generation end, device (default streams only)
  auto stream_of = [&](const LaunchRecord& r, Stream& stream) {
    uint64_t key = key_of(r);
    if (shared_default(e, key) || (is_default_stream_key(key) && r.context == 0)) return false;
    stream = {key, generations.end_of(key, r.seq), is_default_stream_key(key) ? r.context : 0};
    return true;
  };
  std::map<Stream, uint64_t> first_unfinished_mark;  // per stream, the smallest queue mark of an unfinished launch
  for (const LaunchRecord& r : e.pending) {
    Stream stream;
    if (r.queue_mark == 0 || !stream_of(r, stream)) continue;
    const auto& [key, end, device] = stream;
    if (!unfinished(e, reading, r, key, end)) continue;
    auto [it, added] = first_unfinished_mark.emplace(stream, r.queue_mark);
    if (!added) it->second = std::min(it->second, r.queue_mark);
  }
  std::vector<bool> behind(open.launches.size(), false);
  size_t count = 0;
  for (size_t i = 0; i < open.launches.size(); ++i) {
    const LaunchRecord& c = open.launches[i];
    Stream stream;
    if (c.marks_at_entry == 0 || !stream_of(c, stream)) continue;
    auto first = first_unfinished_mark.find(stream);
    // Its own mark is taken after its call began: a launch is never behind itself.
    behind[i] = first != first_unfinished_mark.end() && first->second <= c.marks_at_entry;
    count += behind[i];
  }
  if (count == 0 || count == open.launches.size()) return;
  OpenSet kept;
  for (size_t i = 0; i < open.launches.size(); ++i) {
    if (!behind[i]) add_open(kept, open.launches[i], open.first_of_followed[i]);
  }
  open.launches = std::move(kept.launches);
  open.first_of_followed = std::move(kept.first_of_followed);
  open.unfollowed = std::find(open.first_of_followed.begin(), open.first_of_followed.end(), false) !=
                    open.first_of_followed.end();
  open.queued_behind = count;
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
  set_aside_queued_behind(e, generations, reading, open);
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
  if (open.by_breadcrumbs && open.complete()) set_aside_waiting(e, open);
  // first_of_followed no longer matches the launches once graphs are opened: only set_aside_waiting reads it.
  expand_graphs(e, open.launches);
  std::sort(open.launches.begin(), open.launches.end(), newest_first);
  open.streams = count_streams(open.launches);
  return open;
}

}  // namespace firstassert
