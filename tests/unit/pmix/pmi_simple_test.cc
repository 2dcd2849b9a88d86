// The PMI-1 wire protocol as MPICH's simple client drives it (PMI_PORT mode: initack first;
// PMI_FD mode: the channel names the rank), through PmiService: lines in, reply lines out.
#include <gtest/gtest.h>

#include "pmix/pmi_service.h"

namespace cohort::pmix {
namespace {

// Ranks 0 and 1 of 4 on this node, with the secrets the step manager handed out.
PmiJob two_local_of_four() {
    PmiJob job;
    job.kvsname = "cohort.5.0";
    job.size = 4;
    job.process_mapping = pmi_process_mapping({0, 0, 1, 1});
    job.local_ranks = {0, 1};
    job.ids = {{"1111", 0}, {"2222", 1}};
    return job;
}

PmiJob two_remote_of_four() {
    PmiJob job = two_local_of_four();
    job.local_ranks = {2, 3};
    job.ids = {{"3333", 2}, {"4444", 3}};
    return job;
}

std::string only_reply(const PmiOutput& output) {
    EXPECT_EQ(output.replies.size(), 1u);
    return output.replies.empty() ? "" : output.replies[0].bytes;
}

PmiOutput line(PmiService& service, PmiClient client, const std::string& text) {
    return service.on_bytes(client, text + "\n");
}

TEST(PmiProcessMapping, RunsOfEqualNodesAreCompressed) {
    EXPECT_EQ(pmi_process_mapping({0, 0, 1, 1}), "(vector,(0,2,2))");
    EXPECT_EQ(pmi_process_mapping({0, 0, 0, 1, 1, 1, 2}), "(vector,(0,2,3),(2,1,1))");
    EXPECT_EQ(pmi_process_mapping({0}), "(vector,(0,1,1))");
    // Cyclic: the pattern repeats, so it is written once, as Slurm writes it.
    EXPECT_EQ(pmi_process_mapping({0, 1, 2, 0, 1, 2}), "(vector,(0,3,1))");
    EXPECT_EQ(pmi_process_mapping({0, 1, 0}), "(vector,(0,2,1),(0,1,1))");
    // plane=2 over 2 nodes: 0,1,4 | 2,3.
    EXPECT_EQ(pmi_process_mapping({0, 0, 1, 1, 0}), "(vector,(0,2,2),(0,1,1))");
}

TEST(PmiSimpleServer, AnswersTheStartUpQueriesMpichMakes) {
    PmiService server(two_local_of_four());
    auto initack = line(server, 1, "cmd=initack pmiid=2222");
    ASSERT_EQ(initack.replies.size(), 4u);
    EXPECT_EQ(initack.replies[0].bytes, "cmd=initack rc=0\n");
    EXPECT_EQ(initack.replies[1].bytes, "cmd=set size=4\n");
    EXPECT_EQ(initack.replies[2].bytes, "cmd=set rank=1\n");  // the rank, not the secret
    EXPECT_EQ(only_reply(line(server, 1, "cmd=init pmi_version=1 pmi_subversion=1")),
              "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
    EXPECT_EQ(only_reply(line(server, 1, "cmd=get_maxes")),
              "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024 rc=0\n");
    EXPECT_EQ(only_reply(line(server, 1, "cmd=get_my_kvsname")),
              "cmd=my_kvsname kvsname=cohort.5.0 rc=0\n");
    EXPECT_EQ(only_reply(line(server, 1, "cmd=get kvsname=cohort.5.0 key=PMI_process_mapping")),
              "cmd=get_result rc=0 msg=success value=(vector,(0,2,2))\n");
    EXPECT_EQ(only_reply(line(server, 1, "cmd=get kvsname=cohort.5.0 key=nothing")),
              "cmd=get_result rc=-1 msg=key_nothing_not_found\n");
}

TEST(PmiSimpleServer, LinesMayArriveInPieces) {
    PmiService server(two_local_of_four());
    EXPECT_TRUE(server.on_bytes(1, "cmd=initack pm").replies.empty());
    auto rest = server.on_bytes(1, "iid=1111\ncmd=get_appnum\n");
    ASSERT_EQ(rest.replies.size(), 5u);
    EXPECT_EQ(rest.replies[4].bytes, "cmd=appnum appnum=0 rc=0\n");
}

TEST(PmiSimpleServer, AWrongIdIsRefusedAndTheStepIsUnaffected) {
    PmiService server(two_local_of_four());
    // A foreign process guesses: one clear line back, and the connection is to be closed.
    auto guess = line(server, 9, "cmd=initack pmiid=1");
    EXPECT_EQ(
            only_reply(guess),
            "cmd=initack rc=-1 msg=refused:_PMI_ID_is_not_one_of_this_step's_ranks_on_this_node\n");
    EXPECT_NE(guess.error.find("initack refused"), std::string::npos) << guess.error;
    EXPECT_FALSE(server.all_claimed());
    // Nor may it skip initack and read the KVS.
    auto sneak = line(server, 10, "cmd=get kvsname=cohort.5.0 key=PMI_process_mapping");
    EXPECT_EQ(only_reply(sneak),
              "cmd=get_result rc=-1 msg=refused:_send_initack_with_PMI_ID_first\n");
    EXPECT_FALSE(sneak.error.empty());
    server.forget(9);
    server.forget(10);

    // The real ranks connect, barrier and read as if nothing happened.
    line(server, 1, "cmd=initack pmiid=1111");
    line(server, 2, "cmd=initack pmiid=2222");
    EXPECT_TRUE(server.all_claimed());
    line(server, 1, "cmd=put kvsname=cohort.5.0 key=a value=1");
    EXPECT_FALSE(line(server, 1, "cmd=barrier_in").barrier);
    ASSERT_TRUE(line(server, 2, "cmd=barrier_in").barrier);
    EXPECT_EQ(server.barrier_done("").replies.size(), 2u);
}

TEST(PmiSimpleServer, AnIdIsGoodForOneConnectionOnly) {
    PmiService server(two_local_of_four());
    EXPECT_TRUE(line(server, 1, "cmd=initack pmiid=1111").error.empty());
    auto again = line(server, 2, "cmd=initack pmiid=1111");
    EXPECT_EQ(again.replies.size(), 1u);
    EXPECT_NE(again.error.find("rank 0 was already presented"), std::string::npos) << again.error;
}

// PMI_FD mode: MPICH's client sends no initack; the channel says which rank it is.
TEST(PmiSimpleServer, ARankOnItsInheritedChannelNeedsNoId) {
    PmiService server(two_local_of_four());
    server.attach(7, 1);
    EXPECT_EQ(only_reply(line(server, 7, "cmd=init pmi_version=1 pmi_subversion=1")),
              "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
    EXPECT_EQ(only_reply(line(server, 7, "cmd=get_my_kvsname")),
              "cmd=my_kvsname kvsname=cohort.5.0 rc=0\n");
    // Rank 1 is in: its PMI_ID no longer opens the port for anyone.
    auto stolen = line(server, 8, "cmd=initack pmiid=2222");
    EXPECT_NE(stolen.error.find("rank 1 was already presented"), std::string::npos) << stolen.error;
    // A rank that came in over the port first keeps its channel from speaking for it.
    EXPECT_TRUE(line(server, 9, "cmd=initack pmiid=1111").error.empty());
    server.attach(10, 0);
    auto late = line(server, 10, "cmd=init pmi_version=1 pmi_subversion=1");
    EXPECT_NE(late.error.find("rank 0 already identified itself"), std::string::npos) << late.error;
    EXPECT_TRUE(server.all_claimed());
}

TEST(PmiSimpleServer, PutsOfOtherNodesArriveThroughTheBarrier) {
    PmiService node0(two_local_of_four());
    PmiService node1(two_remote_of_four());
    line(node0, 1, "cmd=initack pmiid=1111");
    line(node0, 2, "cmd=initack pmiid=2222");
    line(node1, 7, "cmd=initack pmiid=3333");
    line(node1, 8, "cmd=initack pmiid=4444");

    line(node0, 1, "cmd=put kvsname=k key=addr-0 value=aa=bb");  // '=' inside a value
    line(node1, 7, "cmd=put kvsname=k key=addr-2 value=cc");
    EXPECT_FALSE(line(node0, 1, "cmd=barrier_in").barrier);  // rank 1 has not arrived
    auto ready0 = line(node0, 2, "cmd=barrier_in");
    ASSERT_TRUE(ready0.barrier);
    line(node1, 7, "cmd=barrier_in");
    auto ready1 = line(node1, 8, "cmd=barrier_in");
    ASSERT_TRUE(ready1.barrier);

    const std::string all = *ready0.barrier + *ready1.barrier;
    auto released = node0.barrier_done(all);
    ASSERT_EQ(released.replies.size(), 2u);
    EXPECT_EQ(released.replies[0].bytes, "cmd=barrier_out rc=0\n");
    EXPECT_EQ(only_reply(line(node0, 2, "cmd=get kvsname=k key=addr-2")),
              "cmd=get_result rc=0 msg=success value=cc\n");
    node1.barrier_done(all);
    EXPECT_EQ(only_reply(line(node1, 8, "cmd=get kvsname=k key=addr-0")),
              "cmd=get_result rc=0 msg=success value=aa=bb\n");
}

TEST(PmiSimpleServer, AFailedBarrierReleasesEveryWaitingRankWithAnError) {
    PmiService server(two_local_of_four());
    line(server, 1, "cmd=initack pmiid=1111");
    line(server, 2, "cmd=initack pmiid=2222");
    line(server, 1, "cmd=barrier_in");
    ASSERT_TRUE(line(server, 2, "cmd=barrier_in").barrier);
    auto failed = server.barrier_failed();
    ASSERT_EQ(failed.replies.size(), 2u);
    EXPECT_EQ(failed.replies[0].bytes, "cmd=barrier_out rc=-1\n");
    // The next barrier starts afresh.
    EXPECT_FALSE(line(server, 1, "cmd=barrier_in").barrier);
}

TEST(PmiSimpleServer, AbortCarriesTheRankAndExitCode) {
    PmiService server(two_local_of_four());
    line(server, 3, "cmd=initack pmiid=2222");
    auto aborted = line(server, 3, "cmd=abort exitcode=7");
    ASSERT_TRUE(aborted.abort);
    EXPECT_EQ(aborted.abort->rank, 1);
    EXPECT_EQ(aborted.abort->exit_code, 7);
}

TEST(PmiSimpleServer, BadLinesAreProtocolErrors) {
    PmiService server(two_local_of_four());
    line(server, 1, "cmd=initack pmiid=1111");
    EXPECT_EQ(only_reply(line(server, 1, "cmd=spawn")),
              "cmd=spawn_result rc=-1 msg=unsupported_by_cohort\n");
    EXPECT_NE(line(server, 1, "hello").error.find("PMI-1 line without cmd="), std::string::npos);
    // A closed client's further bytes are ignored.
    EXPECT_TRUE(line(server, 1, "cmd=get_appnum").replies.empty());
    auto endless = server.on_bytes(2, std::string(kPmiMaxLine + 1, 'x'));
    EXPECT_NE(endless.error.find("PMI-1 line longer than"), std::string::npos);
}

TEST(PmiSimpleServer, WithoutIdsTheRankNumberIdentifiesTheClient) {
    PmiJob job = two_local_of_four();
    job.ids.clear();  // a transport that authenticates by itself
    PmiService server(job);
    auto initack = line(server, 1, "cmd=initack pmiid=1");
    ASSERT_EQ(initack.replies.size(), 4u);
    EXPECT_EQ(initack.replies[2].bytes, "cmd=set rank=1\n");
    EXPECT_FALSE(line(server, 2, "cmd=initack pmiid=3").error.empty());  // not on this node
}

}  // namespace
}  // namespace cohort::pmix
