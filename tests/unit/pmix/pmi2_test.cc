// PMI-2 as MPICH's pmi2 client drives it: a small client written here from the wire format
// (its own framing and parsing, not the server's) talks to PmiService over a real
// socketpair per rank, on two simulated nodes whose fence blobs the test carries between
// them. One thread; every read waits at most kWait.
#include <cstdio>
#include <map>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pmix/pmi2_wire.h"
#include "pmix/pmi_service.h"

namespace cohort::pmix {
namespace {

constexpr int kWait = 2000;  // ms

using Reply = std::map<std::string, std::string>;

// --- the client side: bytes on a socket, as a rank's PMI library writes and reads them

void write_all(int fd, const std::string& bytes) {
    ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
}

// Waits (bounded) for bytes, then reads up to `n`; "" on end of stream or timeout.
std::string read_some(int fd, size_t n) {
    pollfd ready{fd, POLLIN, 0};
    if (poll(&ready, 1, kWait) != 1) {
        return "";
    }
    std::string bytes(n, '\0');
    const ssize_t got = read(fd, bytes.data(), n);
    bytes.resize(got > 0 ? static_cast<size_t>(got) : 0);
    return bytes;
}

std::string read_exactly(int fd, size_t n) {
    std::string bytes;
    while (bytes.size() < n) {
        std::string more = read_some(fd, n - bytes.size());
        if (more.empty()) {
            break;
        }
        bytes += more;
    }
    return bytes;
}

std::string read_line(int fd) {
    std::string text;
    for (std::string c = read_some(fd, 1); !c.empty() && c != "\n"; c = read_some(fd, 1)) {
        text += c;
    }
    return text;
}

void send_command(int fd, const std::string& body) {
    char header[16];
    std::snprintf(header, sizeof header, "%-6d", static_cast<int>(body.size()));
    write_all(fd, std::string(header, 6) + body);
}

// One reply: "cmd" and the other pairs, ";;" read back as ';'. Empty when none came.
Reply read_command(int fd) {
    const std::string header = read_exactly(fd, 6);
    if (header.size() != 6) {
        return {};
    }
    const std::string body = read_exactly(fd, static_cast<size_t>(std::atoi(header.c_str())));
    Reply pairs;
    std::string key;
    std::string value;
    bool in_value = false;
    for (size_t i = 0; i < body.size(); ++i) {
        const char c = body[i];
        if (!in_value) {
            if (c == '=') {
                in_value = true;
            } else {
                key += c;
            }
        } else if (c == ';' && i + 1 < body.size() && body[i + 1] == ';') {
            value += ';';
            ++i;
        } else if (c == ';') {
            pairs[key] = value;
            key.clear();
            value.clear();
            in_value = false;
        } else {
            value += c;
        }
    }
    return pairs;
}

// True when the server closed this connection (end of stream within kWait).
bool closed_by_server(int fd) {
    pollfd ready{fd, POLLIN, 0};
    char c = 0;
    return poll(&ready, 1, kWait) == 1 && read(fd, &c, 1) == 0;
}

// --- the server side: one node's PmiService behind socketpairs, pumped by the test

class Node {
public:
    explicit Node(PmiJob job) : service_(std::move(job)) {}

    ~Node() {
        for (auto& [client, fds] : links_) {
            close(fds.first);
            if (fds.second >= 0) {
                close(fds.second);
            }
        }
    }

    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;

    // A new rank connection; the test writes and reads the returned fd.
    PmiClient connect() {
        int fds[2];
        EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
        fcntl(fds[1], F_SETFL, O_NONBLOCK);
        const PmiClient client = next_++;
        links_[client] = {fds[0], fds[1]};
        return client;
    }

    int fd(PmiClient client) { return links_.at(client).first; }

