// The loader of the CUDA backends plugin (gpu/cuda_backends.hpp): a plugin that is absent, is no
// plugin, or comes from another build is refused with one line saying why, before anything in it
// is called; the variable chooses the file; this build's plugin loads.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "gpu/compute_backend.hpp"
#include "gpu/cuda_backends.hpp"
#include "tests/support/scoped_env.hpp"

namespace troupe::gpu {
namespace {

using testing::ScopedEnv;

void ExpectOneLine(const Status& s) {
  EXPECT_EQ(s.code(), Status::Code::kInternal) << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
  EXPECT_EQ(s.message().rfind("CUDA backends plugin: ", 0), 0u) << s.message();
}

TEST(GpuPlugin, AMissingPluginSaysWhatDlopenSaid) {
  const CudaBackendsTable* table = nullptr;
  const Status s = LoadCudaBackendsFrom("/nonexistent/troupe_cuda_backends.so", &table);
  ExpectOneLine(s);
  EXPECT_NE(
      s.message().find("/nonexistent/troupe_cuda_backends.so: cannot open shared object file"),
      std::string::npos)
      << s.message();
  EXPECT_EQ(table, nullptr);
}

TEST(GpuPlugin, ALibraryWithoutTheEntryPointIsRefused) {
  const CudaBackendsTable* table = nullptr;
  const Status s = LoadCudaBackendsFrom("libm.so.6", &table);
  ExpectOneLine(s);
  EXPECT_NE(s.message().find("no entry point troupe_cuda_backends"), std::string::npos)
      << s.message();
  EXPECT_EQ(table, nullptr);
}

TEST(GpuPlugin, APluginOfAnotherAbiOrBuildIsRefused) {
  const CudaBackendsTable* table = nullptr;
  const Status abi = LoadCudaBackendsFrom(TROUPE_FOREIGN_ABI_PLUGIN, &table);
  ExpectOneLine(abi);
  EXPECT_NE(abi.message().find("is from another build of troupe (ABI " +
                               std::to_string(kCudaBackendsAbi + 1)),
            std::string::npos)
      << abi.message();
  const Status build = LoadCudaBackendsFrom(TROUPE_FOREIGN_BUILD_PLUGIN, &table);
  ExpectOneLine(build);
  EXPECT_NE(build.message().find("built by troupe 0.0.0, another compiler"), std::string::npos)
      << build.message();
  EXPECT_EQ(table, nullptr);
}

TEST(GpuPlugin, TheVariableChoosesThePlugin) {
  {
    ScopedEnv chosen(kCudaBackendsVariable, "/opt/elsewhere/cuda.so");
    EXPECT_EQ(CudaBackendsPath(), "/opt/elsewhere/cuda.so");
  }
  ScopedEnv unset(kCudaBackendsVariable, std::nullopt);
  const std::string path = CudaBackendsPath();
  EXPECT_EQ(path.substr(path.size() - std::string("/troupe_cuda_backends.so").size()),
            "/troupe_cuda_backends.so")
      << path;
}

#ifdef TROUPE_HAVE_CUDA
// This build made the plugin: it loads (on a machine without a GPU as well: the CUDA libraries
// are installed wherever it was built) and its backends answer, with a GPU or with the reason.
TEST(GpuPlugin, ThisBuildsPluginLoads) {
  ScopedEnv unset(kCudaBackendsVariable, std::nullopt);
  const CudaBackendsTable* table = nullptr;
  const Status s = LoadCudaBackendsFrom(CudaBackendsPath(), &table);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->header.abi_version, kCudaBackendsAbi);
  std::unique_ptr<ComputeBackend> compute;
  const Status made = table->make_compute(&compute);
  if (made.ok()) {
    EXPECT_EQ(compute->name(), "cuda");
  } else {
    EXPECT_NE(made.message().find("no usable GPU"), std::string::npos) << made.message();
  }
}
#endif

}  // namespace
}  // namespace troupe::gpu
