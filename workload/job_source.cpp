#include "workload/job_source.hpp"

#include <algorithm>
#include <utility>

namespace troupe {

VectorJobSource::VectorJobSource(std::vector<JobSpec> jobs, std::string description)
    : jobs_(std::move(jobs)), description_(std::move(description)) {
  std::stable_sort(jobs_.begin(), jobs_.end(), [](const JobSpec& a, const JobSpec& b) {
    if (a.arrival_s != b.arrival_s) return a.arrival_s < b.arrival_s;
    return a.job_id < b.job_id;
  });
}

std::optional<double> VectorJobSource::NextArrival() const {
  if (next_ >= jobs_.size()) return std::nullopt;
  return jobs_[next_].arrival_s;
}

JobSpec VectorJobSource::Pop() { return std::move(jobs_[next_++]); }

std::vector<int64_t> VectorJobSource::SortedIds() const {
  std::vector<int64_t> ids;
  ids.reserve(jobs_.size());
  for (const JobSpec& job : jobs_) ids.push_back(job.job_id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::string VectorJobSource::Describe() const {
  return description_ + " (" + std::to_string(jobs_.size()) + " jobs)";
}

}  // namespace troupe
