// `cohort sim` without --compat: an SWF trace replayed on a virtual clock through the same
// node-level planner the controller calls, `sched::plan(Snapshot, BackfillOptions)`. Every
// event time (submissions, completions) builds a snapshot of the machine and starts what the
// planner says; jobs free their nodes at their actual run time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "scheduler/backfill/backfill_pass.h"
#include "scheduler/sim/pyss_compat.h"
#include "scheduler/sim/sim_job.h"

namespace cohort::sim {

// How the waiting queue is ordered (PendingJob::priority, recomputed every pass).
enum class NodeOrder {
    kFcfs,      // earlier submit first
    kSjf,       // shortest estimate first
    kF1,        // RLScheduler's F1: log10(estimate) x procs + 870 x log10(submit), lowest first
    kPriority,  // Slurm-like multifactor: age + job size (scheduler/priority/multifactor.h)
    kCohort,    // Cohort's default: shortest estimate first, with aging (see node_sim.cc)
};

// What the planner is told a job will run for.
enum class Estimates {
    kRequested,  // the user's requested time (SWF field 9)
    kActual,     // the actual run time: the clairvoyant bound
    kPredicted,  // EASY++: the mean of the user's last two actual run times, capped at the
                 // requested time; a job that outlives it is re-planned at its requested time
};

struct NodeMachine {
    int64_t nodes = 0;
    int64_t cpus_per_node = 1;

    int64_t procs() const { return nodes * cpus_per_node; }
};

struct NodeSimOptions {
    NodeMachine machine;
    NodeOrder order = NodeOrder::kFcfs;
    sched::BackfillOptions backfill;
    Estimates estimates = Estimates::kRequested;
    // Plan only the new jobs (and the head) where nothing else can have changed (see
    // node_sim.cc); false replans every pending job at every event, to check that this
    // changes no decision.
    bool plan_only_what_changed = true;
};

// One named policy: order, backfilling and estimates together.
struct NamedPolicy {
    std::string name;
    NodeOrder order;
    sched::BackfillOptions backfill;
    Estimates estimates;
};

// "cohort" (the default) or "easy" (FCFS + EASY + requested estimates).
Result<NamedPolicy> policy_by_name(const std::string& name);

// The machine for --nodes N or --procs P (0: not given): MaxProcs / MaxNodes CPUs per node.
Result<NodeMachine> node_machine(const SwfTrace& trace, int64_t nodes, int64_t procs);

struct NodeOutcome {
    int64_t id = 0;
    int64_t submit = 0;
    int64_t start = -1;  // -1: never started
    int64_t run = 0;
    int64_t procs = 0;
    std::vector<int> nodes;              // where it ran
    std::vector<int32_t> cpus_per_node;  // what it held there
};

struct NodeSimResult {
    std::vector<NodeOutcome> jobs;     // in the order of the input jobs
    std::vector<double> pass_ms;       // wall time of each call to plan(), snapshot included
    int64_t passes_skipped = 0;        // event times at which nothing could start (no CPU free)
    int64_t passes_over_new_jobs = 0;  // passes that planned only the new jobs (and the head)
    int64_t estimate_overruns = 0;     // running jobs that outlived their estimate

    SimResult as_sim_result() const;  // for compute_metrics
};

// Replays `jobs` (in submit order, each fitting the machine) through sched::plan().
NodeSimResult simulate_nodes(const std::vector<SimJob>& jobs, const NodeSimOptions& options);

}  // namespace cohort::sim
