// GPU set selection by locality and anti-fragmentation, with CPU and NIC binding per task.
#include "scheduler/placement/gpu_select.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>

namespace cohort::sched {
namespace {

constexpr size_t kMaxGpus = 63;  // GPU sets are bit masks, with room for Gosper's hack

uint64_t bit(int gpu) {
    return uint64_t{1} << static_cast<unsigned>(gpu);
}

// The domains of one kind (cliques, NUMA nodes, ...) as GPU masks.
struct Level {
    std::vector<int> ids;
    std::vector<uint64_t> masks;
    uint64_t covered = 0;  // GPUs that belong to some domain of this kind

    void add(int id, int gpu) {
        if (id < 0) {
            return;
        }
        const auto at = std::find(ids.begin(), ids.end(), id);
        if (at == ids.end()) {
            ids.push_back(id);
            masks.push_back(bit(gpu));
        } else {
            masks[static_cast<size_t>(at - ids.begin())] |= bit(gpu);
        }
        covered |= bit(gpu);
    }

    bool holds(uint64_t set) const {
        return std::any_of(masks.begin(), masks.end(),
                           [set](uint64_t m) { return (m & set) == set; });
    }

    // Domains the set touches; a GPU outside every domain counts as its own.
    int span(uint64_t set) const {
        int n = std::popcount(set & ~covered);
        for (uint64_t m : masks) {
            n += (m & set) != 0 ? 1 : 0;
        }
        return n;
    }
};

// The order in which locality is compared.
enum LevelIndex : size_t {
    kClique,
    kSwitch,
    kNuma,
    kSocket,
    kPrimaryLevels
};

struct Domains {
    std::array<Level, kPrimaryLevels> primary;  // kSwitch holds the outermost switch only
    Level switches;                             // every switch level
    Level host_bridges;
    std::vector<uint64_t> every;  // all domains, for the anti-fragmentation score
};

int domain_id(const GpuLocality& g, size_t level) {
    switch (level) {
        case kClique:
            return g.clique;
        case kSwitch:
            return g.switches.empty() ? -1 : g.switches.front();
        case kNuma:
            return g.numa;
        default:
            return g.socket;
    }
}

Domains domains_of(const NodeGpuLayout& layout) {
    Domains d;
    for (size_t i = 0; i < layout.gpus.size(); ++i) {
        const GpuLocality& g = layout.gpus[i];
        const int gpu = static_cast<int>(i);
        for (size_t level = 0; level < kPrimaryLevels; ++level) {
            d.primary[level].add(domain_id(g, level), gpu);
        }
        for (int s : g.switches) {
            d.switches.add(s, gpu);
        }
        d.host_bridges.add(g.host_bridge, gpu);
    }
    for (const Level* l : {&d.primary[kClique], &d.switches, &d.host_bridges, &d.primary[kNuma],
                           &d.primary[kSocket]}) {
        d.every.insert(d.every.end(), l->masks.begin(), l->masks.end());
    }
    return d;
}

GpuSetLocality locality(const Domains& d, uint64_t set) {
    if (std::popcount(set) <= 1) {
        return {true, true, true, true};
    }
    return {d.primary[kClique].holds(set), d.primary[kSwitch].holds(set),
            d.primary[kNuma].holds(set), d.primary[kSocket].holds(set)};
}

// Finer locality between sets equal on GpuSetLocality: a deeper shared switch, then fewer
// cliques, switches, host bridges, NUMA nodes and sockets touched. Bigger is better.
using Detail = std::array<int, 6>;

Detail detail(const Domains& d, uint64_t set) {
    int depth = 0;
    if (std::popcount(set) > 1) {
        for (uint64_t m : d.switches.masks) {
            depth += (m & set) == set ? 1 : 0;
        }
    }
    return {depth,
            -d.primary[kClique].span(set),
            -d.primary[kSwitch].span(set),
            -d.host_bridges.span(set),
            -d.primary[kNuma].span(set),
            -d.primary[kSocket].span(set)};
}

// Higher when the GPUs left free sit in fewer, fuller domains.
int64_t concentration(const Domains& d, uint64_t left) {
    int64_t score = 0;
    for (uint64_t m : d.every) {
        const int64_t n = std::popcount(left & m);
        score += n * n;
    }
    return score;
}

GpuSetLocality pattern_locality(unsigned pattern) {
    return {(pattern & 8U) != 0, (pattern & 4U) != 0, (pattern & 2U) != 0, (pattern & 1U) != 0};
}

// Free GPUs grouped by their domains at the levels a locality pattern requires; a set inside
// one group reaches that pattern. Groups too small for `k` are dropped.
std::vector<uint64_t> groups_for(const NodeGpuLayout& layout,
                                 uint64_t free,
                                 unsigned pattern,
                                 int k) {
    std::vector<std::pair<std::array<int, kPrimaryLevels>, uint64_t>> groups;
    for (uint64_t rest = free; rest != 0; rest &= rest - 1) {
        const int gpu = std::countr_zero(rest);
        std::array<int, kPrimaryLevels> key{};
        bool placed = true;
        for (size_t level = 0; level < kPrimaryLevels; ++level) {
            if ((pattern & (8U >> level)) == 0) {
                key[level] = -1;
                continue;
            }
            key[level] = domain_id(layout.gpus[static_cast<size_t>(gpu)], level);
            placed = placed && key[level] >= 0;
        }
        if (!placed) {
            continue;
        }
        auto at = std::find_if(groups.begin(), groups.end(),
                               [&key](const auto& g) { return g.first == key; });
        if (at == groups.end()) {
            groups.emplace_back(key, bit(gpu));
        } else {
            at->second |= bit(gpu);
        }
    }
    std::vector<uint64_t> out;
    for (const auto& g : groups) {
        if (std::popcount(g.second) >= k) {
            out.push_back(g.second);
        }
    }
    return out;
}

// The groups of the best locality pattern reachable with k of the free GPUs.
std::pair<GpuSetLocality, std::vector<uint64_t>> best_groups(const NodeGpuLayout& layout,
                                                             uint64_t free,
                                                             int k) {
    if (k == 1) {
        return {pattern_locality(15), {free}};
    }
    for (unsigned pattern = 16; pattern-- > 0;) {
        std::vector<uint64_t> groups = groups_for(layout, free, pattern, k);
        if (!groups.empty()) {
            return {pattern_locality(pattern), std::move(groups)};
        }
    }
    return {};
}

struct Candidate {
    uint64_t set = 0;
    Detail detail{};
    int64_t concentration = 0;
};

bool better(const Candidate& a, const Candidate& b) {
    if (a.detail != b.detail) {
        return a.detail > b.detail;
    }
    return a.concentration > b.concentration;
}

// Every k-subset of `group` (Gosper's hack over the group's members), best kept.
Candidate best_in_group(const Domains& d, uint64_t free, uint64_t group, int k) {
    std::vector<int> members;
    for (uint64_t rest = group; rest != 0; rest &= rest - 1) {
        members.push_back(std::countr_zero(rest));
    }
    const auto m = static_cast<unsigned>(members.size());
    Candidate best;
    for (uint64_t c = (uint64_t{1} << static_cast<unsigned>(k)) - 1; c < (uint64_t{1} << m);) {
        uint64_t set = 0;
        for (uint64_t rest = c; rest != 0; rest &= rest - 1) {
            set |= bit(members[static_cast<size_t>(std::countr_zero(rest))]);
        }
        const Candidate here{set, detail(d, set), concentration(d, free & ~set)};
        if (best.set == 0 || better(here, best)) {
            best = here;
        }
        const uint64_t low = c & -c;
        const uint64_t ripple = c + low;
        c = (((ripple ^ c) >> 2U) / low) | ripple;
    }
    return best;
}

uint64_t mask_of(const std::vector<int>& gpus, size_t n) {
    uint64_t mask = 0;
    for (int g : gpus) {
        if (g >= 0 && static_cast<size_t>(g) < n) {
            mask |= bit(g);
        }
    }
    return mask;
}

// Splits the chosen GPUs and CPUs over the tasks: GPUs in order, each task's CPUs from its
// GPUs' local CPUs first, then from any free CPU.
Result<std::vector<TaskBinding>> bind_tasks(const NodeGpuLayout& layout,
                                            const std::vector<int>& gpus,
                                            const std::vector<int>& free_cpus,
                                            const GpuRequest& request) {
    const int k = static_cast<int>(gpus.size());
    const int tasks = request.tasks > 0 ? request.tasks : k;
    const int cpus_wanted = request.cpus_per_gpu * k;
    if (static_cast<int>(free_cpus.size()) < cpus_wanted) {
        return Status::unavailable(
                fmt::format("GPU request needs {} CPUs (--cpus-per-gpu={} x {} GPUs); {} are free",
                            cpus_wanted, request.cpus_per_gpu, k, free_cpus.size()));
    }
    int top = 0;
    for (int c : free_cpus) {
        top = std::max(top, c + 1);
    }
    std::vector<char> is_free(static_cast<size_t>(top), 0);
    for (int c : free_cpus) {
        is_free[static_cast<size_t>(c)] = 1;
    }
    auto take = [&is_free](int cpu, std::vector<int>& into) {
        if (cpu >= 0 && static_cast<size_t>(cpu) < is_free.size()
            && is_free[static_cast<size_t>(cpu)]) {
            is_free[static_cast<size_t>(cpu)] = 0;
            into.push_back(cpu);
        }
    };
    std::vector<TaskBinding> out(static_cast<size_t>(tasks));
    for (int t = 0; t < tasks; ++t) {
        TaskBinding& task = out[static_cast<size_t>(t)];
        // With more GPUs than tasks each task gets a run of GPUs; with fewer, tasks share.
        const int first = t * k / tasks;
        const int last = std::max(first + 1, (t + 1) * k / tasks);
        for (int i = first; i < last; ++i) {
            task.gpus.push_back(gpus[static_cast<size_t>(i)]);
        }
        const int want = cpus_wanted * (t + 1) / tasks - cpus_wanted * t / tasks;
        for (int g : task.gpus) {
            for (int cpu : layout.gpus[static_cast<size_t>(g)].local_cpus) {
                if (static_cast<int>(task.cpus.size()) == want) {
                    break;
                }
                take(cpu, task.cpus);
            }
        }
        for (int cpu = 0; cpu < top && static_cast<int>(task.cpus.size()) < want; ++cpu) {
            take(cpu, task.cpus);
        }
        std::sort(task.cpus.begin(), task.cpus.end());
        task.nic = layout.gpus[static_cast<size_t>(task.gpus.front())].nic;
    }
    return out;
}

}  // namespace

GpuSetLocality locality_of(const NodeGpuLayout& layout, const std::vector<int>& gpus) {
    return locality(domains_of(layout), mask_of(gpus, layout.gpus.size()));
}

std::optional<GpuSetLocality> best_locality(const NodeGpuLayout& layout,
                                            const std::vector<int>& free_gpus,
                                            int k) {
    const uint64_t free = mask_of(free_gpus, std::min(layout.gpus.size(), kMaxGpus));
    if (k < 1 || std::popcount(free) < k) {
        return std::nullopt;
    }
    return best_groups(layout, free, k).first;
}

Result<GpuSelection> select_gpus(const NodeGpuLayout& layout,
                                 const NodeFree& free,
                                 const GpuRequest& request) {
    const int k = request.gpus;
    if (k < 1 || layout.gpus.size() > kMaxGpus) {
        return Status::invalid(fmt::format(
                "GPU selection needs 1 to {} GPUs on a node of at most that many; asked {} of {}",
                kMaxGpus, k, layout.gpus.size()));
    }
    if (static_cast<size_t>(k) > layout.gpus.size()) {
        return Status::infeasible(
                fmt::format("asked for {} GPUs; the node has {}", k, layout.gpus.size()));
    }
    const uint64_t free_mask = mask_of(free.gpus, layout.gpus.size());
    if (std::popcount(free_mask) < k) {
        return Status::unavailable(
                fmt::format("asked for {} GPUs; {} are free", k, std::popcount(free_mask)));
    }
    const Domains d = domains_of(layout);
    auto [reached, groups] = best_groups(layout, free_mask, k);
    Candidate best;
    for (uint64_t group : groups) {
        const Candidate here = best_in_group(d, free_mask, group, k);
        if (best.set == 0 || better(here, best)) {
            best = here;
        }
    }
    GpuSelection out;
    out.locality = reached;
    for (uint64_t rest = best.set; rest != 0; rest &= rest - 1) {
        out.gpus.push_back(std::countr_zero(rest));
    }
    auto tasks = bind_tasks(layout, out.gpus, free.cpus, request);
    if (!tasks) {
        return tasks.status();
    }
    out.tasks = std::move(*tasks);
    for (const TaskBinding& t : out.tasks) {
        out.cpus.insert(out.cpus.end(), t.cpus.begin(), t.cpus.end());
    }
    std::sort(out.cpus.begin(), out.cpus.end());
    return out;
}

Result<GpuSelection> select_gpus_aligned(const NodeGpuLayout& layout,
                                         const NodeFree& free,
                                         const GpuRequest& request,
                                         const std::vector<int>& aligned) {
    const bool all_free = std::all_of(aligned.begin(), aligned.end(), [&](int g) {
        return std::find(free.gpus.begin(), free.gpus.end(), g) != free.gpus.end();
    });
    if (static_cast<int>(aligned.size()) == request.gpus && all_free) {
        auto best = best_locality(layout, free.gpus, request.gpus);
        if (best && locality_of(layout, aligned) == *best) {
            if (auto chosen = select_gpus(layout, {aligned, free.cpus}, request)) {
                return chosen;
            }
        }
    }
    return select_gpus(layout, free, request);
}

GpuNodeRank gpu_node_rank(const GpuSetLocality& reachable, int64_t free_gpus) {
    return {reachable.one_clique, -free_gpus, reachable};
}

Result<NodeChoice> choose_node(const std::vector<NodeCandidate>& nodes, const GpuRequest& request) {
    std::optional<NodeChoice> best;
    GpuNodeRank best_rank;
    bool could_ever = false;
    for (size_t i = 0; i < nodes.size(); ++i) {
        Result<GpuSelection> s = select_gpus(*nodes[i].layout, nodes[i].free, request);
        could_ever = could_ever || s || s.status().code() == StatusCode::kUnavailable;
        if (!s) {
            continue;
        }
        const GpuNodeRank here =
                gpu_node_rank(s->locality, static_cast<int64_t>(nodes[i].free.gpus.size()));
        if (!best || here > best_rank) {
            best = NodeChoice{static_cast<int>(i), std::move(*s)};
            best_rank = here;
        }
    }
    if (best) {
        return std::move(*best);
    }
    const std::string what =
            fmt::format("{} GPUs with {} CPUs each", request.gpus, request.cpus_per_gpu);
    if (!could_ever) {
        return Status::infeasible("no node has " + what);
    }
    return Status::unavailable("no node has " + what + " free now");
}

}  // namespace cohort::sched
