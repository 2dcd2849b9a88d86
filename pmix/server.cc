// The OpenPMIx server module and the namespace tables Open MPI and other PMIx clients read.
#include "pmix/server.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <fmt/format.h>
#include <pmix.h>
#include <pmix_server.h>
#include <spdlog/spdlog.h>

namespace cohort::pmix {
namespace {

Server* g_server = nullptr;  // OpenPMIx calls the module without a context pointer

std::string status_text(pmix_status_t status) {
    return PMIx_Error_string(status);
}

pmix_proc_t make_proc(const std::string& nspace, pmix_rank_t rank) {
    pmix_proc_t proc;
    PMIX_PROC_CONSTRUCT(&proc);
    PMIX_LOAD_PROCID(&proc, nspace.c_str(), rank);
    return proc;
}

// A pmix_info_t array that frees what it holds.
class InfoList {
public:
    ~InfoList() {
        for (auto& info : infos_) {
            PMIX_INFO_DESTRUCT(&info);
        }
    }

    void add(const char* key, const void* value, pmix_data_type_t type) {
        infos_.emplace_back();
        PMIX_INFO_CONSTRUCT(&infos_.back());
        PMIX_INFO_LOAD(&infos_.back(), key, value, type);
    }

    void add_string(const char* key, const std::string& value) {
        add(key, value.c_str(), PMIX_STRING);
    }

    void add_uint32(const char* key, uint32_t value) { add(key, &value, PMIX_UINT32); }

    void add_uint16(const char* key, uint16_t value) { add(key, &value, PMIX_UINT16); }

    void add_rank(const char* key, pmix_rank_t value) { add(key, &value, PMIX_PROC_RANK); }

    void add_bool(const char* key, bool value) { add(key, &value, PMIX_BOOL); }

    // Moves `inner` into one PMIX_DATA_ARRAY entry (how per-proc data is registered).
    void add_array(const char* key, InfoList&& inner) {
        pmix_data_array_t* array = nullptr;
        PMIX_DATA_ARRAY_CREATE(array, inner.infos_.size(), PMIX_INFO);
        auto* slots = static_cast<pmix_info_t*>(array->array);
        for (size_t i = 0; i < inner.infos_.size(); ++i) {
            PMIX_INFO_XFER(&slots[i], &inner.infos_[i]);
        }
        infos_.emplace_back();
        PMIX_INFO_CONSTRUCT(&infos_.back());
        PMIX_LOAD_KEY(infos_.back().key, key);
        infos_.back().value.type = PMIX_DATA_ARRAY;
        infos_.back().value.data.darray = array;
    }

    pmix_info_t* data() { return infos_.empty() ? nullptr : infos_.data(); }

    size_t size() const { return infos_.size(); }

private:
    std::vector<pmix_info_t> infos_;
};

std::string join(const std::vector<std::string>& items, const char* separator) {
    std::string out;
    for (const auto& item : items) {
        out += (out.empty() ? "" : separator) + item;
    }
    return out;
}

// Open MPI's show_help text comes as a packed blob: keep its printable runs.
std::string printable_text(const pmix_value_t& value) {
    std::string raw;
    if (value.type == PMIX_STRING && value.data.string != nullptr) {
        raw = value.data.string;
    } else if (value.type == PMIX_BYTE_OBJECT && value.data.bo.bytes != nullptr) {
        raw.assign(value.data.bo.bytes, value.data.bo.size);
    }
    std::string text;
    for (char c : raw) {
        if (std::isprint(static_cast<unsigned char>(c)) || c == '\n' || c == '\t') {
            text += c;
        } else if (!text.empty() && text.back() != '\n') {
            text += '\n';
        }
    }
    return text;
}

void release_buffer(void* buffer) {
    std::free(buffer);
}

// A Completion that hands `data` to a modex-style callback (fence, direct modex).
Completion modex_completion(pmix_modex_cbfunc_t cbfunc, void* cbdata) {
    return [cbfunc, cbdata](int status, std::string data) {
        if (cbfunc == nullptr) {
            return;
        }
        if (status != 0) {
            const pmix_status_t error = status == kCompletionTimeout    ? PMIX_ERR_TIMEOUT
                                        : status == kCompletionNotFound ? PMIX_ERR_NOT_FOUND
                                                                        : PMIX_ERROR;
            cbfunc(error, nullptr, 0, cbdata, nullptr, nullptr);
            return;
        }
        char* buffer = static_cast<char*>(std::malloc(std::max<size_t>(data.size(), 1)));
        std::memcpy(buffer, data.data(), data.size());
        cbfunc(PMIX_SUCCESS, buffer, data.size(), cbdata, release_buffer, buffer);
    };
}

}  // namespace

// The module's C entry points: copy, post to the host's executor, return.
struct Upcalls {
    template <typename Work>
    static void post(Work work) {
        boost::asio::post(g_server->executor_, std::move(work));
    }

