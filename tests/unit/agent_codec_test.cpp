// The agent protocol's frame codec and HMAC authentication (agent/): round trips of
// every envelope kind in any split, and every bad input a socket may bring.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "agent/agent_auth.hpp"
#include "agent/frame_codec.hpp"
#include "tests/unit/must.hpp"

namespace troupe::agent_wire {
namespace {

std::vector<agent::Envelope> OneOfEach() {
  std::vector<agent::Envelope> all(11);
  all[0].mutable_hello()->set_nonce(std::string(32, 'n'));
  agent::JobRequest* job = all[1].mutable_register_()->mutable_job();
  job->set_model("ResNet18");
  job->set_gpus(2);
  job->set_iterations(500);
  all[1].mutable_register_()->set_token(std::string(32, '\xff'));
  all[2].mutable_registered()->set_job_id(1000000);
  agent::LeaseGrant* g = all[3].mutable_lease_grant();
  g->set_round(7);
  g->set_valid_until_s(2400);
  agent::LeasePart* part = g->add_parts();
  part->add_gpu_ids(3);
  part->set_cpus(6);
  all[4].mutable_lease_end()->set_lost(true);
  all[5].mutable_progress()->set_iterations_done(12);
  all[6].mutable_checkpoint_done()->set_iterations_done(40);
  all[7].mutable_finished()->set_iterations_done(3);
  all[8].mutable_heartbeat()->set_sequence(99);
  all[9].mutable_error()->set_message("no");
  all[10].mutable_goodbye()->set_reason("job finished");
  return all;
}

std::string BigEndian(uint32_t v) {
  return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                     static_cast<char>(v >> 8), static_cast<char>(v)};
}

TEST(AgentCodecTest, EveryEnvelopeRoundTripsWhateverTheSplit) {
  std::string stream;
  const std::vector<agent::Envelope> sent = OneOfEach();
  for (const agent::Envelope& e : sent) stream += Must(Frame(e));
  for (size_t chunk : {size_t{1}, size_t{3}, size_t{7}, stream.size()}) {
    FrameDecoder decoder;
    std::vector<agent::Envelope> got;
    for (size_t i = 0; i < stream.size(); i += chunk) {
      ASSERT_TRUE(decoder.Feed(std::string_view(stream).substr(i, chunk), &got).ok());
    }
    ASSERT_EQ(got.size(), sent.size()) << "chunk " << chunk;
    for (size_t i = 0; i < sent.size(); ++i) {
      EXPECT_EQ(got[i].SerializeAsString(), sent[i].SerializeAsString()) << BodyName(sent[i]);
    }
    EXPECT_EQ(decoder.pending_bytes(), 0u);
    EXPECT_EQ(decoder.frames_decoded(), sent.size());
  }
}

TEST(AgentCodecTest, OversizedLengthIsRefusedBeforeReadingThePayload) {
  FrameDecoder decoder(1024);
  std::vector<agent::Envelope> got;
  const std::string heartbeat = Must(Frame(OneOfEach()[8]));
  Status s = decoder.Feed(heartbeat + BigEndian(1025), &got);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(got.size(), 1u);  // the good frame before it still counts
  EXPECT_NE(s.message().find("frame 1 (byte " + std::to_string(heartbeat.size()) + ")"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("over the limit of 1024"), std::string::npos) << s.message();
  // Sticky: the connection is to be closed, never resynchronised.
  EXPECT_FALSE(decoder.Feed(heartbeat, &got).ok());
  EXPECT_EQ(got.size(), 1u);
}

TEST(AgentCodecTest, DefaultLimitIsOneMebibyte) {
  FrameDecoder decoder;
  std::vector<agent::Envelope> got;
  EXPECT_FALSE(decoder.Feed(BigEndian((1 << 20) + 1), &got).ok());
  agent::Envelope big;
  big.mutable_error()->set_message(std::string(1 << 20, 'x'));
  std::string frame;
  EXPECT_FALSE(EncodeFrame(big, &frame).ok());
}

TEST(AgentCodecTest, GarbageZeroLengthAndEmptyEnvelopesAreErrors) {
  std::vector<agent::Envelope> got;
  FrameDecoder garbage;
  Status s = garbage.Feed(BigEndian(5) + "\xff\xff\xff\xff\xff", &got);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not an agent envelope"), std::string::npos) << s.message();
  FrameDecoder zero;
  s = zero.Feed(BigEndian(0), &got);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("length 0"), std::string::npos) << s.message();
  // A well-formed protobuf with only an unknown field: no body this protocol knows.
  FrameDecoder unknown;
  s = unknown.Feed(BigEndian(3) + std::string("\xf8\x01\x05", 3), &got);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no known body"), std::string::npos) << s.message();
  EXPECT_TRUE(got.empty());
}

TEST(AgentCodecTest, AnOversizedEnvelopeIsAStatusNotAFrame) {
  agent::Envelope error;
  error.mutable_error()->set_message(std::string(100, 'x'));
  const StatusOr<std::string> framed = Frame(error, 64);
  ASSERT_FALSE(framed.ok());
  EXPECT_EQ(framed.status().code(), Status::Code::kInvalidInput);
  EXPECT_NE(framed.status().message().find("over the limit of 64"), std::string::npos);
  EXPECT_TRUE(Frame(error).ok());
}

TEST(AgentCodecTest, TruncatedFrameWaitsThenIsReportedByDecodeOne) {
  const std::string frame = Must(Frame(OneOfEach()[1]));
  FrameDecoder decoder;
  std::vector<agent::Envelope> got;
  ASSERT_TRUE(decoder.Feed(std::string_view(frame).substr(0, frame.size() - 1), &got).ok());
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(decoder.pending_bytes(), frame.size() - 1);
  agent::Envelope one;
  Status s = DecodeOneFrame(std::string_view(frame).substr(0, frame.size() - 1), 1 << 20, &one);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("truncated"), std::string::npos);
  EXPECT_FALSE(DecodeOneFrame(frame + "x", 1 << 20, &one).ok());
  ASSERT_TRUE(DecodeOneFrame(frame, 1 << 20, &one).ok());
  EXPECT_EQ(one.register_().job().model(), "ResNet18");
}

