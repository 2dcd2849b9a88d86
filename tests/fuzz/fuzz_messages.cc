// Every message body a daemon decodes: the first byte picks the message type, the rest is
// its body. Malformed bodies must come back as errors (no crash, no unbounded allocation),
// and a body that decodes must re-encode to bytes that decode to the same bytes again.
#include <cstdint>
#include <string>
#include <string_view>

#include "common/protocol/codec.h"
#include "common/protocol/step_messages.h"

using namespace cohort::protocol;

namespace {

template <typename Message>
void round_trip(std::string_view body) {
    auto decoded = decode_body<Message>(body, "fuzzed");
    if (!decoded) {
        return;
    }
    const std::string once = encode_body(*decoded);
    auto again = decode_body<Message>(once, "re-encoded");
    if (!again || encode_body(*again) != once) {
        __builtin_trap();
    }
}

template <typename... Messages>
void decode_one_of(size_t index, std::string_view body) {
    size_t i = 0;
    ((i++ == index % sizeof...(Messages) ? round_trip<Messages>(body) : void()), ...);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) {
        return 0;
    }
    const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
    decode_one_of<
            ErrorReply, AckReply, SubmitJobRequest, SubmitJobReply, QueryJobsRequest, JobListReply,
            QueryNodesRequest, NodeListReply, NodeControlRequest, JobUpdateRequest,
            JobControlRequest, JobControlReply, AllocateRequest, AllocationReply, StepCreateRequest,
            StepCreatedReply, StepCompleteRequest, JobCompleteRequest, AcctQueryRequest,
            UsageReportRequest, UsageTotalsReply, ShareQueryRequest, ShareListReply, WillRunReply,
            BatchDoneReport, RegisterNodeRequest, RegisterNodeReply, HeartbeatMessage,
            LaunchBatchRequest, TerminateJobRequest, JobEndTimeMessage, JobCleanedReport,
            JobTimedOutReport, NodeFaultReport, LaunchStepRequest, StepLaunchedReply,
            TaskOutputMessage, TaskInputMessage, TaskExitMessage, SignalStepRequest,
            StepDoneMessage, PriorityQueryRequest, PriorityListReply, ReservationCreateRequest,
            ReservationDeleteRequest, ReservationQueryRequest, ReservationListReply,
            StepPeersMessage, StepAbortMessage, StepAttachMessage, StepdHelloMessage,
            StepdSetupMessage, StepdReadyMessage, CollectiveMessage, DirectModexRequestMessage,
            DirectModexReplyMessage, StepDetachMessage, StepdDetachMessage>(data[0], body);
    return 0;
}
