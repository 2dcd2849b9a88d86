// Sends a job listing in frames of JobListReply::kJobsPerFrame jobs, each with the steps of
// its own jobs, the last one marked final: a listing of any size never nears the frame limit.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/protocol/messages.h"
#include "common/transport/connection.h"

namespace cohort::ctld {

class JobListSender {
public:
    // The steps of these jobs, for accounting listings; null: listings without steps.
    using StepsOf =
            std::function<std::vector<protocol::StepRecord>(const std::vector<uint64_t>& job_ids)>;

    explicit JobListSender(std::shared_ptr<transport::Connection> conn, StepsOf steps_of = nullptr)
        : conn_(std::move(conn)), steps_of_(std::move(steps_of)) {}

    // Jobs go out with only the fields squeue's columns show (JobRecord::serialize_columns).
    void send_columns_only() { frame_.columns_only = true; }

    // Queues the job; a full frame is sent at once.
    void add(protocol::JobRecord job);

    // Sends the last frame (empty when the listing was): call exactly once.
    void finish() { flush(false); }

private:
    void flush(bool more);

    std::shared_ptr<transport::Connection> conn_;
    StepsOf steps_of_;
    protocol::JobListReply frame_;
};

}  // namespace cohort::ctld
