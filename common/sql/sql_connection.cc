#include "common/sql/sql_connection.h"

#include "common/sql/postgres_connection.h"
#include "common/sql/sqlite_connection.h"

namespace cohort::sql {

Result<std::unique_ptr<SqlConnection>> connect_sql(const std::string& location) {
    if (location.starts_with("postgresql://") || location.starts_with("postgres://")) {
        auto connection = PostgresConnection::open(location);
        if (!connection) {
            return connection.status();
        }
        return std::unique_ptr<SqlConnection>(std::move(*connection));
    }
    const std::string path =
            location.starts_with("sqlite://") ? location.substr(sizeof("sqlite://") - 1) : location;
    if (path.empty()) {
        return Status::invalid(
                "accounting: empty location (accepted: a file path, sqlite://PATH "
                "or postgresql://...)");
    }
    auto connection = SqliteConnection::open(path);
    if (!connection) {
        return connection.status();
    }
    return std::unique_ptr<SqlConnection>(std::move(*connection));
}

}  // namespace cohort::sql