    // The service reads whatever `client` has sent and answers, as the step manager does.
    PmiOutput serve(PmiClient client) {
        std::string bytes;
        char buffer[4096];
        for (ssize_t n; (n = read(links_.at(client).second, buffer, sizeof buffer)) > 0;) {
            bytes.append(buffer, static_cast<size_t>(n));
        }
        PmiOutput out = service_.on_bytes(client, bytes);
        deliver(out);
        if (!out.error.empty()) {
            close(links_.at(client).second);
            links_.at(client).second = -1;
            service_.forget(client);
        }
        if (out.barrier) {
            blob_ = *out.barrier;
        }
        return out;
    }

    void deliver(const PmiOutput& out) {
        for (const auto& reply : out.replies) {
            const int server_end = links_.at(reply.client).second;
            ASSERT_GE(server_end, 0);
            write_all(server_end, reply.bytes);
        }
    }

    const std::string& blob() const { return blob_; }

    PmiService& service() { return service_; }

private:
    PmiService service_;
    std::map<PmiClient, std::pair<int, int>> links_;  // client end, server end
    PmiClient next_ = 1;
    std::string blob_;
};

PmiJob node_job(std::vector<uint32_t> ranks, std::map<std::string, uint32_t> ids) {
    PmiJob job;
    job.kvsname = "cohort.5.0";
    job.size = 4;
    job.process_mapping = pmi_process_mapping({0, 0, 1, 1});
    job.local_ranks = std::move(ranks);
    job.ids = std::move(ids);
    return job;
}

PmiJob node0_job() {
    return node_job({0, 1}, {{"1111", 0}, {"2222", 1}});
}

PmiJob node1_job() {
    return node_job({2, 3}, {{"3333", 2}, {"4444", 3}});
}

// The request and its reply, as the client library does it.
Reply call(Node& node, PmiClient client, const std::string& body) {
    send_command(node.fd(client), body);
    node.serve(client);
    return read_command(node.fd(client));
}

// init line + fullinit, as PMI2_Init does with PMI_JOBID and PMI_ID set.
Reply start_rank(Node& node, PmiClient client, const std::string& id) {
    write_all(node.fd(client), "cmd=init pmi_version=2 pmi_subversion=0\n");
    node.serve(client);
    EXPECT_EQ(read_line(node.fd(client)),
              "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0");
    return call(node, client,
                "cmd=fullinit;pmijobid=cohort.5.0;pmirank=" + id + ";threaded=FALSE;");
}

// --- the wire format itself

TEST(Pmi2Wire, EncodesWithALeftJustifiedLengthAndEscapedSemicolons) {
    EXPECT_EQ(encode_pmi2("kvs-put-response", {{"rc", "0"}}), "26    cmd=kvs-put-response;rc=0;");
    EXPECT_EQ(encode_pmi2("x", {{"value", "a;b"}}), "17    cmd=x;value=a;;b;");
    // The name is a value too: a ';' in it must not start a pair (found by fuzz_pmi2).
    const std::string framed = encode_pmi2("a;rc=1", {});
    EXPECT_EQ(framed, "12    cmd=a;;rc=1;");
    auto back = parse_pmi2_command(framed.substr(kPmi2HeaderSize));
    ASSERT_TRUE(back) << back.status().message();
    EXPECT_EQ(back->name, "a;rc=1");
    EXPECT_TRUE(back->pairs.empty());
}

TEST(Pmi2Wire, ParsesPairsInOrderAndUnescapes) {
    auto command = parse_pmi2_command("cmd=kvs-put;key=k;value=a;;b=c;;;");
    ASSERT_TRUE(command) << command.status().message();
    EXPECT_EQ(command->name, "kvs-put");
    EXPECT_EQ(command->find("key"), "k");
    EXPECT_EQ(command->find("value"), "a;b=c;");
    EXPECT_FALSE(command->find("jobid"));
}

TEST(Pmi2Wire, RejectsMalformedCommandsWithTheReason) {
    EXPECT_NE(parse_pmi2_command("key=k;cmd=x;").status().message().find("does not start with"),
              std::string::npos);
    EXPECT_NE(parse_pmi2_command("cmd=x;key=k").status().message().find("does not end with ';'"),
              std::string::npos);
    EXPECT_NE(parse_pmi2_command("cmd=x;junk;").status().message().find("without '='"),
              std::string::npos);
    EXPECT_NE(parse_pmi2_command("cmd=x;=v;").status().message().find("bad key"),
              std::string::npos);
    EXPECT_FALSE(parse_pmi2_command(""));
}

TEST(Pmi2Wire, TakesWholeFramesOnly) {
    std::optional<std::string> body;
    std::string buffer = "    13cmd=fi";  // right-justified works too
    ASSERT_TRUE(take_pmi2_frame(buffer, body));
    EXPECT_FALSE(body);
    buffer += "nalize;17    ";
    ASSERT_TRUE(take_pmi2_frame(buffer, body));
    EXPECT_EQ(body, "cmd=finalize;");
    EXPECT_EQ(buffer, "17    ");
    std::string letters = "abcdefcmd=x;";
    EXPECT_NE(take_pmi2_frame(letters, body).message().find("is not a decimal number"),
              std::string::npos);
    std::string huge = "999999cmd=x;";
    EXPECT_NE(take_pmi2_frame(huge, body).message().find("out of range"), std::string::npos);
    std::string zero = "0     ";
    EXPECT_FALSE(take_pmi2_frame(zero, body));
}

// --- the protocol over sockets

TEST(Pmi2OverSockets, FullinitAndJobAttributesGiveWhatMpichReads) {
    Node node(node0_job());
    const PmiClient rank1 = node.connect();
    Reply init = start_rank(node, rank1, "2222");
    EXPECT_EQ(init["cmd"], "fullinit-response");
    EXPECT_EQ(init["rc"], "0");
    EXPECT_EQ(init["pmi-version"], "2");
    EXPECT_EQ(init["pmi-subversion"], "0");
    EXPECT_EQ(init["rank"], "1");
    EXPECT_EQ(init["size"], "4");
    EXPECT_EQ(init["appnum"], "0");
    EXPECT_EQ(init["debugged"], "FALSE");
    EXPECT_EQ(init["pmiverbose"], "FALSE");
    EXPECT_EQ(init.count("spawner-jobid"), 0u);  // its presence would mean "spawned"

    Reply jobid = call(node, rank1, "cmd=job-getid;");
    EXPECT_EQ(jobid["cmd"], "job-getid-response");
    EXPECT_EQ(jobid["jobid"], "cohort.5.0");
    Reply mapping = call(node, rank1, "cmd=info-getjobattr;key=PMI_process_mapping;");
    EXPECT_EQ(mapping["found"], "TRUE");
    EXPECT_EQ(mapping["value"], "(vector,(0,2,2))");
    Reply universe = call(node, rank1, "cmd=info-getjobattr;key=universeSize;");
    EXPECT_EQ(universe["value"], "4");
    Reply other = call(node, rank1, "cmd=info-getjobattr;key=PMI_netinfo_of_task;");
    EXPECT_EQ(other["rc"], "0");
    EXPECT_EQ(other["found"], "FALSE");
    Reply done = call(node, rank1, "cmd=finalize;");
    EXPECT_EQ(done["cmd"], "finalize-response");
    EXPECT_EQ(done["rc"], "0");
}

// PMI_FD mode: fullinit names PMI_RANK (or PMI_ID where set); the channel already said.
TEST(Pmi2OverSockets, FullinitOnTheInheritedChannelNamesItsOwnRank) {
    Node node(node0_job());
    const PmiClient rank0 = node.connect();
    const PmiClient rank1 = node.connect();
    node.service().attach(rank0, 0);
    node.service().attach(rank1, 1);
    Reply by_rank = start_rank(node, rank0, "0");
    EXPECT_EQ(by_rank["rc"], "0");
    EXPECT_EQ(by_rank["rank"], "0");
    Reply other = start_rank(node, rank1, "0");  // rank 1's channel claiming rank 0
    EXPECT_EQ(other["rc"], "-1");
    EXPECT_EQ(other["errmsg"], "this connection is already rank 1");
    EXPECT_TRUE(closed_by_server(node.fd(rank1)));
}

TEST(Pmi2OverSockets, FullinitOnTheInheritedChannelMayNameItsPmiId) {
    Node node(node0_job());
    const PmiClient rank1 = node.connect();
    node.service().attach(rank1, 1);
    Reply by_id = start_rank(node, rank1, "2222");
    EXPECT_EQ(by_id["rc"], "0");
    EXPECT_EQ(by_id["rank"], "1");
}

TEST(Pmi2OverSockets, PutsOfOtherNodesArriveThroughTheFence) {
    Node node0(node0_job());
    Node node1(node1_job());
    const PmiClient r0 = node0.connect();
    const PmiClient r1 = node0.connect();
    const PmiClient r2 = node1.connect();
    const PmiClient r3 = node1.connect();
    EXPECT_EQ(start_rank(node0, r0, "1111")["rank"], "0");
    EXPECT_EQ(start_rank(node0, r1, "2222")["rank"], "1");
    EXPECT_EQ(start_rank(node1, r2, "3333")["rank"], "2");
    EXPECT_EQ(start_rank(node1, r3, "4444")["rank"], "3");

    // A UCX-address-like value with ';' and '=' in it travels intact.
    EXPECT_EQ(call(node0, r0, "cmd=kvs-put;key=addr-0;value=a;;b=c;")["rc"], "0");
    EXPECT_EQ(call(node1, r3, "cmd=kvs-put;key=addr-3;value=dd;")["rc"], "0");

    // Each node's fence goes out once both its ranks are in; a threaded client's thrid
    // comes back with the answer.
    send_command(node0.fd(r0), "cmd=kvs-fence;thrid=0x7f00;");
    EXPECT_FALSE(node0.serve(r0).barrier);
    send_command(node0.fd(r1), "cmd=kvs-fence;");
    EXPECT_TRUE(node0.serve(r1).barrier);
    send_command(node1.fd(r2), "cmd=kvs-fence;");
    node1.serve(r2);
    send_command(node1.fd(r3), "cmd=kvs-fence;");
    EXPECT_TRUE(node1.serve(r3).barrier);

    const std::string all = node0.blob() + node1.blob();
    node0.deliver(node0.service().barrier_done(all));
    node1.deliver(node1.service().barrier_done(all));
    Reply fenced = read_command(node0.fd(r0));
    EXPECT_EQ(fenced["cmd"], "kvs-fence-response");
    EXPECT_EQ(fenced["rc"], "0");
    EXPECT_EQ(fenced["thrid"], "0x7f00");
    for (auto [node, client] : {std::pair{&node0, r1}, {&node1, r2}, {&node1, r3}}) {
        EXPECT_EQ(read_command(node->fd(client))["rc"], "0");
    }

    Reply remote = call(node0, r1, "cmd=kvs-get;jobid=cohort.5.0;srcid=3;key=addr-3;");
    EXPECT_EQ(remote["cmd"], "kvs-get-response");
    EXPECT_EQ(remote["found"], "TRUE");
    EXPECT_EQ(remote["value"], "dd");
    Reply escaped = call(node1, r2, "cmd=kvs-get;jobid=cohort.5.0;srcid=-1;key=addr-0;");
    EXPECT_EQ(escaped["value"], "a;b=c");
    Reply missing = call(node1, r2, "cmd=kvs-get;jobid=cohort.5.0;srcid=-1;key=nothing;");
    EXPECT_EQ(missing["rc"], "0");
    EXPECT_EQ(missing["found"], "FALSE");
    Reply foreign = call(node1, r2, "cmd=kvs-get;jobid=other.1.0;srcid=-1;key=addr-0;");
    EXPECT_EQ(foreign["rc"], "-1");
    EXPECT_NE(foreign["errmsg"].find("unknown jobid 'other.1.0'"), std::string::npos);
}

TEST(Pmi2OverSockets, AFailedFenceAnswersWithAnError) {
    Node node(node0_job());
    const PmiClient r0 = node.connect();
    const PmiClient r1 = node.connect();
    start_rank(node, r0, "1111");
    start_rank(node, r1, "2222");
    send_command(node.fd(r0), "cmd=kvs-fence;");
    node.serve(r0);
    send_command(node.fd(r1), "cmd=kvs-fence;");
    ASSERT_TRUE(node.serve(r1).barrier);
    node.deliver(node.service().barrier_failed());
    Reply failed = read_command(node.fd(r0));
    EXPECT_EQ(failed["rc"], "-1");
    EXPECT_NE(failed["errmsg"].find("fence"), std::string::npos);
}

TEST(Pmi2OverSockets, NodeAttributesAreSharedAndCanBeAwaited) {
    Node node(node0_job());
    const PmiClient r0 = node.connect();
    const PmiClient r1 = node.connect();
    start_rank(node, r0, "1111");
    start_rank(node, r1, "2222");
    Reply absent = call(node, r1, "cmd=info-getnodeattr;key=shm;wait=FALSE;");
    EXPECT_EQ(absent["rc"], "0");
    EXPECT_EQ(absent["found"], "FALSE");
    // Rank 1 waits for the segment name rank 0 has not put yet.
    send_command(node.fd(r1), "cmd=info-getnodeattr;key=shm;wait=TRUE;");
    EXPECT_TRUE(node.serve(r1).replies.empty());
    EXPECT_EQ(call(node, r0, "cmd=info-putnodeattr;key=shm;value=/dev/shm/seg;")["rc"], "0");
    Reply awaited = read_command(node.fd(r1));
    EXPECT_EQ(awaited["cmd"], "info-getnodeattr-response");
    EXPECT_EQ(awaited["found"], "TRUE");
    EXPECT_EQ(awaited["value"], "/dev/shm/seg");
}

TEST(Pmi2OverSockets, AbortCarriesTheRankAndMessage) {
    Node node(node0_job());
    const PmiClient r1 = node.connect();
    start_rank(node, r1, "2222");
    send_command(node.fd(r1), "cmd=abort;isworld=TRUE;msg=application called MPI_Abort;");
    PmiOutput out = node.serve(r1);
    ASSERT_TRUE(out.abort);
    EXPECT_EQ(out.abort->rank, 1);
    EXPECT_NE(out.abort->exit_code, 0);
    EXPECT_EQ(out.abort->message, "application called MPI_Abort");
}

TEST(Pmi2OverSockets, UnsupportedCommandsFailCleanly) {
    Node node(node0_job());
    const PmiClient r0 = node.connect();
    start_rank(node, r0, "1111");
    for (const std::string name : {"spawn", "name-publish", "name-lookup"}) {
        Reply reply = call(node, r0, "cmd=" + name + ";name=svc;port=1;");
        EXPECT_EQ(reply["cmd"], name + "-response");
        EXPECT_EQ(reply["rc"], "-1");
        EXPECT_NE(reply["errmsg"].find("not supported by Cohort"), std::string::npos);
    }
    Reply unknown = call(node, r0, "cmd=frobnicate;");
    EXPECT_EQ(unknown["rc"], "-1");
    EXPECT_EQ(unknown["errmsg"], "unknown PMI-2 command 'frobnicate'");
    // The connection still works.
    EXPECT_EQ(call(node, r0, "cmd=job-getid;")["jobid"], "cohort.5.0");
}

TEST(Pmi2OverSockets, AWrongIdIsRefusedAndTheOtherRanksCarryOn) {
    Node node(node0_job());
    const PmiClient intruder = node.connect();
    Reply refused = start_rank(node, intruder, "1");
    EXPECT_EQ(refused["cmd"], "fullinit-response");
    EXPECT_EQ(refused["rc"], "-1");
    EXPECT_EQ(refused["errmsg"], "PMI_ID is not one of this step's ranks on this node");
    EXPECT_TRUE(closed_by_server(node.fd(intruder)));

    const PmiClient wrong_job = node.connect();
    write_all(node.fd(wrong_job), "cmd=init pmi_version=2 pmi_subversion=0\n");
    node.serve(wrong_job);
    read_line(node.fd(wrong_job));
    Reply other = call(node, wrong_job, "cmd=fullinit;pmijobid=cohort.9.0;pmirank=1111;");
    EXPECT_NE(other["errmsg"].find("is not this step's job"), std::string::npos);

    const PmiClient r0 = node.connect();
    const PmiClient r1 = node.connect();
    EXPECT_EQ(start_rank(node, r0, "1111")["rc"], "0");
    EXPECT_EQ(start_rank(node, r1, "2222")["rc"], "0");
    EXPECT_TRUE(node.service().all_claimed());
    send_command(node.fd(r0), "cmd=kvs-fence;");
    node.serve(r0);
    send_command(node.fd(r1), "cmd=kvs-fence;");
    EXPECT_TRUE(node.serve(r1).barrier);  // the refused connections do not count
}

TEST(Pmi2OverSockets, MalformedInputGetsAClearErrorAndACloseNotACrash) {
    Node node(node0_job());
    // A command before fullinit.
    const PmiClient early = node.connect();
    write_all(node.fd(early), "cmd=init pmi_version=2 pmi_subversion=0\n");
    node.serve(early);
    read_line(node.fd(early));
    Reply before = call(node, early, "cmd=kvs-get;key=PMI_process_mapping;");
    EXPECT_EQ(before["rc"], "-1");
    EXPECT_EQ(before["errmsg"], "PMI-2 kvs-get before fullinit");
    EXPECT_TRUE(closed_by_server(node.fd(early)));

    // A body that is not key=value;...
    const PmiClient garbled = node.connect();
    write_all(node.fd(garbled), "cmd=init pmi_version=2 pmi_subversion=0\n");
    node.serve(garbled);
    read_line(node.fd(garbled));
    Reply bad = call(node, garbled, "fullinit pmirank=1111");
    EXPECT_EQ(bad["rc"], "-1");
    EXPECT_NE(bad["errmsg"].find("PMI-2 command"), std::string::npos) << bad["errmsg"];
    EXPECT_TRUE(closed_by_server(node.fd(garbled)));

    // A header that is not a length.
    const PmiClient noise = node.connect();
    write_all(node.fd(noise), "cmd=init pmi_version=2 pmi_subversion=0\n");
    node.serve(noise);
    read_line(node.fd(noise));
    write_all(node.fd(noise), "GET / HTTP/1.1\r\n\r\n");
    PmiOutput out = node.serve(noise);
    EXPECT_NE(out.error.find("is not a decimal number"), std::string::npos) << out.error;
    EXPECT_TRUE(closed_by_server(node.fd(noise)));

    // None of it touched the ranks.
    const PmiClient r0 = node.connect();
    EXPECT_EQ(start_rank(node, r0, "1111")["rank"], "0");
}

TEST(Pmi2OverSockets, PmiOneAndPmiTwoRanksShareOneFence) {
    Node node(node0_job());
    const PmiClient v1 = node.connect();
    const PmiClient v2 = node.connect();
    write_all(node.fd(v1), "cmd=initack pmiid=1111\n");
    node.serve(v1);
    EXPECT_EQ(read_line(node.fd(v1)), "cmd=initack rc=0");
    for (int i = 0; i < 3; ++i) {
        read_line(node.fd(v1));  // set size, rank, debug
    }
    start_rank(node, v2, "2222");
    write_all(node.fd(v1), "cmd=put kvsname=cohort.5.0 key=k1 value=v1\n");
    node.serve(v1);
    EXPECT_EQ(read_line(node.fd(v1)), "cmd=put_result rc=0 msg=success");
    write_all(node.fd(v1), "cmd=barrier_in\n");
    node.serve(v1);
    send_command(node.fd(v2), "cmd=kvs-fence;");
    ASSERT_TRUE(node.serve(v2).barrier);
    node.deliver(node.service().barrier_done(node.blob()));
    EXPECT_EQ(read_line(node.fd(v1)), "cmd=barrier_out rc=0");
    EXPECT_EQ(read_command(node.fd(v2))["cmd"], "kvs-fence-response");
    EXPECT_EQ(call(node, v2, "cmd=kvs-get;key=k1;")["value"], "v1");
}

}  // namespace
}  // namespace cohort::pmix
