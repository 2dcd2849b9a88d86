// SqlConnection over libpq. Parameters travel as text; each distinct statement is prepared
// once per connection. A lost connection is reopened on the next call, unless the session
// itself matters (it holds a lock): then every later call fails and lost() says so.
#pragma once

#include <map>

#include <libpq-fe.h>

#include "common/sql/sql_connection.h"

namespace cohort::sql {

class PostgresConnection final : public SqlConnection {
public:
    enum class LostSession {
        kReconnect,
        kFail,
    };

    static Result<std::unique_ptr<PostgresConnection>> open(
            const std::string& uri, LostSession on_lost = LostSession::kReconnect);
    ~PostgresConnection() override;
    PostgresConnection(const PostgresConnection&) = delete;
    PostgresConnection& operator=(const PostgresConnection&) = delete;

    Status execute(const std::string& sql) override;
    Status run(const std::string& sql,
               const std::vector<SqlValue>& params,
               const OnRow& on_row) override;

    const char* backend() const override { return "postgresql"; }

    bool lost() const { return PQstatus(conn_) != CONNECTION_OK; }

private:
    PostgresConnection(std::string uri, PGconn* conn, LostSession on_lost)
        : uri_(std::move(uri)), conn_(conn), on_lost_(on_lost) {}

    Status reconnect_if_lost();
    Status error(const std::string& what) const;

    std::string uri_;
    PGconn* conn_;
    LostSession on_lost_;
    std::map<std::string, std::string> prepared_;  // statement text -> its prepared name
    uint64_t statements_named_ = 0;
};

}  // namespace cohort::sql
