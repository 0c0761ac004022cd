#include "client/grpc_client.h"

#include <cstring>
#include <utility>

#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>

#include "common/strings.h"
#include "core/types/bytes_tensor.h"

namespace inferd {
namespace {

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  // gRPC's codes and absl's share their numbering by design.
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

inference::ModelInferRequest MakeRequest(const InferOptions& options,
                                         const std::vector<NamedTensor>& inputs) {
  inference::ModelInferRequest request;
  request.set_model_name(options.model);
  request.set_model_version(options.version);
  request.set_id(options.id);
  if (options.priority > 0)
    (*request.mutable_parameters())["priority"].set_int64_param(options.priority);
  if (options.timeout_us > 0) {
    (*request.mutable_parameters())["timeout"].set_int64_param(options.timeout_us);
  }
  for (const NamedTensor& input : inputs) {
    auto* tensor = request.add_inputs();
    tensor->set_name(input.name);
    tensor->set_datatype(std::string(DataTypeName(input.tensor.type())));
    for (int64_t dim : input.tensor.shape()) tensor->add_shape(dim);
    request.add_raw_input_contents()->assign(reinterpret_cast<const char*>(input.tensor.data()),
                                             input.tensor.byte_size());
  }
  for (const std::string& output : options.outputs) request.add_outputs()->set_name(output);
  return request;
}

absl::StatusOr<InferResult> ReadResponse(inference::ModelInferResponse& response) {
  InferResult result;
  result.model_name = response.model_name();
  result.model_version = response.model_version();
  result.id = response.id();
  if (response.raw_output_contents_size() != response.outputs_size()) {
    return absl::InternalError(StrCat("the server sent ", response.outputs_size(), " outputs and ",
                                      response.raw_output_contents_size(), " raw contents"));
  }
  for (int i = 0; i < response.outputs_size(); ++i) {
    const auto& output = response.outputs(i);
    std::optional<DataType> type = ParseDataType(output.datatype());
    if (!type) return absl::InternalError(StrCat("unknown output datatype ", output.datatype()));
    Shape shape(output.shape().begin(), output.shape().end());
    // The tensor owns the response's bytes (moved, not copied).
    auto raw = std::make_shared<std::string>(std::move(*response.mutable_raw_output_contents(i)));
    if (*type == DataType::kBytes) {
      absl::StatusOr<int64_t> count = ElementCount(shape);
      if (!count.ok()) return count.status();
      if (absl::Status valid =
              ValidateBytesBuffer(std::span<const std::byte>(
                                      reinterpret_cast<const std::byte*>(raw->data()), raw->size()),
                                  *count, output.name());
          !valid.ok()) {
        return valid;
      }
    } else if (absl::StatusOr<int64_t> count = ElementCount(shape);
               !count.ok() || static_cast<size_t>(*count) * DataTypeSize(*type) != raw->size()) {
      return absl::InternalError(StrCat("output '", output.name(), "': ", raw->size(),
                                        " bytes do not match shape ", ShapeToString(shape)));
    }
    void* data = raw->data();
    const size_t size = raw->size();
    result.outputs.push_back(
        {output.name(), Tensor::Wrap(*type, std::move(shape), data, size, std::move(raw))});
  }
  return result;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Client>> Client::CreateGrpc(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(1 << 30);
  args.SetMaxSendMessageSize(1 << 30);
  auto channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  if (!channel) return absl::InvalidArgumentError(StrCat("cannot make a channel to ", address));
  return std::make_unique<GrpcClient>(std::move(channel));
}

GrpcClient::GrpcClient(std::shared_ptr<grpc::Channel> channel)
    : channel_(std::move(channel)), stub_(inference::GRPCInferenceService::NewStub(channel_)) {}

absl::StatusOr<bool> GrpcClient::IsServerLive() {
  grpc::ClientContext context;
  inference::ServerLiveResponse response;
  grpc::Status status = stub_->ServerLive(&context, {}, &response);
  if (!status.ok()) return FromGrpc(status);
  return response.live();
}

absl::StatusOr<bool> GrpcClient::IsServerReady() {
  grpc::ClientContext context;
  inference::ServerReadyResponse response;
  grpc::Status status = stub_->ServerReady(&context, {}, &response);
  if (!status.ok()) return FromGrpc(status);
  return response.ready();
}

absl::StatusOr<bool> GrpcClient::IsModelReady(const std::string& model,
                                              const std::string& version) {
  grpc::ClientContext context;
  inference::ModelReadyRequest request;
  request.set_name(model);
  request.set_version(version);
  inference::ModelReadyResponse response;
  grpc::Status status = stub_->ModelReady(&context, request, &response);
  if (!status.ok()) return FromGrpc(status);
  return response.ready();
}

absl::StatusOr<ModelMetadata> GrpcClient::GetModelMetadata(const std::string& model,
                                                           const std::string& version) {
  grpc::ClientContext context;
  inference::ModelMetadataRequest request;
  request.set_name(model);
  request.set_version(version);
  inference::ModelMetadataResponse response;
  grpc::Status status = stub_->ModelMetadata(&context, request, &response);
  if (!status.ok()) return FromGrpc(status);
  ModelMetadata metadata{response.name(),
                         {response.versions().begin(), response.versions().end()},
                         response.platform(),
                         {},
                         {}};
  for (const auto& t : response.inputs()) {
    metadata.inputs.push_back({t.name(), t.datatype(), {t.shape().begin(), t.shape().end()}});
  }
  for (const auto& t : response.outputs()) {
    metadata.outputs.push_back({t.name(), t.datatype(), {t.shape().begin(), t.shape().end()}});
  }
  return metadata;
}

absl::StatusOr<InferResult> GrpcClient::Infer(const InferOptions& options,
                                              const std::vector<NamedTensor>& inputs) {
  grpc::ClientContext context;
  inference::ModelInferResponse response;
  grpc::Status status = stub_->ModelInfer(&context, MakeRequest(options, inputs), &response);
  if (!status.ok()) return FromGrpc(status);
  return ReadResponse(response);
}

void GrpcClient::InferAsync(InferOptions options, std::vector<NamedTensor> inputs,
                            InferCallback done) {
  struct Call {
    grpc::ClientContext context;
    inference::ModelInferRequest request;
    inference::ModelInferResponse response;
  };
  auto call = std::make_shared<Call>();
  call->request = MakeRequest(options, inputs);
  stub_->async()->ModelInfer(&call->context, &call->request, &call->response,
                             [call, done = std::move(done)](grpc::Status status) {
                               if (!status.ok()) return done(FromGrpc(status));
                               done(ReadResponse(call->response));
                             });
}

}  // namespace inferd
