// The CUDA backends are a plugin (gpu/cuda_backends.hpp): the troupe binary maps no CUDA library
// for what does not ask for one, so it starts small and runs where CUDA is not installed; a run
// that asks for a CUDA backend the plugin cannot provide is one line naming the field, exit 2.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

// The dynamic loader lists every object it maps under LD_DEBUG=files (on stderr).
TEST(CudaPlugin, VersionValidateAndAnEmulatedRunMapNoCudaLibrary) {
  const std::string dir = FreshDir("cuda-plugin-none");
  ScopedEnv debug("LD_DEBUG", "files");
  const std::vector<std::vector<std::string>> commands = {
      {"--version"},
      {"validate", SourcePath("configs/default.textproto")},
      {"validate", SourcePath("configs/hps_ctr.textproto")},
      {"run", SourcePath("configs/default.textproto"), "--quiet", "--out", dir + "/run"},
  };
  for (const std::vector<std::string>& args : commands) {
    const ProcessResult r = RunTroupe(args);
    EXPECT_EQ(r.exit_code, 0) << args[0] << "\n" << r.err.substr(0, 2000);
    ASSERT_NE(r.err.find("file=libstdc++"), std::string::npos) << "LD_DEBUG listed nothing";
    for (const char* library : {"libcudart", "libcublas", "libnccl", "troupe_cuda_backends"}) {
      EXPECT_EQ(r.err.find(library), std::string::npos) << args[0] << " mapped " << library;
    }
  }
}

void ExpectOneLineExit2(const ProcessResult& r, const std::string& field) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_NE(r.err.find(field + ": 'cuda'"), std::string::npos) << r.err;
#ifdef TROUPE_HAVE_CUDA
  // A CUDA build looked for the plugin and says what dlopen() said.
  EXPECT_NE(r.err.find("/nonexistent/troupe_cuda_backends.so: cannot open shared object file"),
            std::string::npos)
      << r.err;
#endif
}

TEST(CudaPlugin, AMissingPluginIsOneLineNamingTheField) {
  const std::string dir = FreshDir("cuda-plugin-missing");
  ScopedEnv plugin("TROUPE_CUDA_BACKENDS", "/nonexistent/troupe_cuda_backends.so");
  const ProcessResult compute =
      RunTroupe({"run", SourcePath("configs/default.textproto"), "--set", "run.mode=real", "--set",
                 "backends.compute=cuda", "--quiet", "--out", dir + "/compute"});
  ExpectOneLineExit2(compute, "backends.compute");
  EXPECT_FALSE(std::filesystem::exists(dir + "/compute"));
  const ProcessResult hbm =
      RunTroupe({"run", SourcePath("configs/hps_ctr.textproto"), "--set",
                 "paramserver.hbm_backend=cuda", "--quiet", "--out", dir + "/hbm"});
  ExpectOneLineExit2(hbm, "paramserver.hbm_backend");
  EXPECT_FALSE(std::filesystem::exists(dir + "/hbm"));
}

}  // namespace
}  // namespace troupe::testing
