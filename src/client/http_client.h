// Client over HTTP/1.1 (KServe v2 REST with the binary tensor extension), on Boost.Beast.
// Synchronous calls use a pool of keep-alive connections; InferAsync runs calls on a few
// worker threads that the client owns (joined when it is destroyed).
#ifndef INFERD_CLIENT_HTTP_CLIENT_H_
#define INFERD_CLIENT_HTTP_CLIENT_H_

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "client/client.h"
#include "common/mutex.h"

namespace inferd {

class HttpConnection;

class HttpClient final : public Client {
 public:
  HttpClient(std::string host, std::string port, int async_threads = 4);
  ~HttpClient() override;

  absl::StatusOr<bool> IsServerLive() override;
  absl::StatusOr<bool> IsServerReady() override;
  absl::StatusOr<bool> IsModelReady(const std::string& model, const std::string& version) override;
  absl::StatusOr<ModelMetadata> GetModelMetadata(const std::string& model,
                                                 const std::string& version) override;
  absl::StatusOr<InferResult> Infer(const InferOptions& options,
                                    const std::vector<NamedTensor>& inputs) override;
  void InferAsync(InferOptions options, std::vector<NamedTensor> inputs,
                  InferCallback done) override;

  struct Reply {
    unsigned status = 0;
    std::string header_length;  // Inference-Header-Content-Length, if any
    std::string body;
  };
  // One request on a pooled connection (reconnecting once if the server closed it).
  absl::StatusOr<Reply> Send(const std::string& method, const std::string& target, std::string body,
                             std::vector<std::pair<std::string, std::string>> headers);

 private:
  std::unique_ptr<HttpConnection> TakeConnection();
  void ReturnConnection(std::unique_ptr<HttpConnection> connection);
  void WorkLoop();

  const std::string host_;
  const std::string port_;
  Mutex mu_;
  CondVar work_ready_;
  std::vector<std::unique_ptr<HttpConnection>> idle_ ABSL_GUARDED_BY(mu_);
  std::deque<std::function<void()>> work_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace inferd

#endif  // INFERD_CLIENT_HTTP_CLIENT_H_
