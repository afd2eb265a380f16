// The CUPTI event source: subscribes to the runtime, driver and resource domains and turns callbacks into tracker
// calls. A runtime call's nested driver call is folded into it, so each launch is recorded once and each failing
// call counted once. Never breaks the program: any CUPTI failure turns recording off with one line on stderr.
#pragma once

#include <string>

#include "core/sync_policy.h"
#include "core/tracker.h"
#include "device/breadcrumbs.h"

namespace firstassert::cupti {

// What the callbacks feed and use; all outlive the subscription. breadcrumbs and sync may be null (off).
struct Recording {
  Tracker* tracker = nullptr;
  Breadcrumbs* breadcrumbs = nullptr;
  SyncPolicy* sync = nullptr;
  unsigned stack_depth = 0;  // native frames per launch; 0: none
  bool python = false;       // Python frames per launch, when the launching thread holds the GIL
};

struct SubscribeResult {
  bool recording = false;
  std::string cupti_path;
  std::string message;  // why recording is off, or what is in use
};

SubscribeResult start_recording(const Recording& recording, const std::string& explicit_cupti_path);

}  // namespace firstassert::cupti
