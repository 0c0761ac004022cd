// inference.GRPCInferenceService: ModelInfer on the completion-queue API (grpc_infer_queues.h
// says why), every other RPC on gRPC's callback API, returning a reactor at once. No gRPC
// thread ever waits for a model: an inference call is finished from the model's completion
// callback.
//
// Thread-safety: the service is stateless apart from the context, which outlives it.
#ifndef INFERD_FRONTENDS_GRPC_GRPC_SERVICE_H_
#define INFERD_FRONTENDS_GRPC_GRPC_SERVICE_H_

#include "frontends/grpc/grpc_context.h"
#include "inference_service.grpc.pb.h"

namespace inferd {

namespace grpc_service_internal {
using Grpc = inference::GRPCInferenceService;
// Every RPC on the callback API except ModelInfer, which is async. (The generated
// CallbackService cannot be combined with WithAsyncMethod_ModelInfer: that leaves the callback
// handler in place and the server then treats the method as callback.)
using Base = Grpc::WithCallbackMethod_ServerLive<
    Grpc::WithCallbackMethod_ServerReady<Grpc::WithCallbackMethod_ModelReady<
        Grpc::WithCallbackMethod_ServerMetadata<Grpc::WithCallbackMethod_ModelMetadata<
            Grpc::WithCallbackMethod_ModelStreamInfer<Grpc::WithCallbackMethod_ModelConfig<
                Grpc::WithCallbackMethod_ModelStatistics<Grpc::WithCallbackMethod_RepositoryIndex<
                    Grpc::WithCallbackMethod_RepositoryModelLoad<
                        Grpc::WithCallbackMethod_RepositoryModelUnload<
                            Grpc::WithCallbackMethod_SystemSharedMemoryStatus<
                                Grpc::WithCallbackMethod_SystemSharedMemoryRegister<
                                    Grpc::WithCallbackMethod_SystemSharedMemoryUnregister<
                                        Grpc::WithCallbackMethod_CudaSharedMemoryStatus<
                                            Grpc::WithCallbackMethod_CudaSharedMemoryRegister<
                                                Grpc::WithCallbackMethod_CudaSharedMemoryUnregister<
                                                    Grpc::WithAsyncMethod_ModelInfer<
                                                        Grpc::Service>>>>>>>>>>>>>>>>>>;
}  // namespace grpc_service_internal

class InferenceService final : public grpc_service_internal::Base {
 public:
  explicit InferenceService(GrpcContext ctx) : ctx_(std::move(ctx)) {}

  const GrpcContext& context() const { return ctx_; }

  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* context,
                                       const inference::ServerLiveRequest* request,
                                       inference::ServerLiveResponse* response) override;
  grpc::ServerUnaryReactor* ServerReady(grpc::CallbackServerContext* context,
                                        const inference::ServerReadyRequest* request,
                                        inference::ServerReadyResponse* response) override;
  grpc::ServerUnaryReactor* ModelReady(grpc::CallbackServerContext* context,
                                       const inference::ModelReadyRequest* request,
                                       inference::ModelReadyResponse* response) override;
  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* context,
                                           const inference::ServerMetadataRequest* request,
                                           inference::ServerMetadataResponse* response) override;
  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* context,
                                          const inference::ModelMetadataRequest* request,
                                          inference::ModelMetadataResponse* response) override;
  grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse>*
  ModelStreamInfer(grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* ModelConfig(grpc::CallbackServerContext* context,
                                        const inference::ModelConfigRequest* request,
                                        inference::ModelConfigResponse* response) override;
  grpc::ServerUnaryReactor* ModelStatistics(grpc::CallbackServerContext* context,
                                            const inference::ModelStatisticsRequest* request,
                                            inference::ModelStatisticsResponse* response) override;
  grpc::ServerUnaryReactor* RepositoryIndex(grpc::CallbackServerContext* context,
                                            const inference::RepositoryIndexRequest* request,
                                            inference::RepositoryIndexResponse* response) override;
  grpc::ServerUnaryReactor* RepositoryModelLoad(
      grpc::CallbackServerContext* context, const inference::RepositoryModelLoadRequest* request,
      inference::RepositoryModelLoadResponse* response) override;
  grpc::ServerUnaryReactor* RepositoryModelUnload(
      grpc::CallbackServerContext* context, const inference::RepositoryModelUnloadRequest* request,
      inference::RepositoryModelUnloadResponse* response) override;

  // Triton's shared-memory extension: register and unregister are management calls, status
  // monitoring. No CUDA region can be registered; its status lists none and unregistering
  // succeeds, so clients that clean up both kinds (perf_analyzer) work.
  grpc::ServerUnaryReactor* SystemSharedMemoryStatus(
      grpc::CallbackServerContext* context,
      const inference::SystemSharedMemoryStatusRequest* request,
      inference::SystemSharedMemoryStatusResponse* response) override;
  grpc::ServerUnaryReactor* SystemSharedMemoryRegister(
      grpc::CallbackServerContext* context,
      const inference::SystemSharedMemoryRegisterRequest* request,
      inference::SystemSharedMemoryRegisterResponse* response) override;
  grpc::ServerUnaryReactor* SystemSharedMemoryUnregister(
      grpc::CallbackServerContext* context,
      const inference::SystemSharedMemoryUnregisterRequest* request,
      inference::SystemSharedMemoryUnregisterResponse* response) override;
  grpc::ServerUnaryReactor* CudaSharedMemoryStatus(
      grpc::CallbackServerContext* context, const inference::CudaSharedMemoryStatusRequest* request,
      inference::CudaSharedMemoryStatusResponse* response) override;
  grpc::ServerUnaryReactor* CudaSharedMemoryRegister(
      grpc::CallbackServerContext* context,
      const inference::CudaSharedMemoryRegisterRequest* request,
      inference::CudaSharedMemoryRegisterResponse* response) override;
  grpc::ServerUnaryReactor* CudaSharedMemoryUnregister(
      grpc::CallbackServerContext* context,
      const inference::CudaSharedMemoryUnregisterRequest* request,
      inference::CudaSharedMemoryUnregisterResponse* response) override;

 private:
  // CheckGrpcAccess for a call of class `access` that takes no model.
  absl::Status Allow(grpc::CallbackServerContext* context, Access access, AccessGrant* grant) const;

  const GrpcContext ctx_;
};

}  // namespace inferd

#endif  // INFERD_FRONTENDS_GRPC_GRPC_SERVICE_H_
