// Frames vouched for by MUNGE, against a real munged: what is accepted, and each way a
// credential is refused (altered, replayed, moved to another message, forged, expired,
// claiming another uid, from an untrusted sender, where the other scheme is expected).
#include "common/protocol/frame_auth.h"

#include <thread>

#include <gtest/gtest.h>
#include <unistd.h>

#include "common/protocol/codec.h"
#include "common/protocol/munge_credential.h"
#include "tests/fixtures/private_munged.h"

namespace cohort::protocol {
namespace {

const std::string kClusterKey = "fedcba9876543210fedcba9876543210";

// A received frame as a connection splits it: header, credential, body.
struct Received {
    FrameHeader header;
    std::string header_bytes;
    std::string credential;
    std::string body;
};

Received parts_of(const std::string& frame) {
    Received out;
    out.header_bytes = frame.substr(0, kHeaderSize);
    auto header = decode_header(out.header_bytes);
    EXPECT_TRUE(header) << header.status().message();
    out.header = header ? *header : FrameHeader{};
    out.credential = frame.substr(kHeaderSize, out.header.credential_len);
    out.body = frame.substr(kHeaderSize + out.header.credential_len);
    return out;
}

Result<Credential> verified(const FrameAuth& auth, const Received& frame) {
    return auth.verify(frame.header, frame.header_bytes, frame.credential, frame.body);
}

Credential me() {
    return {static_cast<uint32_t>(getuid()), static_cast<uint32_t>(getgid())};
}

class FrameAuthTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (!munged_.ready()) {
            GTEST_SKIP() << munged_.why_not();
        }
    }

    std::string munge_frame(const AckReply& message, Credential cred) const {
        auto frame = client().encode(static_cast<uint16_t>(AckReply::kType), cred,
                                     encode_body(message), true);
        EXPECT_TRUE(frame) << frame.status().message();
        return frame ? *frame : std::string();
    }

    FrameAuth server() const { return FrameAuth::key_or_munge(kClusterKey, munged_.socket()); }

    FrameAuth client() const { return FrameAuth::munge_client(munged_.socket(), {me().uid}); }

    testing::PrivateMunged munged_;
};

TEST_F(FrameAuthTest, AMungeFrameVouchesForItsSendersUidAndGid) {
    const Received frame = parts_of(munge_frame(AckReply{"hello"}, me()));
    EXPECT_GT(frame.header.credential_len, 0u);
    auto sender = verified(server(), frame);
    ASSERT_TRUE(sender) << sender.status().message();
    EXPECT_EQ(sender->uid, me().uid);
    EXPECT_EQ(sender->gid, me().gid);
    // The server still takes its daemons' frames signed with the key.
    EXPECT_TRUE(verified(server(), parts_of(encode_frame(1, {0, 0}, "x", kClusterKey))));
}

TEST_F(FrameAuthTest, AnAlteredBodyIsRefused) {
    Received frame = parts_of(munge_frame(AckReply{"hello"}, me()));
    frame.body.back() ^= 1;
    auto sender = verified(server(), frame);
    ASSERT_FALSE(sender);
    EXPECT_NE(sender.status().message().find("made for another frame"), std::string::npos)
            << sender.status().message();
}

TEST_F(FrameAuthTest, ACredentialDecodesOnceOnly) {
    const Received frame = parts_of(munge_frame(AckReply{"hello"}, me()));
    ASSERT_TRUE(verified(server(), frame));
    auto again = verified(server(), frame);
    ASSERT_FALSE(again);
    EXPECT_NE(again.status().message().find("replayed"), std::string::npos)
            << again.status().message();
}

TEST_F(FrameAuthTest, ACredentialMovedToAnotherMessageTypeIsRefused) {
    const Received ack = parts_of(munge_frame(AckReply{"x"}, me()));
    // The same credential and body on a frame of another type (a submission).
    const std::string forged = encode_credentialed_frame(
            static_cast<uint16_t>(MessageType::kSubmitJob), me(), ack.body, ack.credential);
    auto sender = verified(server(), parts_of(forged));
    ASSERT_FALSE(sender);
    EXPECT_NE(sender.status().message().find("made for another frame"), std::string::npos)
            << sender.status().message();
}

TEST_F(FrameAuthTest, AForgedCredentialIsRefused) {
    const std::string forged =
            encode_credentialed_frame(static_cast<uint16_t>(AckReply::kType), me(), "x",
                                      "MUNGE:AwQFAAB0aGlzIGlzIG5vdCBhIGNyZWRlbnRpYWw=:");
    auto sender = verified(server(), parts_of(forged));
    ASSERT_FALSE(sender);
    EXPECT_EQ(sender.status().code(), StatusCode::kPermissionDenied) << sender.status().message();
}

TEST_F(FrameAuthTest, AnExpiredCredentialIsRefused) {
    const std::string body = encode_body(AckReply{"late"});
    const auto digest = frame_digest(static_cast<uint16_t>(AckReply::kType), me(), body);
    auto credential = munge_encode(
            munged_.socket(),
            std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()), 1);
    ASSERT_TRUE(credential) << credential.status().message();
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    auto sender = verified(
            server(), parts_of(encode_credentialed_frame(static_cast<uint16_t>(AckReply::kType),
                                                         me(), body, *credential)));
    ASSERT_FALSE(sender);
    EXPECT_NE(sender.status().message().find("expired"), std::string::npos)
            << sender.status().message();
}

TEST_F(FrameAuthTest, AFrameClaimingAnotherUidThanItsCredentialIsRefused) {
    // The credential is made for the frame's digest, uid included: claim root, vouch for me.
    const Credential claimed{me().uid + 1, me().gid};
    auto sender = verified(server(), parts_of(munge_frame(AckReply{"x"}, claimed)));
    ASSERT_FALSE(sender);
    EXPECT_NE(sender.status().message().find("vouches for uid"), std::string::npos)
            << sender.status().message();
}

TEST_F(FrameAuthTest, EachEndTakesOnlyTheSchemesItKnows) {
    const std::string munge = munge_frame(AckReply{"x"}, me());
    auto by_key_only = verified(FrameAuth(kClusterKey), parts_of(munge));
    ASSERT_FALSE(by_key_only);
    EXPECT_NE(by_key_only.status().message().find("does not take"), std::string::npos);
    auto keyless = verified(client(), parts_of(encode_frame(1, me(), "x", kClusterKey)));
    ASSERT_FALSE(keyless);
    EXPECT_NE(keyless.status().message().find("does not hold"), std::string::npos);
    // A client takes replies from the daemons' users only.
    const FrameAuth picky = FrameAuth::munge_client(munged_.socket(), {me().uid + 1});
    auto untrusted = verified(picky, parts_of(munge));
    ASSERT_FALSE(untrusted);
    EXPECT_NE(untrusted.status().message().find("not one the daemons run as"), std::string::npos)
            << untrusted.status().message();
}

TEST(MungeCredential, AnUnreachableMungedIsUnavailableNotDenied) {
    auto credential = munge_encode("/nonexistent/munge.socket", "x");
    ASSERT_FALSE(credential);
    EXPECT_EQ(credential.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(credential.status().message().find("/nonexistent/munge.socket"), std::string::npos);
}

}  // namespace
}  // namespace cohort::protocol
