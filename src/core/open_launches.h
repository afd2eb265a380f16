// The first half of the culprit decision (culprit_decision.h has the rules): from the evidence to the launches that
// can have failed, and whether that set is whole. The second half, culprit_decision.cpp, chooses among them and says
// why. Internal to the decision; the tracker calls decide_culprit only.
#pragma once

#include <cstddef>
#include <vector>

#include "culprit_decision.h"

namespace firstassert {

// Why the set may lack a launch that can have failed (nothing: it is whole).
enum class Missing {
  nothing,
  first_unfinished_dropped,  // breadcrumbs: the ring no longer holds the first unfinished launch of some streams
  unsynced_dropped,          // no breadcrumbs: the ring no longer holds launches no sync proved complete
  generations_forgotten,     // so many streams ended that the ends which tell their launches apart were forgotten
};

struct OpenSet {
  std::vector<LaunchRecord> launches;   // can have failed, newest first
  std::vector<bool> first_of_followed;  // per launch: the first unfinished launch of a pair the breadcrumbs follow
  size_t waiting = 0;                   // launches set aside: they waited on an event for unfinished work
  size_t queued_behind = 0;             // launches set aside: queued behind an unfinished launch's breadcrumb
  Missing missing = Missing::nothing;
  size_t dropped_streams = 0;           // first_unfinished_dropped: of how many streams
  bool by_breadcrumbs = false;
  bool unfollowed = false;              // some (stream, thread) had no breadcrumb: all its unfinished launches are in
  size_t streams = 0;                   // streams with a launch among them

  bool complete() const { return missing == Missing::nothing; }  // every launch that can have failed is among them
};

// The launches of e.pending that can have failed, in steps: by the stream breadcrumbs (or, without them, every launch
// no sync proved complete), with whether the ring still holds all of them; those that waited on unfinished work set
// aside; graph launches opened into the kernel nodes of their replay that can have failed; newest first.
OpenSet open_launches(const Evidence& e);

}  // namespace firstassert
