#include "frontends/grpc/grpc_service.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "auth/tenant.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "frontends/grpc/grpc_access.h"
#include "frontends/grpc/grpc_infer_codec.h"
#include "frontends/grpc/grpc_inference.h"
#include "frontends/grpc/grpc_model_info.h"
#include "frontends/grpc/grpc_status.h"
#include "frontends/grpc/grpc_stream_infer.h"

namespace inferd {
namespace {

grpc::ServerUnaryReactor* Finish(grpc::CallbackServerContext* context, const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

// Finishes a call that was admitted under `grant`: the tenant's slot is released with the
// call's outcome.
grpc::ServerUnaryReactor* Finish(grpc::CallbackServerContext* context, const absl::Status& status,
                                 AccessGrant& grant) {
  if (grant.permit) grant.permit->Finish(status.code());
  return Finish(context, status);
}

RouteAccess ForModel(const std::string& name) { return RouteAccess::ForModel(name); }

absl::Status SharedMemoryDisabled() {
  return absl::UnimplementedError("shared memory is not enabled on this server");
}

// The owner of the regions a call may see and touch: its key's tenant (shared_memory_registry.h).
std::string SharedMemoryOwner(const AccessGrant& grant) {
  return TenantOwner(grant.key != nullptr ? grant.key->tenant : nullptr);
}

// A stream refused before its first message.
class RefusedStream final : public grpc::ServerBidiReactor<inference::ModelInferRequest,
                                                           inference::ModelStreamInferResponse> {
 public:
  explicit RefusedStream(const absl::Status& status) { Finish(ToGrpcStatus(status)); }
  void OnDone() override { delete this; }
};

// The reactor of a unary call that may run for long (a generation): the client's leaving sets
// `cancelled`.
class CancellableUnaryReactor final : public grpc::ServerUnaryReactor {
 public:
  explicit CancellableUnaryReactor(std::shared_ptr<std::atomic<bool>> cancelled)
      : cancelled_(std::move(cancelled)) {}
  void OnCancel() override { cancelled_->store(true, std::memory_order_release); }
  void OnDone() override { delete this; }

 private:
  const std::shared_ptr<std::atomic<bool>> cancelled_;
};

// The version a request names (nullopt: the default one); InvalidArgument for an empty model
// name or a malformed version.
absl::StatusOr<std::optional<int64_t>> RequestedVersion(const std::string& name,
                                                        const std::string& version) {
  if (name.empty()) return absl::InvalidArgumentError("the model name is empty");
  return ParseGrpcVersion(version);
}

absl::StatusOr<ModelHandle> AcquireModel(const GrpcContext& ctx, const std::string& name,
                                         const std::string& version) {
  ASSIGN_OR_RETURN(std::optional<int64_t> parsed, RequestedVersion(name, version));
  return ctx.models->Acquire(name, parsed);
}

// Metadata without loading: a lazy or evicted model is described too (as over HTTP).
absl::StatusOr<ModelDescription> DescribeModel(const GrpcContext& ctx, const std::string& name,
                                               const std::string& version) {
  ASSIGN_OR_RETURN(std::optional<int64_t> parsed, RequestedVersion(name, version));
  return ctx.inference->Describe(name, parsed);
}

}  // namespace

grpc::ServerUnaryReactor* InferenceService::ServerLive(grpc::CallbackServerContext* context,
                                                       const inference::ServerLiveRequest*,
                                                       inference::ServerLiveResponse* response) {
  response->set_live(true);
  return Finish(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* InferenceService::ServerReady(grpc::CallbackServerContext* context,
                                                        const inference::ServerReadyRequest*,
                                                        inference::ServerReadyResponse* response) {
  response->set_ready(!ctx_.draining->load());
  return Finish(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* InferenceService::ModelReady(grpc::CallbackServerContext* context,
                                                       const inference::ModelReadyRequest* request,
                                                       inference::ModelReadyResponse* response) {
  AccessGrant grant;
  if (absl::Status allowed = CheckGrpcAccess(ctx_, context, ForModel(request->name()), &grant);
      !allowed.ok()) {
    return Finish(context, allowed);
  }
  absl::StatusOr<ModelHandle> model = AcquireModel(ctx_, request->name(), request->version());
  // Unknown models are an error, as in HTTP (404); a known model that failed to load is
  // simply not ready.
  if (absl::IsNotFound(model.status()) || absl::IsInvalidArgument(model.status())) {
    return Finish(context, model.status(), grant);
  }
  response->set_ready(model.ok());
  return Finish(context, absl::OkStatus(), grant);
}

grpc::ServerUnaryReactor* InferenceService::ServerMetadata(
    grpc::CallbackServerContext* context, const inference::ServerMetadataRequest*,
    inference::ServerMetadataResponse* response) {
  AccessGrant grant;
  if (absl::Status allowed =
          CheckGrpcAccess(ctx_, context, RouteAccess::Of(Access::kInference), &grant);
      !allowed.ok()) {
    return Finish(context, allowed);
  }
  response->set_name("inferd");
  response->set_version(ctx_.server_version);
  response->add_extensions("model_repository");
  response->add_extensions("statistics");
  response->add_extensions("binary_tensor_data");
  if (ctx_.shared_memory != nullptr) response->add_extensions("system_shared_memory");
  return Finish(context, absl::OkStatus(), grant);
}

grpc::ServerUnaryReactor* InferenceService::ModelMetadata(
    grpc::CallbackServerContext* context, const inference::ModelMetadataRequest* request,
    inference::ModelMetadataResponse* response) {
  AccessGrant grant;
  if (absl::Status allowed = CheckGrpcAccess(ctx_, context, ForModel(request->name()), &grant);
      !allowed.ok()) {
    return Finish(context, allowed);
  }
  absl::StatusOr<ModelDescription> model = DescribeModel(ctx_, request->name(), request->version());
  if (!model.ok()) return Finish(context, model.status(), grant);
  FillModelMetadata(*model, response);
  return Finish(context, absl::OkStatus(), grant);
}

grpc::ServerUnaryReactor* InferenceService::ModelInfer(grpc::CallbackServerContext* context,
                                                       const inference::ModelInferRequest* request,
                                                       inference::ModelInferResponse* response) {
  AccessGrant grant;
  if (absl::Status allowed =
          CheckGrpcAccess(ctx_, context, ForModel(request->model_name()), &grant);
      !allowed.ok()) {
    return Finish(context, allowed);
  }
  // A model that generates text may run for long: its call notices the client leaving (a
  // reactor of its own, told OnCancel) and stops generating. Tensor models keep gRPC's
  // default reactor, which allocates nothing.
  std::shared_ptr<std::atomic<bool>> cancelled;
  grpc::ServerUnaryReactor* reactor = nullptr;
  if (auto config = ctx_.inference->ConfigFor(request->model_name());
      config.ok() && (*config)->capabilities.generates_text) {
    cancelled = std::make_shared<std::atomic<bool>>(false);
    reactor = new CancellableUnaryReactor(cancelled);
  } else {
    reactor = context->DefaultReactor();
  }
  const std::shared_ptr<TenantPermit> permit = grant.permit;
  SubmitGrpcInference(
      ctx_, *request, response,
      [reactor, permit](const absl::Status& status) {
        if (permit) permit->Finish(status.code());
        reactor->Finish(ToGrpcStatus(status));
      },
      grant, std::move(cancelled));
  return reactor;
}

grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse>*
InferenceService::ModelStreamInfer(grpc::CallbackServerContext* context) {
  // The key and its role are checked once, here; the model and the tenant's limits for each
  // message (StreamInferReactor).
  if (ctx_.access != nullptr && ctx_.access->enforcing()) {
    absl::StatusOr<const ApiKey*> key =
        ctx_.access->Authenticate(RouteAccess::Of(Access::kInference), GrpcAuthorization(*context));
    if (!key.ok()) return new RefusedStream(key.status());
  }
  return new StreamInferReactor(&ctx_, std::string(GrpcAuthorization(*context)));
}

grpc::ServerUnaryReactor* InferenceService::ModelConfig(
    grpc::CallbackServerContext* context, const inference::ModelConfigRequest* request,
    inference::ModelConfigResponse* response) {
  AccessGrant grant;
  if (absl::Status allowed = CheckGrpcAccess(ctx_, context, ForModel(request->name()), &grant);
      !allowed.ok()) {
    return Finish(context, allowed);
  }
  absl::StatusOr<ModelDescription> model = DescribeModel(ctx_, request->name(), request->version());
  if (!model.ok()) return Finish(context, model.status(), grant);
  FillModelConfig(*model, response->mutable_config());
  return Finish(context, absl::OkStatus(), grant);
}

grpc::ServerUnaryReactor* InferenceService::ModelStatistics(
    grpc::CallbackServerContext* context, const inference::ModelStatisticsRequest* request,
    inference::ModelStatisticsResponse* response) {
  AccessGrant grant;
  if (absl::Status allowed =
          CheckGrpcAccess(ctx_, context, RouteAccess::Of(Access::kMonitoring), &grant);
      !allowed.ok()) {
    return Finish(context, allowed);
  }
  if (request->name().empty()) {
    for (const ModelHandle& model : ctx_.models->ReadyModels()) {
      FillModelStatistics(*model, response->add_model_stats());
    }
    return Finish(context, absl::OkStatus(), grant);
  }
  absl::StatusOr<ModelHandle> model = AcquireModel(ctx_, request->name(), request->version());
  if (!model.ok()) return Finish(context, model.status(), grant);
  FillModelStatistics(**model, response->add_model_stats());
  return Finish(context, absl::OkStatus(), grant);
}

grpc::ServerUnaryReactor* InferenceService::RepositoryIndex(
    grpc::CallbackServerContext* context, const inference::RepositoryIndexRequest* request,
    inference::RepositoryIndexResponse* response) {
  AccessGrant grant;
  if (absl::Status allowed =
          CheckGrpcAccess(ctx_, context, RouteAccess::Of(Access::kManagement), &grant);
      !allowed.ok()) {
    return Finish(context, allowed);
  }
  if (!request->repository_name().empty()) {
    return Finish(context,
                  absl::NotFoundError(StrCat("unknown repository '", request->repository_name(),
                                             "': this server has one (use '')")),
                  grant);
  }
  FillRepositoryIndex(ctx_.models->Index(), request->ready(), response);
  return Finish(context, absl::OkStatus(), grant);
}

grpc::ServerUnaryReactor* InferenceService::RepositoryModelLoad(
    grpc::CallbackServerContext* context, const inference::RepositoryModelLoadRequest* request,
    inference::RepositoryModelLoadResponse*) {
  AccessGrant grant;
  if (absl::Status allowed =
          CheckGrpcAccess(ctx_, context, RouteAccess::Of(Access::kManagement), &grant);
      !allowed.ok()) {
    return Finish(context, allowed);
  }
  // A load can take seconds: the RPC finishes from the manager's loader thread, never
  // holding a gRPC thread meanwhile.
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  ctx_.models->LoadAsync(
      request->model_name(), [reactor, name = request->model_name(),
                              permit = std::move(grant.permit)](absl::Status status) {
        if (permit) permit->Finish(status.code());
        if (!status.ok()) {
          status = absl::Status(status.code(), StrCat("load of '", EscapeForLog(name, 64),
                                                      "' failed: ", status.message()));
        }
        reactor->Finish(ToGrpcStatus(status));
      });
  return reactor;
}

grpc::ServerUnaryReactor* InferenceService::RepositoryModelUnload(
    grpc::CallbackServerContext* context, const inference::RepositoryModelUnloadRequest* request,
    inference::RepositoryModelUnloadResponse*) {
  AccessGrant grant;
  if (absl::Status allowed =
          CheckGrpcAccess(ctx_, context, RouteAccess::Of(Access::kManagement), &grant);
      !allowed.ok()) {
    return Finish(context, allowed);
  }
  return Finish(context, ctx_.models->Unload(request->model_name()), grant);
}

absl::Status InferenceService::Allow(grpc::CallbackServerContext* context, Access access,
                                     AccessGrant* grant) const {
  return CheckGrpcAccess(ctx_, context, RouteAccess::Of(access), grant);
}

grpc::ServerUnaryReactor* InferenceService::SystemSharedMemoryStatus(
    grpc::CallbackServerContext* context, const inference::SystemSharedMemoryStatusRequest* request,
    inference::SystemSharedMemoryStatusResponse* response) {
  AccessGrant grant;
  if (absl::Status allowed = Allow(context, Access::kMonitoring, &grant); !allowed.ok()) {
    return Finish(context, allowed);
  }
  if (ctx_.shared_memory == nullptr) return Finish(context, SharedMemoryDisabled(), grant);
  const std::string owner = SharedMemoryOwner(grant);
  std::vector<SharedMemoryRegionInfo> regions;
  if (request->name().empty()) {
    regions = ctx_.shared_memory->Status(owner);
  } else {
    absl::StatusOr<SharedMemoryRegionInfo> region =
        ctx_.shared_memory->Status(owner, request->name());
    if (!region.ok()) return Finish(context, region.status(), grant);
    regions.push_back(*std::move(region));
  }
  for (const SharedMemoryRegionInfo& region : regions) {
    auto& status = (*response->mutable_regions())[region.name];
    status.set_name(region.name);
    status.set_key(region.key);
    status.set_offset(region.offset);
    status.set_byte_size(region.byte_size);
  }
  return Finish(context, absl::OkStatus(), grant);
}

grpc::ServerUnaryReactor* InferenceService::SystemSharedMemoryRegister(
    grpc::CallbackServerContext* context,
    const inference::SystemSharedMemoryRegisterRequest* request,
    inference::SystemSharedMemoryRegisterResponse*) {
  AccessGrant grant;
  if (absl::Status allowed = Allow(context, Access::kManagement, &grant); !allowed.ok()) {
    return Finish(context, allowed);
  }
  if (ctx_.shared_memory == nullptr) return Finish(context, SharedMemoryDisabled(), grant);
  // An open and an fstat in /dev/shm (tmpfs): quick enough for a gRPC thread.
  return Finish(
      context,
      ctx_.shared_memory->Register(SharedMemoryOwner(grant), request->name(), request->key(),
                                   request->offset(), request->byte_size()),
      grant);
}

grpc::ServerUnaryReactor* InferenceService::SystemSharedMemoryUnregister(
    grpc::CallbackServerContext* context,
    const inference::SystemSharedMemoryUnregisterRequest* request,
    inference::SystemSharedMemoryUnregisterResponse*) {
  AccessGrant grant;
  if (absl::Status allowed = Allow(context, Access::kManagement, &grant); !allowed.ok()) {
    return Finish(context, allowed);
  }
  if (ctx_.shared_memory == nullptr) return Finish(context, SharedMemoryDisabled(), grant);
  if (request->name().empty()) {
    ctx_.shared_memory->UnregisterAll(SharedMemoryOwner(grant));
  } else {
    ctx_.shared_memory->Unregister(SharedMemoryOwner(grant), request->name());
  }
  return Finish(context, absl::OkStatus(), grant);
}

grpc::ServerUnaryReactor* InferenceService::CudaSharedMemoryStatus(
    grpc::CallbackServerContext* context, const inference::CudaSharedMemoryStatusRequest*,
    inference::CudaSharedMemoryStatusResponse*) {
  AccessGrant grant;
  if (absl::Status allowed = Allow(context, Access::kMonitoring, &grant); !allowed.ok()) {
    return Finish(context, allowed);
  }
  return Finish(context, absl::OkStatus(), grant);
}

grpc::ServerUnaryReactor* InferenceService::CudaSharedMemoryRegister(
    grpc::CallbackServerContext* context, const inference::CudaSharedMemoryRegisterRequest*,
    inference::CudaSharedMemoryRegisterResponse*) {
  AccessGrant grant;
  if (absl::Status allowed = Allow(context, Access::kManagement, &grant); !allowed.ok()) {
    return Finish(context, allowed);
  }
  return Finish(context,
                absl::UnimplementedError(
                    "CUDA shared memory is not supported: inferd keeps tensors in host memory; "
                    "register the region as system shared memory instead"),
                grant);
}

grpc::ServerUnaryReactor* InferenceService::CudaSharedMemoryUnregister(
    grpc::CallbackServerContext* context, const inference::CudaSharedMemoryUnregisterRequest*,
    inference::CudaSharedMemoryUnregisterResponse*) {
  AccessGrant grant;
  if (absl::Status allowed = Allow(context, Access::kManagement, &grant); !allowed.ok()) {
    return Finish(context, allowed);
  }
  return Finish(context, absl::OkStatus(), grant);  // none can have been registered
}

}  // namespace inferd
