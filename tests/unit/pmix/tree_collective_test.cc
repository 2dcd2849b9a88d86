// The step managers' tree collective: shape, gathering in any delivery order, early
// contributions, consecutive rounds, and failing a round that cannot finish.
#include "pmix/tree_collective.h"

#include <algorithm>
#include <deque>
#include <random>

#include <gtest/gtest.h>

namespace cohort::pmix {
namespace {

TEST(TreeShape, KaryOverTheParticipatingNodes) {
    const std::vector<uint32_t> nodes{0, 1, 2, 3, 4};
    TreeShape root = TreeShape::over(nodes, 0, 2);
    EXPECT_TRUE(root.is_root);
    EXPECT_EQ(root.children, (std::vector<uint32_t>{1, 2}));
    TreeShape inner = TreeShape::over(nodes, 1, 2);
    EXPECT_FALSE(inner.is_root);
    EXPECT_EQ(inner.parent, 0u);
    EXPECT_EQ(inner.children, (std::vector<uint32_t>{3, 4}));
    TreeShape leaf = TreeShape::over(nodes, 4, 2);
    EXPECT_EQ(leaf.parent, 1u);
    EXPECT_TRUE(leaf.children.empty());
    // Over a subset, positions count within the subset.
    TreeShape sparse = TreeShape::over({2, 5, 7}, 7, 1);
    EXPECT_EQ(sparse.parent, 5u);
}

// N nodes exchanging messages through one queue, delivered in a shuffled order.
class Network {
public:
    Network(uint32_t nodes, uint32_t fanout, unsigned seed) : random_(seed) {
        for (uint32_t i = 0; i < nodes; ++i) {
            members_.emplace_back(i, fanout);
            all_.push_back(i);
        }
        done_.resize(nodes);
    }

    void contribute(uint32_t node, const std::string& data) {
        take(node, members_[node].contribute("ns:*", all_, data));
    }

    void deliver_all() {
        for (int guard = 0; guard < 10000 && !queue_.empty(); ++guard) {
            std::uniform_int_distribution<size_t> pick(0, queue_.size() - 1);
            const size_t at = pick(random_);
            TreeCollectives::Send send = queue_[at];
            queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(at));
            take(send.to, members_[send.to].receive(send.message));
        }
    }

    const std::vector<std::vector<TreeCollectives::Completion>>& done() const { return done_; }

    TreeCollectives& member(uint32_t node) { return members_[node]; }

private:
    void take(uint32_t node, TreeCollectives::Actions actions) {
        for (auto& send : actions.sends) {
            queue_.push_back(send);
        }
        for (auto& completion : actions.completions) {
            done_[node].push_back(completion);
        }
    }

    std::mt19937 random_;
    std::vector<TreeCollectives> members_;
    std::vector<uint32_t> all_;
    std::deque<TreeCollectives::Send> queue_;
    std::vector<std::vector<TreeCollectives::Completion>> done_;
};

std::string sorted(std::string text) {
    std::sort(text.begin(), text.end());
    return text;
}

TEST(TreeCollectives, EveryNodeGetsEveryContributionInAnyDeliveryOrder) {
    for (unsigned seed = 0; seed < 20; ++seed) {
        Network network(7, 2, seed);
        // Contributions interleave with deliveries: some arrive before the local one.
        for (uint32_t node : {6u, 3u, 0u, 5u}) {
            network.contribute(node, std::string(1, static_cast<char>('a' + node)));
        }
        network.deliver_all();
        for (uint32_t node : {1u, 2u, 4u}) {
            network.contribute(node, std::string(1, static_cast<char>('a' + node)));
        }
        network.deliver_all();
        for (uint32_t node = 0; node < 7; ++node) {
            ASSERT_EQ(network.done()[node].size(), 1u) << "seed " << seed << " node " << node;
            EXPECT_EQ(network.done()[node][0].status, 0);
            EXPECT_EQ(sorted(network.done()[node][0].data), "abcdefg");
        }
    }
}

TEST(TreeCollectives, ConsecutiveRoundsStayApart) {
    Network network(3, 2, 1);
    network.contribute(1, "x");
    network.contribute(1, "y");  // node 1 is already in round 1 while the others are in 0
    network.contribute(0, "p");
    network.contribute(2, "q");
    network.deliver_all();
    network.contribute(0, "r");
    network.contribute(2, "s");
    network.deliver_all();
    for (uint32_t node = 0; node < 3; ++node) {
        ASSERT_EQ(network.done()[node].size(), 2u);
        EXPECT_EQ(sorted(network.done()[node][0].data), "pqx");
        EXPECT_EQ(sorted(network.done()[node][1].data), "rsy");
    }
}

TEST(TreeCollectives, ASingleNodeCompletesAtOnce) {
    TreeCollectives alone(0, 32);
    auto actions = alone.contribute("ns:*", {0}, "blob");
    EXPECT_TRUE(actions.sends.empty());
    ASSERT_EQ(actions.completions.size(), 1u);
    EXPECT_EQ(actions.completions[0].data, "blob");
    EXPECT_TRUE(alone.finished("ns:*", 0));
}

TEST(TreeCollectives, ARoundThatCannotFinishNamesWhoIsMissingAndFails) {
    TreeCollectives root(0, 2);
    auto actions = root.contribute("ns:*", {0, 1, 2}, "a");
    EXPECT_TRUE(actions.completions.empty());
    EXPECT_EQ(root.waiting_for("ns:*", 0), (std::vector<uint32_t>{1, 2}));
    protocol::CollectiveMessage from_one;
    from_one.collective = "ns:*";
    from_one.from_node = 1;
    from_one.data = "b";
    root.receive(from_one);
    EXPECT_EQ(root.waiting_for("ns:*", 0), (std::vector<uint32_t>{2}));
    auto failed = root.fail("ns:*", 0, 2);
    ASSERT_EQ(failed.completions.size(), 1u);
    EXPECT_EQ(failed.completions[0].status, 2);
    // The children hear of the failure too, so none of them waits for ever.
    ASSERT_EQ(failed.sends.size(), 2u);
    EXPECT_FALSE(failed.sends[0].message.up);
    EXPECT_EQ(failed.sends[0].message.status, 2);
    EXPECT_TRUE(root.fail("ns:*", 0, 2).completions.empty());
}

}  // namespace
}  // namespace cohort::pmix