    static void complete_op(pmix_op_cbfunc_t cbfunc, void* cbdata) {
        if (cbfunc != nullptr) {
            post([cbfunc, cbdata] { cbfunc(PMIX_SUCCESS, cbdata); });
        }
    }

    static pmix_status_t client_connected(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t, void*) {
        const uint32_t rank = proc->rank;
        post([rank] { g_server->host_.on_connected(rank); });
        return PMIX_OPERATION_SUCCEEDED;
    }

    static pmix_status_t client_finalized(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t, void*) {
        const uint32_t rank = proc->rank;
        post([rank] { g_server->host_.on_finalized(rank); });
        return PMIX_OPERATION_SUCCEEDED;
    }

    static pmix_status_t abort(const pmix_proc_t* proc,
                               void*,
                               int status,
                               const char msg[],
                               pmix_proc_t[],
                               size_t,
                               pmix_op_cbfunc_t cbfunc,
                               void* cbdata) {
        const uint32_t rank = proc->rank;
        std::string message = msg != nullptr ? msg : "";
        post([rank, status, message] { g_server->host_.on_abort(rank, status, message); });
        complete_op(cbfunc, cbdata);
        return PMIX_SUCCESS;
    }

    static pmix_status_t fence_nb(const pmix_proc_t procs[],
                                  size_t nprocs,
                                  const pmix_info_t info[],
                                  size_t ninfo,
                                  char* data,
                                  size_t ndata,
                                  pmix_modex_cbfunc_t cbfunc,
                                  void* cbdata) {
        if (nprocs == 0) {
            return PMIX_ERR_BAD_PARAM;
        }
        std::string nspace = procs[0].nspace;
        std::vector<uint32_t> ranks;
        for (size_t i = 0; i < nprocs; ++i) {
            if (procs[i].rank == PMIX_RANK_WILDCARD) {
                ranks.clear();
                break;
            }
            ranks.push_back(procs[i].rank);
        }
        bool collect = false;
        for (size_t i = 0; i < ninfo; ++i) {
            if (PMIX_CHECK_KEY(&info[i], PMIX_COLLECT_DATA)) {
                collect = PMIX_INFO_TRUE(&info[i]);
            }
        }
        std::string bytes(data != nullptr ? data : "", data != nullptr ? ndata : 0);
        Completion done = modex_completion(cbfunc, cbdata);
        post([nspace, ranks, collect, bytes = std::move(bytes), done]() mutable {
            g_server->host_.on_fence(nspace, std::move(ranks), collect, std::move(bytes),
                                     std::move(done));
        });
        return PMIX_SUCCESS;
    }

    static pmix_status_t direct_modex(const pmix_proc_t* proc,
                                      const pmix_info_t info[],
                                      size_t ninfo,
                                      pmix_modex_cbfunc_t cbfunc,
                                      void* cbdata) {
        ModexQuery query;
        query.nspace = proc->nspace;
        query.rank = proc->rank;
        for (size_t i = 0; i < ninfo; ++i) {
            if (PMIX_CHECK_KEY(&info[i], PMIX_REQUIRED_KEY) && info[i].value.type == PMIX_STRING
                && info[i].value.data.string != nullptr) {
                query.required_key = info[i].value.data.string;
            } else if (PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT)) {
                pmix_status_t rc = PMIX_SUCCESS;
                int64_t seconds = 0;
                PMIX_VALUE_GET_NUMBER(rc, &info[i].value, seconds, int64_t);
                if (rc == PMIX_SUCCESS && seconds > 0) {
                    query.timeout_s = static_cast<uint32_t>(std::min<int64_t>(seconds, 86400));
                }
            }
        }
        Completion done = modex_completion(cbfunc, cbdata);
        post([query = std::move(query), done] { g_server->host_.on_direct_modex(query, done); });
        return PMIX_SUCCESS;
    }

