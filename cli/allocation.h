// A job allocation held by this client's connection, as `cohort run` outside a job and
// `cohort alloc` (salloc) make one: closing the connection while it waits or runs ends it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cli/client_context.h"
#include "cli/step_client.h"
#include "common/asio.h"
#include "common/protocol/job_types.h"
#include "common/transport/connection.h"

namespace cohort::cli {

struct Allocation {
    protocol::StepLayout layout;  // its first step's, over the whole allocation
    std::shared_ptr<transport::Connection> connection;  // to hold while the job runs
    std::shared_ptr<const bool> lost;  // true once the controller closed it: the job ended
};

// Submits an interactive job and waits on the same connection until it starts (Ctrl-C
// cancels it). `command` names the caller in notices.
Result<Allocation> allocate(const ClientContext& context,
                            boost::asio::io_context& io,
                            const protocol::JobSpec& spec,
                            const std::string& command);

// Records the end of one step of the job.
void record_step(const ClientContext& context,
                 const protocol::StepLayout& layout,
                 const StepResult& result);

// Ends the allocation this command created; retried, since the controller may be restarting.
void complete_job(const ClientContext& context, uint64_t job_id, const StepResult& result);

}  // namespace cohort::cli
