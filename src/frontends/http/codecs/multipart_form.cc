#include "frontends/http/codecs/multipart_form.h"

#include <optional>
#include <string>

#include "common/strings.h"

namespace inferd {
namespace {

absl::Status Invalid(std::string_view why) {
  return absl::InvalidArgumentError(StrCat("multipart/form-data body: ", why));
}

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

std::string_view TrimLeft(std::string_view text) {
  while (!text.empty() && IsSpace(text.front())) text.remove_prefix(1);
  return text;
}

std::string_view TrimRight(std::string_view text) {
  while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
  return text;
}

std::string_view Trim(std::string_view text) { return TrimRight(TrimLeft(text)); }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// The value of `key` among `;`-separated parameters ("form-data; name=\"input\""), quotes
// removed; nullopt when absent. Keys match case-insensitively, as RFC 7578 asks.
std::optional<std::string_view> Parameter(std::string_view header, std::string_view key) {
  size_t pos = header.find(';');
  while (pos != std::string_view::npos) {
    std::string_view rest = TrimLeft(header.substr(pos + 1));
    size_t equals = rest.find('=');
    if (equals == std::string_view::npos) return std::nullopt;
    std::string_view name = Trim(rest.substr(0, equals));
    std::string_view value = TrimLeft(rest.substr(equals + 1));
    size_t end;
    std::string_view parsed;
    if (!value.empty() && value.front() == '"') {
      end = value.find('"', 1);
      if (end == std::string_view::npos) return std::nullopt;
      parsed = value.substr(1, end - 1);
      ++end;
    } else {
      end = value.find(';');
      parsed = TrimRight(value.substr(0, end));
    }
    if (EqualsIgnoreCase(name, key)) return parsed;
    if (end == std::string_view::npos || end >= value.size()) return std::nullopt;
    size_t next = value.find(';', end);
    if (next == std::string_view::npos) return std::nullopt;
    header = value;
    pos = next;
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<std::string_view> MultipartForm::InputPart() const {
  const MultipartPart* file = nullptr;
  int files = 0;
  for (const MultipartPart& part : parts) {
    if (part.name == "input" || part.name == "file") return part.data;
    if (part.is_file) {
      file = &part;
      ++files;
    }
  }
  if (files == 1) return file->data;
  return Invalid(files == 0 ? "no part named 'input' or 'file' and no file part "
                              "(send curl -F input=@photo.jpg)"
                            : "several file parts and none named 'input' or 'file'");
}

absl::StatusOr<MultipartForm> ParseMultipartForm(std::string_view content_type,
                                                 std::string_view body) {
  std::optional<std::string_view> boundary = Parameter(content_type, "boundary");
  if (!boundary || boundary->empty() || boundary->size() > 70) {
    return Invalid("Content-Type needs a boundary of 1 to 70 characters");
  }
  const std::string delimiter = StrCat("--", *boundary);
  const std::string next_delimiter = StrCat("\r\n", delimiter);
  // The first delimiter, at the start of the body or after a preamble line.
  size_t pos;
  if (body.starts_with(delimiter)) {
    pos = delimiter.size();
  } else {
    pos = body.find(next_delimiter);
    if (pos == std::string_view::npos) return Invalid("no boundary line in the body");
    pos += next_delimiter.size();
  }
  MultipartForm form;
  while (true) {
    std::string_view rest = body.substr(pos);
    if (rest.starts_with("--")) return form;  // the closing delimiter
    // Transport padding (spaces, tabs) then CRLF.
    size_t line_end = rest.find("\r\n");
    if (line_end == std::string_view::npos || !Trim(rest.substr(0, line_end)).empty()) {
      return Invalid("a boundary line must end with CRLF");
    }
    if (form.parts.size() == kMaxMultipartParts) {
      return Invalid(StrCat("more than ", kMaxMultipartParts, " parts"));
    }
    rest.remove_prefix(line_end + 2);
    size_t headers_end = rest.substr(0, kMaxMultipartHeaderBytes + 4).find("\r\n\r\n");
    std::string_view headers;
    if (rest.starts_with("\r\n")) {  // no headers at all
      headers_end = 0;
      rest.remove_prefix(2);
    } else if (headers_end == std::string_view::npos) {
      return Invalid(StrCat("part headers over ", kMaxMultipartHeaderBytes,
                            " bytes or not ended by an empty line"));
    } else {
      headers = rest.substr(0, headers_end);
      rest.remove_prefix(headers_end + 4);
    }
    MultipartPart part;
    bool disposition = false;
    for (std::string_view remaining = headers; !remaining.empty();) {
      size_t eol = remaining.find("\r\n");
      std::string_view line = remaining.substr(0, eol);
      remaining = eol == std::string_view::npos ? std::string_view() : remaining.substr(eol + 2);
      size_t colon = line.find(':');
      if (colon == std::string_view::npos) return Invalid("a part header without ':'");
      if (!EqualsIgnoreCase(Trim(line.substr(0, colon)), "Content-Disposition")) {
        continue;
      }
      std::string_view value = line.substr(colon + 1);
      if (auto name = Parameter(value, "name")) part.name = *name;
      if (auto filename = Parameter(value, "filename")) {
        part.filename = *filename;
        part.is_file = true;
      }
      disposition = true;
    }
    if (!disposition) return Invalid("a part without Content-Disposition: form-data; name=...");
    size_t data_end = rest.find(next_delimiter);
    if (data_end == std::string_view::npos) return Invalid("the body ends inside a part");
    part.data = rest.substr(0, data_end);
    form.parts.push_back(part);
    pos = static_cast<size_t>(rest.data() - body.data()) + data_end + next_delimiter.size();
  }
}

}  // namespace inferd
