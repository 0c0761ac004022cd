// The fields of one repository index row (name, version, state, reason), written by
// POST /v2/repository/index and by the dashboard's data endpoint. A template because the
// dashboard writes with RapidJSON's default writer (no NaN literals for the browser) and the
// KServe handlers with JsonWriter.
#ifndef INFERD_FRONTENDS_HTTP_HANDLERS_INDEX_ROW_H_
#define INFERD_FRONTENDS_HTTP_HANDLERS_INDEX_ROW_H_

#include <string>
#include <string_view>

#include <rapidjson/rapidjson.h>

#include "common/client_paths.h"
#include "core/repository/lifecycle_report.h"

namespace inferd {

template <typename Writer>
void WriteIndexRowFields(const ModelStatus& status, Writer& writer) {
  auto write_string = [&writer](std::string_view text) {
    writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  };
  writer.Key("name");
  write_string(status.name);
  if (status.version) {
    writer.Key("version");
    write_string(std::to_string(*status.version));
  }
  writer.Key("state");
  write_string(ModelStateName(status.state));
  writer.Key("reason");
  write_string(WithoutServerPaths(status.reason));
}

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_HANDLERS_INDEX_ROW_H_
