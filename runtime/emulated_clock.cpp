#include "runtime/emulated_clock.hpp"

#include <caf/abstract_actor.hpp>
#include <caf/abstract_group.hpp>
#include <caf/actor_control_block.hpp>
#include <caf/execution_unit.hpp>
#include <caf/resumable.hpp>
#include <caf/sec.hpp>
#include <caf/system_messages.hpp>
#include <limits>
#include <utility>

namespace troupe {
namespace {
constexpr size_t kSpareBuckets = 4;  // storage of read-out buckets kept for reuse

// Where an actor that becomes ready while another runs is filed: the end of the line.
class LineWorker final : public caf::execution_unit {
 public:
  explicit LineWorker(EmulatedCoordinator* coordinator)
      : caf::execution_unit(&coordinator->system()), coordinator_(coordinator) {}
  void exec_later(caf::resumable* ready) override { coordinator_->jobs.push_back(ready); }

 private:
  EmulatedCoordinator* coordinator_;
};

}  // namespace

EmulatedClock::~EmulatedClock() = default;

EmulatedClock::Event& EmulatedClock::Add(time_point due, Event event) {
  auto [it, fresh] = buckets_.try_emplace(due);
  std::vector<Event>& events = it->second.events;
  if (fresh && !spare_.empty()) {
    events = std::move(spare_.back());
    spare_.pop_back();
  }
  events.push_back(std::move(event));
  ++live_;
  return events.back();
}

EmulatedClock::Event& EmulatedClock::At(const Ref& ref) {
  return buckets_.find(ref.due)->second.events[ref.index];
}

void EmulatedClock::Cancel(Event& event) {
  event.kind = Kind::kCancelled;
  event.actor.reset();
  event.content.reset();
  event.group.reset();
  --live_;
}

void EmulatedClock::AddCancellable(time_point due, caf::actor_id owner, Event event) {
  const Kind kind = event.kind;
  const caf::atom_value type = event.type;
  Lookup::iterator entry = lookup_.end();
  if (kind == Kind::kOrdinaryTimeout) {  // at most one per type: the new one replaces it
    auto [first, last] = lookup_.equal_range(owner);
    for (auto i = first; i != last; ++i) {
      const Event& old = At(i->second);
      if (old.kind == Kind::kOrdinaryTimeout && old.type == type) {
        entry = i;
        break;
      }
    }
  }
  if (entry != lookup_.end()) {
    Cancel(At(entry->second));
  } else {
    entry = lookup_.emplace(owner, Ref{});
  }
  event.backlink = entry;
  Event& added = Add(due, std::move(event));
  auto bucket = buckets_.find(due);
  entry->second = Ref{due, static_cast<size_t>(&added - bucket->second.events.data())};
}

template <class Match>
void EmulatedClock::CancelFirst(caf::actor_id owner, Match match) {
  auto [first, last] = lookup_.equal_range(owner);
  for (auto i = first; i != last; ++i) {
    Event& event = At(i->second);
    if (!match(event)) continue;
    Cancel(event);
    lookup_.erase(i);
    return;
  }
}

void EmulatedClock::set_ordinary_timeout(time_point t, caf::abstract_actor* self,
                                         caf::atom_value type, uint64_t id) {
  Event event;
  event.kind = Kind::kOrdinaryTimeout;
  event.type = type;
  event.id = id;
  event.actor = self->ctrl();
  AddCancellable(t, self->id(), std::move(event));
}

void EmulatedClock::set_multi_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                                      uint64_t id) {
  Event event;
  event.kind = Kind::kMultiTimeout;
  event.type = type;
  event.id = id;
  event.actor = self->ctrl();
  AddCancellable(t, self->id(), std::move(event));
}

void EmulatedClock::set_request_timeout(time_point t, caf::abstract_actor* self,
                                        caf::message_id id) {
  Event event;
  event.kind = Kind::kRequestTimeout;
  event.id = id.integer_value();
  event.actor = self->ctrl();
  AddCancellable(t, self->id(), std::move(event));
}

void EmulatedClock::cancel_ordinary_timeout(caf::abstract_actor* self, caf::atom_value type) {
  CancelFirst(self->id(), [type](const Event& e) {
    return e.kind == Kind::kOrdinaryTimeout && e.type == type;
  });
}

void EmulatedClock::cancel_request_timeout(caf::abstract_actor* self, caf::message_id id) {
  CancelFirst(self->id(), [id](const Event& e) {
    return e.kind == Kind::kRequestTimeout && e.id == id.integer_value();
  });
}