    static void log(const pmix_proc_t* client,
                    const pmix_info_t data[],
                    size_t ndata,
                    const pmix_info_t[],
                    size_t,
                    pmix_op_cbfunc_t cbfunc,
                    void* cbdata) {
        const uint32_t rank = client != nullptr ? client->rank : 0;
        std::string text;
        for (size_t i = 0; i < ndata; ++i) {
            text += printable_text(data[i].value);
        }
        post([rank, text] { g_server->host_.on_log(rank, text); });
        complete_op(cbfunc, cbdata);
    }

    // Not offered yet: the library answers the client "not supported"; the log says who asked.
    static pmix_status_t not_supported(const pmix_proc_t* proc, const char* what) {
        spdlog::info("pmix: rank {} of {} asked for {}, which Cohort does not offer yet",
                     proc != nullptr ? proc->rank : 0, proc != nullptr ? proc->nspace : "?", what);
        return PMIX_ERR_NOT_SUPPORTED;
    }

    static pmix_status_t publish(
            const pmix_proc_t* proc, const pmix_info_t[], size_t, pmix_op_cbfunc_t, void*) {
        return not_supported(proc, "publish");
    }

    static pmix_status_t lookup(const pmix_proc_t* proc,
                                char**,
                                const pmix_info_t[],
                                size_t,
                                pmix_lookup_cbfunc_t,
                                void*) {
        return not_supported(proc, "lookup");
    }

    static pmix_status_t unpublish(
            const pmix_proc_t* proc, char**, const pmix_info_t[], size_t, pmix_op_cbfunc_t, void*) {
        return not_supported(proc, "unpublish");
    }

    static pmix_status_t spawn(const pmix_proc_t* proc,
                               const pmix_info_t[],
                               size_t,
                               const pmix_app_t[],
                               size_t,
                               pmix_spawn_cbfunc_t,
                               void*) {
        return not_supported(proc, "spawn");
    }

    static pmix_status_t connect(const pmix_proc_t procs[],
                                 size_t nprocs,
                                 const pmix_info_t[],
                                 size_t,
                                 pmix_op_cbfunc_t,
                                 void*) {
        return not_supported(nprocs > 0 ? &procs[0] : nullptr, "connect");
    }

    static pmix_status_t disconnect(const pmix_proc_t procs[],
                                    size_t nprocs,
                                    const pmix_info_t[],
                                    size_t,
                                    pmix_op_cbfunc_t,
                                    void*) {
        return not_supported(nprocs > 0 ? &procs[0] : nullptr, "disconnect");
    }

    static pmix_status_t job_control(const pmix_proc_t* requestor,
                                     const pmix_proc_t[],
                                     size_t,
                                     const pmix_info_t[],
                                     size_t,
                                     pmix_info_cbfunc_t,
                                     void*) {
        return not_supported(requestor, "job control");
    }
};

Server::Server(boost::asio::any_io_executor executor, ServerHost& host)
    : executor_(std::move(executor)), host_(host) {}

