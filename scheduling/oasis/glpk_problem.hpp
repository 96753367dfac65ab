// A GLPK problem owned by a unique_ptr: deleted with glp_delete_prob when it goes out of scope.
#pragma once

#include <glpk.h>

#include <memory>

namespace troupe::scheduling::oasis {

struct GlpkProblemDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};
using GlpkProblem = std::unique_ptr<glp_prob, GlpkProblemDeleter>;

}  // namespace troupe::scheduling::oasis
