// ONNX Runtime's C API, made safe to use from C++: the function table, owning pointers that
// release ORT objects, and OrtStatus -> absl::Status.
//
// The backend uses the C API directly: it is the ABI-stable interface the shared library
// exports, and its header is the one official ORT header the build can fetch (see
// scripts/setup-onnxruntime). Only files in this folder include it.
#ifndef INFERD_BACKENDS_ONNX_ORT_API_H_
#define INFERD_BACKENDS_ONNX_ORT_API_H_

#include <onnxruntime_c_api.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace inferd::ort {

// The API table of the loaded library for the header's ORT_API_VERSION, or nullptr when the
// library is older than the header (it cannot serve the functions the header declares).
const OrtApi* Api();

// The loaded library's version ("1.23.2").
std::string_view LibraryVersion();

// The execution providers the loaded library was built with (GetAvailableProviders), e.g.
// {"CPUExecutionProvider"}; empty when ORT cannot say.
std::vector<std::string> AvailableProviders();

// Converts and releases `status`: OK for nullptr, else `code` with "<context>: <ORT message>".
absl::Status ToStatus(OrtStatus* status, std::string_view context,
                      absl::StatusCode code = absl::StatusCode::kInternal);

// Owning pointers: each releases its object with the matching OrtApi::Release* function.
template <typename T>
struct Releaser;
#define INFERD_ORT_RELEASER(Type)                                    \
  template <>                                                        \
  struct Releaser<Ort##Type> {                                       \
    void operator()(Ort##Type* p) const { Api()->Release##Type(p); } \
  }
INFERD_ORT_RELEASER(Env);
INFERD_ORT_RELEASER(SessionOptions);
INFERD_ORT_RELEASER(Session);
INFERD_ORT_RELEASER(Value);
INFERD_ORT_RELEASER(MemoryInfo);
INFERD_ORT_RELEASER(IoBinding);
INFERD_ORT_RELEASER(TypeInfo);
INFERD_ORT_RELEASER(TensorTypeAndShapeInfo);
INFERD_ORT_RELEASER(ModelMetadata);
#undef INFERD_ORT_RELEASER

template <typename T>
using Ptr = std::unique_ptr<T, Releaser<T>>;

// Frees memory ORT allocated with `allocator` (a failure to free is not actionable: ignored).
void Free(OrtAllocator* allocator, void* p);

// A string ORT allocated with `allocator`, copied and freed.
std::string TakeString(OrtAllocator* allocator, char* value);

}  // namespace inferd::ort

#endif  // INFERD_BACKENDS_ONNX_ORT_API_H_
