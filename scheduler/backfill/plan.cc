// The node-level backfill planner.
#include "scheduler/backfill/plan.h"

#include <algorithm>
#include <map>
#include <memory_resource>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>

#include "scheduler/backfill/profile.h"
#include "scheduler/placement/gpu_select.h"
#include "scheduler/placement/network_fit.h"
#include "scheduler/placement/node_fit.h"

namespace cohort::sched {
namespace {

int64_t duration_of(const PendingJob& job) {
    return job.time_limit_s < 0 ? kForever : std::clamp<int64_t>(job.time_limit_s, 1, kForever);
}

// Jobs of one shape compete for the same nodes: once one fails to start now for a duration,
// every job of that shape with at least that duration fails too, since a pass only ever takes
// resources. Remembering it keeps a pass over a long queue of similar jobs cheap.
using Shape = std::tuple<int,
                         int,
                         uint32_t,
                         uint32_t,
                         uint32_t,
                         uint32_t,
                         uint32_t,
                         int64_t,
                         int32_t,
                         std::string,
                         uint32_t,
                         uint32_t,
                         int64_t,
                         bool,
                         bool,
                         int64_t,
                         uint32_t,
                         bool,
                         bool,
                         std::vector<GresUse>>;

Shape shape_of(const PendingJob& job) {
    const ResourceRequest& r = job.request;
    return {job.partition,
            job.reservation,
            r.nodes_min,
            r.nodes_max,
            r.ntasks,
            r.ntasks_per_node,
            r.cpus_per_task,
            r.memory_mib_per_node,
            r.gpus_per_node,
            r.gpu_type,
            r.max_leaf_switches,
            r.segment_nodes,
            job.switches_wait_until,
            r.whole_node,
            r.whole_node_memory,
            r.memory_mib_per_cpu,
            r.min_cpus_per_node,
            r.overcommit,
            r.whole_cores,
            r.gres_per_node};
}

// What one task needs of a node's memory and GPUs at least, to know when a node could
// take one; whole-node requests need all of them.
int64_t memory_for_one_task(const ResourceRequest& r, const NodeCapacity& node) {
    if (r.whole_node_memory) {
        return node.memory_mib;
    }
    return r.memory_mib_per_cpu > 0 ? r.memory_mib_per_cpu * r.cpus_per_task
                                    : r.memory_mib_per_node;
}

int64_t gpus_for_one_task(const ResourceRequest& r, const NodeCapacity& node) {
    return r.whole_node ? std::max(node.gpus, r.gpus_per_node) : r.gpus_per_node;
}

int64_t cpus_for_one_task(const ResourceRequest& r, const NodeCapacity& node) {
    if (r.whole_node) {
        return node.cpus;
    }
    const int64_t threads = r.whole_cores ? node.threads_per_core : 1;
    return std::max<int64_t>(r.cpus_per_task * threads, r.min_cpus_per_node);
}

bool overlaps(int64_t start, int64_t end, const ReservationWindow& window) {
    return start < window.end && window.start < end;
}

}  // namespace

class PlanPass::Planner {
public:
    Planner(Snapshot snapshot, const BackfillOptions& options, const NodeTimelines* committed)
        : snapshot_(std::move(snapshot)), options_(options), committed_(committed) {
        const int64_t now = snapshot_.now;
        const size_t node_count = snapshot_.nodes.size();
        if (committed_ == nullptr) {
            owned_ = std::make_unique<NodeTimelines>(snapshot_.nodes, now);
            uint64_t key = 0;
            for (RunningAllocation running : snapshot_.running) {
                running.expected_end = std::max(running.expected_end, now + 1);
                owned_->add(key++, running, now);
            }
            committed_ = owned_.get();
        }
        held_slot_.assign(node_count, -1);
        if (!snapshot_.windows.empty()) {
            node_windows_.resize(node_count);
        }
        for (size_t w = 0; w < snapshot_.windows.size(); ++w) {
            for (int node : snapshot_.windows[w].nodes) {
                node_windows_[static_cast<size_t>(node)].push_back(static_cast<int>(w));
            }
        }
        for (const UsageLimit& limit : snapshot_.limits) {
            limit_used_.push_back(limit.used);
        }
        free_now_.resize(node_count);
        for (size_t i = 0; i < node_count; ++i) {
            free_now_[i] = snapshot_.nodes[i].up ? committed_->cpus_unheld(i) : 0;
        }
        index_partitions_of_nodes();
        order_.reserve(snapshot_.pending.size());
        for (size_t i = 0; i < snapshot_.pending.size(); ++i) {
            order_.push_back(i);
        }
        const auto& pending = snapshot_.pending;
        std::stable_sort(order_.begin(), order_.end(), [&](size_t a, size_t b) {
            const PendingJob& ja = pending[a];
            const PendingJob& jb = pending[b];
            return std::tie(jb.priority, ja.submit_time, ja.id)
                   < std::tie(ja.priority, jb.submit_time, jb.id);
        });
        index_het_groups();
        max_reservations_ = options_.policy == BackfillPolicy::kEasy ? 1
                            : options_.policy == BackfillPolicy::kConservative
                                    ? options_.reservations
                                    : 0;
    }

