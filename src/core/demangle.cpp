#include "demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <string>

namespace firstassert {

std::string demangle(const char* mangled) {
  if (mangled == nullptr) return {};
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> readable(abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  return status == 0 && readable ? std::string(readable.get()) : std::string(mangled);
}

std::string short_kernel_name(const std::string& demangled) {
  // A member function's trailing qualifiers ("operator()() const", a lambda's) are not its name.
  std::string name = demangled;
  for (bool cut = true; cut;) {
    cut = false;
    for (const char* qualifier : {" const", " volatile", " &&", " &", " noexcept"}) {
      if (name.ends_with(qualifier)) {
        name.resize(name.size() - std::char_traits<char>::length(qualifier));
        cut = true;
      }
    }
  }
  // Cut the parameter list and template arguments from the end, then the qualifiers and return type.
  int depth = 0;
  size_t cut = name.size();
  for (size_t i = name.size(); i-- > 0;) {
    char c = name[i];
    if (c == ')' || c == '>') ++depth;
    if (c == '(' || c == '<') {
      --depth;
      if (depth == 0) cut = i;
    }
    if (depth == 0 && (c == ' ' || c == ':')) break;
  }
  name = name.substr(0, cut);
  while (!name.empty() && (name.back() == '>' || name.back() == ')')) name.pop_back();
  size_t start = name.find_last_of(": ");
  std::string last = start == std::string::npos ? name : name.substr(start + 1);
  return last == "operator" ? "operator()" : last;  // a lambda's or functor's call, as the device's lines name it
}

std::string without_clone_suffix(const std::string& demangled) {
  if (size_t gnu = demangled.find(" [clone ."); gnu != std::string::npos) return demangled.substr(0, gnu);
  if (size_t llvm = demangled.rfind(" (."); llvm != std::string::npos && demangled.back() == ')' &&
      demangled.find_first_of("()", llvm + 2) == demangled.size() - 1)
    return demangled.substr(0, llvm);
  return demangled;
}

}  // namespace firstassert
