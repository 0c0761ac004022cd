// multipart/form-data bodies (RFC 7578), as `curl -F input=@photo.jpg` sends them to /predict.
// The parts are views into the body (no copies); counts and header sizes are bounded.
#ifndef INFERD_FRONTENDS_HTTP_CODECS_MULTIPART_FORM_H_
#define INFERD_FRONTENDS_HTTP_CODECS_MULTIPART_FORM_H_

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace inferd {

inline constexpr size_t kMaxMultipartParts = 16;
inline constexpr size_t kMaxMultipartHeaderBytes = 8 * 1024;

struct MultipartPart {
  std::string_view name;      // Content-Disposition's name
  std::string_view filename;  // its filename, empty when absent
  bool is_file = false;       // a filename parameter was present
  std::string_view data;
};

struct MultipartForm {
  std::vector<MultipartPart> parts;

  // The part /predict takes: the one named "input" or "file", else the only file part.
  absl::StatusOr<std::string_view> InputPart() const;
};

// `content_type` is the request's Content-Type ("multipart/form-data; boundary=..."). The
// returned views point into `body`, which must outlive them. InvalidArgument says what is
// wrong with the body.
absl::StatusOr<MultipartForm> ParseMultipartForm(std::string_view content_type,
                                                 std::string_view body);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_CODECS_MULTIPART_FORM_H_