    Decisions step(const PassBudget& budget) {
        Decisions decisions;
        for (size_t tested = 0; position_ < order_.size() && tested < budget.max_jobs; ++tested) {
            decide(snapshot_.pending[order_[position_]], decisions);
            ++position_;
            if (budget.out_of_time && budget.out_of_time()) {
                break;
            }
        }
        return decisions;
    }

    bool done() const { return position_ == order_.size(); }

    Snapshot release_snapshot() { return std::move(snapshot_); }

    size_t jobs_tested() const { return position_; }

    const Snapshot& snapshot() const { return snapshot_; }

private:
    // One node as this pass sees it: the committed timeline less what the pass took there.
    HeldNode node_view(size_t node) const {
        const int32_t slot = held_slot_[node];
        return {committed_->node(node),
                slot < 0 ? std::span<const PassHold>{}
                         : std::span<const PassHold>(held_[static_cast<size_t>(slot)])};
    }

    const std::vector<int>& windows_on(int node) const {
        static const std::vector<int> kNone;
        return node_windows_.empty() ? kNone : node_windows_[static_cast<size_t>(node)];
    }

    // The partitions of each node, flat, and each partition's CPUs free now.
    void index_partitions_of_nodes() {
        const size_t node_count = snapshot_.nodes.size();
        partitions_from_.assign(node_count + 1, 0);
        for (const std::vector<int>& members : snapshot_.partitions) {
            for (int node : members) {
                ++partitions_from_[static_cast<size_t>(node) + 1];
            }
        }
        for (size_t i = 0; i < node_count; ++i) {
            partitions_from_[i + 1] += partitions_from_[i];
        }
        partitions_of_node_.resize(partitions_from_[node_count]);
        std::vector<size_t> cursor(partitions_from_.begin(), partitions_from_.end() - 1);
        partition_free_now_.assign(snapshot_.partitions.size(), 0);
        for (size_t p = 0; p < snapshot_.partitions.size(); ++p) {
            for (int node : snapshot_.partitions[p]) {
                const auto n = static_cast<size_t>(node);
                partitions_of_node_[cursor[n]++] = static_cast<int>(p);
                partition_free_now_[p] += free_now_[n];
            }
        }
    }

    // The components of each heterogeneous job, in id order (their offsets). Only the first
    // of them in priority order stays in order_: the whole job is decided at its turn.
    void index_het_groups() {
        const auto& pending = snapshot_.pending;
        for (size_t i = 0; i < pending.size(); ++i) {
            if (const uint64_t leader = pending[i].het_leader; leader != 0) {
                het_groups_[leader].push_back(i);
            }
        }
        if (het_groups_.empty()) {
            return;
        }
        for (auto& [leader, members] : het_groups_) {
            std::sort(members.begin(), members.end(),
                      [&](size_t a, size_t b) { return pending[a].id < pending[b].id; });
        }
        std::set<uint64_t> seen;
        std::erase_if(order_, [&](size_t i) {
            const uint64_t leader = pending[i].het_leader;
            return leader != 0 && !seen.insert(leader).second;
        });
    }

    const std::vector<int>& gpus_free_now(size_t node) const {
        auto it = gpus_free_changed_.find(node);
        return it != gpus_free_changed_.end() ? it->second : snapshot_.nodes[node].free_gpus;
    }

    void decide(const PendingJob& job, Decisions& decisions) {
        if (job.het_leader != 0) {
            decide_het_job(het_groups_.at(job.het_leader), decisions);
            return;
        }
        const int64_t duration = duration_of(job);
        if (int limit = binding_limit(job, job_cpus_lower_bound(job)); limit >= 0) {
            decisions.waits.push_back({job.id, WaitReason::kLimit, limit});
            return;
        }
        if (!(blocked_ && options_.policy == BackfillPolicy::kNone)) {
            int64_t shortened = 0;
            auto placement = start_now(job, duration);
            if (!placement && job.time_min_s > 0 && job.time_min_s < duration) {
                placement = start_shortened(job, duration, shortened);
            }
            if (placement) {
                if (int limit = binding_limit(job, cpus_of(*placement)); limit >= 0) {
                    decisions.waits.push_back({job.id, WaitReason::kLimit, limit});
                    return;
                }
                hold(*placement, job, snapshot_.now, shortened > 0 ? shortened : duration);
                count_usage(job, *placement);
                decisions.starts.push_back({job.id, std::move(*placement), shortened});
                return;
            }
        }
        decisions.waits.push_back({job.id, why_not_now(job, duration)});
        blocked_ = true;
        if (reservation_attempts_ < max_reservations_) {
            ++reservation_attempts_;
            reserve_earliest(job, duration, decisions);
            if (reservation_attempts_ == max_reservations_
                && options_.candidates == CandidateOrder::kShortestFirst) {
                sort_rest_shortest_first();
            }
        }
    }

