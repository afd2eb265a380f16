// The CUPTI event source: subscribes to the runtime, driver and resource domains and turns callbacks into tracker
// calls. A runtime call's nested driver call is folded into it, so each launch is recorded once and each failing
// call counted once. Never breaks the program: any CUPTI failure turns recording off with one line on stderr.
#pragma once

#include <string>

#include "cupti_library.h"

namespace firstassert::cupti {

struct SubscribeResult {
  bool recording = false;
  std::string cupti_path;
  uint32_t cupti_api_version = 0;
  std::string message;  // why recording is off, or what is in use
};

// Subscribes through lib (open_cupti's, opened by the caller before it takes its own locks: dlopen takes the loader's),
// feeding the observer (source::start must have run); an empty lib is why_not_opened. Not thread-safe: the caller
// serializes start_recording and stop_recording.
SubscribeResult start_recording(const CuptiLibrary& lib, const std::string& why_not_opened);
// Whether firstassert holds its CUPTI subscription now.
bool recording();

// Gives the subscription up. For grace_ms it goes on recording (calls that passed the hooks just before a hand-over
// reach CUPTI within it); then calls entering are left alone while it waits, at most wait_ms in all, for the calls
// already open to return, so that each of those is recorded whole. Returns false when some were still open when
// wait_ms ran out (their return is not seen), true otherwise; nothing happens when not subscribed.
bool stop_recording(int grace_ms, int wait_ms);

}  // namespace firstassert::cupti
