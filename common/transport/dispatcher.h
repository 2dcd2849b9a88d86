// Routes verified frames to the handler registered for their message type. Each message
// struct names its wire type (kType), so a handler is registered by the struct alone; the
// body is decoded once here, and an unknown type or a malformed body goes to one reject
// callback instead of to every handler.
#pragma once

#include <functional>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "common/protocol/codec.h"
#include "common/status.h"

namespace cohort::transport {

// `Context...` is what the caller knows besides the frame (the connection it came on, a
// node index) and is passed to every handler ahead of the message. A handler takes either
// (Context..., Message) or (Context..., const protocol::Credential&, Message).
template <typename... Context>
class Dispatcher {
public:
    // Called for a frame no handler takes or whose body does not decode; `why` names it.
    using Reject = std::function<void(Context..., const Status& why)>;
    // Runs a decoded call elsewhere, e.g. `asio::post(strand, call)`.
    using Post = std::function<void(std::function<void()> call)>;

    explicit Dispatcher(Reject reject, Post post = nullptr)
        : reject_(std::move(reject)), post_(std::move(post)) {}

    // Handlers refer to this object: it stays where it was made.
    Dispatcher(const Dispatcher&) = delete;
    Dispatcher& operator=(const Dispatcher&) = delete;

    // Registers `handler` for `Message`; it runs through `post` when one was given.
    template <typename Message, typename Handler>
    Dispatcher& on(Handler handler) {
        return add<Message>(std::move(handler), true, false);
    }

    // As on(), for messages only daemons send: a frame a user's MUNGE credential vouches for
    // is rejected, whatever its uid (node registrations, heartbeats, job reports).
    template <typename Message, typename Handler>
    Dispatcher& on_daemon(Handler handler) {
        return add<Message>(std::move(handler), true, true);
    }

    // Registers `handler` for `Message` to run at once, on the thread that dispatches, for
    // handlers that must not wait for the posted queue (they synchronize themselves).
    template <typename Message, typename Handler>
    Dispatcher& on_caller(Handler handler) {
        return add<Message>(std::move(handler), false, false);
    }

    // As on_caller(), for messages only daemons send.
    template <typename Message, typename Handler>
    Dispatcher& on_daemon_caller(Handler handler) {
        return add<Message>(std::move(handler), false, true);
    }

    void dispatch(Context... context, protocol::Envelope envelope) const {
        auto handler = handlers_.find(envelope.type);
        if (handler == handlers_.end()) {
            reject_(context..., Status::invalid(std::string("unexpected message ")
                                                + protocol::message_type_name(envelope.type)));
            return;
        }
        handler->second(context..., envelope);
    }

private:
    template <typename Message, typename Handler>
    Dispatcher& add(Handler handler, bool posted, bool daemons_only) {
        constexpr bool kWithCredential =
                std::is_invocable_v<Handler&, Context..., const protocol::Credential&, Message>;
        static_assert(kWithCredential || std::is_invocable_v<Handler&, Context..., Message>,
                      "a handler takes (Context..., [const Credential&,] Message)");
        handlers_[static_cast<uint16_t>(Message::kType)] =
                [this, handler = std::move(handler), posted, daemons_only](
                        Context... context, const protocol::Envelope& envelope) {
                    if (daemons_only && envelope.by_munge) {
                        reject_(context...,
                                Status::denied(
                                        std::string(protocol::message_type_name(envelope.type))
                                        + " is for daemons holding the cluster key, "
                                          "not for users' MUNGE credentials"));
                        return;
                    }
                    auto message = protocol::decode_message<Message>(envelope);
                    if (!message) {
                        reject_(context..., message.status());
                        return;
                    }
                    auto call = [handler,
                                 saved = std::make_tuple(std::decay_t<Context>(context)...),
                                 cred = envelope.cred, body = std::move(*message)]() mutable {
                        std::apply(
                                [&](auto&... args) {
                                    if constexpr (kWithCredential) {
                                        handler(args..., cred, std::move(body));
                                    } else {
                                        handler(args..., std::move(body));
                                    }
                                },
                                saved);
                    };
                    if (posted && post_) {
                        post_(std::move(call));
                    } else {
                        call();
                    }
                };
        return *this;
    }

    std::unordered_map<uint16_t, std::function<void(Context..., const protocol::Envelope&)>>
            handlers_;
    Reject reject_;
    Post post_;
};

}  // namespace cohort::transport
