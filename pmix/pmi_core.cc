// The identity, KVS and barrier state shared by the PMI-1 and PMI-2 servers of one step.
#include "pmix/pmi_core.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

namespace cohort::pmix {
namespace {

// Netstring-like framing, so blobs of several nodes can simply be concatenated.
void append_field(std::string& blob, const std::string& field) {
    blob += std::to_string(field.size()) + ":" + field;
}

bool read_field(const std::string& blob, size_t& at, std::string& field) {
    const size_t colon = blob.find(':', at);
    if (colon == std::string::npos) {
        return false;
    }
    char* end = nullptr;
    const size_t length = std::strtoul(blob.c_str() + at, &end, 10);
    if (end != blob.c_str() + colon || colon + 1 + length > blob.size()) {
        return false;
    }
    field = blob.substr(colon + 1, length);
    at = colon + 1 + length;
    return true;
}

}  // namespace

std::string pmi_process_mapping(const std::vector<uint32_t>& node_of_rank) {
    // Runs of consecutive ranks on one node, as (node, ranks).
    std::vector<std::pair<uint32_t, uint32_t>> blocks;
    for (uint32_t node : node_of_rank) {
        if (!blocks.empty() && blocks.back().first == node) {
            ++blocks.back().second;
        } else {
            blocks.emplace_back(node, 1);
        }
    }
    // Blocks of one size on consecutive nodes make one (start, nodes, ranks) triple.
    std::vector<std::string> triples;
    for (size_t b = 0; b < blocks.size();) {
        size_t run = 1;
        while (b + run < blocks.size() && blocks[b + run].second == blocks[b].second
               && blocks[b + run].first == blocks[b].first + run) {
            ++run;
        }
        triples.push_back("(" + std::to_string(blocks[b].first) + "," + std::to_string(run) + ","
                          + std::to_string(blocks[b].second) + ")");
        b += run;
    }
    // MPICH repeats the vector until every rank has a node: a repeating pattern (cyclic
    // gives (0,N,1) again and again) is written once.
    size_t period = triples.size();
    for (size_t p = 1; p < triples.size(); ++p) {
        if (triples.size() % p == 0
            && std::equal(triples.begin() + static_cast<std::ptrdiff_t>(p), triples.end(),
                          triples.begin())) {
            period = p;
            break;
        }
    }
    std::string mapping = "(vector";
    for (size_t t = 0; t < period; ++t) {
        mapping += "," + triples[t];
    }
    return mapping + ")";
}

void PmiOutput::merge(PmiOutput more) {
    for (auto& reply : more.replies) {
        replies.push_back(std::move(reply));
    }
    if (more.barrier) {
        barrier = std::move(more.barrier);
    }
    if (more.abort) {
        abort = std::move(more.abort);
    }
    if (!more.error.empty()) {
        error = std::move(more.error);
    }
}

PmiCore::PmiCore(PmiJob job) : job_(std::move(job)) {
    kvs_["PMI_process_mapping"] = job_.process_mapping;
}

Result<uint32_t> PmiCore::claim(PmiClient client, const std::string& id) {
    if (auto known = ranks_.find(client); known != ranks_.end()) {
        const uint32_t rank = known->second;
        auto by_id = job_.ids.find(id);
        const bool names_itself =
                id == std::to_string(rank) || (by_id != job_.ids.end() && by_id->second == rank);
        if (bound_.count(client) != 0 && names_itself) {
            return rank;
        }
        return Status::invalid(fmt::format("this connection is already rank {}", rank));
    }
    uint32_t rank = 0;
    if (requires_id()) {
        auto it = job_.ids.find(id);
        if (it == job_.ids.end()) {
            // The id itself stays out of the message: it may be a near miss of a secret.
            return Status::denied("PMI_ID is not one of this step's ranks on this node");
        }
        rank = it->second;
    } else {
        char* end = nullptr;
        const unsigned long number = std::strtoul(id.c_str(), &end, 10);
        const bool local = std::find(job_.local_ranks.begin(), job_.local_ranks.end(), number)
                           != job_.local_ranks.end();
        if (id.empty() || *end != '\0' || !local) {
            return Status::denied("rank '" + id + "' is not one of this step's ranks on this node");
        }
        rank = static_cast<uint32_t>(number);
    }
    if (!claimed_.insert(rank).second) {
        return Status::denied(fmt::format(
                "the PMI_ID of rank {} was already presented by another connection", rank));
    }
    ranks_[client] = rank;
    return rank;
}

Status PmiCore::bind(PmiClient client, uint32_t rank) {
    if (std::find(job_.local_ranks.begin(), job_.local_ranks.end(), rank)
        == job_.local_ranks.end()) {
        return Status::denied(
                fmt::format("rank {} is not one of this step's ranks on this node", rank));
    }
    if (!claimed_.insert(rank).second) {
        return Status::denied(
                fmt::format("rank {} already identified itself on another connection", rank));
    }
    ranks_[client] = rank;
    bound_.insert(client);
    return Status::ok();
}

std::optional<uint32_t> PmiCore::rank_of(PmiClient client) const {
    auto it = ranks_.find(client);
    if (it == ranks_.end()) {
        return std::nullopt;
    }
    return it->second;
}

bool PmiCore::all_claimed() const {
    return claimed_.size() >= job_.local_ranks.size();
}

void PmiCore::put(const std::string& key, const std::string& value) {
    pending_.emplace_back(key, value);
    kvs_[key] = value;  // a rank reads its own puts at once
}

std::optional<std::string> PmiCore::get(const std::string& key) const {
    auto it = kvs_.find(key);
    if (it == kvs_.end()) {
        return std::nullopt;
    }
    return it->second;
}

std::optional<std::string> PmiCore::enter_barrier(PmiClient client) {
    in_barrier_.insert(client);
    if (in_barrier_.size() != job_.local_ranks.size()) {
        return std::nullopt;
    }
    std::string blob;
    for (const auto& [key, value] : pending_) {
        append_field(blob, key);
        append_field(blob, value);
    }
    pending_.clear();
    return blob;
}

std::vector<PmiClient> PmiCore::finish_barrier(const std::string& all_nodes) {
    size_t at = 0;
    std::string key;
    std::string value;
    while (at < all_nodes.size() && read_field(all_nodes, at, key)
           && read_field(all_nodes, at, value)) {
        kvs_[key] = value;
    }
    return fail_barrier();
}

std::vector<PmiClient> PmiCore::fail_barrier() {
    std::vector<PmiClient> released(in_barrier_.begin(), in_barrier_.end());
    in_barrier_.clear();
    return released;
}

void PmiCore::forget(PmiClient client) {
    ranks_.erase(client);  // its rank stays claimed: an id is good once
    in_barrier_.erase(client);
    bound_.erase(client);
}

}  // namespace cohort::pmix
