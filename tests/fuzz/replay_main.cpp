// Runs the fuzz target without libFuzzer (so CI, built with g++, exercises it every time): every seed given on the
// command line, then deterministic variants of each: truncations, byte flips, and every value of the report replaced
// by values of every other JSON type. scripts/fuzz runs the real libFuzzer build when clang is installed.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

size_t runs = 0;

void run(const std::string& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  ++runs;
}

// Every scalar, array and object inside j, replaced in turn by each of the other kinds of value.
void retype_everything(nlohmann::json& root, nlohmann::json& node) {
  static const nlohmann::json replacements[] = {nullptr, 0, -1, 1e300, "x", true, nlohmann::json::array(),
                                                nlohmann::json::object(), nlohmann::json::array({1, 2, 3})};
  if (node.is_object()) {
    for (auto& [key, value] : node.items()) {
      nlohmann::json saved = value;
      for (const nlohmann::json& r : replacements) {
        value = r;
        run(root.dump());
      }
      value = saved;
      retype_everything(root, value);
    }
  } else if (node.is_array()) {
    for (nlohmann::json& element : node) retype_everything(root, element);
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    std::string seed = text.str();
    run(seed);
    for (size_t cut = 0; cut < seed.size(); cut += 7) run(seed.substr(0, cut));
    uint32_t state = 12345;
    for (int k = 0; k < 2000 && !seed.empty(); ++k) {
      std::string flipped = seed;
      state = state * 1664525u + 1013904223u;
      flipped[state % flipped.size()] = static_cast<char>(state >> 24);
      run(flipped);
    }
    nlohmann::json parsed = nlohmann::json::parse(seed, nullptr, false);
    if (!parsed.is_discarded()) retype_everything(parsed, parsed);
  }
  std::printf("report_fuzz replay: %zu inputs, no crash\n", runs);
  return 0;
}
