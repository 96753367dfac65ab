#include "actors/checkpoint_store_actor.hpp"

#include <algorithm>

namespace troupe {

caf::behavior CheckpointStoreActor(caf::stateful_actor<CheckpointStoreState>* self) {
  return {
      [=](JobCheckpoint& checkpoint) {
        auto& latest = self->state.latest;
        auto it = latest.find(checkpoint.job_id);
        // A late duplicate never rolls a job back.
        if (it != latest.end() && it->second.at_s > checkpoint.at_s) return;
        latest[checkpoint.job_id] = std::move(checkpoint);
      },
      [=](const CheckpointQuery& query) {
        CheckpointList list;
        const auto& latest = self->state.latest;
        if (query.job_id >= 0) {
          auto it = latest.find(query.job_id);
          if (it != latest.end()) list.checkpoints.push_back(it->second);
          return list;
        }
        for (const auto& [id, checkpoint] : latest) list.checkpoints.push_back(checkpoint);
        std::sort(
            list.checkpoints.begin(), list.checkpoints.end(),
            [](const JobCheckpoint& a, const JobCheckpoint& b) { return a.job_id < b.job_id; });
        return list;
      },
  };
}

}  // namespace troupe
