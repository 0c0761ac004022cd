#include "frontends/http/handler_context.h"

#include <utility>

namespace inferd {

void SubmitInference(const ModelHandle& model, std::unique_ptr<InferRequest> request,
                     ResponderPtr responder, ReplyEncoder encode) {
  request->on_complete = [responder = std::move(responder),
                          encode = std::move(encode)](InferResponse response) mutable {
    responder->Defer([response = std::move(response), encode = std::move(encode)] {
      if (!response.status.ok()) return ErrorReply(response.status);
      return encode(response);
    });
  };
  model->Infer(std::move(request));
}

}  // namespace inferd