    // A heterogeneous job: every component starts now or none does. Waiting, its components
    // are reserved at one common start, so none holds nodes idle while the others wait.
    void decide_het_job(const std::vector<size_t>& members, Decisions& decisions) {
        std::vector<const PendingJob*> components;
        for (size_t i : members) {
            components.push_back(&snapshot_.pending[i]);
        }
        const auto wait_all = [&](WaitReason reason, int limit) {
            for (const PendingJob* component : components) {
                decisions.waits.push_back({component->id, reason, limit});
            }
        };
        for (const PendingJob* component : components) {
            if (int limit = binding_limit(*component, job_cpus_lower_bound(*component));
                limit >= 0) {
                wait_all(WaitReason::kLimit, limit);
                return;
            }
        }
        const PendingJob* stopped = components.front();
        if (!(blocked_ && options_.policy == BackfillPolicy::kNone)) {
            const PassMark saved = mark();
            std::vector<Placement> held;
            const ComponentNodes taken(component_nodes_);
            for (const PendingJob* component : components) {
                const int64_t duration = duration_of(*component);
                auto placement = start_now(*component, duration);
                if (!placement) {
                    stopped = component;
                    break;
                }
                if (int limit = binding_limit(*component, cpus_of(*placement)); limit >= 0) {
                    undo(saved, held, snapshot_.now);
                    wait_all(WaitReason::kLimit, limit);
                    return;
                }
                hold(*placement, *component, snapshot_.now, duration);
                count_usage(*component, *placement);
                taken.add(placement->nodes);
                held.push_back(std::move(*placement));
            }
            if (held.size() == components.size()) {
                for (size_t i = 0; i < held.size(); ++i) {
                    decisions.starts.push_back({components[i]->id, std::move(held[i]), 0});
                }
                return;
            }
            undo(saved, held, snapshot_.now);
        }
        wait_all(why_not_now(*stopped, duration_of(*stopped)), -1);
        blocked_ = true;
        if (reservation_attempts_ < max_reservations_) {
            ++reservation_attempts_;
            reserve_het_job(components, decisions);
            if (reservation_attempts_ == max_reservations_
                && options_.candidates == CandidateOrder::kShortestFirst) {
                sort_rest_shortest_first();
            }
        }
    }

    // The earliest time at which every component fits at once. Each component alone bounds
    // it from below; components then competing for the same nodes push it to a later try.
    void reserve_het_job(const std::vector<const PendingJob*>& components, Decisions& decisions) {
        constexpr int kTries = 16;
        int64_t from = snapshot_.now;
        for (int attempt = 0; attempt < kTries; ++attempt) {
            int64_t start = from;
            for (const PendingJob* component : components) {
                auto earliest = find_earliest(*component, duration_of(*component), from);
                if (!earliest) {
                    return;  // one can never start: the job gets no reservation
                }
                start = std::max(start, earliest->first);
            }
            const PassMark saved = mark();
            std::vector<Placement> held;
            const ComponentNodes taken(component_nodes_);
            for (const PendingJob* component : components) {
                const int64_t duration = duration_of(*component);
                auto placement = place_at(*component, start, duration, true);
                if (!placement) {
                    break;
                }
                hold(*placement, *component, start, duration);
                taken.add(placement->nodes);
                held.push_back(std::move(*placement));
            }
            if (held.size() == components.size()) {
                for (size_t i = 0; i < held.size(); ++i) {
                    decisions.reservations.push_back(
                            {components[i]->id, start, std::move(held[i])});
                }
                return;
            }
            undo(saved, held, start);
            from = next_change_after(components, start);
            if (from == INT64_MAX) {
                return;
            }
        }
    }

    // The first time after `t` at which what any of `components` asks for changes.
    int64_t next_change_after(const std::vector<const PendingJob*>& components, int64_t t) const {
        std::vector<int64_t> changes;
        for (const PendingJob* component : components) {
            changes_between(*component, t, INT64_MAX, changes);
        }
        return changes.empty() ? INT64_MAX : *std::min_element(changes.begin(), changes.end());
    }

    // What hold() and count_usage() change beyond the per-node holds, saved so that a
    // heterogeneous job's components can be held one by one and released if one fails.
    struct PassMark {
        size_t pass_holds = 0;
        std::vector<int64_t> limit_used;
        std::map<Shape, int64_t> failed_for;
        std::map<size_t, std::vector<int>> gpus_free_changed;
    };

    PassMark mark() const {
        return {pass_holds_.size(), limit_used_, failed_for_, gpus_free_changed_};
    }

