// The PMI-1 wire protocol as MPICH's simple client drives it.
#include <gtest/gtest.h>

#include "pmix/pmi_simple.h"

namespace cohort::pmix {
namespace {

PmiJob two_local_of_four() {
    PmiJob job;
    job.kvsname = "cohort.5.0";
    job.size = 4;
    job.process_mapping = pmi_process_mapping({2, 2});
    job.local_ranks = {0, 1};
    return job;
}

std::string only_reply(const PmiSimpleServer::Output& output) {
    EXPECT_EQ(output.replies.size(), 1u);
    return output.replies.empty() ? "" : output.replies[0].line;
}

TEST(PmiProcessMapping, RunsOfEqualNodesAreCompressed) {
    EXPECT_EQ(pmi_process_mapping({2, 2}), "(vector,(0,2,2))");
    EXPECT_EQ(pmi_process_mapping({3, 3, 1}), "(vector,(0,2,3),(2,1,1))");
    EXPECT_EQ(pmi_process_mapping({1}), "(vector,(0,1,1))");
}

TEST(PmiSimpleServer, AnswersTheStartUpQueriesMpichMakes) {
    PmiSimpleServer server(two_local_of_four());
    auto initack = server.on_line(1, "cmd=initack pmiid=1");
    ASSERT_EQ(initack.replies.size(), 4u);
    EXPECT_EQ(initack.replies[0].line, "cmd=initack rc=0\n");
    EXPECT_EQ(initack.replies[1].line, "cmd=set size=4\n");
    EXPECT_EQ(initack.replies[2].line, "cmd=set rank=1\n");
    EXPECT_EQ(only_reply(server.on_line(1, "cmd=init pmi_version=1 pmi_subversion=1")),
            "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
    EXPECT_EQ(only_reply(server.on_line(1, "cmd=get_maxes")),
            "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024 rc=0\n");
    EXPECT_EQ(only_reply(server.on_line(1, "cmd=get_my_kvsname")),
            "cmd=my_kvsname kvsname=cohort.5.0 rc=0\n");
    EXPECT_EQ(only_reply(server.on_line(1, "cmd=get kvsname=cohort.5.0 key=PMI_process_mapping")),
            "cmd=get_result rc=0 msg=success value=(vector,(0,2,2))\n");
    EXPECT_EQ(only_reply(server.on_line(1, "cmd=get kvsname=cohort.5.0 key=nothing")),
            "cmd=get_result rc=-1 msg=key_nothing_not_found\n");
}

TEST(PmiSimpleServer, PutsOfOtherNodesArriveThroughTheBarrier) {
    PmiSimpleServer node0(two_local_of_four());
    PmiJob job1 = two_local_of_four();
    job1.local_ranks = {2, 3};
    PmiSimpleServer node1(job1);

    node0.on_line(1, "cmd=put kvsname=k key=addr-0 value=aa=bb");  // '=' inside a value
    node1.on_line(7, "cmd=put kvsname=k key=addr-2 value=cc");
    EXPECT_FALSE(node0.on_line(1, "cmd=barrier_in").barrier);  // rank 1 has not arrived
    auto ready0 = node0.on_line(2, "cmd=barrier_in");
    ASSERT_TRUE(ready0.barrier);
    node1.on_line(7, "cmd=barrier_in");
    auto ready1 = node1.on_line(8, "cmd=barrier_in");
    ASSERT_TRUE(ready1.barrier);

    const std::string all = *ready0.barrier + *ready1.barrier;
    auto released = node0.barrier_done(all);
    ASSERT_EQ(released.replies.size(), 2u);
    EXPECT_EQ(released.replies[0].line, "cmd=barrier_out rc=0\n");
    EXPECT_EQ(only_reply(node0.on_line(2, "cmd=get kvsname=k key=addr-2")),
            "cmd=get_result rc=0 msg=success value=cc\n");
    node1.barrier_done(all);
    EXPECT_EQ(only_reply(node1.on_line(8, "cmd=get kvsname=k key=addr-0")),
            "cmd=get_result rc=0 msg=success value=aa=bb\n");
}

TEST(PmiSimpleServer, AFailedBarrierReleasesEveryWaitingRankWithAnError) {
    PmiSimpleServer server(two_local_of_four());
    server.on_line(1, "cmd=barrier_in");
    ASSERT_TRUE(server.on_line(2, "cmd=barrier_in").barrier);
    auto failed = server.barrier_failed();
    ASSERT_EQ(failed.replies.size(), 2u);
    EXPECT_EQ(failed.replies[0].line, "cmd=barrier_out rc=-1\n");
    // The next barrier starts afresh.
    EXPECT_FALSE(server.on_line(1, "cmd=barrier_in").barrier);
}

TEST(PmiSimpleServer, AbortCarriesTheRankAndExitCode) {
    PmiSimpleServer server(two_local_of_four());
    server.on_line(3, "cmd=initack pmiid=1");
    auto aborted = server.on_line(3, "cmd=abort exitcode=7");
    ASSERT_TRUE(aborted.abort);
    EXPECT_EQ(aborted.abort->rank, 1);
    EXPECT_EQ(aborted.abort->exit_code, 7);
}

TEST(PmiSimpleServer, ALineWithoutACommandIsAProtocolError) {
    PmiSimpleServer server(two_local_of_four());
    EXPECT_FALSE(server.on_line(1, "hello").error.empty());
    EXPECT_EQ(only_reply(server.on_line(1, "cmd=spawn")),
            "cmd=spawn_result rc=-1 msg=unsupported_by_cohort\n");
}

}  // namespace
}  // namespace cohort::pmix
