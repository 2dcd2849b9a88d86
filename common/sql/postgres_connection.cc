#include "common/sql/postgres_connection.h"

#include <cstdlib>

#include <fmt/format.h>

namespace cohort::sql {
namespace {

class PostgresRow final : public SqlRow {
public:
    explicit PostgresRow(const PGresult* result) : result_(result) {}

    int64_t integer(int column) const override {
        return std::strtoll(PQgetvalue(result_, 0, column), nullptr, 10);
    }

    double real(int column) const override {
        return std::strtod(PQgetvalue(result_, 0, column), nullptr);
    }

    std::string text(int column) const override {
        return {PQgetvalue(result_, 0, column),
                static_cast<size_t>(PQgetlength(result_, 0, column))};
    }

    // BYTEA in text form is "\\x" and two hex digits a byte.
    std::string blob(int column) const override {
        const char* text = PQgetvalue(result_, 0, column);
        const size_t length = static_cast<size_t>(PQgetlength(result_, 0, column));
        std::string bytes;
        if (length < 2 || text[0] != '\\' || text[1] != 'x') {
            return bytes;
        }
        bytes.reserve((length - 2) / 2);
        auto nibble = [](char c) {
            return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
        };
        for (size_t i = 2; i + 1 < length; i += 2) {
            bytes.push_back(static_cast<char>(nibble(text[i]) << 4 | nibble(text[i + 1])));
        }
        return bytes;
    }

private:
    const PGresult* result_;
};

std::string as_text(const SqlValue& value) {
    if (const auto* integer = std::get_if<int64_t>(&value)) {
        return std::to_string(*integer);
    }
    if (const auto* real = std::get_if<double>(&value)) {
        return fmt::format("{}", *real);
    }
    if (const auto* blob = std::get_if<SqlBlob>(&value)) {
        static const char kHex[] = "0123456789abcdef";
        std::string text = "\\x";
        text.reserve(2 + 2 * blob->bytes.size());
        for (unsigned char byte : blob->bytes) {
            text.push_back(kHex[byte >> 4]);
            text.push_back(kHex[byte & 15]);
        }
        return text;
    }
    return std::get<std::string>(value);
}

void ignore_notice(void* /*arg*/, const char* /*message*/) {}

}  // namespace

Result<std::unique_ptr<PostgresConnection>> PostgresConnection::open(const std::string& uri,
                                                                     LostSession on_lost) {
    PGconn* conn = PQconnectdb(uri.c_str());
    if (PQstatus(conn) != CONNECTION_OK) {
        std::string why = conn ? PQerrorMessage(conn) : "out of memory";
        while (!why.empty() && why.back() == '\n') {
            why.pop_back();
        }
        PQfinish(conn);
        return Status::unavailable("accounting database " + uri + ": " + why);
    }
    PQsetNoticeProcessor(conn, ignore_notice, nullptr);
    return std::unique_ptr<PostgresConnection>(new PostgresConnection(uri, conn, on_lost));
}

PostgresConnection::~PostgresConnection() {
    PQfinish(conn_);
}

Status PostgresConnection::error(const std::string& what) const {
    std::string why = PQerrorMessage(conn_);
    while (!why.empty() && why.back() == '\n') {
        why.pop_back();
    }
    return Status::io_error("postgresql " + what + ": " + why);
}

Status PostgresConnection::reconnect_if_lost() {
    if (PQstatus(conn_) == CONNECTION_OK) {
        return Status::ok();
    }
    if (on_lost_ == LostSession::kFail) {
        return Status::unavailable("postgresql: the session to " + uri_ + " is lost");
    }
    PQreset(conn_);
    prepared_.clear();  // a new session has none of the old one's statements
    if (PQstatus(conn_) != CONNECTION_OK) {
        return error("reconnect");
    }
    PQsetNoticeProcessor(conn_, ignore_notice, nullptr);
    return Status::ok();
}

Status PostgresConnection::execute(const std::string& sql) {
    if (Status s = reconnect_if_lost(); !s) {
        return s;
    }
    PGresult* result = PQexec(conn_, sql.c_str());
    const ExecStatusType status = PQresultStatus(result);
    PQclear(result);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
        return error("execute");
    }
    return Status::ok();
}

Status PostgresConnection::run(const std::string& sql,
                               const std::vector<SqlValue>& params,
                               const OnRow& on_row) {
    if (Status s = reconnect_if_lost(); !s) {
        return s;
    }
    if (prepared_.size() >= kMaxKeptStatements && prepared_.count(sql) == 0) {
        PQclear(PQexec(conn_, "DEALLOCATE ALL"));
        prepared_.clear();
    }
    auto [entry, added] = prepared_.try_emplace(sql, fmt::format("s{}", ++statements_named_));
    if (added) {
        PGresult* result = PQprepare(conn_, entry->second.c_str(), sql.c_str(), 0, nullptr);
        const bool ok = PQresultStatus(result) == PGRES_COMMAND_OK;
        PQclear(result);
        if (!ok) {
            Status failed = error("prepare");
            prepared_.erase(entry);
            return failed;
        }
    }
    std::vector<std::string> texts;
    texts.reserve(params.size());
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const SqlValue& value : params) {
        texts.push_back(as_text(value));
    }
    for (const std::string& text : texts) {
        values.push_back(text.c_str());
    }
    if (PQsendQueryPrepared(conn_, entry->second.c_str(), static_cast<int>(values.size()),
                            values.data(), nullptr, nullptr, 0)
        == 0) {
        return error("send");
    }
    // Row by row, so a long listing never sits in memory twice.
    PQsetSingleRowMode(conn_);
    Status outcome = Status::ok();
    while (PGresult* result = PQgetResult(conn_)) {
        const ExecStatusType status = PQresultStatus(result);
        if (status == PGRES_SINGLE_TUPLE) {
            if (on_row) {
                on_row(PostgresRow(result));
            }
        } else if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK && outcome) {
            outcome = error("query");
        }
        PQclear(result);
    }
    return outcome;
}

}  // namespace cohort::sql
