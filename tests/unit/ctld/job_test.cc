// The controller's in-memory job against the record that travels and is stored.
#include "scheduler/ctld/job.h"

#include <thread>

#include <gtest/gtest.h>

#include "common/protocol/codec.h"

namespace cohort::ctld {
namespace {

// Every field set to a value other than its default, the payload left out.
protocol::JobRecord full_record() {
    protocol::JobRecord r;
    r.job_id = 41;
    protocol::JobSpec& s = r.spec;
    s.name = "train";
    s.partition = "gpu";
    s.nodes_min = 2;
    s.nodes_max = 3;
    s.ntasks = 8;
    s.ntasks_per_node = 4;
    s.cpus_per_task = 6;
    s.cpus_per_task_set = true;
    s.mem_mib = 4096;
    s.time_limit_s = 3600;
    s.output = "out-%j.txt";
    s.error = "err-%j.txt";
    s.cwd = "/home/alice/project";
    s.export_spec = "NONE";
    s.hold = true;
    s.nice = 5;
    s.dependency = "afterok:7";
    s.kill_on_invalid_dep = false;
    s.array = "0-9%2";
    s.begin_time = 1700000000;
    s.account = "phys";
    s.qos = "high";
    s.reservation = "maint";
    s.gpu.type = "h100";
    s.gpu.gpus = 8;
    s.gpu.per_node = 4;
    s.gpu.per_task = 1;
    s.gpu.cpus_per_gpu = 6;
    s.gpu.mem_per_gpu_mib = 1024;
    s.gpu.ntasks_per_gpu = 1;
    s.gpu.bind = "closest";
    s.switches = 1;
    s.switches_wait_s = 60;
    s.segment = 2;
    s.distribution = "cyclic";
    s.requeue = 0;
    s.open_mode = "append";
    s.signal = "B:USR1@120";
    s.comment = "sweep 3";
    s.mail_type = 3;
    s.mail_user = "alice@example.org";
    s.exclude = {"n9"};
    s.sharing = protocol::NodeSharing::kExclusive;
    s.mem_whole_node = true;
    s.mem_per_cpu_mib = 2048;
    s.constraint = "[rack1|rack2]&ib";
    s.prefer = "h100";
    s.nodelist = {"n1", "n2"};
    s.licenses = "matlab:2";
    s.overcommit = true;
    s.mincpus = 4;
    s.hint = "nomultithread";
    s.time_min_s = 600;
    s.wait_all_nodes = true;
    s.kept_options = {{"--wckey", "proj"}, {"--reboot", ""}};
    r.uid = 1000;
    r.gid = 100;
    r.user_name = "alice";
    r.partition = "gpu";
    r.state = JobState::kCompleting;
    r.reason = "Resources";
    r.held = true;
    r.priority = 12345;
    r.submit_time = 1700000001;
    r.start_time = 1700000002;
    r.end_time = 1700000003;
    r.time_limit_s = 3600;
    r.nodes = {"n1", "n2"};
    r.tasks_per_node = {4, 4};
    r.cpus_per_node = {24, 24};
    r.mem_per_node_mib = 4096;
    r.exit_code = 3;
    r.exit_signal = 9;
    r.restart_count = 2;
    r.next_step_id = 5;
    r.interactive = true;
    r.final_state = JobState::kFailed;
    r.nodes_cleaning = {"n2"};
    r.array_job_id = 40;
    r.array_task_id = 1;
    r.array_max_running = 2;
    r.array_count = 10;
    r.array_min = 0;
    r.array_max = 9;
    r.array_step = 1;
    r.expected_start = 1700000100;
    r.gpu_alloc = {{{0, 1}, {0, 1, 2}, {"0000:01:00.0", "0000:02:00.0"}, "nvidia"},
                   {{2, 3}, {}, {"0000:03:00.0", "0000:04:00.0"}, "nvidia"}};
    r.failed_nodes = {"n3"};
    r.requeue_action = protocol::RequeueAction::kRequeueHeld;
    r.het_job_id = 38;
    r.het_job_offset = 2;
    r.het_size = 3;
    return r;
}

TEST(Job, RecordRoundTripKeepsEveryStoredField) {
    const protocol::JobRecord record = full_record();
    // Byte equality of the encodings: a field the conversion forgets changes them.
    EXPECT_EQ(protocol::encode_body(to_record(job_from_record(record))),
              protocol::encode_body(record));
}

TEST(Job, HoldsNoPayload) {
    protocol::JobRecord record = full_record();
    record.spec.script = "#!/bin/sh\ntrue\n";
    record.spec.script_args = {"a"};
    record.spec.env = {{"PATH", "/usr/bin"}};
    record.spec.command_line = "sbatch job.sh";
    record.spec.submit_host = "login1";
    const protocol::JobRecord back = to_record(job_from_record(record));
    EXPECT_TRUE(back.spec.script.empty());
    EXPECT_TRUE(back.spec.script_args.empty());
    EXPECT_TRUE(back.spec.env.empty());
    EXPECT_TRUE(back.spec.command_line.empty());
    EXPECT_TRUE(back.spec.submit_host.empty());
}

TEST(Job, DerivesWhatThePlannerPlacesOnce) {
    protocol::JobRecord record;
    record.spec.nodes_min = 2;
    record.spec.gpu.per_node = 4;
    record.spec.gpu.ntasks_per_gpu = 1;
    record.spec.gpu.cpus_per_gpu = 8;
    const Job job = job_from_record(record);
    EXPECT_EQ(job.resources.gpus_per_node, 4);
    EXPECT_EQ(job.resources.nodes_min, 2u);
    EXPECT_EQ(job.geometry().ntasks_per_node, 4u);  // one task per GPU
    EXPECT_EQ(job.geometry().cpus_per_task, 8u);
}

TEST(Job, SharedStringsAreHeldOnce) {
    protocol::JobRecord record = full_record();
    const size_t before = InternedString::pool_size();
    std::vector<Job> jobs;
    for (int i = 0; i < 1000; ++i) {
        record.job_id = static_cast<uint64_t>(100 + i);
        jobs.push_back(job_from_record(record));
    }
    EXPECT_EQ(&jobs.front().spec.cwd.str(), &jobs.back().spec.cwd.str());
    EXPECT_EQ(&jobs.front().user_name.str(), &jobs.back().user_name.str());
    EXPECT_LE(InternedString::pool_size(), before + 24);  // the record's distinct strings
}

TEST(Job, DisplayIdNamesTheArrayTask) {
    Job job;
    job.job_id = 42;
    EXPECT_EQ(job.display_id(), "42");
    job.array_job_id = 40;
    job.array_task_id = 2;
    EXPECT_EQ(job.display_id(), "40_2");
}

TEST(InternedString, ComparesAndFreesWithItsLastHolder) {
    InternedString a = std::string("interned-test-unique-text");
    InternedString b = "interned-test-unique-text";
    EXPECT_EQ(a, b);
    EXPECT_EQ(&a.str(), &b.str());
    EXPECT_EQ(a, "interned-test-unique-text");
    EXPECT_NE(a, InternedString("other"));
    EXPECT_EQ(fmt::format("[{}]", a), "[interned-test-unique-text]");
    EXPECT_TRUE(InternedString().empty());
    EXPECT_EQ(InternedString(""), InternedString());
    const size_t held = InternedString::pool_size();
    a = InternedString();
    b = InternedString();
    EXPECT_EQ(InternedString::pool_size(), held - 1);
}

// Handles copied and dropped on several threads while others intern the same text: the
// text is freed exactly when its last handle goes, never while one is being made.
TEST(InternedString, ThreadsSharingATextFreeItOnceTheLastLetsGo) {
    const size_t before = InternedString::pool_size();
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([] {
            for (int i = 0; i < 20000; ++i) {
                InternedString made("interned-threads-text");
                InternedString copy = made;
                ASSERT_EQ(copy.str(), "interned-threads-text");
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    EXPECT_EQ(InternedString::pool_size(), before);
}

}  // namespace
}  // namespace cohort::ctld
