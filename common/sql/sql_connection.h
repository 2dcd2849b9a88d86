// The little of SQL accounting and the controller's state need, over SQLite and PostgreSQL alike:
// statements with numbered parameters ($1, $2, ...; both databases read them), rows read by column
// index, transactions. One connection is used from one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "common/status.h"

namespace cohort::sql {

// Bytes stored as they are (BLOB, BYTEA), e.g. a serialized record.
struct SqlBlob {
    std::string bytes;
};

using SqlValue = std::variant<int64_t, double, std::string, SqlBlob>;

// One row of a result, valid only inside the callback that receives it.
class SqlRow {
public:
    virtual ~SqlRow() = default;
    virtual int64_t integer(int column) const = 0;
    virtual double real(int column) const = 0;
    virtual std::string text(int column) const = 0;
    virtual std::string blob(int column) const = 0;
};

class SqlConnection {
public:
    // Prepared statements a connection keeps before it drops them all (queries naming many
    // ids have texts of their own).
    static constexpr size_t kMaxKeptStatements = 256;

    using OnRow = std::function<void(const SqlRow&)>;

    virtual ~SqlConnection() = default;
    // Statements without parameters or results, several separated by ';' allowed.
    virtual Status execute(const std::string& sql) = 0;
    // One statement; its prepared form is kept for the next call with the same text.
    virtual Status run(const std::string& sql,
                       const std::vector<SqlValue>& params,
                       const OnRow& on_row = nullptr) = 0;
    // "sqlite" or "postgresql", for messages and the few statements that differ.
    virtual const char* backend() const = 0;
};

// `location` is a PostgreSQL URI (postgresql://... or postgres://...) or an SQLite file path
// (optionally sqlite://PATH).
Result<std::unique_ptr<SqlConnection>> connect_sql(const std::string& location);

}  // namespace cohort::sql
