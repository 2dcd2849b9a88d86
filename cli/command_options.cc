// Options defined once, catalogued by name first and built on CLI11 only where wanted.
#include "cli/command_options.h"

#include <algorithm>

namespace cohort::cli {
namespace {

// CLI11's name list split into its names, each with its dashes and without the default value
// a flag may carry: "--requeue{yes},--no-requeue{no}" -> --requeue, --no-requeue.
std::vector<std::string> split_names(const std::string& names) {
    std::vector<std::string> split;
    size_t start = 0;
    while (start <= names.size()) {
        const size_t comma = std::min(names.find(',', start), names.size());
        std::string name = names.substr(start, comma - start);
        name.erase(std::min(name.find('{'), name.size()));
        name.erase(0, std::min(name.find_first_not_of(' '), name.size()));
        name.erase(name.find_last_not_of(' ') + 1);
        if (!name.empty()) {
            split.push_back(std::move(name));
        }
        start = comma + 1;
    }
    return split;
}

bool is_long_name(const std::string& name) {
    return name.size() > 2 && name.compare(0, 2, "--") == 0;
}

}  // namespace

OptionCatalogue::OptionCatalogue() {
    add("-h,--help", false);
}

void OptionCatalogue::add(const std::string& names, bool takes_value) {
    const size_t index = takes_value_.size();
    takes_value_.push_back(takes_value);
    for (const std::string& name : split_names(names)) {
        option_.emplace(name, index);
        if (is_long_name(name)) {
            long_names_.emplace_back(name.substr(2), index);
        }
    }
}

std::optional<bool> OptionCatalogue::takes_value(const std::string& name) const {
    const auto found = option_.find(name);
    if (found == option_.end()) {
        return std::nullopt;
    }
    return takes_value_[found->second];
}

OptionSelection OptionSelection::all() {
    OptionSelection selection;
    selection.all_ = true;
    return selection;
}

void OptionSelection::add_words(const std::vector<std::string>& words) {
    for (const std::string& word : words) {
        if (word.size() < 2 || word[0] != '-' || word == "--") {
            continue;
        }
        if (word[1] != '-') {
            short_names_.insert(word.begin() + 1, word.end());
            all_ = all_ || short_names_.count('h') != 0;  // CLI11's help shows every option
            continue;
        }
        std::string prefix = word.substr(2, word.find('=') - 2);
        all_ = all_ || std::string("help").compare(0, prefix.size(), prefix) == 0;
        long_prefixes_.push_back(std::move(prefix));
    }
}

bool OptionSelection::wants(const std::string& names) const {
    if (all_) {
        return true;
    }
    for (const std::string& name : split_names(names)) {
        if (!is_long_name(name)) {
            if (name.size() == 2 && short_names_.count(name[1]) != 0) {
                return true;
            }
            continue;
        }
        for (const std::string& prefix : long_prefixes_) {
            if (name.compare(2, prefix.size(), prefix) == 0) {
                return true;
            }
        }
    }
    return false;
}

CLI::Option* OptionRegistrar::add_flag_callback(const std::string& names,
                                                std::function<void()> callback,
                                                const std::string& description) {
    if (!wants(names, false)) {
        return nullptr;
    }
    return added(app_->add_flag_callback(names, std::move(callback), description));
}

CLI::Option* OptionRegistrar::add_option_function(const std::string& names,
                                                  std::function<void(const std::string&)> callback,
                                                  const std::string& description,
                                                  bool value_optional) {
    if (!wants(names, !value_optional)) {
        return nullptr;
    }
    CLI::Option* option =
            app_->add_option_function<std::string>(names, std::move(callback), description);
    if (value_optional) {
        option->expected(0, 1);
    }
    return added(option);
}

bool OptionRegistrar::wants(const std::string& names, bool takes_value) {
    if (catalogue_ != nullptr) {
        catalogue_->add(names, takes_value);
        return false;
    }
    return selection_->wants(names);
}

CLI::Option* OptionRegistrar::added(CLI::Option* option) {
    added_.push_back(option);
    return option;
}

CommandOptions::CommandOptions(std::string description, DefineOptions define)
    : description_(std::move(description)), define_(std::move(define)) {
    OptionRegistrar cataloguing(catalogue_);
    define_(cataloguing);
}

std::unique_ptr<CLI::App> CommandOptions::app_for(const OptionSelection& selection) const {
    auto app = std::make_unique<CLI::App>(description_);
    app->prefix_command();
    OptionRegistrar building(*app, selection);
    define_(building);
    return app;
}

}  // namespace cohort::cli