    // Releases `held` (each held from `start`, in this order) and what changed since `mark`.
    void undo(const PassMark& mark, const std::vector<Placement>& held, int64_t start) {
        for (auto placement = held.rbegin(); placement != held.rend(); ++placement) {
            for (size_t i = 0; i < placement->nodes.size(); ++i) {
                const auto node = static_cast<size_t>(placement->nodes[i]);
                held_[static_cast<size_t>(held_slot_[node])].pop_back();
                if (start == snapshot_.now) {
                    free_now_[node] += placement->cpus_per_node[i];
                    for (size_t j = partitions_from_[node]; j < partitions_from_[node + 1]; ++j) {
                        partition_free_now_[static_cast<size_t>(partitions_of_node_[j])] +=
                                placement->cpus_per_node[i];
                    }
                }
            }
        }
        pass_holds_.resize(mark.pass_holds);
        pass_cpus_total_.reset();  // rebuilt from pass_holds_ when next asked
        limit_used_ = mark.limit_used;
        failed_for_ = mark.failed_for;  // failures seen with the released holds in place
        gpus_free_changed_ = mark.gpus_free_changed;
        reachable_cache_.clear();
    }

    WaitReason why_not_now(const PendingJob& job, int64_t duration) {
        if (blocked_) {
            return WaitReason::kPriority;
        }
        if (job.reservation >= 0
            && snapshot_.windows[static_cast<size_t>(job.reservation)].start > snapshot_.now) {
            return WaitReason::kReservation;
        }
        if (!snapshot_.windows.empty() && place_at(job, snapshot_.now, duration, false)) {
            return WaitReason::kNodeNotAvail;
        }
        return WaitReason::kResources;
    }

    std::optional<Placement> start_now(const PendingJob& job, int64_t duration) {
        // Fewer CPUs free in the whole partition than the job needs: no node scan can help.
        if (job.reservation < 0
            && job_cpus_lower_bound(job)
                       > partition_free_now_[static_cast<size_t>(job.partition)]) {
            return std::nullopt;
        }
        const Shape shape = shape_of(job);
        if (auto failed = failed_for_.find(shape);
            failed != failed_for_.end() && duration >= failed->second) {
            return std::nullopt;
        }
        // Nor when the cluster as a whole lacks its CPUs at some point of its run, as when it
        // would run into the head's reservation.
        std::optional<Placement> placement;
        if (pass_cpus_total().min_free(snapshot_.now, duration) >= job_cpus_lower_bound(job)) {
            placement = place_at(job, snapshot_.now, duration, true);
        }
        if (!placement) {
            auto [it, fresh] = failed_for_.emplace(shape, duration);
            it->second = std::min(it->second, duration);
        }
        return placement;
    }

    // --time-min: the longest limit from the job's time_min_s up, in steps of a minute and
    // short of `duration`, with which it starts now (a job fitting for some time fits for any
    // shorter one, so the longest is found by halving); nullopt when even time_min_s does not.
    std::optional<Placement> start_shortened(const PendingJob& job,
                                             int64_t duration,
                                             int64_t& limit) {
        constexpr int64_t kStep = 60;
        auto placement = start_now(job, job.time_min_s);
        if (!placement) {
            return std::nullopt;
        }
        int64_t fits = job.time_min_s;
        int64_t fails = duration;
        while (fails - fits > kStep) {
            const int64_t mid = fits + std::max<int64_t>((fails - fits) / 2 / kStep, 1) * kStep;
            if (auto longer = start_now(job, mid)) {
                fits = mid;
                placement = std::move(longer);
            } else {
                fails = mid;
            }
        }
        limit = fits;
        return placement;
    }

    const std::vector<int>& nodes_for(const PendingJob& job) const {
        if (job.reservation >= 0) {
            return snapshot_.windows[static_cast<size_t>(job.reservation)].nodes;
        }
        return snapshot_.partitions[static_cast<size_t>(job.partition)];
    }

    // May `job` use `node` during [start, start + duration) as far as reservations go?
    bool windows_allow(const PendingJob& job, int node, int64_t start, int64_t duration) const {
        for (int w : windows_on(node)) {
            const ReservationWindow& window = snapshot_.windows[static_cast<size_t>(w)];
            if (w == job.reservation) {
                if (start < window.start || start >= window.end) {
                    return false;
                }
            } else if (overlaps(start, start + duration, window)) {
                return false;
            }
        }
        return true;
    }

