#include "backends/onnx/ort_api.h"

#include "common/strings.h"

namespace inferd::ort {

const OrtApi* Api() {
  static const OrtApi* const api = OrtGetApiBase()->GetApi(ORT_API_VERSION);
  return api;
}

std::string_view LibraryVersion() { return OrtGetApiBase()->GetVersionString(); }

std::vector<std::string> AvailableProviders() {
  char** names = nullptr;
  int count = 0;
  if (OrtStatus* status = Api()->GetAvailableProviders(&names, &count)) {
    Api()->ReleaseStatus(status);
    return {};
  }
  std::vector<std::string> providers(names, names + count);
  if (OrtStatus* status = Api()->ReleaseAvailableProviders(names, count)) {
    Api()->ReleaseStatus(status);
  }
  return providers;
}

absl::Status ToStatus(OrtStatus* status, std::string_view context, absl::StatusCode code) {
  if (status == nullptr) return absl::OkStatus();
  std::string message = StrCat(context, ": ", Api()->GetErrorMessage(status));
  Api()->ReleaseStatus(status);
  return absl::Status(code, message);
}

std::string TakeString(OrtAllocator* allocator, char* value) {
  if (value == nullptr) return "";
  std::string copy(value);
  Free(allocator, value);
  return copy;
}

void Free(OrtAllocator* allocator, void* p) {
  if (OrtStatus* status = Api()->AllocatorFree(allocator, p)) Api()->ReleaseStatus(status);
}

}  // namespace inferd::ort
