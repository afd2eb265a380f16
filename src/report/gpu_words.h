// How the stderr summary and the report's view (`firstassert show`, a notebook's failing cell) name a GPU and say
// what it did after the first error, from the report's `devices` fields (core/device_use.h), so that both say it
// alike.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace firstassert {

// "cuda:1 NVIDIA H100 80GB HBM3 (GPU-5a1c...-..., PCI 0000:1b:00.0)": what is not known is left out.
inline std::string gpu_words(long long ordinal, const std::string& name, const std::string& uuid,
                             const std::string& pci_bus_id) {
  std::string words = ordinal >= 0 ? "cuda:" + std::to_string(ordinal) : std::string("device ?");
  if (!name.empty()) words += " " + name;
  std::string ids = uuid;
  if (!pci_bus_id.empty()) ids += (ids.empty() ? "PCI " : ", PCI ") + pci_bus_id;
  if (!ids.empty()) words += " (" + ids + ")";
  return words;
}

// What another GPU's calls showed after the first error (after_state's words). A failure there is said, not
// explained: it may be its own fault, or this one reaching it (a peer copy from the failed device's memory).
inline std::string after_words(std::string_view state, uint64_t syncs_succeeded, uint64_t launches_completed,
                               const std::string& first_error) {
  if (state == "failed") return "failed too: " + first_error;
  if (state != "working") return "nothing shows its work completing since the first error: whether it still works is not known";
  std::string shown;
  if (launches_completed > 0)
    shown = std::to_string(launches_completed) + " of its launches made after it completed";
  if (syncs_succeeded > 0)
    shown += (shown.empty() ? "" : ", and ") + std::to_string(syncs_succeeded) + " synchronization" +
             (syncs_succeeded == 1 ? "" : "s") + " on it succeeded";
  return "still working after the first error: " + shown;
}

}  // namespace firstassert
