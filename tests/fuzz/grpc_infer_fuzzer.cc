// gRPC ModelInfer: the serialized ModelInferRequest (as a client sends it) parsed into the
// protobuf, then the service's own inference path (SubmitGrpcInference: version, decode of
// raw_input_contents or typed contents and parameters, validation, scheduling, encoding)
// on the fuzz server's models; and the same message decoded as a streaming generation request
// (DecodeGrpcGeneration: text_input, stream, sampling_parameters JSON, parameters), which
// needs no model. Input: the serialized message.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "frontends/grpc/grpc_generate_codec.h"
#include "frontends/grpc/grpc_inference.h"
#include "inference_service.pb.h"
#include "tests/fuzz/fuzz_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& server = inferd::fuzz::FuzzServer::Get();
  static const std::atomic<bool> draining{false};
  const inferd::GrpcContext ctx{{.inference = &server.inference(),
                                 .models = &server.models(),
                                 .server_version = "fuzz",
                                 .draining = &draining}};
  inference::ModelInferRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return -1;
  (void)inferd::DecodeGrpcGeneration(request);
  inference::ModelInferResponse response;
  absl::Notification done;
  std::atomic<int> calls{0};
  inferd::SubmitGrpcInference(ctx, request, &response, [&](const absl::Status&) {
    if (calls.fetch_add(1) > 0) {
      std::fprintf(stderr, "fuzz: done called twice\n");
      std::abort();
    }
    done.Notify();
  });
  if (!done.WaitForNotificationWithTimeout(absl::Seconds(10))) {
    std::fprintf(stderr, "fuzz: no answer within 10 s\n");
    std::abort();
  }
  server.Restore();
  return 0;
}
