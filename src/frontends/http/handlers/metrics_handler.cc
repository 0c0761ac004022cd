#include "frontends/http/handlers/metrics_handler.h"

#include "observability/generation_metrics.h"
#include "observability/gpu_metrics.h"

namespace inferd {

HttpReply HandleMetrics(const HandlerContext& ctx) {
  if (ctx.metrics == nullptr) return ErrorReply(404, "this server keeps no metrics");
  HttpReply reply;
  reply.body = ctx.metrics->ScrapeText(ctx.models);
  if (ctx.models != nullptr) reply.body += GenerationMetricsText(*ctx.models);
  reply.body += ProcessGpuMetricsText();
  reply.content_type = "text/plain; version=0.0.4; charset=utf-8";
  return reply;
}

}  // namespace inferd
