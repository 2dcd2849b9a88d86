// SqlConnection over one SQLite database file (WAL, synchronous=NORMAL: accounting records
// are replayed from the controller's state after a crash, see accounting_writer.h).
#pragma once

#include <map>

#include <sqlite3.h>

#include "common/sql/sql_connection.h"

namespace cohort::sql {

class SqliteConnection final : public SqlConnection {
public:
    static Result<std::unique_ptr<SqliteConnection>> open(const std::string& path);
    ~SqliteConnection() override;
    SqliteConnection(const SqliteConnection&) = delete;
    SqliteConnection& operator=(const SqliteConnection&) = delete;

    Status execute(const std::string& sql) override;
    Status run(const std::string& sql,
               const std::vector<SqlValue>& params,
               const OnRow& on_row) override;

    const char* backend() const override { return "sqlite"; }

private:
    explicit SqliteConnection(sqlite3* db) : db_(db) {}

    Status error(const std::string& what) const;

    // A prepared statement, and which value of a call each of its parameters takes ("$7" is
    // the 7th; SQLite numbers parameters in order of first use, and looking a name up is a
    // list walk, so the mapping is made once).
    struct Prepared {
        sqlite3_stmt* stmt = nullptr;
        std::vector<int> value_of_parameter;
    };

    sqlite3* db_;
    std::map<std::string, Prepared> statements_;
};

}  // namespace cohort::sql
