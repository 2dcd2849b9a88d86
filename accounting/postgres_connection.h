// SqlConnection over libpq. Parameters travel as text; each distinct statement is prepared
// once per connection. A lost connection is reopened on the next call.
#pragma once

#include <map>

#include <libpq-fe.h>

#include "accounting/sql_connection.h"

namespace cohort::accounting {

class PostgresConnection final : public SqlConnection {
public:
    static Result<std::unique_ptr<PostgresConnection>> open(const std::string& uri);
    ~PostgresConnection() override;
    PostgresConnection(const PostgresConnection&) = delete;
    PostgresConnection& operator=(const PostgresConnection&) = delete;

    Status execute(const std::string& sql) override;
    Status run(const std::string& sql,
               const std::vector<SqlValue>& params,
               const OnRow& on_row) override;

    const char* backend() const override { return "postgresql"; }

private:
    PostgresConnection(std::string uri, PGconn* conn) : uri_(std::move(uri)), conn_(conn) {}

    Status reconnect_if_lost();
    Status error(const std::string& what) const;

    std::string uri_;
    PGconn* conn_;
    std::map<std::string, std::string> prepared_;  // statement text -> its prepared name
    uint64_t statements_named_ = 0;
};

}  // namespace cohort::accounting
