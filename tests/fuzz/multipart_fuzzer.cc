// The multipart/form-data parser /predict uses for uploads, on arbitrary bodies and boundaries.
// Input: the first line is the Content-Type's boundary parameter, the rest the body.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "frontends/http/codecs/multipart_form.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  const std::string_view boundary = input.substr(0, newline);
  const std::string_view body =
      newline == std::string_view::npos ? std::string_view() : input.substr(newline + 1);
  const std::string content_type = "multipart/form-data; boundary=" + std::string(boundary);
  auto form = inferd::ParseMultipartForm(content_type, body);
  if (form.ok()) {
    for (const inferd::MultipartPart& part : form->parts) {
      // Every view lies inside the body.
      if (part.data.data() < body.data() ||
          part.data.data() + part.data.size() > body.data() + body.size()) {
        __builtin_trap();
      }
    }
    (void)form->InputPart();
  }
  return 0;
}
