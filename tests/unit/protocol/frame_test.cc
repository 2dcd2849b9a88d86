// Frames: round trips, and every way a frame is refused before its body is decoded.
#include <gtest/gtest.h>

#include "common/protocol/codec.h"

namespace cohort::protocol {
namespace {

const std::string kKey = "0123456789abcdef0123456789abcdef";

struct Split {
    std::string header;
    std::string body;
};

Split split(const std::string& frame) {
    return {frame.substr(0, kHeaderSize), frame.substr(kHeaderSize)};
}

Result<Envelope> receive(const std::string& frame, const std::string& key = kKey) {
    if (frame.size() < kHeaderSize) {
        return Status::corrupt("truncated frame header");
    }
    auto parts = split(frame);
    auto header = decode_header(parts.header);
    if (!header) {
        return header.status();
    }
    if (Status ok = verify_frame(*header, parts.header, parts.body, key); !ok) {
        return ok;
    }
    return Envelope{header->type, {header->uid, header->gid}, parts.body};
}

std::string hex(const std::array<unsigned char, kMacSize>& bytes) {
    static const char* kDigits = "0123456789abcdef";
    std::string out;
    for (unsigned char b : bytes) {
        out += kDigits[b >> 4];
        out += kDigits[b & 15];
    }
    return out;
}

TEST(Hmac, MatchesRfc4231Vectors) {
    EXPECT_EQ(hex(hmac_sha256(std::string(20, '\x0b'), "Hi There")),
              "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    EXPECT_EQ(hex(hmac_sha256("Jefe", "what do ya want for nothing?")),
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    // A key longer than the block size is hashed first.
    EXPECT_EQ(hex(hmac_sha256(std::string(131, '\xaa'),
                              "Test Using Larger Than Block-Size Key - Hash Key First")),
              "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(Frame, SubmitRoundTripKeepsEveryField) {
    SubmitJobRequest request;
    request.spec.name = "train";
    request.spec.nodes_min = 2;
    request.spec.ntasks = 8;
    request.spec.time_limit_s = 3600;
    request.spec.env = {{"A", "1"}, {"PATH", "/bin"}};
    request.spec.script = "#!/bin/sh\necho hi\n";
    std::string frame = encode_message(request, {1000, 100}, kKey);
    auto envelope = receive(frame);
    ASSERT_TRUE(envelope) << envelope.status().message();
    EXPECT_EQ(envelope->cred.uid, 1000u);
    EXPECT_EQ(envelope->cred.gid, 100u);
    auto decoded = decode_message<SubmitJobRequest>(*envelope);
    ASSERT_TRUE(decoded) << decoded.status().message();
    EXPECT_EQ(decoded->spec.name, "train");
    EXPECT_EQ(decoded->spec.nodes_min, 2u);
    EXPECT_EQ(decoded->spec.ntasks, 8u);
    EXPECT_EQ(decoded->spec.time_limit_s, 3600);
    EXPECT_EQ(decoded->spec.env.size(), 2u);
    EXPECT_EQ(decoded->spec.script, request.spec.script);
}

TEST(Frame, JobRecordRoundTrip) {
    JobListReply reply;
    JobRecord job;
    job.job_id = 42;
    job.state = JobState::kTimeout;
    job.nodes = {"node1", "node2"};
    job.tasks_per_node = {2, 2};
    reply.jobs.push_back(job);
    auto envelope = receive(encode_message(reply, {0, 0}, kKey));
    ASSERT_TRUE(envelope);
    auto decoded = decode_message<JobListReply>(*envelope);
    ASSERT_TRUE(decoded);
    ASSERT_EQ(decoded->jobs.size(), 1u);
    EXPECT_EQ(decoded->jobs[0].job_id, 42u);
    EXPECT_EQ(decoded->jobs[0].state, JobState::kTimeout);
    EXPECT_EQ(decoded->jobs[0].nodes, job.nodes);
}

// A columns-only listing carries what squeue's columns show and nothing else; a frame that
// claims more jobs than one holds is refused before any is read.
TEST(Frame, ColumnsOnlyJobListKeepsTheColumnsFields) {
    JobListReply reply;
    reply.columns_only = true;
    JobRecord job;
    job.job_id = 7;
    job.spec.name = "train";
    job.spec.cwd = "/home/a";
    job.user_name = "alice";
    job.partition = "gpu";
    job.state = JobState::kRunning;
    job.nodes = {"node1"};
    job.cpus_per_node = {8};
    job.time_limit_s = 600;
    job.array_job_id = 5;
    job.array_task_id = 2;
    job.exit_code = 3;
    reply.jobs.assign(2, job);
    auto envelope = receive(encode_message(reply, {0, 0}, kKey));
    ASSERT_TRUE(envelope);
    auto decoded = decode_message<JobListReply>(*envelope);
    ASSERT_TRUE(decoded) << decoded.status().message();
    ASSERT_EQ(decoded->jobs.size(), 2u);
    const JobRecord& got = decoded->jobs[1];
    EXPECT_EQ(got.display_id(), "5_2");
    EXPECT_EQ(got.spec.name, "train");
    EXPECT_EQ(got.user_name, "alice");
    EXPECT_EQ(got.partition, "gpu");
    EXPECT_EQ(got.state, JobState::kRunning);
    EXPECT_EQ(got.nodes, job.nodes);
    EXPECT_EQ(got.cpus_per_node, job.cpus_per_node);
    EXPECT_EQ(got.time_limit_s, 600);
    EXPECT_EQ(got.spec.cwd, "");  // not a column's field
    EXPECT_EQ(got.exit_code, 0);
    const size_t columns_bytes = encode_body(reply).size();
    reply.columns_only = false;
    EXPECT_LT(columns_bytes * 2, encode_body(reply).size());

    JobListReply forged;
    forged.columns_only = true;
    forged.jobs.resize(JobListReply::kJobsPerFrame + 1);
    auto refused = decode_body<JobListReply>(encode_body(forged), "job list");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.status().code(), StatusCode::kCorrupt);
    EXPECT_NE(refused.status().message().find("more than "
                                              + std::to_string(JobListReply::kJobsPerFrame)),
              std::string::npos)
            << refused.status().message();
}

TEST(Frame, RejectsBadMagic) {
    std::string frame = encode_message(AckReply{"x"}, {0, 0}, kKey);
    frame[0] = 'X';
    auto result = receive(frame);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.status().code(), StatusCode::kCorrupt);
    EXPECT_NE(result.status().message().find("magic"), std::string::npos);
}

TEST(Frame, RejectsUnknownVersion) {
    std::string frame = encode_message(AckReply{"x"}, {0, 0}, kKey);
    frame[4] = 9;
    auto result = receive(frame);
    ASSERT_FALSE(result);
    EXPECT_NE(result.status().message().find("version 9"), std::string::npos);
}

TEST(Frame, RejectsUnknownMessageType) {
    std::string frame = encode_frame(999, {0, 0}, "", kKey);
    auto result = receive(frame);
    ASSERT_FALSE(result);
    EXPECT_NE(result.status().message().find("unknown message type 999"), std::string::npos);
}

TEST(Frame, RejectsOverLimitLengthBeforeReadingTheBody) {
    std::string frame = encode_message(AckReply{"x"}, {0, 0}, kKey);
    uint32_t huge = kMaxBodySize + 1;
    for (int i = 0; i < 4; ++i) {
        frame[8 + i] = static_cast<char>((huge >> (8 * i)) & 0xff);
    }
    auto header = decode_header(frame.substr(0, kHeaderSize));
    ASSERT_FALSE(header);
    EXPECT_NE(header.status().message().find("exceeds the limit"), std::string::npos);
}

TEST(Frame, RejectsOverLimitCredentialBeforeReadingIt) {
    std::string frame = encode_message(AckReply{"x"}, {0, 0}, kKey);
    const uint32_t huge = kMaxCredentialSize + 1;
    for (int i = 0; i < 4; ++i) {
        frame[20 + i] = static_cast<char>((huge >> (8 * i)) & 0xff);
    }
    auto header = decode_header(frame.substr(0, kHeaderSize));
    ASSERT_FALSE(header);
    EXPECT_NE(header.status().message().find("credential of"), std::string::npos);
}

// A signed frame extended after signing: more body, its length raised to match.
TEST(Frame, RejectsABodyExtendedAfterSigning) {
    std::string frame = encode_message(AckReply{"hello"}, {0, 0}, kKey);
    frame += "more";
    const uint32_t longer = static_cast<uint32_t>(frame.size() - kHeaderSize);
    for (int i = 0; i < 4; ++i) {
        frame[8 + i] = static_cast<char>((longer >> (8 * i)) & 0xff);
    }
    auto result = receive(frame);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.status().code(), StatusCode::kPermissionDenied);
}

TEST(Frame, RejectsTruncatedHeaderAndBody) {
    std::string frame = encode_message(AckReply{"hello"}, {0, 0}, kKey);
    EXPECT_FALSE(decode_header(frame.substr(0, kHeaderSize - 1)));
    auto parts = split(frame);
    auto header = decode_header(parts.header);
    ASSERT_TRUE(header);
    Status truncated = verify_frame(*header, parts.header, parts.body.substr(1), kKey);
    EXPECT_EQ(truncated.code(), StatusCode::kCorrupt);
}

TEST(Frame, RejectsWrongKey) {
    std::string frame = encode_message(AckReply{"x"}, {0, 0}, kKey);
    auto result = receive(frame, "another-key-another-key-another!");
    ASSERT_FALSE(result);
    EXPECT_EQ(result.status().code(), StatusCode::kPermissionDenied);
}

TEST(Frame, RejectsForgedUid) {
    std::string frame = encode_message(AckReply{"x"}, {1000, 1000}, kKey);
    frame[12] = 0;  // claim uid 0 without re-signing
    frame[13] = 0;
    auto result = receive(frame);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.status().code(), StatusCode::kPermissionDenied);
}

