#include "apps/list_command.hpp"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <vector>

#include "scheduling/mechanism_registry.hpp"
#include "scheduling/policy_registry.hpp"

namespace troupe {
namespace {

template <typename Definition>
void PrintTable(const char* title, const std::vector<const Definition*>& definitions,
                std::ostream& out) {
  size_t width = 0;
  for (const Definition* d : definitions) width = std::max(width, d->name.size());
  out << title << "\n";
  for (const Definition* d : definitions) {
    out << "  " << std::left << std::setw(static_cast<int>(width)) << d->name << "  " << d->summary
        << "\n";
  }
}

}  // namespace

int RunList(const std::string& what, std::ostream& out) {
  if (!what.empty() && what != "policies" && what != "mechanisms") {
    std::fprintf(stderr, "troupe: list: '%s': expected policies or mechanisms\n", what.c_str());
    return 2;
  }
  if (what != "mechanisms") {
    PrintTable("policies (scheduler.policy_name):", scheduling::RegisteredPolicies(), out);
  }
  if (what.empty()) out << "\n";
  if (what != "policies") {
    PrintTable("mechanisms (scheduler.mechanism_name):", scheduling::RegisteredMechanisms(), out);
  }
  return 0;
}

}  // namespace troupe
