#include "device_table.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace simcuda {
namespace {

// Bus numbers of the eight GPUs of a DGX H100 (nvidia-smi's "00000000:18:00.0" ...), then more of the same spacing.
constexpr int kPciBuses[kMaxDevices] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb,
                                        0x1b, 0x2d, 0x3d, 0x60, 0x9d, 0xae, 0xbd, 0xde};

std::once_flag visible_once;
int visible_count = 0;
int visible_map[kMaxDevices];

bool all_digits(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// One entry of the list: an index, or enough leading characters of a UUID ("GPU-8932f937") to name one device.
int entry_device(const std::string& entry, int physical_count) {
  if (all_digits(entry)) {
    if (entry.size() > 3) return -1;
    int index = std::atoi(entry.c_str());
    return index < physical_count ? index : -1;
  }
  if (entry.rfind("GPU-", 0) != 0) return -1;  // MIG-... instances are not modelled; -1, +2 and the like are invalid
  int found = -1;
  for (int d = 0; d < physical_count; ++d) {
    if (uuid_text(physical_device_uuid(d)).rfind(entry, 0) != 0) continue;
    if (found != -1) return -1;  // a prefix must name one device only ("enough digits ... to uniquely identify")
    found = d;
  }
  return found;
}

}  // namespace

int physical_device_count() {
  static const int count = [] {
    const char* text = std::getenv("SIMCUDA_DEVICES");
    if (text == nullptr) return 1;
    char* end = nullptr;
    long value = std::strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || value < 1 || value > kMaxDevices) {
      std::fprintf(stderr, "simcuda: SIMCUDA_DEVICES=%s is not a device count from 1 to %d; 1 device is simulated\n",
                   text, kMaxDevices);
      return 1;
    }
    return static_cast<int>(value);
  }();
  return count;
}

CUuuid physical_device_uuid(int physical) {
  // A version-4-shaped UUID whose first eight hex digits already tell the devices apart (so that the shortest
  // prefixes CUDA_VISIBLE_DEVICES accepts work as they do on a machine whose GPUs differ early).
  static constexpr unsigned char kBase[16] = {0x51, 0xda, 0xc0, 0x00, 0x2f, 0x6e, 0x4b, 0x1d,
                                              0x9c, 0x3a, 0x5e, 0x70, 0x8b, 0x41, 0xd2, 0x00};
  CUuuid uuid;
  std::memcpy(uuid.bytes, kBase, sizeof kBase);
  uuid.bytes[3] = static_cast<char>(0x10 * physical + physical);
  uuid.bytes[15] = static_cast<char>(physical);
  return uuid;
}

int physical_device_pci_bus(int physical) { return kPciBuses[physical]; }

std::string uuid_text(const CUuuid& uuid) {
  char text[48];
  auto b = [&](int i) { return static_cast<unsigned>(static_cast<unsigned char>(uuid.bytes[i])); };
  std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b(0),
                b(1), b(2), b(3), b(4), b(5), b(6), b(7), b(8), b(9), b(10), b(11), b(12), b(13), b(14), b(15));
  return text;
}

// CUDA C Programming Guide, "CUDA Environment Variables", CUDA_VISIBLE_DEVICES: "Only the devices whose index is
// present in the sequence are visible to CUDA applications and they are enumerated in the order of the sequence. If
// one of the indices is invalid, only the devices whose index precedes the invalid index are visible" (its example:
// 0,2,-1,1 leaves 0 and 2); UUIDs "may be abbreviated ... enough digits from the beginning of the GPU UUID to
// uniquely identify that GPU". The guide says nothing of an index listed twice: here it is an invalid entry (the
// list stops there), which keeps one device from being two ordinals. An empty value lists no device.
std::vector<int> visible_devices(const char* value, int physical_count) {
  std::vector<int> visible;
  if (value == nullptr) {
    for (int d = 0; d < physical_count; ++d) visible.push_back(d);
    return visible;
  }
  std::string list(value);
  size_t begin = 0;
  while (!list.empty() && begin <= list.size()) {
    size_t end = list.find(',', begin);
    if (end == std::string::npos) end = list.size();
    int device = entry_device(list.substr(begin, end - begin), physical_count);
    if (device < 0) break;
    for (int seen : visible) {
      if (seen == device) return visible;
    }
    visible.push_back(device);
    begin = end + 1;
  }
  return visible;
}

int apply_visible_devices() {
  std::call_once(visible_once, [] {
    std::vector<int> visible = visible_devices(std::getenv("CUDA_VISIBLE_DEVICES"), physical_device_count());
    for (size_t i = 0; i < visible.size(); ++i) visible_map[i] = visible[i];
    visible_count = static_cast<int>(visible.size());
  });
  return visible_count;
}

int visible_device_count() { return visible_count; }

int physical_device(int ordinal) { return ordinal >= 0 && ordinal < visible_count ? visible_map[ordinal] : -1; }

}  // namespace simcuda
