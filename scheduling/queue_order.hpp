// QueueOrder: the runnable jobs of a queue kept in a policy's order (OrderJobs' order: starving
// first where the policy reads the mark, then the policy's key, arrival, id) from round to round,
// so that a round reads the head of a long queue without re-sorting all of it.
//
// A job's place changes only when something the policy reads of it changes: it ran (LAS's
// attained service, SRTF's remaining work), its expected speed-up was re-estimated (SRTF, FTF) or
// the starvation guard marked it. The owner files the job again after such a change (File), and
// files or removes it when it becomes runnable or stops being so. A key that does not read the
// clock (FIFO, SRTF, LAS) is kept in a B-tree: filing costs O(log n) and reading the head of h
// jobs O(h). One that does (FTF's grows with the clock at a different rate for every job) is
// computed each round from the jobs as filed, and the head selected from those keys in one pass
// that keeps it in a small heap seeded from a sample (O(n), no sort of the whole queue): from three
// numbers a job kept in a dense array when the policy splits its key
// (PolicyDefinition::clock_terms), from a copy of the job otherwise. Beside each job's place the
// B-tree keeps what a placement reads of it (QueuedJob), so that a round's head is read in a row
// rather than job by job over the heap; the owner files the job again when that changes too.
#pragma once

#include <absl/container/btree_set.h>
#include <absl/container/flat_hash_map.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "scheduling/policy.hpp"
#include "scheduling/queued_job.hpp"
#include "scheduling/sched_job.hpp"

namespace troupe::scheduling {

class QueueOrder {
 public:
  QueueOrder() = default;  // assign one with a policy before filing
  explicit QueueOrder(const PolicyDefinition& policy, const OrderOptions& options = {});

  // Files `job` under what the policy reads of it now, with what a placement reads of it
  // (inserting it, moving it, or updating its QueuedJob). The job stays where it is while filed:
  // the owner files it again or removes it before moving or freeing it (Head hands out its
  // address, so that a round reads its head without looking a job up).
  void File(const SchedJob& job);
  void Remove(int64_t id);
  bool Contains(int64_t id) const { return filed_.contains(id); }
  size_t size() const { return filed_.size(); }

  // The first min(count, size()) filed jobs, in OrderJobs' order at now_s.
  void Head(double now_s, size_t count, std::vector<const SchedJob*>& jobs);
  // The same head, each job with what a placement reads of it: under a key that does not read
  // the clock, copied from the order, as the job was when last filed, without reading the job.
  void Head(double now_s, size_t count, std::vector<QueuedJob>& jobs);

 private:
  struct Entry {
    bool not_starving = true;
    double key = 0;
    double arrival_s = 0;
    int64_t id = 0;
    const SchedJob* job = nullptr;  // not compared: ids are unique
    bool operator<(const Entry& o) const;
  };
  struct Filed {
    Entry entry;
    size_t row = 0;  // a clock-reading key: its place in rows_
  };
  // A clock-reading key: what each round's key is computed from, the job as filed.
  struct Row {
    bool not_starving = true;
    double arrival_s = 0;
    int64_t id = 0;
    const SchedJob* job = nullptr;
    ClockTerms terms;  // with PolicyDefinition::clock_terms
  };

  void FileClock(const SchedJob& job, const Entry& entry);
  void ClockHead(double now_s, size_t count, std::vector<const SchedJob*>& jobs);
  Entry RowEntry(size_t row, double now_s) const;  // a clock-reading key's entry at now_s

  const PolicyDefinition* policy_ = nullptr;
  OrderOptions options_;
  absl::flat_hash_map<int64_t, Filed> filed_;
  // A key that does not read the clock: a filed job's place in the order, with what a placement
  // reads of it (compared as its Entry).
  struct Sorted {
    bool not_starving = true;
    double key = 0;
    double arrival_s = 0;
    QueuedJob queued;  // its id and job are the Entry's
    bool operator<(const Sorted& o) const;
  };
  static Sorted SortedOf(const Entry& entry, const QueuedJob& queued);
  // absl::btree_set<Sorted> (the same template) with nodes of ~1 KB rather than its 256 B, as
  // btree_set does not take the size. A round reads thousands of heads in order: a node, and a
  // likely cache miss, every 12 rather than every 3.
  using SortedEntries = absl::container_internal::btree_set_container<
      absl::container_internal::btree<absl::container_internal::set_params<
          Sorted, std::less<Sorted>, std::allocator<Sorted>, /*TargetNodeSize=*/1024,
          /*IsMulti=*/false>>>;
  SortedEntries sorted_;
  std::vector<Row> rows_;         // a clock-reading key: every filed job, densely
  std::vector<SchedJob> copies_;  // ... and, without clock_terms, a copy of each, row by row
  std::vector<Entry> scratch_;    // a clock-reading key: the head being selected (a max-heap)
  std::vector<const SchedJob*> clock_head_;  // ... and the head selected
};

}  // namespace troupe::scheduling
