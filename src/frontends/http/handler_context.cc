#include "frontends/http/handler_context.h"

#include <charconv>
#include <utility>

#include "auth/tenant.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "frontends/http/session_request.h"

namespace inferd {

absl::StatusOr<int64_t> HeaderTimeoutUs(const HttpRequestView& view) {
  const std::string_view timeout = view.Header(kTimeoutHeader);
  if (timeout.empty()) return 0;
  int64_t value = 0;
  auto [end, ec] = std::from_chars(timeout.data(), timeout.data() + timeout.size(), value);
  if (ec != std::errc() || end != timeout.data() + timeout.size() || value < 0 ||
      value > kMaxTimeoutUs) {
    return absl::InvalidArgumentError(StrCat("header ", kTimeoutHeader, ": '", timeout,
                                             "' is not an integer from 0 to ", kMaxTimeoutUs,
                                             " (microseconds)"));
  }
  return value;
}

absl::Status ApplySchedulingHeaders(const HttpRequestView& view, InferRequest& request) {
  request.fallback_priority = view.tenant_priority;
  if (view.tenant != nullptr) request.tenant = view.tenant->name();
  if (request.timeout_us > 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(request.timeout_us, HeaderTimeoutUs(view));
  return absl::OkStatus();
}

void NoteModelIfLoaded(const HandlerContext& ctx, Responder& responder, std::string_view name,
                       std::optional<int64_t> version) {
  if (responder.record() == nullptr) return;
  if (absl::StatusOr<ModelHandle> loaded = ctx.models->Acquire(name, version); loaded.ok()) {
    responder.NoteModel(*loaded);
  }
}

void SubmitInference(const HandlerContext& ctx, std::string_view name,
                     std::optional<int64_t> version, std::unique_ptr<InferRequest> request,
                     ResponderPtr responder, ReplyEncoder encode) {
  InferCallbacks callbacks;
  // A plain pointer (no allocation): `done` below keeps the responder alive, and `acquired`
  // runs before it. The record pins the version until the reply is written.
  callbacks.acquired = [raw = responder.get()](const ModelHandle& model) { raw->NoteModel(model); };
  callbacks.done = [responder = std::move(responder), encode = std::move(encode)](
                       const ServedModel* model, InferResponse response) mutable {
    if (model == nullptr) return responder->Send(ErrorReply(response.status));
    // The deferred function runs on the I/O thread, where the record may be touched; `model`
    // may be gone by then, so it carries the name and version.
    responder->Defer([response = std::move(response), encode = std::move(encode), responder,
                      name = model->name(), version = model->version()] {
      if (SessionRequest* record = responder->record()) record->batch_size = response.batch_size;
      if (!response.status.ok()) return ErrorReply(response.status);
      return encode(name, version, response);
    });
  };
  ctx.inference->Submit(name, version, std::move(request), std::move(callbacks));
}

std::string TenantModelOf(const FrontendContext& ctx, std::string_view model) {
  // Not ResolveGenerationModel: an adapter that base does not have is base's 404 to a tenant
  // allowed base (it may list base's adapters), not a 403.
  if (ctx.inference->ConfigFor(model).ok()) return std::string(model);
  const std::optional<AdapterName> split = SplitAdapterName(model);
  if (split && ctx.inference->ConfigFor(split->base).ok()) return std::string(split->base);
  return std::string(model);
}

}  // namespace inferd
