// Triton's shared-memory extension over HTTP (docs/protocols.md):
//   GET  /v2/systemsharedmemory[/region/R]/status    [{"name","key","offset","byte_size"}]
//   POST /v2/systemsharedmemory/region/R/register    {"key": "/shm_key", "offset": 0,
//                                                     "byte_size": N}
//   POST /v2/systemsharedmemory[/region/R]/unregister
//   the same under /v2/cudasharedmemory: status lists nothing and unregister succeeds (so
//   clients that clean up both kinds, like perf_analyzer, work); register is refused, as
//   this server keeps tensors in host memory.
// Register and unregister are management requests (http_routes.cc), status monitoring.
// Each reaches only the regions of the caller's tenant (HttpRequestView::tenant; callers
// without a tenant are one owner): another tenant's region is as unknown as a name nobody
// registered, and its name is free to use.
#ifndef INFERD_FRONTENDS_HTTP_HANDLERS_SHARED_MEMORY_HANDLERS_H_
#define INFERD_FRONTENDS_HTTP_HANDLERS_SHARED_MEMORY_HANDLERS_H_

#include <span>
#include <string_view>

#include "frontends/http/handler_context.h"
#include "frontends/http/http_types.h"

namespace inferd {

// Answers a request whose path starts /v2/systemsharedmemory or /v2/cudasharedmemory
// (`segments` is its path split at '/'). Registering opens the client's shared-memory object
// on the I/O thread: that is an open and an fstat in /dev/shm (tmpfs), never a wait.
HttpReply HandleSharedMemory(const HandlerContext& ctx, const HttpRequestView& request,
                             std::span<const std::string_view> segments);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_HANDLERS_SHARED_MEMORY_HANDLERS_H_