TEST(AgentAuthTest, TokenIsHmacSha256OfTheNonce) {
  // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
  const std::string token = Must(AgentToken("Jefe", "what do ya want for nothing?"));
  static const unsigned char kExpected[] = {0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e,
                                            0x6a, 0x04, 0x24, 0x26, 0x08, 0x95, 0x75, 0xc7,
                                            0x5a, 0x00, 0x3f, 0x08, 0x9d, 0x27, 0x39, 0x83,
                                            0x9d, 0xec, 0x58, 0xb9, 0x64, 0xec, 0x38, 0x43};
  ASSERT_EQ(token.size(), kTokenBytes);
  EXPECT_EQ(token, std::string(reinterpret_cast<const char*>(kExpected), sizeof kExpected));
}

TEST(AgentAuthTest, OnlyTheRightSecretAndNonceMatch) {
  const std::string nonce = Must(MakeNonce());
  ASSERT_EQ(nonce.size(), kNonceBytes);
  EXPECT_NE(nonce, Must(MakeNonce()));
  const std::string token = Must(AgentToken("s3cret", nonce));
  EXPECT_TRUE(TokenMatches("s3cret", nonce, token));
  EXPECT_FALSE(TokenMatches("s3cret!", nonce, token));
  EXPECT_FALSE(TokenMatches("s3cret", Must(MakeNonce()), token));  // replayed on another connection
  EXPECT_FALSE(TokenMatches("s3cret", nonce, token.substr(0, 31)));
  EXPECT_FALSE(TokenMatches("s3cret", nonce, ""));
}

TEST(AgentAuthTest, SecretFileErrorsNameTheFile) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "troupe-agent-auth";
  std::filesystem::create_directories(dir);
  std::string secret;
  Status s = ReadSecretFile((dir / "missing").string(), &secret);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("missing"), std::string::npos);
  std::ofstream(dir / "empty") << "\n";
  s = ReadSecretFile((dir / "empty").string(), &secret);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("empty"), std::string::npos);
  std::ofstream(dir / "good") << "hunter2\n";
  ASSERT_TRUE(ReadSecretFile((dir / "good").string(), &secret).ok());
  EXPECT_EQ(secret, "hunter2");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace troupe::agent_wire
