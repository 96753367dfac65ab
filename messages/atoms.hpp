// Atoms of troupe's protocol (CAF 0.17: at most 10 characters). CAF's own (ok_atom, get_atom,
// put_atom, tick_atom, ...) are reused, never redefined.
#pragma once

#include <caf/atom.hpp>

namespace troupe {

using round_end_atom = caf::atom_constant<caf::atom("round_end")>;  // scheduler's round timer
using spawn_server_atom = caf::atom_constant<caf::atom("spawn_srv")>;
using run_end_atom = caf::atom_constant<caf::atom("run_end")>;

}  // namespace troupe