    std::optional<Placement> place_at(const PendingJob& job,
                                      int64_t start,
                                      int64_t duration,
                                      bool honour_windows) const {
        const std::vector<int>& eligible = nodes_for(job);
        const int32_t k = job.request.gpus_per_node;
        const std::vector<int> order =
                k > 0 ? gpu_fit_order(
                        eligible,
                        [&](int index) {
                            return node_view(static_cast<size_t>(index))
                                    .min_free(NodeResource::kGpus, start, duration);
                        },
                        [&](int index) {
                            return start == snapshot_.now ? reachable_now(index, k)
                                                          : GpuSetLocality{};
                        })
                      : std::vector<int>{};
        const bool switch_limit_binds = start < job.switches_wait_until;
        const std::vector<int>& in_order = order.empty() ? eligible : order;
        // Now, a node with no CPU free takes no task: try only the others, which on a busy
        // cluster are few. The switch-aware placement weighs every node, so it sees them all.
        std::vector<int> with_free_cpus;
        if (start == snapshot_.now && snapshot_.network.empty()) {
            for (int index : in_order) {
                if (free_now_[static_cast<size_t>(index)] > 0) {
                    with_free_cpus.push_back(index);
                }
            }
        }
        const std::vector<int>& preferred =
                start == snapshot_.now && snapshot_.network.empty() ? with_free_cpus : in_order;
        const ResourceRequest& r = job.request;
        auto placement = place_on_network(
                r, preferred,
                [&](int index) -> uint32_t {
                    const NodeCapacity& node = snapshot_.nodes[static_cast<size_t>(index)];
                    if (!node.up || !has_gpu_type(r, node) || !has_gres(r, node)
                        || (honour_windows && !windows_allow(job, index, start, duration))
                        || component_nodes_.contains(index)) {
                        return 0;
                    }
                    const HeldNode view = node_view(static_cast<size_t>(index));
                    for (const GresUse& use : r.gres_per_node) {
                        if (view.min_free(NodeResource::generic(use.kind), start, duration)
                            < use.per_node) {
                            return 0;
                        }
                    }
                    // What the job does not ask for cannot stop it: skip those profiles.
                    const auto free = [&](NodeResource resource, bool asked) -> int64_t {
                        return asked ? view.min_free(resource, start, duration) : 0;
                    };
                    return tasks_that_fit_on(
                            r, node, view.min_free(NodeResource::kCpus, start, duration),
                            free(NodeResource::kMemory, r.asks_memory()),
                            free(NodeResource::kGpus, r.gpus_per_node > 0 || r.whole_node));
                },
                snapshot_.network, switch_limit_binds);
        if (placement && !includes_all(*placement, job.required_nodes)) {
            return std::nullopt;  // a node named with -w cannot take its share then
        }
        if (placement && widens(r)) {
            widen_allocation(r, snapshot_.nodes, *placement);
        }
        return placement;
    }

    static bool includes_all(const Placement& placement, const std::vector<int>& required) {
        return std::all_of(required.begin(), required.end(), [&](int node) {
            return std::find(placement.nodes.begin(), placement.nodes.end(), node)
                   != placement.nodes.end();
        });
    }

    // The best locality `k` of the node's GPUs free now can reach; all false without a layout.
    GpuSetLocality reachable_now(int node, int32_t k) const {
        const auto n = static_cast<size_t>(node);
        const NodeGpuLayout* layout = snapshot_.nodes[n].gpu_layout.get();
        if (layout == nullptr) {
            return {};
        }
        auto [it, fresh] = reachable_cache_.try_emplace({n, k});
        if (fresh) {
            it->second = best_locality(*layout, gpus_free_now(n), k).value_or(GpuSetLocality{});
        }
        return it->second;
    }

    // Takes `k` GPUs free now off the node as the controller will: the selector's choice
    // (rail alignment may take other, equally local GPUs on a job's later nodes), the lowest
    // indexes where the node has no layout. Only the ranking of later jobs reads it.
    void take_gpus_now(size_t node, int32_t k) {
        std::vector<int>& free =
                gpus_free_changed_.try_emplace(node, snapshot_.nodes[node].free_gpus).first->second;
        std::vector<int> taken(
                free.begin(),
                free.begin() + std::min<ptrdiff_t>(k, static_cast<ptrdiff_t>(free.size())));
        if (const NodeGpuLayout* layout = snapshot_.nodes[node].gpu_layout.get()) {
            if (auto chosen = select_gpus(*layout, {free, {}}, {k, 0, 0})) {
                taken = chosen->gpus;
            }
        }
        std::erase_if(free, [&](int g) {
            return std::find(taken.begin(), taken.end(), g) != taken.end();
        });
        reachable_cache_.erase(reachable_cache_.lower_bound({node, INT32_MIN}),
                               reachable_cache_.lower_bound({node + 1, INT32_MIN}));
    }

    // The cluster's free CPUs over time with this pass's holds taken, copied when first asked.
    const AvailabilityProfile& pass_cpus_total() {
        if (!pass_cpus_total_) {
            pass_cpus_total_ = committed_->cpus_total();
            for (const auto& [start, duration, cpus] : pass_holds_) {
                pass_cpus_total_->reserve(start, duration, cpus);
            }
        }
        return *pass_cpus_total_;
    }

