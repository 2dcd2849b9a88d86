// How a job and a step become rows of the accounting schema and back: one table of columns,
// each with its SQL type, the value it stores and (for stored fields) where it reads back
// into the record. Derived columns (allocated CPUs, GPUs, memory, billing) exist for the
// queries and reports that sum them; they read back into nothing.
#pragma once

#include <string>
#include <vector>

#include "common/billing_weights.h"
#include "common/protocol/job_types.h"
#include "common/sql/sql_connection.h"

namespace cohort::accounting {

using sql::SqlConnection;
using sql::SqlRow;
using sql::SqlValue;

// "job_id, array_job_id, ..." in table order.
const std::string& job_column_list();
// "job_id BIGINT NOT NULL DEFAULT 0", ... of the columns schema versions [from, to] added.
std::vector<std::string> job_column_definitions(int from, int to);
size_t job_column_count();
// The values of job_column_list() for one record.
void append_job_values(const protocol::JobRecord& job,
                       const BillingWeights& weights,
                       std::vector<SqlValue>& out);
// The record from a row whose first columns are job_column_list().
protocol::JobRecord job_from_row(const SqlRow& row);

const std::string& step_column_list();
std::vector<std::string> step_column_definitions(int from, int to);
size_t step_column_count();
void append_step_values(const protocol::StepRecord& step, std::vector<SqlValue>& out);
protocol::StepRecord step_from_row(const SqlRow& row);

// GPUs the job holds on all its nodes.
int64_t allocated_gpus(const protocol::JobRecord& job);

}  // namespace cohort::accounting
