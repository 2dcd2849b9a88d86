#include "accounting/sql_connection.h"

#include "accounting/postgres_connection.h"
#include "accounting/sqlite_connection.h"

namespace cohort::accounting {

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

}  // namespace cohort::accounting
