// Registry: definitions (of policies, of mechanisms) by name, filled before main() by the static
// registrars of the files that define them (policy_registry.hpp, mechanism_registry.hpp). The
// map is a function-local static, so a registrar may run before any other static is built.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace troupe::scheduling {

template <typename Definition>
class Registry {
 public:
  static Registry& Instance() {
    static Registry registry;
    return registry;
  }

  // Adds `definition` under definition.name. An empty or duplicate name is a programming error,
  // found before main() runs: troupe says which and aborts.
  void Add(const Definition& definition, const char* what) {
    const std::string name(definition.name);
    if (name.empty() || by_name_.contains(name)) {
      std::fprintf(stderr, "troupe: %s '%s' registered %s\n", what, name.c_str(),
                   name.empty() ? "without a name" : "twice");
      std::abort();
    }
    auto it = by_name_.emplace(name, definition).first;
    it->second.name = it->first;  // the registry's copy of the name outlives the registrar's
  }

  const Definition* Find(std::string_view name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : &it->second;
  }

  // Every definition, by name.
  std::vector<const Definition*> All() const {
    std::vector<const Definition*> all;
    for (const auto& [name, definition] : by_name_) all.push_back(&definition);
    return all;
  }

  // "a, b, c": the registered names, for an error message.
  std::string Names() const {
    std::string names;
    for (const auto& [name, definition] : by_name_) names += (names.empty() ? "" : ", ") + name;
    return names;
  }

 private:
  std::map<std::string, Definition, std::less<>> by_name_;
};

}  // namespace troupe::scheduling
