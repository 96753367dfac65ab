// `troupe list [policies|mechanisms]`: the policies and mechanisms this build has registered
// (scheduling/policy_registry.hpp, mechanism_registry.hpp), each with its one-line summary: the
// names scheduler.policy_name and scheduler.mechanism_name take. Without an argument, both.
#pragma once

#include <ostream>
#include <string>

namespace troupe {

// 0 after printing the list to `out`; 2 (one line on stderr) for another argument.
int RunList(const std::string& what, std::ostream& out);

}  // namespace troupe
