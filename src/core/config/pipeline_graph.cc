#include "core/config/pipeline_graph.h"

#include <algorithm>
#include <deque>
#include <set>

#include "common/strings.h"

namespace inferd {

std::map<std::string, size_t> ProducerIndex(const PipelineSpec& spec) {
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < spec.steps.size(); ++i) {
    for (const auto& [port, scope] : spec.steps[i].outputs) producer.emplace(scope, i);
  }
  return producer;
}

absl::StatusOr<std::vector<size_t>> OrderSteps(const FieldReader& reader,
                                               const PipelineSpec& spec) {
  const std::map<std::string, size_t> producer = ProducerIndex(spec);
  const size_t n = spec.steps.size();
  // Edges producer -> consumer, one per distinct producer a step reads from.
  std::vector<std::set<size_t>> reads_from(n);
  std::vector<std::vector<size_t>> consumers(n);
  for (size_t i = 0; i < n; ++i) {
    for (const auto& [port, scope] : spec.steps[i].inputs) {
      auto it = producer.find(scope);
      if (it != producer.end() && reads_from[i].insert(it->second).second) {
        consumers[it->second].push_back(i);
      }
    }
  }
  std::vector<size_t> pending(n);
  std::deque<size_t> ready;
  for (size_t i = 0; i < n; ++i) {
    pending[i] = reads_from[i].size();
    if (pending[i] == 0) ready.push_back(i);
  }
  std::vector<size_t> order;
  while (!ready.empty()) {
    const size_t step = ready.front();
    ready.pop_front();
    order.push_back(step);
    for (size_t consumer : consumers[step]) {
      if (--pending[consumer] == 0) ready.push_back(consumer);
    }
  }
  if (order.size() == n) return order;

  // Every leftover step reads from a leftover step, so walking "reads from" among them from
  // any leftover step must come back to a step already seen: that loop is the cycle.
  size_t start = 0;
  while (pending[start] == 0) ++start;
  std::vector<size_t> walk;
  std::vector<int> seen_at(n, -1);
  size_t step = start;
  while (seen_at[step] < 0) {
    seen_at[step] = static_cast<int>(walk.size());
    walk.push_back(step);
    for (size_t from : reads_from[step]) {
      if (pending[from] > 0) {
        step = from;
        break;
      }
    }
  }
  // walk[seen_at[step]..] follows reads-from edges; data flows the other way.
  std::vector<size_t> cycle(walk.begin() + seen_at[step], walk.end());
  std::reverse(cycle.begin(), cycle.end());
  // Start the path at the step listed first, so the same loop always reads the same way.
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  std::string path;
  for (size_t s : cycle) path += StrCat(spec.steps[s].name, " -> ");
  path += spec.steps[cycle.front()].name;
  // Name one read that closes the loop: the first step of the path reads the last's output.
  const size_t consumer = cycle.front();
  const size_t closing_producer = cycle.back();
  std::string why;
  for (const auto& [port, scope] : spec.steps[consumer].inputs) {
    auto it = producer.find(scope);
    if (it != producer.end() && it->second == closing_producer) {
      why = StrCat(" (steps[", consumer, "].inputs.", port, " reads ",
                   spec.steps[closing_producer].name, "'s output '", scope, "')");
      break;
    }
  }
  return reader.Error("pipeline.steps", StrCat("cycle ", path, why));
}

}  // namespace inferd
