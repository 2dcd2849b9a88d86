// Message bodies as Boost.Serialization binary archives: bytes in, messages out, no sockets.
#pragma once

#include <exception>
#include <sstream>
#include <streambuf>
#include <string>
#include <string_view>

#include <boost/archive/binary_oarchive.hpp>

#include "common/protocol/bounded_iarchive.h"
#include "common/protocol/frame.h"
#include "common/protocol/messages.h"
#include "common/status.h"

namespace cohort::protocol {

// A received frame whose credential has been verified; the body is still undecoded.
struct Envelope {
    uint16_t type = 0;
    Credential cred;
    std::string body;
    bool by_munge = false;  // vouched for by MUNGE (a user's command), not the cluster key
};

template <typename Message>
std::string encode_body(const Message& message) {
    std::ostringstream out;
    {
        boost::archive::binary_oarchive archive(
                out, boost::archive::no_header | boost::archive::no_codecvt);
        archive << message;
    }
    return std::move(out).str();
}

template <typename Message>
std::string encode_message(const Message& message, const Credential& cred, std::string_view key) {
    return encode_frame(static_cast<uint16_t>(Message::kType), cred, encode_body(message), key);
}

// Decodes bytes made by encode_body into `value`, reusing the vectors and strings it holds:
// the frames of a long listing, decoded one after another into one value, allocate almost
// nothing. Malformed bytes give kCorrupt, never a throw.
template <typename Value>
Status decode_body_into(std::string_view bytes, const char* what, Value& value) {
    try {
        BodyBuffer buffer(bytes);
        BoundedIArchive archive(buffer);
        archive >> value;
        return Status::ok();
    } catch (const std::exception& e) {
        return Status::corrupt(std::string("malformed ") + what + ": " + e.what());
    }
}

// Decodes bytes made by encode_body; malformed bytes give kCorrupt, never a throw.
template <typename Value>
Result<Value> decode_body(std::string_view bytes, const char* what) {
    Value value;
    if (Status decoded = decode_body_into(bytes, what, value); !decoded) {
        return decoded;
    }
    return value;
}

// Decodes a verified body of the expected type.
template <typename Message>
Result<Message> decode_message(const Envelope& envelope) {
    if (envelope.type != static_cast<uint16_t>(Message::kType)) {
        return Status::corrupt(std::string("expected a ")
                               + message_type_name(static_cast<uint16_t>(Message::kType))
                               + " message, got " + message_type_name(envelope.type));
    }
    return decode_body<Message>(envelope.body, message_type_name(envelope.type));
}

// decode_message into `message`, reusing what it holds (see decode_body_into).
template <typename Message>
Status decode_message_into(const Envelope& envelope, Message& message) {
    if (envelope.type != static_cast<uint16_t>(Message::kType)) {
        return Status::corrupt(std::string("expected a ")
                               + message_type_name(static_cast<uint16_t>(Message::kType))
                               + " message, got " + message_type_name(envelope.type));
    }
    return decode_body_into(envelope.body, message_type_name(envelope.type), message);
}

// The Status carried by an ErrorReply, or kCorrupt if the envelope is not one.
Status status_from_error(const Envelope& envelope);
ErrorReply error_from_status(const Status& status);

}  // namespace cohort::protocol