void EmulatedClock::cancel_timeouts(caf::abstract_actor* self) {
  auto [first, last] = lookup_.equal_range(self->id());
  for (auto i = first; i != last; ++i) Cancel(At(i->second));
  lookup_.erase(first, last);
}

void EmulatedClock::schedule_message(time_point t, caf::strong_actor_ptr receiver,
                                     caf::mailbox_element_ptr content) {
  Event event;
  event.kind = Kind::kMessage;
  event.actor = std::move(receiver);
  event.content = std::move(content);
  Add(t, std::move(event));
}

void EmulatedClock::schedule_message(time_point t, caf::group target, caf::strong_actor_ptr sender,
                                     caf::message content) {
  Event event;
  event.kind = Kind::kGroupMessage;
  event.actor = std::move(sender);
  event.group = std::make_unique<GroupPart>(GroupPart{std::move(target), std::move(content)});
  Add(t, std::move(event));
}

void EmulatedClock::cancel_all() {
  buckets_.clear();
  lookup_.clear();
  live_ = 0;
}

void EmulatedClock::Recycle(std::vector<Event>&& events) {
  if (spare_.size() >= kSpareBuckets) return;
  events.clear();
  spare_.push_back(std::move(events));
}

std::map<EmulatedClock::time_point, EmulatedClock::Bucket>::iterator EmulatedClock::Front() {
  while (!buckets_.empty()) {
    auto it = buckets_.begin();
    Bucket& bucket = it->second;
    while (bucket.next < bucket.events.size() &&
           bucket.events[bucket.next].kind == Kind::kCancelled) {
      ++bucket.next;
    }
    if (bucket.next < bucket.events.size()) return it;
    Recycle(std::move(bucket.events));
    buckets_.erase(it);
  }
  return buckets_.end();
}

void EmulatedClock::Ship(Event& event) {
  switch (event.kind) {
    case Kind::kMessage:
      event.actor->enqueue(std::move(event.content), nullptr);
      break;
    case Kind::kGroupMessage:
      event.group->target.eq_impl(caf::make_message_id(), std::move(event.actor), nullptr,
                                  std::move(event.group->content));
      break;
    case Kind::kOrdinaryTimeout:
    case Kind::kMultiTimeout:
      event.actor->get()->eq_impl(caf::make_message_id(), event.actor, nullptr,
                                  caf::timeout_msg{event.type, event.id});
      break;
    case Kind::kRequestTimeout:
      event.actor->get()->eq_impl(caf::message_id{event.id}, event.actor, nullptr,
                                  caf::sec::request_timeout);
      break;
    case Kind::kCancelled:
      break;
  }
}

size_t EmulatedClock::DeliverDue() {
  size_t delivered = 0;
  for (auto it = Front(); it != buckets_.end() && it->first <= current_time; it = Front()) {
    Bucket& bucket = it->second;
    Event event = std::move(bucket.events[bucket.next++]);
    --live_;
    if (event.kind != Kind::kMessage && event.kind != Kind::kGroupMessage) {
      lookup_.erase(event.backlink);
    }
    Ship(event);  // may schedule more events, into this bucket too
    ++delivered;
  }
  return delivered;
}

size_t EmulatedClock::DeliverNextInstant() {
  auto it = Front();
  if (it == buckets_.end()) return 0;
  if (it->first > current_time) current_time = it->first;
  return DeliverDue();
}

size_t EmulatedClock::DeliverAll() {
  size_t delivered = 0;
  while (size_t n = DeliverNextInstant()) delivered += n;
  return delivered;
}

EmulatedCoordinator::EmulatedCoordinator(caf::actor_system& system)
    : caf::scheduler::test_coordinator(system) {}

size_t EmulatedCoordinator::RunReady() {
  LineWorker worker{this};
  size_t turns = 0;
  while (!jobs.empty()) {
    caf::resumable* job = jobs.front();
    jobs.pop_front();
    switch (job->resume(&worker, std::numeric_limits<size_t>::max())) {
      case caf::resumable::resume_later:
        jobs.push_front(job);
        break;
      case caf::resumable::done:
      case caf::resumable::awaiting_message:
        intrusive_ptr_release(job);
        break;
      case caf::resumable::shutdown_execution_unit:
        break;
    }
    ++turns;
  }
  return turns;
}

void EmulatedCoordinator::stop() {
  // As CAF's test coordinator: run what is ready and fire what is pending until both are done.
  while (run() > 0) clock_.DeliverAll();
}

}  // namespace troupe
