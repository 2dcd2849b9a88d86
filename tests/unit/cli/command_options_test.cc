// Job options built on demand: the catalogue names exactly what an App of every option has,
// and an App of only the options some words name parses them to the same JobOptions.
#include "cli/command_options.h"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "cli/job_options.h"

namespace cohort::cli {
namespace {

constexpr JobCommand kCommands[] = {JobCommand::kBatch, JobCommand::kRun, JobCommand::kAlloc};

TEST(CommandOptions, TheCatalogueNamesEveryOptionOfTheFullAppWithWhetherItTakesAValue) {
    for (JobCommand job_command : kCommands) {
        JobOptions options;
        const CommandOptions command("", [&options, job_command](OptionRegistrar& add) {
            add_job_options(add, options, job_command);
        });
        const std::unique_ptr<CLI::App> app = command.app_for(OptionSelection::all());
        std::set<std::string> app_names;
        for (const CLI::Option* option : app->get_options()) {
            const bool takes_value = option->get_items_expected_min() > 0;
            std::vector<std::string> names;
            for (const std::string& name : option->get_snames()) {
                names.push_back("-" + name);
            }
            for (const std::string& name : option->get_lnames()) {
                names.push_back("--" + name);
            }
            for (const std::string& name : names) {
                app_names.insert(name);
                EXPECT_EQ(command.catalogue().takes_value(name), std::optional<bool>(takes_value))
                        << name;
            }
        }
        size_t catalogued_long = 0;
        for (const auto& [name, option] : command.catalogue().long_names()) {
            EXPECT_EQ(app_names.count("--" + name), 1u) << name;
            ++catalogued_long;
        }
        EXPECT_EQ(catalogued_long,
                  std::count_if(app_names.begin(), app_names.end(),
                                [](const std::string& name) { return name.rfind("--", 0) == 0; }));
        EXPECT_GT(app_names.size(), 100u);
    }
}

TEST(CommandOptions, ASelectionWantsLongNamesByPrefixAndEveryLetterOfAShortCluster) {
    OptionSelection named;
    named.add_words({"--ntas=4", "-Hv", "--exclusive", "script.sh", "--", "-"});
    EXPECT_TRUE(named.wants("-n,--ntasks"));
    EXPECT_TRUE(named.wants("--ntasks-per-node,--tasks-per-node"));  // --ntas starts both
    EXPECT_TRUE(named.wants("-H,--hold"));
    EXPECT_TRUE(named.wants("-v,--verbose"));
    EXPECT_TRUE(named.wants("--exclusive{(bare)}"));
    EXPECT_FALSE(named.wants("-N,--nodes"));
    EXPECT_FALSE(named.wants("--requeue{yes},--no-requeue{no}"));

    OptionSelection help;
    help.add_words({"--hel"});
    EXPECT_TRUE(help.wants("-N,--nodes"));  // the help lists every option
    OptionSelection short_help;
    short_help.add_words({"-h"});
    EXPECT_TRUE(short_help.wants("--requeue{yes},--no-requeue{no}"));
}

struct Outcome {
    JobOptions options;
    std::string error;
};

Outcome parse_on(JobCommand job_command, const std::vector<std::string>& words, bool every) {
    Outcome outcome;
    const CommandOptions command("", [&outcome, job_command](OptionRegistrar& add) {
        add_job_options(add, outcome.options, job_command);
    });
    auto spelled = spell_out_prefixes(command.catalogue(), words);
    if (!spelled) {
        outcome.error = spelled.status().message();
        return outcome;
    }
    OptionSelection named = every ? OptionSelection::all() : OptionSelection{};
    named.add_words(*spelled);
    const std::unique_ptr<CLI::App> app = command.app_for(named);
    std::vector<std::string> reversed(spelled->rbegin(), spelled->rend());
    try {
        app->parse(reversed);
    } catch (const CLI::ParseError& e) {
        outcome.error = e.what();
    }
    return outcome;
}

TEST(CommandOptions, AnAppOfTheNamedOptionsParsesAsTheAppOfEveryOption) {
    const std::vector<std::vector<std::string>> lines = {
            {"-N2", "-n", "8", "--ntasks-per-node=4", "-c2", "--mem=4G", "-t", "1:00:00"},
            {"--ntasks-per-n=4", "--gpus-per-t", "1", "--cpus-per-g=8"},
            {"--ntas=4", "--exclus", "-s", "--exclusive=user"},
            {"--mail-type=BEGIN", "--mail-type", "END", "--mail-user=me"},
            {"-HQ", "--requeue", "--no-requeue", "-J", "a", "-J", "b"},
            {"--wckey=x", "--reboot", "--gpu-bind=closest", "--gpus-per-node=a100:2"},
            {"--comment", "-n 5", "--export=ALL,A=1", "-o", "out-%j", "script.sh", "-N", "9"},
            {"-n", "2", "-x"},
            {"--nodes"},
            {"--exclu"},
            {"-n", "two", "-N", "1-2", "--wrap=true"},
    };
    for (JobCommand job_command : kCommands) {
        for (const auto& line : lines) {
            const Outcome named = parse_on(job_command, line, false);
            const Outcome every = parse_on(job_command, line, true);
            EXPECT_EQ(named.error, every.error) << line.front();
            EXPECT_TRUE(named.options == every.options) << line.front();
        }
    }
    const Outcome abbreviated = parse_on(JobCommand::kBatch, {"--ntasks-per-n=4", "-N2"}, false);
    EXPECT_EQ(abbreviated.options.ntasks_per_node, "4");
    EXPECT_EQ(abbreviated.options.nodes, "2");
    EXPECT_EQ(parse_on(JobCommand::kBatch, {"-x"}, false).error,
              "--exclude: 1 required TEXT missing");
}

}  // namespace
}  // namespace cohort::cli
