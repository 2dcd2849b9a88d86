// The values users type into job options: time limits, sizes and counts, arrays,
// dependencies and begin times. The first byte picks the parser.
#include <cstdint>
#include <string_view>

#include "common/begin_time.h"
#include "common/size_spec.h"
#include "common/time_spec.h"
#include "scheduler/dependency.h"
#include "scheduler/job_array.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) {
        return 0;
    }
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 6) {
        case 0:
            (void)cohort::parse_time_limit(text);
            break;
        case 1:
            (void)cohort::parse_memory_mib(text);
            break;
        case 2:
            (void)cohort::parse_count(text, 0);
            break;
        case 3:
            (void)cohort::sched::parse_array_spec(text, 100001);
            break;
        case 4:
            (void)cohort::sched::parse_dependency(text);
            break;
        default:
            (void)cohort::parse_begin_time(text, 1700000000);
            break;
    }
    return 0;
}
