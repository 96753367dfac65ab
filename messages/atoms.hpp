// Atoms of troupe's protocol (CAF 0.17: at most 10 characters). CAF's own (ok_atom, get_atom,
// put_atom, tick_atom, ...) are reused, never redefined.
#pragma once

#include <caf/atom.hpp>

namespace troupe {

using round_end_atom = caf::atom_constant<caf::atom("round_end")>;  // scheduler's round timer
using spawn_server_atom = caf::atom_constant<caf::atom("spawn_srv")>;
using run_end_atom = caf::atom_constant<caf::atom("run_end")>;
using lease_end_atom = caf::atom_constant<caf::atom("lease_end")>;  // a job's own lease timer
using grace_atom = caf::atom_constant<caf::atom("grace")>;  // scheduler: reports still missing
using fault_atom = caf::atom_constant<caf::atom("fault")>;  // the injector's timers
using crash_atom = caf::atom_constant<caf::atom("crash")>;  // a node process dies at once
using spawn_rank_atom = caf::atom_constant<caf::atom("spawn_rank")>;  // node: an all-reduce rank
using spawn_ps_atom = caf::atom_constant<caf::atom("spawn_ps")>;      // node: a PS shard
using spawn_feed_atom = caf::atom_constant<caf::atom("spawn_feed")>;  // node: a PS trainer + feed
using ask_later_atom = caf::atom_constant<caf::atom("ask_later")>;  // Ask's own timer (Tell's kin)
using node_back_atom =
    caf::atom_constant<caf::atom("node_back")>;  // a PS node reconnected (or not)

}  // namespace troupe
