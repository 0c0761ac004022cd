// What a caller of InferencePath::Submit (a frontend, or a pipeline's model step) hears back
// about one request, exactly once.
#ifndef INFERD_CORE_MODEL_INFER_CALLBACKS_H_
#define INFERD_CORE_MODEL_INFER_CALLBACKS_H_

#include <functional>
#include <memory>

#include "core/backend/infer_request.h"

namespace inferd {

class ServedModel;  // core/model/served_model.h
using ModelHandle = std::shared_ptr<ServedModel>;

// What a frontend hears back about one request, exactly once.
struct InferCallbacks {
  // Optional: told the version chosen for the request just before it is queued, on the thread
  // that acquired it (the caller's, or the loader thread after a load). A frontend that needs
  // the version after `done` (an access log written on the I/O thread) keeps this handle and
  // releases it off the execution threads.
  std::function<void(const ModelHandle&)> acquired;
  // The answer: from the model's execution thread once it has run (`model` is the version that
  // ran it, alive during the call), or from the acquiring thread when the request never reached
  // a version (`model` null: unknown model, failed or timed-out load) or was refused by it; a
  // request whose tensors do not match the model's signature is refused on the caller's thread
  // before anything is loaded (`model`: a loaded version, if there is one, else null).
  // Must not block, and must not keep a handle on `model` past the call: a version's last
  // handle released on its own execution thread would wait for itself.
  std::function<void(const ServedModel* model, InferResponse response)> done;
};

}  // namespace inferd

#endif  // INFERD_CORE_MODEL_INFER_CALLBACKS_H_
