// A job allocation held by this client's connection, as `cohort run` outside a job and
// `cohort alloc` (salloc) make one: closing the connection while it waits or runs ends it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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
    std::vector<protocol::JobRecord> het_components;  // salloc A : B's, the leader first
};

// Submits an interactive job (with request.het_components, a heterogeneous one) and waits on
// the same connection until it starts (Ctrl-C cancels it). `command` names the caller in
// notices.
Result<Allocation> allocate(const ClientContext& context,
                            boost::asio::io_context& io,
                            const protocol::AllocateRequest& request,
                            const std::string& command);

// An interactive job as srun and salloc submit it: named after its command unless named,
// and one task per node unless tasks are asked for.
void default_interactive_shape(protocol::JobSpec& spec, const std::string& command);

// Records the end of one step of the job.
void record_step(const ClientContext& context,
                 const protocol::StepLayout& layout,
                 const StepResult& result);

// Ends the allocation this command created; retried, since the controller may be restarting.
void complete_job(const ClientContext& context, uint64_t job_id, const StepResult& result);

}  // namespace cohort::cli
