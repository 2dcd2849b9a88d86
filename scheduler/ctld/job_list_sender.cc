#include "scheduler/ctld/job_list_sender.h"

namespace cohort::ctld {

void JobListSender::add(protocol::JobRecord job) {
    if (frame_.jobs.capacity() == 0) {
        // One frame's records (about 0.5 MB) allocated once and reused by every frame: a
        // vector grown by doubling for each frame page-faulted twice that much per frame.
        frame_.jobs.reserve(protocol::JobListReply::kJobsPerFrame);
    }
    frame_.jobs.push_back(std::move(job));
    if (frame_.jobs.size() >= protocol::JobListReply::kJobsPerFrame) {
        flush(true);
    }
}

void JobListSender::flush(bool more) {
    if (steps_of_ && !frame_.jobs.empty()) {
        std::vector<uint64_t> ids;
        ids.reserve(frame_.jobs.size());
        for (const auto& job : frame_.jobs) {
            ids.push_back(job.job_id);
        }
        frame_.steps = steps_of_(ids);
    }
    frame_.more = more;
    conn_->send(frame_);
    frame_.jobs.clear();
    frame_.steps.clear();
}

}  // namespace cohort::ctld