Result<std::unique_ptr<Server>> Server::start(const ServerOptions& options,
                                              boost::asio::any_io_executor executor,
                                              ServerHost& host) {
    if (g_server != nullptr) {
        return Status::internal("a PMIx server already runs in this process");
    }
    static pmix_server_module_t module = [] {
        pmix_server_module_t m;
        std::memset(&m, 0, sizeof(m));
        m.client_connected = Upcalls::client_connected;
        m.client_finalized = Upcalls::client_finalized;
        m.abort = Upcalls::abort;
        m.fence_nb = Upcalls::fence_nb;
        m.direct_modex = Upcalls::direct_modex;
        m.publish = Upcalls::publish;
        m.lookup = Upcalls::lookup;
        m.unpublish = Upcalls::unpublish;
        m.spawn = Upcalls::spawn;
        m.connect = Upcalls::connect;
        m.disconnect = Upcalls::disconnect;
        m.log = Upcalls::log;
        m.job_control = Upcalls::job_control;
        return m;
    }();
    std::unique_ptr<Server> server(new Server(std::move(executor), host));
    g_server = server.get();

    InfoList info;
    info.add_string(PMIX_SERVER_TMPDIR, options.tmpdir);
    info.add_string(PMIX_SYSTEM_TMPDIR, options.tmpdir);
    info.add_string(PMIX_SERVER_NSPACE, "cohortd." + options.node_name);
    info.add_rank(PMIX_SERVER_RANK, options.node_index);
    info.add_string(PMIX_HOSTNAME, options.node_name);
    info.add_bool(PMIX_SERVER_SHARE_TOPOLOGY, true);
    if (options.set_user) {
        // The shared-memory store and session dirs must belong to the ranks' user.
        info.add_uint32(PMIX_USERID, options.uid);
        info.add_uint32(PMIX_GRPID, options.gid);
    }
    pmix_status_t rc = PMIx_server_init(&module, info.data(), info.size());
    if (rc != PMIX_SUCCESS) {
        g_server = nullptr;
        return Status::internal("PMIx_server_init failed: " + status_text(rc));
    }
    return server;
}

Server::~Server() {
    for (const auto& nspace : namespaces_) {
        deregister_namespace(nspace);
    }
    PMIx_server_finalize();
    g_server = nullptr;
}

Status Server::register_namespace(const NamespaceLayout& layout) {
    std::vector<std::string> node_ranks;  // "0,1" per node
    uint32_t total = 0;
    for (const std::vector<uint32_t>& on_node : layout.ranks_on_node) {
        std::vector<std::string> ranks;
        for (uint32_t r : on_node) {
            ranks.push_back(std::to_string(r));
        }
        node_ranks.push_back(join(ranks, ","));
        total += static_cast<uint32_t>(on_node.size());
    }
    char* node_map = nullptr;
    char* proc_map = nullptr;
    if (PMIx_generate_regex(join(layout.nodes, ",").c_str(), &node_map) != PMIX_SUCCESS
        || PMIx_generate_ppn(join(node_ranks, ";").c_str(), &proc_map) != PMIX_SUCCESS) {
        std::free(node_map);
        std::free(proc_map);
        return Status::internal("cannot encode the node and process maps for PMIx");
    }
    const std::vector<uint32_t>& here = layout.ranks_on_node.at(layout.this_node);
    const auto local_size = static_cast<uint32_t>(here.size());
    const uint32_t leader = here.empty() ? 0 : here.front();

    InfoList info;
    info.add_string(PMIX_JOBID, layout.job_id);
    info.add_uint32(PMIX_UNIV_SIZE, total);
    info.add_uint32(PMIX_JOB_SIZE, total);
    info.add_uint32(PMIX_MAX_PROCS, total);
    info.add_uint32(PMIX_APP_SIZE, total);
    info.add_bool(PMIX_SPAWNED, false);
    info.add_uint32(PMIX_NUM_NODES, static_cast<uint32_t>(layout.nodes.size()));
    info.add_string(PMIX_NODE_MAP, node_map);
    info.add_string(PMIX_PROC_MAP, proc_map);
    std::free(node_map);
    std::free(proc_map);
    info.add_uint32(PMIX_LOCAL_SIZE, local_size);
    info.add_uint32(PMIX_NODE_SIZE, local_size);
    info.add_string(PMIX_LOCAL_PEERS, node_ranks.at(layout.this_node));
    info.add_rank(PMIX_LOCALLDR, leader);
    info.add_string(PMIX_TMPDIR, layout.job_tmpdir);
    info.add_string(PMIX_NSDIR, layout.step_tmpdir);
    info.add_bool(PMIX_TDIR_RMCLEAN, true);
    for (uint32_t node = 0; node < layout.nodes.size(); ++node) {
        const std::vector<uint32_t>& on_node = layout.ranks_on_node[node];
        for (uint32_t local = 0; local < on_node.size(); ++local) {
            const pmix_rank_t rank = on_node[local];
            InfoList proc;
            proc.add_rank(PMIX_RANK, rank);
            proc.add_uint32(PMIX_APPNUM, 0);
            proc.add_rank(PMIX_GLOBAL_RANK, rank);
            proc.add_rank(PMIX_APP_RANK, rank);
            proc.add_uint16(PMIX_LOCAL_RANK, static_cast<uint16_t>(local));
            proc.add_uint16(PMIX_NODE_RANK, static_cast<uint16_t>(local));
            proc.add_string(PMIX_HOSTNAME, layout.nodes[node]);
            proc.add_uint32(PMIX_NODEID, node);
            info.add_array(PMIX_PROC_DATA, std::move(proc));
        }
    }
    pmix_nspace_t nspace;
    PMIX_LOAD_NSPACE(nspace, layout.nspace.c_str());
    pmix_status_t rc = PMIx_server_register_nspace(nspace, static_cast<int>(local_size),
                                                   info.data(), info.size(), nullptr, nullptr);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
        return Status::internal("PMIx_server_register_nspace(" + layout.nspace
                                + ") failed: " + status_text(rc));
    }
    namespaces_.push_back(layout.nspace);
    return Status::ok();
}

