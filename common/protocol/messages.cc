// Names of message types, for logs and errors.
#include "common/protocol/codec.h"

namespace cohort::protocol {

const char* message_type_name(uint16_t type) {
    switch (static_cast<MessageType>(type)) {
        case MessageType::kError:
            return "Error";
        case MessageType::kAck:
            return "Ack";
        case MessageType::kSubmitJob:
            return "SubmitJob";
        case MessageType::kSubmitReply:
            return "SubmitReply";
        case MessageType::kQueryJobs:
            return "QueryJobs";
        case MessageType::kJobList:
            return "JobList";
        case MessageType::kQueryNodes:
            return "QueryNodes";
        case MessageType::kNodeList:
            return "NodeList";
        case MessageType::kJobControl:
            return "JobControl";
        case MessageType::kAllocate:
            return "Allocate";
        case MessageType::kAllocation:
            return "Allocation";
        case MessageType::kStepCreate:
            return "StepCreate";
        case MessageType::kStepCreated:
            return "StepCreated";
        case MessageType::kStepComplete:
            return "StepComplete";
        case MessageType::kJobComplete:
            return "JobComplete";
        case MessageType::kAcctQuery:
            return "AcctQuery";
        case MessageType::kPriorityQuery:
            return "PriorityQuery";
        case MessageType::kPriorityList:
            return "PriorityList";
        case MessageType::kReservationCreate:
            return "ReservationCreate";
        case MessageType::kReservationDelete:
            return "ReservationDelete";
        case MessageType::kReservationQuery:
            return "ReservationQuery";
        case MessageType::kReservationList:
            return "ReservationList";
        case MessageType::kJobControlReply:
            return "JobControlReply";
        case MessageType::kNodeControl:
            return "NodeControl";
        case MessageType::kJobUpdate:
            return "JobUpdate";
        case MessageType::kUsageReport:
            return "UsageReport";
        case MessageType::kUsageTotals:
            return "UsageTotals";
        case MessageType::kShareQuery:
            return "ShareQuery";
        case MessageType::kShareList:
            return "ShareList";
        case MessageType::kWillRun:
            return "WillRun";
        case MessageType::kRegisterNode:
            return "RegisterNode";
        case MessageType::kRegisterReply:
            return "RegisterReply";
        case MessageType::kHeartbeat:
            return "Heartbeat";
        case MessageType::kLaunchBatch:
            return "LaunchBatch";
        case MessageType::kTerminateJob:
            return "TerminateJob";
        case MessageType::kBatchDone:
            return "BatchDone";
        case MessageType::kJobCleaned:
            return "JobCleaned";
        case MessageType::kJobTimedOut:
            return "JobTimedOut";
        case MessageType::kNodeFault:
            return "NodeFault";
        case MessageType::kJobEndTime:
            return "JobEndTime";
        case MessageType::kLaunchStep:
            return "LaunchStep";
        case MessageType::kStepLaunched:
            return "StepLaunched";
        case MessageType::kTaskOutput:
            return "TaskOutput";
        case MessageType::kTaskExit:
            return "TaskExit";
        case MessageType::kSignalStep:
            return "SignalStep";
        case MessageType::kStepDone:
            return "StepDone";
        case MessageType::kStepPeers:
            return "StepPeers";
        case MessageType::kStepAbort:
            return "StepAbort";
        case MessageType::kStepAttach:
            return "StepAttach";
        case MessageType::kTaskInput:
            return "TaskInput";
        case MessageType::kStepDetach:
            return "StepDetach";
        case MessageType::kStepdHello:
            return "StepdHello";
        case MessageType::kStepdSetup:
            return "StepdSetup";
        case MessageType::kStepdReady:
            return "StepdReady";
        case MessageType::kStepdDetach:
            return "StepdDetach";
        case MessageType::kCollective:
            return "Collective";
        case MessageType::kDirectModexRequest:
            return "DirectModexRequest";
        case MessageType::kDirectModexReply:
            return "DirectModexReply";
    }
    return "Unknown";
}

bool is_known_message_type(uint16_t type) {
    return std::string_view(message_type_name(type)) != "Unknown";
}

Status status_from_error(const Envelope& envelope) {
    auto error = decode_message<ErrorReply>(envelope);
    if (!error) {
        return error.status();
    }
    return {static_cast<StatusCode>(error->code), error->message};
}

ErrorReply error_from_status(const Status& status) {
    return {static_cast<int32_t>(status.code()), status.message()};
}

}  // namespace cohort::protocol
