// Builds the GPU link matrix and cliques from reported accelerator links.
#include "common/topology/gpu_links.h"

#include <algorithm>
#include <cstddef>

namespace cohort::topology {
namespace {

bool linked(const GpuLink& l) {
    return l.kind == LinkClass::kNvLink || l.kind == LinkClass::kXgmi;
}

std::vector<int> greedy_cliques(const std::vector<std::vector<GpuLink>>& m) {
    const size_t n = m.size();
    std::vector<std::vector<int>> groups;
    std::vector<int> clique(n, -1);
    for (size_t g = 0; g < n; ++g) {
        for (size_t c = 0; c < groups.size() && clique[g] < 0; ++c) {
            if (std::all_of(groups[c].begin(), groups[c].end(), [&](int member) {
                    return linked(m[g][static_cast<size_t>(member)]);
                })) {
                groups[c].push_back(static_cast<int>(g));
                clique[g] = static_cast<int>(c);
            }
        }
        if (clique[g] < 0) {
            clique[g] = static_cast<int>(groups.size());
            groups.push_back({static_cast<int>(g)});
        }
    }
    // A GPU linked to nobody in its group is not in a clique; number the rest densely.
    std::vector<int> renumbered(groups.size(), -1);
    int next = 0;
    for (size_t c = 0; c < groups.size(); ++c) {
        if (groups[c].size() > 1) {
            renumbered[c] = next++;
        }
    }
    for (int& c : clique) {
        c = renumbered[static_cast<size_t>(c)];
    }
    return clique;
}

}  // namespace

GpuLinkMatrix gpu_link_matrix(const std::vector<std::vector<LinkClass>>& pci,
                              const std::vector<FabricLink>& fabric) {
    const size_t n = pci.size();
    std::vector<std::vector<int>> direct(n, std::vector<int>(n, 0));
    std::vector<int> to_switches(n, 0);
    LinkClass kind = LinkClass::kNvLink;
    for (const FabricLink& f : fabric) {
        if (f.gpu < 0 || static_cast<size_t>(f.gpu) >= n || f.links <= 0) {
            continue;
        }
        kind = f.kind;
        const auto g = static_cast<size_t>(f.gpu);
        if (f.peer_gpu >= 0 && static_cast<size_t>(f.peer_gpu) < n && f.peer_gpu != f.gpu) {
            // Matrices list each pair both ways; a bond is one set of links.
            const auto p = static_cast<size_t>(f.peer_gpu);
            direct[g][p] = std::max(direct[g][p], f.links);
            direct[p][g] = direct[g][p];
        } else if (!f.peer_switch.empty()) {
            to_switches[g] += f.links;
        }
    }
    GpuLinkMatrix out;
    out.links.assign(n, std::vector<GpuLink>(n));
    for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < n; ++j) {
            GpuLink& l = out.links[i][j];
            if (i == j) {
                l = {LinkClass::kSelf, 0};
                continue;
            }
            const int links = direct[i][j] + std::min(to_switches[i], to_switches[j]);
            l = links > 0 ? GpuLink{kind, links} : GpuLink{pci[i][j], 0};
        }
    }
    out.cliques = greedy_cliques(out.links);
    return out;
}

std::string link_label(const GpuLink& link) {
    switch (link.kind) {
        case LinkClass::kSelf:
            return "X";
        case LinkClass::kNvLink:
            return "NV" + std::to_string(link.links);
        case LinkClass::kXgmi:
            return "XGMI";
        case LinkClass::kPix:
            return "PIX";
        case LinkClass::kPxb:
            return "PXB";
        case LinkClass::kPhb:
            return "PHB";
        case LinkClass::kNode:
            return "NODE";
        case LinkClass::kSys:
            return "SYS";
    }
    return "SYS";
}

}  // namespace cohort::topology
