// Every header that declares message types (what TROUPE_MESSAGE_TYPES lists), for the code that
// handles all of them at once: registration and the serialisation round-trip test.
#pragma once

#include "messages/allreduce_messages.hpp"
#include "messages/cluster_messages.hpp"
#include "messages/fabric_messages.hpp"
#include "messages/fault_messages.hpp"
#include "messages/gang_weights.hpp"
#include "messages/nccl_messages.hpp"
#include "messages/oasis_messages.hpp"
#include "messages/profiling_messages.hpp"
#include "messages/ps_messages.hpp"
#include "messages/records.hpp"
#include "messages/run_messages.hpp"
#include "messages/work_messages.hpp"
