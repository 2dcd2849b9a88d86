#include "common/sql/sqlite_connection.h"

#include <cstdlib>

namespace cohort::sql {
namespace {

class SqliteRow final : public SqlRow {
public:
    explicit SqliteRow(sqlite3_stmt* stmt) : stmt_(stmt) {}

    int64_t integer(int column) const override { return sqlite3_column_int64(stmt_, column); }

    double real(int column) const override { return sqlite3_column_double(stmt_, column); }

    std::string text(int column) const override {
        const auto* bytes = sqlite3_column_text(stmt_, column);
        return bytes ? std::string(reinterpret_cast<const char*>(bytes),
                                   sqlite3_column_bytes(stmt_, column))
                     : std::string();
    }

    std::string blob(int column) const override {
        const void* bytes = sqlite3_column_blob(stmt_, column);
        return bytes ? std::string(static_cast<const char*>(bytes),
                                   sqlite3_column_bytes(stmt_, column))
                     : std::string();
    }

private:
    sqlite3_stmt* stmt_;
};

// Which value of a call each parameter takes: "$7" names the 7th; -1 for other names.
std::vector<int> value_of_parameters(sqlite3_stmt* stmt) {
    std::vector<int> values;
    const int count = sqlite3_bind_parameter_count(stmt);
    for (int parameter = 1; parameter <= count; ++parameter) {
        const char* name = sqlite3_bind_parameter_name(stmt, parameter);
        values.push_back(name != nullptr && name[0] == '$' ? std::atoi(name + 1) - 1 : -1);
    }
    return values;
}

int bind(sqlite3_stmt* stmt, int parameter, const SqlValue& value) {
    if (const auto* integer = std::get_if<int64_t>(&value)) {
        return sqlite3_bind_int64(stmt, parameter, *integer);
    }
    if (const auto* real = std::get_if<double>(&value)) {
        return sqlite3_bind_double(stmt, parameter, *real);
    }
    if (const auto* blob = std::get_if<SqlBlob>(&value)) {
        return sqlite3_bind_blob(stmt, parameter, blob->bytes.data(),
                                 static_cast<int>(blob->bytes.size()), SQLITE_TRANSIENT);
    }
    const auto& text = std::get<std::string>(value);
    return sqlite3_bind_text(stmt, parameter, text.data(), static_cast<int>(text.size()),
                             SQLITE_TRANSIENT);
}

}  // namespace

Result<std::unique_ptr<SqliteConnection>> SqliteConnection::open(const std::string& path) {
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr)
        != SQLITE_OK) {
        std::string why = db ? sqlite3_errmsg(db) : "out of memory";
        sqlite3_close(db);
        return Status::io_error("accounting database " + path + ": " + why);
    }
    std::unique_ptr<SqliteConnection> connection(new SqliteConnection(db));
    sqlite3_busy_timeout(db, 5000);
    if (Status s = connection->execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"); !s) {
        return s.with_context("accounting database " + path);
    }
    return connection;
}

SqliteConnection::~SqliteConnection() {
    for (auto& [sql, prepared] : statements_) {
        sqlite3_finalize(prepared.stmt);
    }
    sqlite3_close(db_);
}

Status SqliteConnection::error(const std::string& what) const {
    return Status::io_error(what + ": " + sqlite3_errmsg(db_));
}

Status SqliteConnection::execute(const std::string& sql) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
        Status failed = Status::io_error(std::string("sqlite: ") + (message ? message : "error"));
        sqlite3_free(message);
        return failed;
    }
    return Status::ok();
}

Status SqliteConnection::run(const std::string& sql,
                             const std::vector<SqlValue>& params,
                             const OnRow& on_row) {
    if (statements_.size() >= kMaxKeptStatements && statements_.count(sql) == 0) {
        for (auto& [text, kept] : statements_) {
            sqlite3_finalize(kept.stmt);
        }
        statements_.clear();
    }
    Prepared& prepared = statements_[sql];
    if (prepared.stmt == nullptr) {
        if (sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &prepared.stmt,
                               nullptr)
            != SQLITE_OK) {
            Status failed = error("sqlite prepare");
            statements_.erase(sql);
            return failed;
        }
        prepared.value_of_parameter = value_of_parameters(prepared.stmt);
    }
    sqlite3_stmt* stmt = prepared.stmt;
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    for (size_t i = 0; i < prepared.value_of_parameter.size(); ++i) {
        const int index = prepared.value_of_parameter[i];
        const int parameter = static_cast<int>(i) + 1;
        if (index < 0 || index >= static_cast<int>(params.size())) {
            return Status::internal("sqlite: statement parameter " + std::to_string(parameter)
                                    + " has no value");
        }
        if (bind(stmt, parameter, params[index]) != SQLITE_OK) {
            return error("sqlite bind");
        }
    }
    const SqliteRow row(stmt);
    for (;;) {
        const int rc = sqlite3_step(stmt);
        if (rc == SQLITE_DONE) {
            break;
        }
        if (rc != SQLITE_ROW) {
            Status failed = error("sqlite");
            sqlite3_reset(stmt);
            return failed;
        }
        if (on_row) {
            on_row(row);
        }
    }
    sqlite3_reset(stmt);
    return Status::ok();
}

}  // namespace cohort::sql
