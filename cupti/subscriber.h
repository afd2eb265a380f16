// The CUPTI event source: subscribes to the runtime, driver and resource domains and turns callbacks into tracker
// calls. A runtime call's nested driver call is folded into it, so each launch is recorded once and each failing
// call counted once. Never breaks the program: any CUPTI failure turns recording off with one line on stderr.
#pragma once

#include <string>

namespace firstassert::cupti {

struct SubscribeResult {
  bool recording = false;
  std::string cupti_path;
  std::string message;  // why recording is off, or what is in use
};

// Subscribes, feeding the observer (source::start must have run). Not thread-safe: the caller serializes
// start_recording and stop_recording.
SubscribeResult start_recording(const std::string& explicit_cupti_path);
// Whether firstassert holds its CUPTI subscription now.
bool recording();

// Gives the subscription up. First it waits, at least grace_ms and at most wait_ms, for the calls CUPTI showed
// entering to return, so that each of those is still recorded whole. Returns false when some were still in flight
// when wait_ms ran out (their return is not seen), true otherwise; nothing happens when not subscribed.
bool stop_recording(int grace_ms, int wait_ms);

}  // namespace firstassert::cupti
