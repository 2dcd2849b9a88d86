#include "launcher/device_filter.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace cohort::agent {
namespace {

// The program's registers: r1 holds the context (struct bpf_cgroup_dev_ctx) on entry.
constexpr uint8_t kContext = 1, kType = 2, kAccess = 3, kMajor = 4, kMinor = 5, kScratch = 6;
constexpr uint8_t kResult = 0;

bpf_insn load_u32(uint8_t dst, int16_t offset) {
    return {BPF_LDX | BPF_MEM | BPF_W, dst, kContext, offset, 0};
}

bpf_insn alu_imm(uint8_t op, uint8_t dst, int32_t imm) {
    return {static_cast<uint8_t>(BPF_ALU64 | op | BPF_K), dst, 0, 0, imm};
}

bpf_insn copy(uint8_t dst, uint8_t src) {
    return {BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0};
}

bpf_insn jump_imm(uint8_t op, uint8_t reg, int32_t imm, int16_t skip) {
    return {static_cast<uint8_t>(BPF_JMP | op | BPF_K), reg, 0, skip, imm};
}

bpf_insn exit_insn() {
    return {BPF_JMP | BPF_EXIT, 0, 0, 0, 0};
}

long bpf(int command, bpf_attr& attr) {
    return syscall(SYS_bpf, command, &attr, sizeof(attr));
}

// Closes a descriptor when it goes out of scope.
struct Fd {
    int fd;

    ~Fd() {
        if (fd >= 0) {
            close(fd);
        }
    }
};

// Why the verifier refuses the program: the last line of its log. It writes a line per
// instruction and fails when they do not fit the buffer, so the log is asked for only after a
// load failed.
std::string verifier_reason(bpf_attr load) {
    std::vector<char> log(1 << 20);
    load.log_buf = reinterpret_cast<uintptr_t>(log.data());
    load.log_size = static_cast<uint32_t>(log.size());
    load.log_level = 1;
    const Fd again{static_cast<int>(bpf(BPF_PROG_LOAD, load))};
    std::string reason(log.data());
    while (!reason.empty() && reason.back() == '\n') {
        reason.pop_back();
    }
    if (reason.empty()) {
        return "";
    }
    return ": " + reason.substr(reason.find_last_of('\n') + 1);
}

}  // namespace

Result<DeviceRule> parse_device_rule(const std::string& text) {
    const auto bad = [&] {
        return Status::invalid(fmt::format(
                "device rule: invalid value '{}' (accepted: TYPE MAJOR:MINOR ACCESS, TYPE c, b "
                "or a, MAJOR and MINOR a number or *, ACCESS some of r, w, m)",
                text));
    };
    DeviceRule rule;
    char major[16] = {}, minor[16] = {}, access[8] = {};
    if (std::sscanf(text.c_str(), "%c %15[0-9*]:%15[0-9*] %7s", &rule.type, major, minor, access)
                != 4
        || std::strchr("cba", rule.type) == nullptr) {
        return bad();
    }
    for (auto [field, value] : {std::pair{major, &rule.major}, std::pair{minor, &rule.minor}}) {
        if (std::strcmp(field, "*") == 0) {
            *value = DeviceRule::kAny;
        } else if (std::strchr(field, '*') != nullptr || std::strlen(field) > 9) {
            return bad();
        } else {
            *value = std::stoll(field);
        }
    }
    for (const char* c = access; *c != '\0'; ++c) {
        switch (*c) {
            case 'r':
                rule.access |= BPF_DEVCG_ACC_READ;
                break;
            case 'w':
                rule.access |= BPF_DEVCG_ACC_WRITE;
                break;
            case 'm':
                rule.access |= BPF_DEVCG_ACC_MKNOD;
                break;
            default:
                return bad();
        }
    }
    return rule;
}

std::vector<bpf_insn> device_deny_program(const std::vector<DeviceRule>& rules) {
    // access_type holds the device type in its low 16 bits and the access in its high 16.
    std::vector<bpf_insn> program{
            load_u32(kType, offsetof(bpf_cgroup_dev_ctx, access_type)),
            copy(kAccess, kType),
            alu_imm(BPF_AND, kType, 0xffff),
            alu_imm(BPF_RSH, kAccess, 16),
            load_u32(kMajor, offsetof(bpf_cgroup_dev_ctx, major)),
            load_u32(kMinor, offsetof(bpf_cgroup_dev_ctx, minor)),
    };
    for (const DeviceRule& rule : rules) {
        // Each test that fails jumps past the rest of the rule's block, to the next rule.
        std::vector<std::pair<uint8_t, int32_t>> tests;
        if (rule.type != 'a') {
            tests.emplace_back(kType, rule.type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK);
        }
        if (rule.major != DeviceRule::kAny) {
            tests.emplace_back(kMajor, static_cast<int32_t>(rule.major));
        }
        if (rule.minor != DeviceRule::kAny) {
            tests.emplace_back(kMinor, static_cast<int32_t>(rule.minor));
        }
        constexpr int kAfterTests = 5;  // the access test and the denial
        const auto block = static_cast<int16_t>(tests.size() + kAfterTests);
        for (size_t i = 0; i < tests.size(); ++i) {
            const auto [reg, value] = tests[i];
            program.push_back(jump_imm(BPF_JNE, reg, value, static_cast<int16_t>(block - i - 1)));
        }
        program.push_back(copy(kScratch, kAccess));
        program.push_back(alu_imm(BPF_AND, kScratch, static_cast<int32_t>(rule.access)));
        program.push_back(jump_imm(BPF_JEQ, kScratch, 0, 2));
        program.push_back(alu_imm(BPF_MOV, kResult, 0));
        program.push_back(exit_insn());
    }
    program.push_back(alu_imm(BPF_MOV, kResult, 1));
    program.push_back(exit_insn());
    return program;
}

Status deny_devices_v2(const std::string& cgroup_dir, const std::vector<std::string>& rules) {
    std::vector<DeviceRule> parsed;
    for (const std::string& text : rules) {
        auto rule = parse_device_rule(text);
        if (!rule) {
            return rule.status();
        }
        parsed.push_back(*rule);
    }
    const std::vector<bpf_insn> program = device_deny_program(parsed);
    bpf_attr load{};
    load.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
    load.insns = reinterpret_cast<uintptr_t>(program.data());
    load.insn_cnt = static_cast<uint32_t>(program.size());
    load.license = reinterpret_cast<uintptr_t>("GPL");
    const Fd loaded{static_cast<int>(bpf(BPF_PROG_LOAD, load))};
    if (loaded.fd < 0) {
        return Status::io_error(fmt::format("loading the devices program for {}: {}{}", cgroup_dir,
                                            std::strerror(errno), verifier_reason(load)));
    }
    const Fd cgroup{open(cgroup_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (cgroup.fd < 0) {
        return Status::io_error(fmt::format("opening {}: {}", cgroup_dir, std::strerror(errno)));
    }
    bpf_attr attach{};
    attach.target_fd = static_cast<uint32_t>(cgroup.fd);
    attach.attach_bpf_fd = static_cast<uint32_t>(loaded.fd);
    attach.attach_type = BPF_CGROUP_DEVICE;
    // Its steps' cgroups run it too, with any program a site attached above the agent.
    attach.attach_flags = BPF_F_ALLOW_MULTI;
    if (bpf(BPF_PROG_ATTACH, attach) != 0) {
        return Status::io_error(fmt::format("attaching the devices program to {}: {}", cgroup_dir,
                                            std::strerror(errno)));
    }
    return Status::ok();
}

}  // namespace cohort::agent
