// ModelInferRequest <-> text generation, the way Triton serves language models to gRPC
// clients (its vLLM backend's tensors), for a llama model on ModelStreamInfer:
//
//   inputs   text_input               BYTES [1]  the prompt (required)
//            stream                   BOOL  [1]  one response per piece of text (default false:
//                                                one response with the whole text)
//            exclude_input_in_output  BOOL  [1]  false puts the prompt before the text; the
//                                                default is false without stream and true
//                                                with it (false with stream is refused)
//            sampling_parameters      BYTES [1]  JSON object of the parameters below
//   parameters (the request's, or sampling_parameters' keys; numbers may be strings, as the
//            vLLM backend accepts): max_tokens, temperature, top_p, top_k, min_p, seed, stop (a
//            string or a list), cache_prompt, presence_penalty, frequency_penalty,
//            repetition_penalty, repeat_last_n (as on HTTP); the protocol's own timeout and
//            triton_* flags; priority only 0. Any other key is refused (InvalidArgument naming
//            it), never ignored
//   output   text_output              BYTES [1]
//
// Every response carries the parameter triton_final_response (true on the last one, which
// also has finish_reason, prompt_tokens and completion_tokens); the last response may have
// an empty text_output. Bounds are the HTTP APIs': temperature in [0, 2], top_p in (0, 1],
// max_tokens >= 1, at most 4 stop strings of 256 bytes, 1 MiB of prompt.
#ifndef INFERD_FRONTENDS_GRPC_GRPC_GENERATE_CODEC_H_
#define INFERD_FRONTENDS_GRPC_GRPC_GENERATE_CODEC_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/backend/generation.h"
#include "inference_service.pb.h"

namespace inferd {

struct GrpcGeneration {
  std::unique_ptr<GenerateRequest> request;
  bool stream = false;
  bool prepend_input = false;  // the prompt goes before the text (non-streaming only)
  int64_t timeout_us = 0;      // the request's "timeout" parameter; 0: none
};

// InvalidArgument naming the input or parameter on any error.
absl::StatusOr<GrpcGeneration> DecodeGrpcGeneration(const inference::ModelInferRequest& request);

// One response of a generation: `text` as text_output; `done` (the last event, OK) marks it
// final and adds its finish reason and token counts.
void EncodeGrpcGeneration(std::string_view model, int64_t version, std::string_view id,
                          std::string_view text, const GenerationEvent* done,
                          inference::ModelInferResponse* out);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_GRPC_GRPC_GENERATE_CODEC_H_