Result<std::vector<std::pair<std::string, std::string>>> Server::prepare_rank(
        const std::string& nspace, uint32_t rank, uint32_t uid, uint32_t gid) {
    pmix_proc_t proc = make_proc(nspace, rank);
    pmix_status_t rc = PMIx_server_register_client(&proc, uid, gid, nullptr, nullptr, nullptr);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
        return Status::internal(fmt::format("PMIx_server_register_client(rank {}) failed: {}", rank,
                                            status_text(rc)));
    }
    char** env = static_cast<char**>(std::calloc(1, sizeof(char*)));
    rc = PMIx_server_setup_fork(&proc, &env);
    std::vector<std::pair<std::string, std::string>> vars;
    for (char** entry = env; entry != nullptr && *entry != nullptr; ++entry) {
        std::string line = *entry;
        const size_t eq = line.find('=');
        if (eq != std::string::npos) {
            vars.emplace_back(line.substr(0, eq), line.substr(eq + 1));
        }
        std::free(*entry);
    }
    std::free(env);
    if (rc != PMIX_SUCCESS) {
        return Status::internal(
                fmt::format("PMIx_server_setup_fork(rank {}) failed: {}", rank, status_text(rc)));
    }
    return vars;
}

namespace {

struct ModexRequest {
    boost::asio::any_io_executor executor;
    Completion done;
};

void on_modex_response(pmix_status_t status, char* data, size_t size, void* cbdata) {
    std::unique_ptr<ModexRequest> request(static_cast<ModexRequest*>(cbdata));
    std::string bytes =
            status == PMIX_SUCCESS && data != nullptr ? std::string(data, size) : std::string();
    const int result = status == PMIX_SUCCESS         ? 0
                       : status == PMIX_ERR_NOT_FOUND ? kCompletionNotFound
                                                      : kCompletionError;
    auto done = std::move(request->done);
    boost::asio::post(request->executor,
                      [done = std::move(done), result, bytes = std::move(bytes)]() mutable {
                          done(result, std::move(bytes));
                      });
}

// The first and the longest pause between two looks for a key a rank has not committed yet.
constexpr std::chrono::milliseconds kFirstKeyPoll{5};
constexpr std::chrono::milliseconds kLongestKeyPoll{200};

}  // namespace

// A direct-modex request held until the rank has committed the key the asker needs.
struct Server::KeyWait {
    ModexQuery query;
    std::chrono::steady_clock::time_point deadline;
    Completion done;
    boost::asio::steady_timer timer;
    std::chrono::milliseconds pause = kFirstKeyPoll;
    uint32_t looks = 0;
};

void Server::request_modex(const ModexQuery& query,
                           std::chrono::steady_clock::time_point deadline,
                           Completion done) {
    // Keys in the "pmix" namespace are job data this host registered, never committed by the
    // rank: waiting for one would wait for ever, so those go to the library as they are.
    if (query.required_key.empty() || query.required_key.rfind("pmix", 0) == 0) {
        fetch_modex(query, std::move(done));
        return;
    }
    auto wait = std::make_shared<KeyWait>(KeyWait{query, deadline, std::move(done),
                                                  boost::asio::steady_timer(executor_),
                                                  kFirstKeyPoll, 0});
    check_required_key(std::move(wait));
}

