// How the HTTP frontend answers the access policy (auth/access_policy.h): the refusal reply,
// and a responder that holds a tenant's in-flight slot until the reply is sent.
#ifndef INFERD_FRONTENDS_HTTP_ROUTING_ACCESS_REPLY_H_
#define INFERD_FRONTENDS_HTTP_ROUTING_ACCESS_REPLY_H_

#include <memory>

#include "auth/access_policy.h"
#include "frontends/http/http_types.h"

namespace inferd {

// 401 with a `WWW-Authenticate: Bearer` challenge, 403, or 429 with Retry-After.
HttpReply AccessDeniedReply(const AccessDenial& denial);

// A responder that forwards to `inner` and finishes `permit` with the reply's outcome
// (releasing the tenant's in-flight slot, recording its latency) as the reply is sent.
ResponderPtr WithTenantPermit(ResponderPtr inner, std::shared_ptr<TenantPermit> permit);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_ROUTING_ACCESS_REPLY_H_
