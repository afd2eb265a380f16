#include "kernel_registry.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace simcuda {
namespace {

struct Registry {
  std::mutex mutex;
  std::unordered_map<const void*, Kernel*> by_stub;
  std::unordered_map<std::string, Kernel*> by_name;
  std::unordered_set<const void*> all;
  struct Family {
    simcuda_kernel_fn body;
    simcuda_param_sizes_fn param_sizes;
  };
  // By function name; several per name, tried in registration order (simcuda.h).
  std::unordered_map<std::string, std::vector<Family>> families;
};

// Never destroyed: device worker threads may still look kernels up while the process exits.
Registry& registry() {
  static Registry* instance = new Registry;
  return *instance;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::optional<size_t> scalar_or_pointer_size(std::string_view type) {
  if (type.find('*') != std::string_view::npos || type.find('&') != std::string_view::npos) return sizeof(void*);
  std::string bare;
  // Drop cv-qualifiers word by word; what remains must be a builtin scalar.
  size_t start = 0;
  while (start < type.size()) {
    size_t end = type.find(' ', start);
    if (end == std::string_view::npos) end = type.size();
    std::string_view word = type.substr(start, end - start);
    if (!word.empty() && word != "const" && word != "volatile") {
      if (!bare.empty()) bare += ' ';
      bare += word;
    }
    start = end + 1;
  }
  static const std::unordered_map<std::string, size_t>* sizes = new std::unordered_map<std::string, size_t>{
      {"bool", 1}, {"char", 1}, {"signed char", 1}, {"unsigned char", 1}, {"short", 2}, {"unsigned short", 2},
      {"int", 4}, {"unsigned int", 4}, {"float", 4}, {"long", 8}, {"unsigned long", 8}, {"long long", 8},
      {"unsigned long long", 8}, {"double", 8}, {"__int128", 16}, {"unsigned __int128", 16}};
  auto it = sizes->find(bare);
  if (it == sizes->end()) return std::nullopt;
  return it->second;
}

}  // namespace

std::optional<std::vector<size_t>> param_sizes_from_mangled_name(const char* mangled_name) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled_name, nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return std::nullopt;
  std::string signature(demangled);
  std::free(demangled);

  // The parameter list is the last top-level parenthesised group.
  if (signature.empty() || signature.back() != ')') return std::nullopt;
  int depth = 0;
  size_t open = std::string::npos;
  for (size_t i = signature.size(); i-- > 0;) {
    char c = signature[i];
    if (c == ')' || c == '>') ++depth;
    if (c == '(' || c == '<') --depth;
    if (depth == 0) {
      open = i;
      break;
    }
  }
  if (open == std::string::npos || signature[open] != '(') return std::nullopt;
  std::string_view list(signature.data() + open + 1, signature.size() - open - 2);

  std::vector<size_t> sizes;
  if (trim(list).empty() || trim(list) == "void") return sizes;
  depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    char c = i < list.size() ? list[i] : ',';
    if (c == '<' || c == '(') ++depth;
    if (c == '>' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      auto size = scalar_or_pointer_size(trim(list.substr(begin, i - begin)));
      if (!size) return std::nullopt;
      sizes.push_back(*size);
      begin = i + 1;
    }
  }
  return sizes;
}

namespace {

Kernel* find_or_add_locked(Registry& r, const char* name) {
  if (auto it = r.by_name.find(name); it != r.by_name.end()) return it->second;  // handles stay stable
  auto* kernel = new Kernel;
  kernel->name = name;
  r.by_name.emplace(kernel->name, kernel);
  r.all.insert(kernel);
  return kernel;
}

}  // namespace

std::string family_name_of(const char* mangled_name) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled_name, nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return {};
  std::string signature(demangled);
  std::free(demangled);
  // What precedes the parameter list, with every template argument list taken out.
  std::string name;
  int depth = 0;
  for (char c : signature) {
    if (c == '(' && depth == 0 && !name.empty() && name.back() != ':') break;
    if (c == '<') ++depth;
    if (depth == 0) name += c;
    if (c == '>') --depth;
  }
  constexpr std::string_view anonymous = "(anonymous namespace)::";
  for (size_t at; (at = name.find(anonymous)) != std::string::npos;) name.erase(at, anonymous.size());
  // A template function's demangled name starts with its return type.
  if (size_t space = name.rfind(' '); space != std::string::npos) name.erase(0, space + 1);
  return name;
}