namespace {

// One look for a key: the library keeps pointers to the key and the info until it calls
// back, so they live here, freed by the callback.
struct KeyLook {
    KeyLook() { PMIX_INFO_CONSTRUCT(&immediate); }

    ~KeyLook() { PMIX_INFO_DESTRUCT(&immediate); }

    KeyLook(const KeyLook&) = delete;
    KeyLook& operator=(const KeyLook&) = delete;

    std::string key;
    pmix_info_t immediate;
    std::function<void(bool found)> then;  // posted to the host's executor
};

}  // namespace

void Server::check_required_key(std::shared_ptr<KeyWait> wait) {
    auto look = std::make_unique<KeyLook>();
    look->key = wait->query.required_key;
    // The server's own store holds what its local clients committed; PMIX_IMMEDIATE keeps
    // the look local (a server has nobody to ask anyway).
    bool yes = true;
    PMIX_INFO_LOAD(&look->immediate, PMIX_IMMEDIATE, &yes, PMIX_BOOL);
    ++wait->looks;
    look->then = [this, wait](bool found) mutable {
        if (found) {
            if (wait->looks > 1) {
                spdlog::info(
                        "pmix: rank {} committed key {} after {} looks; answering the "
                        "direct modex",
                        wait->query.rank, wait->query.required_key, wait->looks);
            }
            fetch_modex(wait->query, std::move(wait->done));
            return;
        }
        const auto now = std::chrono::steady_clock::now();
        if (now >= wait->deadline) {
            spdlog::warn("pmix: rank {} of {} did not commit key {} in time for a direct modex",
                         wait->query.rank, wait->query.nspace, wait->query.required_key);
            wait->done(kCompletionTimeout, "");
            return;
        }
        if (wait->looks == 1) {
            spdlog::info("pmix: direct modex for rank {} waits until it commits key {}",
                         wait->query.rank, wait->query.required_key);
        }
        const auto pause =
                std::min<std::chrono::steady_clock::duration>(wait->pause, wait->deadline - now);
        wait->pause = std::min(wait->pause * 2, kLongestKeyPoll);
        wait->timer.expires_after(pause);
        KeyWait& held = *wait;
        held.timer.async_wait([this, wait = std::move(wait)](boost::system::error_code ec) mutable {
            if (!ec) {
                check_required_key(std::move(wait));
            }
        });
    };
    pmix_proc_t proc = make_proc(wait->query.nspace, wait->query.rank);
    KeyLook* raw = look.get();
    pmix_status_t rc = PMIx_Get_nb(
            &proc, raw->key.c_str(), &raw->immediate, 1,
            [](pmix_status_t status, pmix_value_t* value, void* cbdata) {
                std::unique_ptr<KeyLook> finished(static_cast<KeyLook*>(cbdata));
                if (value != nullptr) {
                    PMIX_VALUE_RELEASE(value);  // ours; only "is it there" matters
                }
                boost::asio::post(g_server->executor_,
                                  [then = std::move(finished->then),
                                   found = status == PMIX_SUCCESS]() mutable { then(found); });
            },
            raw);
    if (rc != PMIX_SUCCESS) {
        // The library did not take the look: answer with what the rank has committed.
        spdlog::warn("pmix: cannot look for key {} of rank {}: {}", wait->query.required_key,
                     wait->query.rank, status_text(rc));
        boost::asio::post(executor_, [this, wait = std::move(wait)]() mutable {
            fetch_modex(wait->query, std::move(wait->done));
        });
        return;
    }
    look.release();  // the callback owns it now
}

void Server::fetch_modex(const ModexQuery& query, Completion done) {
    pmix_proc_t proc = make_proc(query.nspace, query.rank);
    auto* request = new ModexRequest{executor_, std::move(done)};
    pmix_status_t rc = PMIx_server_dmodex_request(&proc, on_modex_response, request);
    if (rc != PMIX_SUCCESS) {
        std::unique_ptr<ModexRequest> failed(request);
        boost::asio::post(executor_,
                          [done = std::move(failed->done)] { done(kCompletionError, ""); });
    }
}

void Server::deregister_namespace(const std::string& nspace) {
    pmix_nspace_t name;
    PMIX_LOAD_NSPACE(name, nspace.c_str());
    PMIx_server_deregister_nspace(name, nullptr, nullptr);
}

}  // namespace cohort::pmix
