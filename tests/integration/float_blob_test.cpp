// FloatBlob (messages/float_blob.hpp): floats cross CAF's binary serializer as the byte vector
// they always were on the wire, a view sends only its slice, a frame that claims more bytes than
// it holds is refused, and a holder never writes floats another blob still shares.
#include "messages/float_blob.hpp"

#include <gtest/gtest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <cstring>
#include <vector>

namespace troupe {
namespace {

class FloatBlobWire : public ::testing::Test {
 protected:
  std::vector<char> Write(FloatBlob blob) {
    std::vector<char> bytes;
    caf::binary_serializer sink{system_, bytes};
    EXPECT_FALSE(sink(blob));
    return bytes;
  }
  caf::actor_system_config config_;
  caf::actor_system system_{config_};
};

TEST_F(FloatBlobWire, IsWrittenAsTheBytesOfItsFloats) {
  const std::vector<float> values = {1.5f, -2.25f, 3e-7f};
  std::vector<uint8_t> raw(values.size() * sizeof(float));
  std::memcpy(raw.data(), values.data(), raw.size());
  std::vector<char> expected;
  caf::binary_serializer sink{system_, expected};
  ASSERT_FALSE(sink(raw));
  EXPECT_EQ(Write(FloatBlob::Of(values)), expected);

  FloatBlob back;
  caf::binary_deserializer source{system_, expected};
  ASSERT_FALSE(source(back));
  EXPECT_EQ(back.ToFloats(), values);
}

TEST_F(FloatBlobWire, AViewSendsOnlyItsSlice) {
  auto buffer = std::make_shared<float[]>(6);
  for (int i = 0; i < 6; ++i) buffer[i] = static_cast<float>(i);
  FloatBlob back;
  const std::vector<char> bytes = Write(FloatBlob::Share(buffer, 2, 3));
  caf::binary_deserializer source{system_, bytes};
  ASSERT_FALSE(source(back));
  EXPECT_EQ(back.ToFloats(), (std::vector<float>{2.0f, 3.0f, 4.0f}));
}

TEST_F(FloatBlobWire, AFrameShorterThanItsCountIsRefused) {
  std::vector<char> bytes = Write(FloatBlob::Of(std::vector<float>(100, 1.0f)));
  bytes.resize(bytes.size() - 1);
  FloatBlob back;
  caf::binary_deserializer source{system_, bytes};
  EXPECT_TRUE(source(back));
}

TEST_F(FloatBlobWire, BytesThatAreNoWholeNumberOfFloatsHoldNone) {
  std::vector<char> bytes;
  caf::binary_serializer sink{system_, bytes};
  std::vector<uint8_t> seven(7, 1);
  ASSERT_FALSE(sink(seven));
  FloatBlob back;
  caf::binary_deserializer source{system_, bytes};
  ASSERT_FALSE(source(back));
  EXPECT_FALSE(back.whole());
  EXPECT_EQ(back.floats(), 0u);
}

TEST(FloatBlob, TakesItsOwnBufferToWriteOnlyWhenNothingElseSharesIt) {
  FloatBlob alone = FloatBlob::Of(std::vector<float>{1.0f, 2.0f});
  const float* before = alone.values().data();
  std::shared_ptr<float[]> taken = std::move(alone).TakeWritable();
  EXPECT_EQ(taken.get(), before) << "an unshared buffer is taken, not copied";

  FloatBlob shared = FloatBlob::Of(std::vector<float>{1.0f, 2.0f});
  const FloatBlob other = shared;
  std::shared_ptr<float[]> copy = std::move(shared).TakeWritable();
  copy[0] = 9.0f;
  EXPECT_EQ(other.ToFloats(), (std::vector<float>{1.0f, 2.0f})) << "a shared buffer is copied";
}

}  // namespace
}  // namespace troupe
