// The CUPTI event source: subscribes to the runtime, driver and resource domains and turns callbacks into tracker
// calls. A runtime call's nested driver call is folded into it, so each launch is recorded once and each failing
// call counted once. Never breaks the program: any CUPTI failure turns recording off with one line on stderr.
#pragma once

#include <string>

#include "source/observer.h"

namespace firstassert::cupti {

struct SubscribeResult {
  bool recording = false;
  std::string cupti_path;
  std::string message;  // why recording is off, or what is in use
};

SubscribeResult start_recording(const source::Recording& recording, const std::string& explicit_cupti_path);

}  // namespace firstassert::cupti
