// JobSource: a pull-based stream of jobs in arrival order.
//
// Contract: a run asks NextArrival() for the virtual time of the next job and Pops it when its
// virtual clock reaches that time, so a source may produce jobs lazily (a generator need never
// materialise an unbounded workload). Jobs come out with non-decreasing arrival_s; ties come out
// by ascending job_id. Pop() requires NextArrival() to have a value. Describe() is one line for
// logs and reports, e.g. "trace philly.csv (82247 jobs)". Sources are single-threaded.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "messages/job_spec.hpp"

namespace troupe {

class JobSource {
 public:
  virtual ~JobSource() = default;
  // arrival_s of the next job; nullopt when the source is exhausted.
  virtual std::optional<double> NextArrival() const = 0;
  // Removes and returns the next job. Precondition: NextArrival() has a value.
  virtual JobSpec Pop() = 0;
  virtual std::string Describe() const = 0;
};

// A source over jobs already in memory (a trace file, a test's hand-made workload).
class VectorJobSource : public JobSource {
 public:
  // Sorts `jobs` by (arrival_s, job_id). `description` names the origin, e.g. "trace philly.csv";
  // Describe() appends the job count.
  VectorJobSource(std::vector<JobSpec> jobs, std::string description);

  std::optional<double> NextArrival() const override;
  JobSpec Pop() override;
  std::string Describe() const override;

  size_t size() const { return jobs_.size(); }
  // The jobs' ids, ascending.
  std::vector<int64_t> SortedIds() const;
  size_t remaining() const { return jobs_.size() - next_; }

 private:
  std::vector<JobSpec> jobs_;
  size_t next_ = 0;
  std::string description_;
};

}  // namespace troupe
