// Client over gRPC (inference.GRPCInferenceService): raw_input_contents in,
// raw_output_contents out; InferAsync uses the stub's callback API (no thread per call).
#ifndef INFERD_CLIENT_GRPC_CLIENT_H_
#define INFERD_CLIENT_GRPC_CLIENT_H_

#include <memory>
#include <string>
#include <vector>

#include <grpcpp/channel.h>

#include "client/client.h"
#include "inference_service.grpc.pb.h"

namespace inferd {

class GrpcClient final : public Client {
 public:
  explicit GrpcClient(std::shared_ptr<grpc::Channel> channel);

  absl::StatusOr<bool> IsServerLive() override;
  absl::StatusOr<bool> IsServerReady() override;
  absl::StatusOr<bool> IsModelReady(const std::string& model, const std::string& version) override;
  absl::StatusOr<ModelMetadata> GetModelMetadata(const std::string& model,
                                                 const std::string& version) override;
  absl::StatusOr<InferResult> Infer(const InferOptions& options,
                                    const std::vector<NamedTensor>& inputs) override;
  void InferAsync(InferOptions options, std::vector<NamedTensor> inputs,
                  InferCallback done) override;

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
};

}  // namespace inferd

#endif  // INFERD_CLIENT_GRPC_CLIENT_H_