TEST(Frame, RejectsAlteredBody) {
    std::string frame = encode_message(AckReply{"hello"}, {0, 0}, kKey);
    frame.back() ^= 0x01;
    EXPECT_FALSE(receive(frame));
}

TEST(Codec, MalformedBodyIsAnErrorNotACrash) {
    // A correctly signed frame whose body is garbage: decoding fails cleanly.
    for (const std::string& body : {std::string(""), std::string("\x01"), std::string(64, '\xff'),
                                    std::string("\xff\xff\xff\xff\xff\xff\xff\x7f")}) {
        std::string frame =
                encode_frame(static_cast<uint16_t>(MessageType::kSubmitJob), {0, 0}, body, kKey);
        auto envelope = receive(frame);
        ASSERT_TRUE(envelope);
        auto decoded = decode_message<SubmitJobRequest>(*envelope);
        EXPECT_FALSE(decoded);
        EXPECT_EQ(decoded.status().code(), StatusCode::kCorrupt);
    }
}

// A length or count prefix larger than the bytes that follow is refused before anything is
// allocated for it: Boost's own archive would resize to it (terabytes from 14 bytes, as
// tests/fuzz/fuzz_messages found).
TEST(Codec, AForgedLengthAllocatesNothing) {
    // After the class's 5 bytes of archive information: the string's 8-byte length.
    std::string huge_string = encode_body(AckReply{"ok"});
    huge_string.replace(5, 8, std::string("\x00\x00\x00\x00\x01\xff\x00\x00", 8));
    auto text = decode_body<AckReply>(huge_string, "AckReply");
    ASSERT_FALSE(text);
    EXPECT_NE(text.status().message().find("a length beyond the bytes left"), std::string::npos)
            << text.status().message();

    NodeFaultReport empty;
    std::string huge_vector = encode_body(std::vector<NodeFaultReport>{empty});
    huge_vector.replace(5, 8, std::string("\x00\x00\x00\x40\x00\x00\x00\x00", 8));
    auto items = decode_body<std::vector<NodeFaultReport>>(huge_vector, "reports");
    ASSERT_FALSE(items);
    EXPECT_EQ(items.status().code(), StatusCode::kCorrupt);

    // What is really there still decodes, into a value whose vectors are reused.
    std::vector<NodeFaultReport> reused(5);
    ASSERT_TRUE(decode_body_into(encode_body(std::vector<NodeFaultReport>{empty, empty}), "reports",
                                 reused));
    EXPECT_EQ(reused.size(), 2u);
}

TEST(Codec, TypeMismatchIsRefused) {
    auto envelope = receive(encode_message(AckReply{"x"}, {0, 0}, kKey));
    ASSERT_TRUE(envelope);
    auto decoded = decode_message<SubmitJobRequest>(*envelope);
    ASSERT_FALSE(decoded);
    EXPECT_NE(decoded.status().message().find("expected a SubmitJob"), std::string::npos);
}

TEST(Codec, ErrorReplyCarriesTheStatus) {
    Status original = Status::invalid("--time: invalid time 'x'");
    auto envelope = receive(encode_message(error_from_status(original), {0, 0}, kKey));
    ASSERT_TRUE(envelope);
    Status status = status_from_error(*envelope);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(status.message(), original.message());
}

}  // namespace
}  // namespace cohort::protocol
