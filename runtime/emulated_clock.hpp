// EmulatedClock and EmulatedCoordinator: the virtual clock of an emulated run, and the
// single-threaded coordinator that owns it.
//
// CAF 0.17's test clock keeps every pending event in a std::multimap and allocates one event
// object per delayed message: two allocations and a tree rebalance for each timed message, most
// of which (a round's reports, its end) fall due at the same few instants. This clock files
// events in buckets, one per distinct due time (an ordered map of a few keys), each bucket a
// vector appended to and read in order; a bucket's storage is reused once it is read out.
//
// Contract: the delivery order is exactly the test clock's: by due time, and events due at the
// same time in the order they were scheduled (messages and timeouts alike). Timeouts follow
// CAF's rules (an actor has at most one ordinary timeout of a type: setting another replaces it;
// request timeouts are cancelled by message id; cancel_timeouts drops all of an actor's).
// Cancelled events stay in their bucket, marked, and are skipped. Single-threaded: the actors
// and the driver run on one thread, as with CAF's test coordinator.
#pragma once

#include <caf/detail/test_actor_clock.hpp>
#include <caf/group.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/message.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace troupe {

class EmulatedClock final : public caf::detail::test_actor_clock {
 public:
  EmulatedClock() = default;
  ~EmulatedClock() override;
  EmulatedClock(const EmulatedClock&) = delete;
  EmulatedClock& operator=(const EmulatedClock&) = delete;

  void set_ordinary_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                            uint64_t id) override;
  void set_multi_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                         uint64_t id) override;
  void set_request_timeout(time_point t, caf::abstract_actor* self, caf::message_id id) override;
  void cancel_ordinary_timeout(caf::abstract_actor* self, caf::atom_value type) override;
  void cancel_request_timeout(caf::abstract_actor* self, caf::message_id id) override;
  void cancel_timeouts(caf::abstract_actor* self) override;
  void schedule_message(time_point t, caf::strong_actor_ptr receiver,
                        caf::mailbox_element_ptr content) override;
  void schedule_message(time_point t, caf::group target, caf::strong_actor_ptr sender,
                        caf::message content) override;
  void cancel_all() override;

  // Events scheduled and not yet delivered or cancelled.
  size_t pending() const { return live_; }
  // Moves the clock to the earliest pending event (never backwards) and delivers every event due
  // by then, in order; events scheduled meanwhile for that instant come too. Returns how many
  // were delivered (0: nothing pending).
  size_t DeliverNextInstant();
  // Delivers every event due at or before now(). Returns how many.
  size_t DeliverDue();
  // Delivers everything pending, advancing the clock as it goes. Returns how many.
  size_t DeliverAll();

 private:
  enum class Kind : uint8_t {
    kCancelled,
    kMessage,
    kGroupMessage,
    kOrdinaryTimeout,
    kMultiTimeout,
    kRequestTimeout,
  };
  struct Ref {  // where a cancellable event is: its bucket's time and its index there
    time_point due;
    size_t index;
  };
  using Lookup = std::multimap<caf::actor_id, Ref>;
  struct GroupPart {
    caf::group target;
    caf::message content;
  };
  struct Event {
    Kind kind = Kind::kCancelled;
    caf::atom_value type{};            // timeouts
    uint64_t id = 0;                   // ordinary/multi timeouts: their id; requests: message id
    caf::strong_actor_ptr actor;       // receiver, timeout owner, or a group message's sender
    caf::mailbox_element_ptr content;  // messages
    std::unique_ptr<GroupPart> group;  // group messages
    Lookup::iterator backlink;         // cancellable events: their lookup entry
  };
  struct Bucket {
    std::vector<Event> events;
    size_t next = 0;  // events before it were delivered
  };

  Event& Add(time_point due, Event event);
  // Adds a timeout that can be cancelled; an ordinary one replaces the actor's of the same type.
  void AddCancellable(time_point due, caf::actor_id owner, Event event);
  template <class Match>
  void CancelFirst(caf::actor_id owner, Match match);
  Event& At(const Ref& ref);
  void Cancel(Event& event);
  // Drops read-out buckets; returns the first with an undelivered live event, or end().
  std::map<time_point, Bucket>::iterator Front();
  void Ship(Event& event);
  void Recycle(std::vector<Event>&& events);

  std::map<time_point, Bucket> buckets_;
  Lookup lookup_;
  size_t live_ = 0;
  std::vector<std::vector<Event>> spare_;  // read-out buckets' storage, reused
};

// CAF's test coordinator (one thread, run() runs every ready actor in FIFO order) with an
// EmulatedClock in place of the test clock. Installed by ActorRuntime for emulated runs.
class EmulatedCoordinator final : public caf::scheduler::test_coordinator {
 public:
  explicit EmulatedCoordinator(caf::actor_system& system);
  EmulatedClock& clock() noexcept override { return clock_; }

  // Runs every ready actor until none is left, as run() does, in the same order: run() lets an
  // actor handle one message per turn and puts it back at the front of the line while its
  // mailbox is not empty, so an actor always empties its mailbox before the next one runs. This
  // lets it do so in one turn, saving CAF's per-turn bookkeeping (a locked lookup of the
  // logging context among it). Returns the number of turns.
  size_t RunReady();

 protected:
  void stop() override;

 private:
  EmulatedClock clock_;
};

}  // namespace troupe
