// ClosestName: the known name a misspelt one most likely meant, for a "did you mean" in the one
// line that refuses an unknown config field, policy, mechanism or fault kind. A known name counts
// when it is within a few edits of the given one (1 edit for names of up to 4 characters, 2 up to
// 8, else 3; swapping two neighbours is one edit; case is ignored), or when one name starts with
// the other and the shorter has at least 3 characters. The fewest edits win, then the earlier
// known name; nothing close gives "". Header-only: base/ is the bottom library.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/quoted.hpp"

namespace troupe {

namespace closest_name_detail {

inline char Lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// Edits (insert, delete, replace, swap of two neighbours) between a and b, case ignored; names
// longer than 64 characters are nobody's typo of a field name and count as far apart.
inline size_t EditDistance(std::string_view a, std::string_view b) {
  constexpr size_t kLongest = 64;
  if (a.size() > kLongest || b.size() > kLongest) return std::max(a.size(), b.size());
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = Lower(a[i - 1]) == Lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && Lower(a[i - 1]) == Lower(b[j - 2]) &&
          Lower(a[i - 2]) == Lower(b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

inline bool StartsWith(std::string_view text, std::string_view prefix) {
  if (prefix.size() > text.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (Lower(text[i]) != Lower(prefix[i])) return false;
  }
  return true;
}

}  // namespace closest_name_detail

inline std::string ClosestName(std::string_view name, const std::vector<std::string>& known) {
  using namespace closest_name_detail;
  if (name.empty()) return "";
  const size_t allowed = name.size() <= 4 ? 1 : name.size() <= 8 ? 2 : 3;
  const std::string* best = nullptr;
  size_t best_distance = 0;
  for (const std::string& candidate : known) {
    const size_t distance = EditDistance(name, candidate);
    const std::string_view shorter = name.size() < candidate.size() ? name : candidate;
    const bool prefix =
        shorter.size() >= 3 && (StartsWith(candidate, name) || StartsWith(name, candidate));
    if (distance > allowed && !prefix) continue;
    if (best == nullptr || distance < best_distance) {
      best = &candidate;
      best_distance = distance;
    }
  }
  return best == nullptr ? "" : *best;
}

// " (did you mean 'x'?)" for the closest known name, or "" when none is close: to append to the
// one line that refuses `name`.
inline std::string DidYouMean(std::string_view name, const std::vector<std::string>& known) {
  const std::string closest = ClosestName(name, known);
  return closest.empty() ? "" : " (did you mean " + Quoted(closest) + "?)";
}

}  // namespace troupe
