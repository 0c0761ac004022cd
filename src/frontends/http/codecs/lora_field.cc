#include "frontends/http/codecs/lora_field.h"

#include <string>
#include <string_view>

#include "common/strings.h"
#include "core/config/adapter_config.h"
#include "core/config/model_name.h"
#include "frontends/http/codecs/request_fields.h"

namespace inferd {

absl::Status ReadLoraField(simdjson::dom::object o, std::vector<AdapterUse>* out) {
  simdjson::dom::element field;
  if (o["lora"].get(field) || field.is_null()) return absl::OkStatus();
  simdjson::dom::array list;
  if (field.get(list)) {
    return InvalidField("lora", "'lora' must be a list of {\"id\" or \"name\", \"scale\"}");
  }
  if (list.size() > kMaxAdapters) {
    return InvalidField("lora", StrCat("'lora' names ", list.size(), " adapters; at most ",
                                       kMaxAdapters, " are allowed"));
  }
  std::vector<AdapterUse> uses;
  size_t index = 0;
  for (simdjson::dom::element entry : list) {
    const std::string where = StrCat("lora[", index++, "]");
    auto refuse = [&](std::string_view why) {
      return InvalidField("lora", StrCat(where, ": ", why));
    };
    simdjson::dom::object item;
    if (entry.get(item)) return refuse("must be an object {\"id\" or \"name\", \"scale\"}");
    AdapterUse use;
    bool has_id = false, has_name = false, has_scale = false;
    for (auto [key, value] : item) {
      if (key == "id") {
        int64_t id = 0;
        if (value.get(id) || id < 0 || id >= static_cast<int64_t>(kMaxAdapters)) {
          return refuse(StrCat("'id' must be an integer in 0..", kMaxAdapters - 1,
                               " (an index into the model's adapters)"));
        }
        use.id = id;
        has_id = true;
      } else if (key == "name") {
        std::string_view name;
        if (value.get(name) || name.empty() || name.size() > kMaxModelNameBytes) {
          return refuse(
              StrCat("'name' must be an adapter's name, 1 to ", kMaxModelNameBytes, " bytes"));
        }
        use.name = std::string(name);
        has_name = true;
      } else if (key == "scale") {
        double scale = 0;
        if (value.get(scale)) return refuse("'scale' must be a number");
        if (absl::Status valid = CheckAdapterScale(scale, StrCat(where, ".scale")); !valid.ok()) {
          return InvalidField("lora", std::string(valid.message()));
        }
        use.scale = scale;
        has_scale = true;
      } else {
        return refuse(
            StrCat("'", EscapeForLog(key, 32),
                   "' is not supported (an entry has \"id\" or \"name\", and \"scale\")"));
      }
    }
    if (has_id == has_name) return refuse("give exactly one of 'id' and 'name'");
    if (!has_scale) return refuse("'scale' is required");
    uses.push_back(std::move(use));
  }
  *out = std::move(uses);
  return absl::OkStatus();
}

}  // namespace inferd
