// --signal=[{R|B}:]SIG[@TIME] and signal names, as sbatch and scancel take them.
#include "common/warning_signal.h"

#include <csignal>

#include <gtest/gtest.h>

namespace cohort {
namespace {

TEST(WarningSignal, DefaultsToSixtySecondsToTheSteps) {
    auto warning = parse_warning_signal("--signal", "USR1");
    ASSERT_TRUE(warning) << warning.status().message();
    EXPECT_EQ(warning->signal, SIGUSR1);
    EXPECT_EQ(warning->seconds_before, 60);
    EXPECT_FALSE(warning->batch_shell_only);
    EXPECT_FALSE(warning->at_preemption_only);
}

TEST(WarningSignal, ReadsFlagsNumbersAndTheSigPrefix) {
    auto batch = parse_warning_signal("--signal", "B:SIGUSR2@120");
    ASSERT_TRUE(batch);
    EXPECT_EQ(batch->signal, SIGUSR2);
    EXPECT_EQ(batch->seconds_before, 120);
    EXPECT_TRUE(batch->batch_shell_only);
    auto both = parse_warning_signal("--signal", "RB:10@0");
    ASSERT_TRUE(both);
    EXPECT_EQ(both->signal, 10);
    EXPECT_EQ(both->seconds_before, 0);
    EXPECT_TRUE(both->batch_shell_only);
    EXPECT_TRUE(both->at_preemption_only);
    auto none = parse_warning_signal("--signal", "");
    ASSERT_TRUE(none);
    EXPECT_EQ(none->signal, 0);
}

TEST(WarningSignal, BadValuesNameTheOptionTheValueAndTheForm) {
    for (const char* bad : {"USR3", "X:USR1", "USR1@", "USR1@-1", "USR1@65536", "B:", "@60"}) {
        auto warning = parse_warning_signal("--signal", bad);
        ASSERT_FALSE(warning) << bad;
        EXPECT_EQ(warning.status().message(),
                  std::string("--signal: invalid value '") + bad
                          + "' (accepted: [{R|B}:]SIGNAL[@SECONDS], e.g. B:USR1@120; SECONDS "
                            "0-65535, default 60)");
    }
}

TEST(SignalName, TakesNamesWithOrWithoutSigAndNumbers) {
    EXPECT_EQ(*parse_signal_name("-s", "TERM"), SIGTERM);
    EXPECT_EQ(*parse_signal_name("-s", "SIGKILL"), SIGKILL);
    EXPECT_EQ(*parse_signal_name("-s", "2"), SIGINT);
    auto bad = parse_signal_name("-s", "0");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.status().message(),
              "-s: invalid signal '0' (accepted: a name such as TERM or USR1, or a number)");
}

}  // namespace
}  // namespace cohort
