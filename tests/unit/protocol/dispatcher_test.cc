// The typed dispatcher: a frame reaches the handler of its type, decoded once, with the
// caller's context and, where the handler asks for it, the sender's credential; anything
// else reaches the reject callback and no handler.
#include "common/transport/dispatcher.h"

#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace cohort::transport {
namespace {

template <typename Message>
protocol::Envelope envelope_of(const Message& message, protocol::Credential cred = {}) {
    return {static_cast<uint16_t>(Message::kType), cred, protocol::encode_body(message)};
}

TEST(Dispatcher, CallsTheHandlerOfTheTypeWithContextAndCredential) {
    std::vector<std::string> calls;
    Dispatcher<int> dispatcher([&](int, const Status& why) { calls.push_back(why.message()); });
    dispatcher.on<protocol::JobControlRequest>(
            [&](int node, const protocol::Credential& cred, const protocol::JobControlRequest& m) {
                calls.push_back(fmt::format("control {} from uid {} on {}", m.job_ids.at(0),
                                            cred.uid, node));
            });
    dispatcher.on<protocol::HeartbeatMessage>([&](int node, protocol::HeartbeatMessage m) {
        calls.push_back(fmt::format("heartbeat {} on {}", m.node, node));
    });

    protocol::JobControlRequest control;
    control.job_ids = {42};
    dispatcher.dispatch(3, envelope_of(control, {1000, 1000}));
    protocol::HeartbeatMessage heartbeat;
    heartbeat.node = "n1";
    dispatcher.dispatch(7, envelope_of(heartbeat));

    EXPECT_EQ(calls,
              (std::vector<std::string>{"control 42 from uid 1000 on 3", "heartbeat n1 on 7"}));
}

// A user's MUNGE credential cannot pass for a daemon: heartbeats, registrations and job
// reports are taken only from frames the cluster key vouched for, whatever the uid.
TEST(Dispatcher, DaemonMessagesVouchedForByMungeAreRejected) {
    std::vector<std::string> rejected;
    int handled = 0;
    Dispatcher<> dispatcher([&](const Status& why) { rejected.push_back(why.message()); });
    dispatcher.on_daemon<protocol::HeartbeatMessage>(
            [&](const protocol::HeartbeatMessage&) { ++handled; });

    dispatcher.dispatch(envelope_of(protocol::HeartbeatMessage{}));
    protocol::Envelope from_user = envelope_of(protocol::HeartbeatMessage{}, {0, 0});
    from_user.by_munge = true;
    dispatcher.dispatch(from_user);

    EXPECT_EQ(handled, 1);
    ASSERT_EQ(rejected.size(), 1u);
    EXPECT_EQ(rejected[0],
              "Heartbeat is for daemons holding the cluster key, not for users' MUNGE "
              "credentials");
}

TEST(Dispatcher, RejectsUnknownTypesAndMalformedBodiesWithoutCallingHandlers) {
    std::vector<std::string> rejected;
    int handled = 0;
    Dispatcher<> dispatcher([&](const Status& why) { rejected.push_back(why.message()); });
    dispatcher.on<protocol::HeartbeatMessage>(
            [&](const protocol::HeartbeatMessage&) { ++handled; });

    dispatcher.dispatch(envelope_of(protocol::AckReply{}));
    protocol::Envelope truncated = envelope_of(protocol::HeartbeatMessage{});
    truncated.body = truncated.body.substr(0, 2);
    dispatcher.dispatch(truncated);

    EXPECT_EQ(handled, 0);
    ASSERT_EQ(rejected.size(), 2u);
    EXPECT_EQ(rejected[0], "unexpected message Ack");
    EXPECT_NE(rejected[1].find("malformed Heartbeat"), std::string::npos) << rejected[1];
}

TEST(Dispatcher, PostsHandlersButRunsCallerHandlersAtOnce) {
    std::vector<std::function<void()>> queue;
    std::vector<std::string> calls;
    Dispatcher<> dispatcher([](const Status&) { FAIL() << "nothing is rejected"; },
                            [&](std::function<void()> call) { queue.push_back(std::move(call)); });
    dispatcher.on<protocol::HeartbeatMessage>(
            [&](const protocol::HeartbeatMessage&) { calls.push_back("posted"); });
    dispatcher.on_caller<protocol::AckReply>(
            [&](const protocol::AckReply&) { calls.push_back("at once"); });

    dispatcher.dispatch(envelope_of(protocol::HeartbeatMessage{}));
    dispatcher.dispatch(envelope_of(protocol::AckReply{}));
    EXPECT_EQ(calls, (std::vector<std::string>{"at once"}));
    ASSERT_EQ(queue.size(), 1u);
    queue.front()();
    EXPECT_EQ(calls, (std::vector<std::string>{"at once", "posted"}));
}

}  // namespace
}  // namespace cohort::transport
