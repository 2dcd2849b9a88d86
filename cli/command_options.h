// The options of a command with many of them (batch, run, alloc: about a hundred each), built
// on CLI11 only as far as a command line needs.
//
// CLI11 checks each new option against every earlier one, copying their name lists, so an App
// of all the job options took 0.4 to 0.6 ms to build: a third of a submission's client time,
// where a command line names a handful. A command therefore defines its options through an
// OptionRegistrar, which runs twice: first it records only their names (the catalogue, which
// spells out abbreviations and tells which names take a value), then it adds to a CLI::App
// only the options the words name, or every option when they ask for help.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace cohort::cli {

// Every name of a command's options ("-N", "--nodes") and whether it takes a value, without
// building them. It starts with CLI11's own -h,--help.
class OptionCatalogue {
public:
    OptionCatalogue();

    // `names` as CLI11 writes them: "-N,--nodes", "--requeue{yes},--no-requeue{no}".
    void add(const std::string& names, bool takes_value);

    // Whether the option named "-N" or "--nodes" takes a value; nullopt when there is none.
    std::optional<bool> takes_value(const std::string& name) const;

    // Every long name without its dashes ("nodes"), with the index of the option it names:
    // the names of one option (--cluster, --clusters) share it.
    const std::vector<std::pair<std::string, size_t>>& long_names() const { return long_names_; }

private:
    std::vector<bool> takes_value_;                   // by option index
    std::unordered_map<std::string, size_t> option_;  // "-N", "--nodes" -> option index
    std::vector<std::pair<std::string, size_t>> long_names_;
};

// The options an App needs for some words to parse as they would on an App of every option:
// each name the words write, a long name by any prefix of it (--ntas wants --ntasks), a short
// one by every letter of a cluster (-Hv wants -H and -v). Wanting too many is harmless;
// values and operands that look like names only add options that stay unused.
class OptionSelection {
public:
    static OptionSelection all();

    void add_words(const std::vector<std::string>& words);

    // Whether the option CLI11 names `names` ("-N,--nodes") is wanted.
    bool wants(const std::string& names) const;

private:
    bool all_ = false;
    std::unordered_set<char> short_names_;
    std::vector<std::string> long_prefixes_;
};

// What a command's option definitions talk to. Cataloguing, it records names and adds nothing
// (each call returns nullptr); building, it adds to the App the options the selection wants
// and returns nullptr for the others, so settings chained on an option go in `if`s.
class OptionRegistrar {
public:
    explicit OptionRegistrar(OptionCatalogue& catalogue) : catalogue_(&catalogue) {}

    OptionRegistrar(CLI::App& app, const OptionSelection& selection)
        : app_(&app), selection_(&selection) {}

    template <typename T>
    CLI::Option* add_option(const std::string& names, T& variable, const std::string& description) {
        return wants(names, true) ? added(app_->add_option(names, variable, description)) : nullptr;
    }

    template <typename T>
    CLI::Option* add_flag(const std::string& names, T& variable, const std::string& description) {
        return wants(names, false) ? added(app_->add_flag(names, variable, description)) : nullptr;
    }

    CLI::Option* add_flag_callback(const std::string& names,
                                   std::function<void()> callback,
                                   const std::string& description);

    // An option whose value may be left out when `value_optional` (CLI11's expected(0, 1)).
    CLI::Option* add_option_function(const std::string& names,
                                     std::function<void(const std::string&)> callback,
                                     const std::string& description,
                                     bool value_optional = false);

    // The options added so far, in order (none while cataloguing).
    const std::vector<CLI::Option*>& added() const { return added_; }

private:
    bool wants(const std::string& names, bool takes_value);
    CLI::Option* added(CLI::Option* option);

    OptionCatalogue* catalogue_ = nullptr;
    CLI::App* app_ = nullptr;
    const OptionSelection* selection_ = nullptr;
    std::vector<CLI::Option*> added_;
};

using DefineOptions = std::function<void(OptionRegistrar&)>;

// One command's options: the catalogue at once, Apps of the options some words name on demand.
// `define` is run again for each App, so what it binds must outlive this.
class CommandOptions {
public:
    CommandOptions(std::string description, DefineOptions define);

    const OptionCatalogue& catalogue() const { return catalogue_; }

    // An App of the options `selection` wants that stops at the first operand (the script or
    // command), as sbatch, srun and salloc do.
    std::unique_ptr<CLI::App> app_for(const OptionSelection& selection) const;

private:
    std::string description_;
    DefineOptions define_;
    OptionCatalogue catalogue_;
};

}  // namespace cohort::cli
