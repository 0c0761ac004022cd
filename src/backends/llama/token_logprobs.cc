#include "backends/llama/token_logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace inferd {

StepLogprobs LogprobsOf(std::span<const float> logits, int32_t token, int top) {
  StepLogprobs out;
  if (logits.empty()) return out;
  // log softmax(x)_i = x_i - (max + log(sum(exp(x_j - max)))); -inf logits (masked) give -inf.
  const float max = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float x : logits) sum += std::exp(static_cast<double>(x) - max);
  const double normaliser = static_cast<double>(max) + std::log(sum);
  auto logprob = [&](int32_t id) {
    return static_cast<float>(static_cast<double>(logits[static_cast<size_t>(id)]) - normaliser);
  };
  out.logprob = logprob(token);
  const size_t k = std::min(static_cast<size_t>(std::max(top, 0)), logits.size());
  if (k == 0) return out;
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids.end(),
                    [&](int32_t a, int32_t b) {
                      const float la = logits[static_cast<size_t>(a)];
                      const float lb = logits[static_cast<size_t>(b)];
                      return la > lb || (la == lb && a < b);
                    });
  out.top.reserve(k);
  for (size_t i = 0; i < k; ++i) out.top.emplace_back(ids[i], logprob(ids[i]));
  return out;
}

}  // namespace inferd