void register_family(const char* function_name, simcuda_kernel_fn body, simcuda_param_sizes_fn param_sizes) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto& members = r.families[function_name];
  auto same_body =
      std::find_if(members.begin(), members.end(), [&](const Registry::Family& f) { return f.body == body; });
  if (same_body != members.end())
    same_body->param_sizes = param_sizes;
  else
    members.push_back({body, param_sizes});
  // Kernels already resolved without a body take the family's from their next launch.
  for (auto& [name, kernel] : r.by_name)
    if (kernel->body == nullptr && kernel->resolved) kernel->resolved = false;
}

simcuda_kernel_fn resolve_for_launch(Kernel* kernel) {
  Registry& r = registry();
  {
    std::lock_guard lock(r.mutex);
    if (kernel->resolved) return kernel->body;
  }
  // Demangled outside the lock: other streams' launches go on meanwhile.
  auto sizes = param_sizes_from_mangled_name(kernel->name.c_str());
  std::string family = family_name_of(kernel->name.c_str());
  std::unique_lock lock(r.mutex);
  if (kernel->resolved) return kernel->body;
  if (kernel->body == nullptr && !family.empty()) {
    if (auto it = r.families.find(family); it != r.families.end()) {
      std::vector<Registry::Family> candidates = it->second;  // a copy: our lock is dropped while sizers run
      for (const Registry::Family& member : candidates) {
        if (member.param_sizes != nullptr) {
          lock.unlock();  // the family's own code, called without our lock
          size_t buffer[256];
          int count = member.param_sizes(kernel->name.c_str(), buffer, 256);
          lock.lock();
          if (kernel->resolved) return kernel->body;  // another launch resolved it meanwhile
          if (count == SIMCUDA_NOT_MODELLED) continue;  // not this family's member: the next one's, or a no-op
          if (!kernel->param_sizes && count >= 0 && count <= 256) sizes = std::vector<size_t>(buffer, buffer + count);
        }
        kernel->body = member.body;
        break;
      }
    }
  }
  if (!kernel->param_sizes) kernel->param_sizes = std::move(sizes);
  kernel->resolved = true;
  return kernel->body;
}

void bind_host_stub(const void* host_stub, const char* name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  Kernel* kernel = find_or_add_locked(r, name);
  kernel->host_stub = host_stub;
  r.by_stub[host_stub] = kernel;
}

Kernel* register_kernel(const void* host_stub, const char* name, simcuda_kernel_fn body,
                        std::optional<std::vector<size_t>> param_sizes) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  Kernel* kernel = find_or_add_locked(r, name);
  kernel->body = body;
  kernel->param_sizes = std::move(param_sizes);
  kernel->resolved = kernel->param_sizes.has_value();
  if (host_stub != nullptr) {
    kernel->host_stub = host_stub;
    r.by_stub[host_stub] = kernel;
  }
  return kernel;
}

Kernel* add_module_kernel(std::string name, std::vector<size_t> param_sizes, simcuda_kernel_fn body,
                          std::shared_ptr<const simtriton::TritonKernel> triton) {
  auto* kernel = new Kernel;
  kernel->name = std::move(name);
  kernel->param_sizes = std::move(param_sizes);
  kernel->body = body;
  kernel->triton = std::move(triton);
  kernel->resolved = true;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.all.insert(kernel);
  return kernel;
}

Kernel* kernel_by_stub(const void* host_stub) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.by_stub.find(host_stub);
  if (it != r.by_stub.end()) return it->second;
  // cudaKernel_t handles from cudaGetKernel are the Kernel itself.
  return r.all.count(host_stub) != 0 ? const_cast<Kernel*>(static_cast<const Kernel*>(host_stub)) : nullptr;
}

Kernel* kernel_by_name(const char* name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? nullptr : it->second;
}

bool is_kernel(const void* function) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.all.count(function) != 0;
}

}  // namespace simcuda
