// LlamaEngine's LoRA adapters at request time: which loaded adapters a request asks for,
// and setting a step's adapter set on the context (llama.cpp sets adapters per context, so
// a decode step holds one set: adapter_batching.h).
#include <algorithm>
#include <vector>

#include "backends/llama/llama_engine.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace inferd {

absl::StatusOr<AdapterSet> LlamaEngine::AdapterSetOf(const GenerateRequest& request) const {
  AdapterSet set;
  for (const AdapterUse& use : request.adapters) {
    if (use.scale == 0) continue;
    auto it = std::find_if(model_.adapters.begin(), model_.adapters.end(),
                           [&use](const Adapter& adapter) { return adapter.name == use.name; });
    if (it == model_.adapters.end()) {
      return absl::NotFoundError(StrCat("this model has no adapter '", use.name, "'"));
    }
    if (it->adapter == nullptr) {
      return absl::UnavailableError(StrCat("adapter '", use.name, "' is unavailable: its file ",
                                           it->path.string(), " did not load (", it->error,
                                           "); the base model and its other adapters serve"));
    }
    set.push_back({static_cast<int>(it - model_.adapters.begin()), static_cast<float>(use.scale)});
  }
  std::sort(set.begin(), set.end());
  return set;
}

absl::Status LlamaEngine::ApplyAdapters(const AdapterSet& set) {
  if (set == applied_adapters_) return absl::OkStatus();
  RETURN_IF_ERROR(decoder_->SetAdapters(set));
  applied_adapters_ = set;
  return absl::OkStatus();
}

}  // namespace inferd