    void hold(const Placement& placement, const PendingJob& job, int64_t start, int64_t duration) {
        const int64_t cpus = cpus_of(placement);
        pass_holds_.emplace_back(start, duration, cpus);
        if (pass_cpus_total_) {
            pass_cpus_total_->reserve(start, duration, cpus);
        }
        for (size_t i = 0; i < placement.nodes.size(); ++i) {
            const auto node = static_cast<size_t>(placement.nodes[i]);
            if (start == snapshot_.now) {
                if (placement.gpus_per_node > 0) {
                    take_gpus_now(node, placement.gpus_per_node);
                }
                free_now_[node] -= placement.cpus_per_node[i];
                for (size_t j = partitions_from_[node]; j < partitions_from_[node + 1]; ++j) {
                    partition_free_now_[static_cast<size_t>(partitions_of_node_[j])] -=
                            placement.cpus_per_node[i];
                }
            }
            int32_t& slot = held_slot_[node];
            if (slot < 0) {
                slot = static_cast<int32_t>(held_.size());
                held_.emplace_back(&arena_);
            }
            held_[static_cast<size_t>(slot)].push_back(
                    {start, start + duration, placement.cpus_per_node[i],
                     placement.memory_mib_per_node, placement.gpus_per_node,
                     job.request.gres_per_node});
        }
    }

    static int64_t cpus_of(const Placement& placement) {
        int64_t sum = 0;
        for (int32_t cpus : placement.cpus_per_node) {
            sum += cpus;
        }
        return sum;
    }

    static int64_t job_cpus_lower_bound(const PendingJob& job) {
        const ResourceRequest& r = job.request;
        const int64_t nodes = std::max<int64_t>(r.nodes_min, 1);
        if (r.overcommit) {
            return nodes * std::max<int64_t>(r.cpus_per_task, r.min_cpus_per_node);
        }
        const int64_t tasks =
                r.ntasks > 0 ? r.ntasks : nodes * std::max<int64_t>(r.ntasks_per_node, 1);
        return std::max(tasks * r.cpus_per_task, nodes * r.min_cpus_per_node);
    }

    int64_t gpus_of(const PendingJob& job, int64_t nodes) const {
        return static_cast<int64_t>(job.request.gpus_per_node) * nodes;
    }

    // The first of the job's limits that starting it with `cpus` would exceed, or -1.
    int binding_limit(const PendingJob& job, int64_t cpus) const {
        for (int index : job.limits) {
            const UsageLimit& limit = snapshot_.limits[static_cast<size_t>(index)];
            const int64_t wanted =
                    limit.resource == LimitedResource::kJobs ? 1
                    : limit.resource == LimitedResource::kCpus
                            ? cpus
                            : gpus_of(job, std::max<int64_t>(job.request.nodes_min, 1));
            if (limit_used_[static_cast<size_t>(index)] + wanted > limit.max) {
                return index;
            }
        }
        for (const LicenseUse& license : job.licenses) {
            const auto index = static_cast<size_t>(license.limit);
            if (limit_used_[index] + license.count > snapshot_.limits[index].max) {
                return license.limit;
            }
        }
        return -1;
    }

    void count_usage(const PendingJob& job, const Placement& placement) {
        for (int index : job.limits) {
            switch (snapshot_.limits[static_cast<size_t>(index)].resource) {
                case LimitedResource::kJobs:
                    limit_used_[static_cast<size_t>(index)] += 1;
                    break;
                case LimitedResource::kCpus:
                    limit_used_[static_cast<size_t>(index)] += cpus_of(placement);
                    break;
                case LimitedResource::kGpus:
                    limit_used_[static_cast<size_t>(index)] +=
                            gpus_of(job, static_cast<int64_t>(placement.nodes.size()));
                    break;
                case LimitedResource::kLicense:
                    break;  // counted per job below
            }
        }
        for (const LicenseUse& license : job.licenses) {
            limit_used_[static_cast<size_t>(license.limit)] += license.count;
        }
    }

    void reserve_earliest(const PendingJob& job, int64_t duration, Decisions& decisions) {
        auto earliest = find_earliest(job, duration, snapshot_.now);
        if (!earliest) {
            return;
        }
        auto& [start, placement] = *earliest;
        hold(placement, job, start, duration);
        decisions.reservations.push_back({job.id, start, std::move(placement)});
    }

