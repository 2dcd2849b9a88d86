// Status and Result<T>: errors as values that carry the offending value and what is accepted.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace cohort {

enum class StatusCode {
    kOk,
    kInvalidArgument,  // bad user input: names the field, the value and what is accepted
    kNotFound,
    kPermissionDenied,
    kUnavailable,  // not now: retry later
    kInfeasible,   // never: no configuration can satisfy it
    kCorrupt,      // bad bytes from the wire or from disk
    kIoError,
    kInternal,
};

class Status {
public:
    Status() = default;

    Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

    static Status ok() { return {}; }

    static Status invalid(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }

    static Status not_found(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }

    static Status denied(std::string m) { return {StatusCode::kPermissionDenied, std::move(m)}; }

    static Status unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }

    static Status infeasible(std::string m) { return {StatusCode::kInfeasible, std::move(m)}; }

    static Status corrupt(std::string m) { return {StatusCode::kCorrupt, std::move(m)}; }

    static Status io_error(std::string m) { return {StatusCode::kIoError, std::move(m)}; }

    static Status internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

    bool is_ok() const { return code_ == StatusCode::kOk; }

    explicit operator bool() const { return is_ok(); }

    StatusCode code() const { return code_; }

    const std::string& message() const { return message_; }

    // Prefixes the message with where the problem was found, e.g. "--time: ".
    Status with_context(const std::string& where) const {
        if (is_ok()) {
            return *this;
        }
        return {code_, where + ": " + message_};
    }

private:
    StatusCode code_ = StatusCode::kOk;
    std::string message_;
};

// A value or the Status explaining why there is none.
template <typename T>
class Result {
public:
    Result(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)

    Result(Status status) : status_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

    bool is_ok() const { return value_.has_value(); }

    explicit operator bool() const { return is_ok(); }

    const Status& status() const { return status_; }

    T& value() & { return *value_; }

    const T& value() const& { return *value_; }

    T&& value() && { return std::move(*value_); }

    T* operator->() { return &*value_; }

    const T* operator->() const { return &*value_; }

    T& operator*() & { return *value_; }

    const T& operator*() const& { return *value_; }

private:
    std::optional<T> value_;
    Status status_;
};

}  // namespace cohort
