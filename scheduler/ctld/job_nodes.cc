#include "scheduler/ctld/job_nodes.h"

#include <algorithm>
#include <optional>
#include <tuple>

namespace cohort::ctld {

Result<NodeChoice> node_choice(const std::vector<std::string>& nodelist,
                               const std::vector<std::string>& exclude,
                               const std::string& constraint,
                               const std::string& prefer,
                               uint32_t nodes_needed) {
    NodeChoice choice;
    choice.nodelist = nodelist;
    choice.exclude = exclude;
    choice.nodes_needed = std::max<uint32_t>(nodes_needed, 1);
    for (const auto& [option, text, into] :
         {std::tuple{"--constraint", &constraint, &choice.constraint},
          std::tuple{"--prefer", &prefer, &choice.prefer}}) {
        if (text->empty()) {
            continue;
        }
        auto parsed = parse_feature_expr(option, *text);
        if (!parsed) {
            return parsed.status();
        }
        *into = std::move(*parsed);
    }
    return choice;
}

std::vector<int> eligible_nodes(const std::vector<int>& members,
                                const NodeChoice& choice,
                                const ClusterConfig& config,
                                const std::vector<sched::NodeCapacity>& nodes,
                                bool count_down_nodes) {
    const auto named = [](const std::vector<std::string>& names, const std::string& name) {
        return std::find(names.begin(), names.end(), name) != names.end();
    };
    // With more nodes needed than -w names, the others come from the rest of the partition
    // (as Slurm adds them), after the named ones.
    const bool named_only = choice.nodelist.size() >= choice.nodes_needed;
    std::vector<int> allowed;
    std::vector<std::vector<std::string>> features;
    for (bool named_pass : {true, false}) {
        for (int index : members) {
            const sched::NodeCapacity& node = nodes[static_cast<size_t>(index)];
            const bool in_list = named(choice.nodelist, node.name);
            const bool wanted = choice.nodelist.empty() ? !named_pass
                                : named_pass            ? in_list
                                                        : !in_list && !named_only;
            if (wanted && !named(choice.exclude, node.name)) {
                allowed.push_back(index);
                features.push_back(config.features_of(node.name, node.gpu_type));
            }
        }
    }
    const auto matching = [&](const FeatureExpr& expr) {
        std::vector<int> out;
        for (size_t i = 0; i < allowed.size(); ++i) {
            if (node_matches(expr, features[i])) {
                out.push_back(allowed[i]);
            }
        }
        return out;
    };
    std::vector<int> chosen = allowed;
    if (choice.constraint) {
        // The first alternative with enough usable nodes; else the first with enough nodes,
        // to wait for; else the largest, too small: the job can never run.
        std::optional<std::vector<int>> fallback;
        chosen.clear();
        for (const FeatureExpr& alternative : matching_alternatives(*choice.constraint)) {
            std::vector<int> candidates = matching(alternative);
            const auto usable = std::count_if(candidates.begin(), candidates.end(), [&](int n) {
                return count_down_nodes || nodes[static_cast<size_t>(n)].up;
            });
            if (static_cast<uint32_t>(usable) >= choice.nodes_needed) {
                chosen = std::move(candidates);
                fallback.reset();
                break;
            }
            const bool enough = candidates.size() >= choice.nodes_needed;
            if (!fallback || (enough && fallback->size() < choice.nodes_needed)
                || (!enough && candidates.size() > fallback->size())) {
                fallback = std::move(candidates);
            }
        }
        if (fallback) {
            chosen = std::move(*fallback);
        }
    }
    if (choice.prefer) {
        // After the named nodes, which come first whatever their features.
        std::vector<int> preferred = matching(*choice.prefer);
        std::stable_partition(chosen.begin(), chosen.end(), [&](int n) {
            return named(choice.nodelist, nodes[static_cast<size_t>(n)].name)
                   || std::find(preferred.begin(), preferred.end(), n) != preferred.end();
        });
    }
    return chosen;
}

}  // namespace cohort::ctld