    // The earliest start from `from`: no earlier than the time the cluster has the job's CPUs
    // free for its duration nor, for jobs with a per-node shape, the time by which enough nodes
    // could each take one task; then every later time at which what the job asks for frees up.
    // nullopt: never, as far as this pass sees.
    std::optional<std::pair<int64_t, Placement>> find_earliest(const PendingJob& job,
                                                               int64_t duration,
                                                               int64_t from) {
        const int64_t cpus_needed = job_cpus_lower_bound(job);
        int64_t lower_bound = pass_cpus_total().earliest_start(from, duration, cpus_needed);
        if (lower_bound == INT64_MAX) {
            return std::nullopt;
        }
        lower_bound = enough_nodes_from(job, duration, lower_bound);
        if (lower_bound == INT64_MAX) {
            return std::nullopt;
        }
        if (job.reservation >= 0) {
            lower_bound = std::max(lower_bound,
                                   snapshot_.windows[static_cast<size_t>(job.reservation)].start);
        }
        // The start is the bound or a change: a job fits at t only if it fits at the last
        // change of what it asks for at or before t. Changes of what it does not ask for
        // (memory, GPUs, generic resources) cannot make it fit, so they are not tried. Changes are
        // gathered a horizon at a time, since the start is most often soon after the bound.
        if (auto placement = fits_at(job, lower_bound, duration, cpus_needed)) {
            return std::pair{lower_bound, std::move(*placement)};  // most often: no change needed
        }
        std::vector<int64_t> candidates;
        for (int64_t span = std::max<int64_t>(duration, 3600);; span *= 4) {
            const int64_t until = span > INT64_MAX - lower_bound ? INT64_MAX : lower_bound + span;
            const bool more = changes_between(job, lower_bound, until, candidates);
            std::sort(candidates.begin(), candidates.end());
            candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
            for (int64_t t : candidates) {
                if (auto placement = fits_at(job, t, duration, cpus_needed)) {
                    return std::pair{t, std::move(*placement)};
                }
            }
            if (!more) {
                return std::nullopt;
            }
            candidates.clear();
            lower_bound = until;
        }
    }

    std::optional<Placement> fits_at(const PendingJob& job,
                                     int64_t start,
                                     int64_t duration,
                                     int64_t cpus_needed) {
        if (pass_cpus_total().min_free(start, duration) < cpus_needed) {
            return std::nullopt;  // no node scan can find them
        }
        return place_at(job, start, duration, true);
    }

    // `from`, or later for a job with a per-node shape: the time by which enough up nodes
    // could each take one of its tasks. INT64_MAX: never (too few nodes are up).
    int64_t enough_nodes_from(const PendingJob& job, int64_t duration, int64_t from) const {
        const ResourceRequest& r = job.request;
        const size_t nodes_needed = std::max<uint32_t>(r.nodes_min, 1);
        const bool shaped = r.nodes_min > 1 || r.ntasks_per_node > 0 || r.cpus_per_task > 1
                            || r.asks_memory() || r.gpus_per_node > 0 || r.whole_node
                            || r.min_cpus_per_node > 1 || !r.gres_per_node.empty() || r.whole_cores;
        std::vector<int64_t> one_task_from;
        for (int index : nodes_for(job)) {
            const NodeCapacity& node = snapshot_.nodes[static_cast<size_t>(index)];
            if (!node.up || !has_gres(r, node)) {
                continue;
            }
            if (!shaped) {
                one_task_from.push_back(from);
                continue;
            }
            const HeldNode view = node_view(static_cast<size_t>(index));
            int64_t earliest = view.earliest_start(NodeResource::kCpus, from, duration,
                                                   cpus_for_one_task(r, node));
            if (const int64_t memory = memory_for_one_task(r, node); memory > 0) {
                earliest = std::max(earliest, view.earliest_start(NodeResource::kMemory, from,
                                                                  duration, memory));
            }
            if (const int64_t gpus = gpus_for_one_task(r, node); gpus > 0) {
                earliest = std::max(earliest,
                                    view.earliest_start(NodeResource::kGpus, from, duration, gpus));
            }
            for (const GresUse& use : r.gres_per_node) {
                earliest = std::max(earliest, view.earliest_start(NodeResource::generic(use.kind),
                                                                  from, duration, use.per_node));
            }
            one_task_from.push_back(earliest);
        }
        if (one_task_from.size() < nodes_needed) {
            return INT64_MAX;
        }
        std::nth_element(one_task_from.begin(),
                         one_task_from.begin() + static_cast<std::ptrdiff_t>(nodes_needed - 1),
                         one_task_from.end());
        return one_task_from[nodes_needed - 1];
    }

    // Appends the times in (after, until] at which what `job` asks for changes on its nodes,
    // its reservation windows end, or its switch limit lapses; true if any comes later.
    bool changes_between(const PendingJob& job,
                         int64_t after,
                         int64_t until,
                         std::vector<int64_t>& out) const {
        const ResourceRequest& r = job.request;
        bool more = false;
        const auto add = [&](int64_t t) {
            if (t > until) {
                more = true;
            } else if (t > after) {
                out.push_back(t);
            }
        };
        if (r.max_leaf_switches > 0) {
            add(job.switches_wait_until);  // from then on any switches will do
        }
        for (int index : nodes_for(job)) {
            const HeldNode view = node_view(static_cast<size_t>(index));
            more |= view.append_changes_between(NodeResource::kCpus, after, until, out);
            if (r.asks_memory()) {
                more |= view.append_changes_between(NodeResource::kMemory, after, until, out);
            }
            if (r.gpus_per_node > 0 || r.whole_node) {
                more |= view.append_changes_between(NodeResource::kGpus, after, until, out);
            }
            for (const GresUse& use : r.gres_per_node) {
                more |= view.append_changes_between(NodeResource::generic(use.kind), after, until,
                                                    out);
            }
            for (int w : windows_on(index)) {
                add(snapshot_.windows[static_cast<size_t>(w)].end);
            }
        }
        return more;
    }

