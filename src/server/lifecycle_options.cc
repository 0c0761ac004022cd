#include "server/lifecycle_options.h"

#include <spdlog/spdlog.h>

#include "core/memory/memory_budget.h"

namespace inferd {

absl::StatusOr<ModelManagerOptions> LifecycleOptionsFrom(const ServerOptions& options) {
  ModelManagerOptions lifecycle;
  lifecycle.defaults = ConfigDefaults{.max_batch_size = options.default_max_batch_size,
                                      .instance_count = options.default_instances,
                                      .busy_poll_us = options.busy_poll_us};
  lifecycle.control = options.model_control == "explicit" ? ModelControl::kExplicit
                      : options.model_control == "watch"  ? ModelControl::kWatch
                                                          : ModelControl::kLoadAll;
  if (!options.load_models.empty() && lifecycle.control != ModelControl::kExplicit) {
    return absl::InvalidArgumentError(
        "--load-model needs --model-control explicit (otherwise every model loads at start)");
  }
  lifecycle.load_models = options.load_models;
  lifecycle.lazy_all = options.lazy_load;
  absl::StatusOr<std::map<std::string, uint64_t, std::less<>>> budgets =
      ParseMemoryBudgets(options.memory_budget);
  if (!budgets.ok()) return budgets.status();
  lifecycle.memory_budgets = *std::move(budgets);
  lifecycle.watch_interval = std::chrono::milliseconds(options.watch_interval_ms);
  lifecycle.settle_interval = std::chrono::milliseconds(options.settle_ms);
  const auto cpu = lifecycle.memory_budgets.find("cpu");
  spdlog::info(
      "model control: {}{}; cpu memory budget {}{}", options.model_control,
      options.lazy_load ? " (lazy loading)" : "",
      FormatBytes(cpu != lifecycle.memory_budgets.end() ? cpu->second : DefaultBudgetBytes("cpu")),
      cpu != lifecycle.memory_budgets.end() ? "" : " (default: 80% of memory)");
  return lifecycle;
}

}  // namespace inferd
