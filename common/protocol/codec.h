// Message bodies as Boost.Serialization binary archives: bytes in, messages out, no sockets.
#pragma once

#include <exception>
#include <sstream>
#include <string>
#include <string_view>

#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>

#include "common/protocol/frame.h"
#include "common/protocol/messages.h"
#include "common/status.h"

namespace cohort::protocol {

// A received frame whose credential has been verified; the body is still undecoded.
struct Envelope {
    uint16_t type = 0;
    Credential cred;
    std::string body;
};

template <typename Message>
std::string encode_body(const Message& message) {
    std::ostringstream out;
    {
        boost::archive::binary_oarchive archive(out, boost::archive::no_header);
        archive << message;
    }
    return std::move(out).str();
}

template <typename Message>
std::string encode_message(const Message& message, const Credential& cred, std::string_view key) {
    return encode_frame(static_cast<uint16_t>(Message::kType), cred, encode_body(message), key);
}

// Decodes bytes made by encode_body; malformed bytes give kCorrupt, never a throw.
template <typename Value>
Result<Value> decode_body(std::string_view bytes, const char* what) {
    try {
        std::istringstream in{std::string(bytes)};
        boost::archive::binary_iarchive archive(in, boost::archive::no_header);
        Value value;
        archive >> value;
        return value;
    } catch (const std::exception& e) {
        return Status::corrupt(std::string("malformed ") + what + ": " + e.what());
    }
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

// The Status carried by an ErrorReply, or kCorrupt if the envelope is not one.
Status status_from_error(const Envelope& envelope);
ErrorReply error_from_status(const Status& status);

}  // namespace cohort::protocol