    void sort_rest_shortest_first() {
        const auto& pending = snapshot_.pending;
        std::stable_sort(order_.begin() + static_cast<std::ptrdiff_t>(position_ + 1), order_.end(),
                         [&](size_t a, size_t b) {
                             return duration_of(pending[a]) < duration_of(pending[b]);
                         });
    }

    Snapshot snapshot_;
    BackfillOptions options_;
    const NodeTimelines* committed_;        // the running jobs' holds
    std::unique_ptr<NodeTimelines> owned_;  // built from snapshot_.running when none is given
    // What this pass took on each node it started or reserved a job on, in an arena freed
    // with the pass. held_slot_: per node, the index into held_, or -1.
    std::pmr::monotonic_buffer_resource arena_;
    std::vector<std::pmr::vector<PassHold>> held_;
    std::vector<int32_t> held_slot_;
    std::vector<std::tuple<int64_t, int64_t, int64_t>> pass_holds_;  // start, duration, CPUs
    std::optional<AvailabilityProfile> pass_cpus_total_;
    std::vector<std::vector<int>> node_windows_;  // per node: the windows on it; empty: none
    std::vector<int64_t> limit_used_;
    std::vector<size_t> order_;  // indexes into snapshot_.pending, in planning order
    size_t position_ = 0;
    size_t max_reservations_ = 0;
    size_t reservation_attempts_ = 0;
    bool blocked_ = false;                 // a higher-priority job waits for resources
    std::map<Shape, int64_t> failed_for_;  // shortest duration that did not start now
    std::map<uint64_t, std::vector<size_t>> het_groups_;  // leader id: components in snapshot_
    // The nodes that the components of the heterogeneous job being placed hold so far: the
    // next component takes none of them, since components never share a node (as in Slurm).
    std::set<int> component_nodes_;

    // Fills component_nodes_ while one heterogeneous job is placed, and empties it after.
    class ComponentNodes {
    public:
        explicit ComponentNodes(std::set<int>& nodes) : nodes_(nodes) { nodes_.clear(); }

        ~ComponentNodes() { nodes_.clear(); }

        ComponentNodes(const ComponentNodes&) = delete;
        ComponentNodes& operator=(const ComponentNodes&) = delete;

        void add(const std::vector<int>& nodes) const { nodes_.insert(nodes.begin(), nodes.end()); }

    private:
        std::set<int>& nodes_;
    };

    // CPUs free at `now` per node and summed per partition: an upper bound on what a job
    // could get now, kept as jobs start.
    std::vector<int64_t> free_now_;
    std::vector<int64_t> partition_free_now_;
    // Node i is in partitions partitions_of_node_[partitions_from_[i] .. partitions_from_[i+1]).
    std::vector<size_t> partitions_from_;
    std::vector<int> partitions_of_node_;
    // GPU indexes free at `now` of the nodes where this pass started GPU jobs (the others'
    // are the snapshot's), and the locality `k` of them reach, by (node, k), when first asked.
    std::map<size_t, std::vector<int>> gpus_free_changed_;
    mutable std::map<std::pair<size_t, int32_t>, GpuSetLocality> reachable_cache_;
};

PlanPass::PlanPass(Snapshot snapshot,
                   const BackfillOptions& options,
                   const NodeTimelines* committed)
    : planner_(std::make_unique<Planner>(std::move(snapshot), options, committed)) {}

PlanPass::~PlanPass() = default;
PlanPass::PlanPass(PlanPass&&) noexcept = default;
PlanPass& PlanPass::operator=(PlanPass&&) noexcept = default;

Decisions PlanPass::step(const PassBudget& budget) {
    return planner_->step(budget);
}

bool PlanPass::done() const {
    return planner_->done();
}

size_t PlanPass::jobs_tested() const {
    return planner_->jobs_tested();
}

const Snapshot& PlanPass::snapshot() const {
    return planner_->snapshot();
}

Snapshot PlanPass::release_snapshot() && {
    return planner_->release_snapshot();
}

std::string wait_reason_name(const WaitJob& wait, const std::vector<UsageLimit>& limits) {
    switch (wait.reason) {
        case WaitReason::kPriority:
            return "Priority";
        case WaitReason::kResources:
            return "Resources";
        case WaitReason::kLimit:
            return limits.at(static_cast<size_t>(wait.limit)).reason;
        case WaitReason::kNodeNotAvail:
            return "ReqNodeNotAvail";
        case WaitReason::kReservation:
            return "Reservation";
    }
    return "None";
}

Decisions plan(const Snapshot& snapshot, const BackfillOptions& options) {
    return PlanPass(snapshot, options).step({});
}

}  // namespace cohort::sched
