// libmunge calls, each with a context of its own (munge contexts are not thread-safe).
#include "common/protocol/munge_credential.h"

#include <cstdlib>
#include <memory>

#include <fmt/format.h>
#include <munge.h>

namespace cohort::protocol {
namespace {

struct ContextDeleter {
    void operator()(munge_ctx_t ctx) const { munge_ctx_destroy(ctx); }
};

using Context = std::unique_ptr<std::remove_pointer_t<munge_ctx_t>, ContextDeleter>;

struct FreeDeleter {
    void operator()(void* memory) const { std::free(memory); }  // NOLINT: libmunge's malloc
};

Result<Context> context_for(const std::string& socket) {
    Context ctx(munge_ctx_create());
    if (!ctx) {
        return Status::internal("MUNGE: cannot create a context (out of memory)");
    }
    if (munge_ctx_set(ctx.get(), MUNGE_OPT_SOCKET, socket.c_str()) != EMUNGE_SUCCESS) {
        return Status::invalid("MUNGE: bad socket path '" + socket + "'");
    }
    return ctx;
}

Status munge_failure(munge_err_t error, munge_ctx_t ctx, const std::string& socket) {
    const char* detail = munge_ctx_strerror(ctx);
    const std::string why = detail != nullptr ? detail : munge_strerror(error);
    switch (error) {
        case EMUNGE_SOCKET:
            return Status::unavailable(
                    fmt::format("MUNGE: cannot reach munged at {}: {}", socket, why));
        case EMUNGE_CRED_EXPIRED:
            return Status::denied("MUNGE credential refused: expired");
        case EMUNGE_CRED_REWOUND:
            return Status::denied("MUNGE credential refused: rewound (dated in the future)");
        case EMUNGE_CRED_REPLAYED:
            return Status::denied("MUNGE credential refused: replayed (decoded before)");
        default:
            return Status::denied("MUNGE credential refused: " + why);
    }
}

}  // namespace

Result<std::string> munge_encode(const std::string& socket, std::string_view payload, int ttl_s) {
    auto ctx = context_for(socket);
    if (!ctx) {
        return ctx.status();
    }
    if (ttl_s > 0 && munge_ctx_set(ctx->get(), MUNGE_OPT_TTL, ttl_s) != EMUNGE_SUCCESS) {
        return Status::invalid(fmt::format("MUNGE: bad time to live {} s", ttl_s));
    }
    char* credential = nullptr;
    const munge_err_t error =
            munge_encode(&credential, ctx->get(), payload.data(), static_cast<int>(payload.size()));
    std::unique_ptr<char, FreeDeleter> owned(credential);
    if (error != EMUNGE_SUCCESS) {
        return munge_failure(error, ctx->get(), socket);
    }
    return std::string(credential);
}

Result<MungeIdentity> munge_decode(const std::string& socket, const std::string& credential) {
    auto ctx = context_for(socket);
    if (!ctx) {
        return ctx.status();
    }
    void* payload = nullptr;
    int length = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    const munge_err_t error =
            munge_decode(credential.c_str(), ctx->get(), &payload, &length, &uid, &gid);
    std::unique_ptr<void, FreeDeleter> owned(payload);
    if (error != EMUNGE_SUCCESS) {
        return munge_failure(error, ctx->get(), socket);
    }
    MungeIdentity identity{uid, gid, {}};
    if (payload != nullptr && length > 0) {
        identity.payload.assign(static_cast<const char*>(payload), static_cast<size_t>(length));
    }
    return identity;
}

}  // namespace cohort::protocol
