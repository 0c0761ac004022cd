// Includes only <sentencepiece_processor.h>, std headers and its own C header: see
// sentencepiece_shim.h. Nothing here may throw across the C ABI.
#include "ops/text/sentencepiece_shim.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

struct InferdSpm {
  sentencepiece::SentencePieceProcessor processor;
};

namespace {

void WriteError(const std::string& message, char* error, size_t error_size) {
  if (error == nullptr || error_size == 0) return;
  const size_t n = std::min(message.size(), error_size - 1);
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}

}  // namespace

extern "C" InferdSpm* inferd_spm_load(const char* path, char* error, size_t error_size) {
  try {
    auto* spm = new InferdSpm();
    const auto status = spm->processor.Load(std::string_view(path));
    if (!status.ok()) {
      WriteError(status.ToString(), error, error_size);
      delete spm;
      return nullptr;
    }
    return spm;
  } catch (const std::exception& e) {
    WriteError(e.what(), error, error_size);
    return nullptr;
  }
}

extern "C" void inferd_spm_free(InferdSpm* spm) { delete spm; }

extern "C" int64_t inferd_spm_encode(const InferdSpm* spm, const char* text, size_t len,
                                     int32_t* ids, size_t capacity, char* error,
                                     size_t error_size) {
  try {
    std::vector<int> pieces;
    const auto status = spm->processor.Encode(std::string_view(text, len), &pieces);
    if (!status.ok()) {
      WriteError(status.ToString(), error, error_size);
      return -1;
    }
    const size_t n = std::min(pieces.size(), capacity);
    for (size_t i = 0; i < n; ++i) ids[i] = pieces[i];
    return static_cast<int64_t>(pieces.size());
  } catch (const std::exception& e) {
    WriteError(e.what(), error, error_size);
    return -1;
  }
}

extern "C" int32_t inferd_spm_bos_id(const InferdSpm* spm) { return spm->processor.bos_id(); }
extern "C" int32_t inferd_spm_eos_id(const InferdSpm* spm) { return spm->processor.eos_id(); }
extern "C" int32_t inferd_spm_pad_id(const InferdSpm* spm) { return spm->processor.pad_id(); }
