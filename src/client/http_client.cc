#include "client/http_client.h"

#include <charconv>
#include <cstring>
#include <utility>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "common/http_status.h"
#include "common/strings.h"
#include "core/types/bytes_tensor.h"

namespace inferd {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

// One keep-alive connection; used by one thread at a time (the pool hands it out).
class HttpConnection {
 public:
  HttpConnection(const std::string& host, const std::string& port) : host_(host), port_(port) {}

  absl::StatusOr<HttpClient::Reply> Send(const http::request<http::string_body>& request) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      beast::error_code ec;
      if (!stream_.socket().is_open()) {
        tcp::resolver resolver(io_);
        auto endpoints = resolver.resolve(host_, port_, ec);
        if (!ec) stream_.connect(endpoints, ec);
        if (ec) {
          return absl::UnavailableError(
              StrCat("cannot connect to ", host_, ":", port_, ": ", ec.message()));
        }
        stream_.socket().set_option(tcp::no_delay(true));
      }
      http::write(stream_, request, ec);
      http::response_parser<http::string_body> parser;
      parser.body_limit(std::numeric_limits<uint64_t>::max());
      if (!ec) http::read(stream_, buffer_, parser, ec);
      if (ec) {  // a keep-alive connection the server closed: reconnect once
        stream_.socket().close(ec);
        buffer_.clear();
        if (attempt == 0) continue;
        return absl::UnavailableError(StrCat("HTTP request to ", host_, ":", port_, " failed"));
      }
      http::response<http::string_body> response = parser.release();
      HttpClient::Reply reply;
      reply.status = response.result_int();
      if (auto it = response.find("Inference-Header-Content-Length"); it != response.end()) {
        reply.header_length = std::string(it->value());
      }
      reply.body = std::move(response.body());
      if (!response.keep_alive()) stream_.socket().close(ec);
      return reply;
    }
    return absl::UnavailableError("unreachable");
  }

 private:
  const std::string host_;
  const std::string port_;
  boost::asio::io_context io_;
  beast::tcp_stream stream_{io_};
  beast::flat_buffer buffer_;
};

namespace {

absl::Status ErrorFrom(const HttpClient::Reply& reply) {
  rapidjson::Document doc;
  doc.Parse(reply.body.data(), reply.body.size());
  std::string message = reply.body;
  if (!doc.HasParseError() && doc.IsObject() && doc.HasMember("error") && doc["error"].IsString()) {
    message = doc["error"].GetString();
  }
  // The server's own mapping, read backwards; a 2xx or 3xx that is not the answer expected is
  // an error all the same.
  absl::StatusCode code = StatusCodeForHttp(reply.status);
  if (code == absl::StatusCode::kOk) code = absl::StatusCode::kUnknown;
  return absl::Status(code, StrCat("HTTP ", reply.status, ": ", message));
}

std::string ModelPath(const std::string& model, const std::string& version) {
  return StrCat("/v2/models/", model, version.empty() ? "" : StrCat("/versions/", version));
}

// The JSON header and binary section of an infer request.
std::string EncodeRequest(const InferOptions& options, const std::vector<NamedTensor>& inputs,
                          size_t* json_length) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  if (!options.id.empty()) {
    w.Key("id");
    w.String(options.id.c_str());
  }
  w.Key("parameters");
  w.StartObject();
  w.Key("binary_data_output");
  w.Bool(true);
  if (options.priority > 0) {
    w.Key("priority");
    w.Int(options.priority);
  }
  if (options.timeout_us > 0) {
    w.Key("timeout");
    w.Int64(options.timeout_us);
  }
  w.EndObject();
  w.Key("inputs");
  w.StartArray();
  for (const NamedTensor& input : inputs) {
    w.StartObject();
    w.Key("name");
    w.String(input.name.c_str());
    w.Key("datatype");
    const std::string type(DataTypeName(input.tensor.type()));
    w.String(type.c_str());
    w.Key("shape");
    w.StartArray();
    for (int64_t dim : input.tensor.shape()) w.Int64(dim);
    w.EndArray();
    w.Key("parameters");
    w.StartObject();
    w.Key("binary_data_size");
    w.Uint64(input.tensor.byte_size());
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  if (!options.outputs.empty()) {
    w.Key("outputs");
    w.StartArray();
    for (const std::string& output : options.outputs) {
      w.StartObject();
      w.Key("name");
      w.String(output.c_str());
      w.Key("parameters");
      w.StartObject();
      w.Key("binary_data");
      w.Bool(true);
      w.EndObject();
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  std::string body(buffer.GetString(), buffer.GetSize());
  *json_length = body.size();
  for (const NamedTensor& input : inputs) {
    body.append(reinterpret_cast<const char*>(input.tensor.data()), input.tensor.byte_size());
  }
  return body;
}

absl::StatusOr<InferResult> DecodeReply(HttpClient::Reply reply) {
  size_t json_length = reply.body.size();
  if (!reply.header_length.empty()) {
    auto [end, ec] =
        std::from_chars(reply.header_length.data(),
                        reply.header_length.data() + reply.header_length.size(), json_length);
    if (ec != std::errc() || json_length > reply.body.size()) {
      return absl::InternalError("the reply's Inference-Header-Content-Length is invalid");
    }
  }
  rapidjson::Document doc;
  doc.Parse(reply.body.data(), json_length);
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("outputs")) {
    return absl::InternalError("the reply is not a KServe v2 infer response");
  }
  InferResult result;
  auto text = [&](const char* key) {
    return doc.HasMember(key) && doc[key].IsString() ? std::string(doc[key].GetString())
                                                     : std::string();
  };
  result.model_name = text("model_name");
  result.model_version = text("model_version");
  result.id = text("id");
  // Every output tensor views one shared copy of the reply body.
  auto body = std::make_shared<std::string>(std::move(reply.body));
  size_t offset = json_length;
  for (const auto& out : doc["outputs"].GetArray()) {
    const std::string name = out["name"].GetString();
    std::optional<DataType> type = ParseDataType(out["datatype"].GetString());
    if (!type) return absl::InternalError(StrCat("output '", name, "': unknown datatype"));
    Shape shape;
    for (const auto& dim : out["shape"].GetArray()) shape.push_back(dim.GetInt64());
    if (!out.HasMember("parameters") || !out["parameters"].HasMember("binary_data_size")) {
      return absl::InternalError(StrCat("output '", name, "' came back without binary data"));
    }
    const uint64_t size = out["parameters"]["binary_data_size"].GetUint64();
    if (size > body->size() - offset) {
      return absl::InternalError(StrCat("output '", name, "' runs past the reply"));
    }
    result.outputs.push_back(
        {name, Tensor::Wrap(*type, std::move(shape), body->data() + offset, size, body)});
    offset += size;
  }
  return result;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Client>> Client::CreateHttp(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(StrCat("address '", address, "' is not host:port"));
  }
  return std::make_unique<HttpClient>(address.substr(0, colon), address.substr(colon + 1));
}

HttpClient::HttpClient(std::string host, std::string port, int async_threads)
    : host_(std::move(host)), port_(std::move(port)) {
  for (int i = 0; i < async_threads; ++i) workers_.emplace_back([this] { WorkLoop(); });
}

HttpClient::~HttpClient() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  work_ready_.NotifyAll();
  for (std::thread& worker : workers_) worker.join();
}

void HttpClient::WorkLoop() {
  while (true) {
    std::function<void()> task;
    {
      MutexLock lock(&mu_);
      work_ready_.Wait(&mu_, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !work_.empty();
      });
      if (work_.empty()) return;  // stopping, and everything queued has run
      task = std::move(work_.front());
      work_.pop_front();
    }
    task();
  }
}

std::unique_ptr<HttpConnection> HttpClient::TakeConnection() {
  {
    MutexLock lock(&mu_);
    if (!idle_.empty()) {
      std::unique_ptr<HttpConnection> connection = std::move(idle_.back());
      idle_.pop_back();
      return connection;
    }
  }
  return std::make_unique<HttpConnection>(host_, port_);
}

void HttpClient::ReturnConnection(std::unique_ptr<HttpConnection> connection) {
  MutexLock lock(&mu_);
  idle_.push_back(std::move(connection));
}

absl::StatusOr<HttpClient::Reply> HttpClient::Send(
    const std::string& method, const std::string& target, std::string body,
    std::vector<std::pair<std::string, std::string>> headers) {
  http::request<http::string_body> request(http::string_to_verb(method), target, 11);
  request.set(http::field::host, host_);
  request.keep_alive(true);
  for (auto& [name, value] : headers) request.set(name, value);
  request.body() = std::move(body);
  request.prepare_payload();
  std::unique_ptr<HttpConnection> connection = TakeConnection();
  absl::StatusOr<Reply> reply = connection->Send(request);
  ReturnConnection(std::move(connection));
  return reply;
}

absl::StatusOr<bool> HttpClient::IsServerLive() {
  absl::StatusOr<Reply> reply = Send("GET", "/v2/health/live", "", {});
  if (!reply.ok()) return reply.status();
  return reply->status == 200;
}

absl::StatusOr<bool> HttpClient::IsServerReady() {
  absl::StatusOr<Reply> reply = Send("GET", "/v2/health/ready", "", {});
  if (!reply.ok()) return reply.status();
  return reply->status == 200;
}

absl::StatusOr<bool> HttpClient::IsModelReady(const std::string& model,
                                              const std::string& version) {
  absl::StatusOr<Reply> reply = Send("GET", ModelPath(model, version) + "/ready", "", {});
  if (!reply.ok()) return reply.status();
  if (reply->status == 404) return ErrorFrom(*reply);
  return reply->status == 200;
}

absl::StatusOr<ModelMetadata> HttpClient::GetModelMetadata(const std::string& model,
                                                           const std::string& version) {
  absl::StatusOr<Reply> reply = Send("GET", ModelPath(model, version), "", {});
  if (!reply.ok()) return reply.status();
  if (reply->status != 200) return ErrorFrom(*reply);
  rapidjson::Document doc;
  doc.Parse(reply->body.data(), reply->body.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return absl::InternalError("the model metadata is not a JSON object");
  }
  ModelMetadata metadata;
  metadata.name = doc["name"].GetString();
  metadata.platform = doc.HasMember("platform") ? doc["platform"].GetString() : "";
  for (const auto& v : doc["versions"].GetArray()) metadata.versions.push_back(v.GetString());
  auto tensors = [](const rapidjson::Value& list, std::vector<TensorMetadata>& out) {
    for (const auto& t : list.GetArray()) {
      TensorMetadata m{t["name"].GetString(), t["datatype"].GetString(), {}};
      for (const auto& d : t["shape"].GetArray()) m.shape.push_back(d.GetInt64());
      out.push_back(std::move(m));
    }
  };
  tensors(doc["inputs"], metadata.inputs);
  tensors(doc["outputs"], metadata.outputs);
  return metadata;
}

absl::StatusOr<InferResult> HttpClient::Infer(const InferOptions& options,
                                              const std::vector<NamedTensor>& inputs) {
  size_t json_length = 0;
  std::string body = EncodeRequest(options, inputs, &json_length);
  absl::StatusOr<Reply> reply =
      Send("POST", ModelPath(options.model, options.version) + "/infer", std::move(body),
           {{"Inference-Header-Content-Length", std::to_string(json_length)},
            {"Content-Type", "application/octet-stream"}});
  if (!reply.ok()) return reply.status();
  if (reply->status != 200) return ErrorFrom(*reply);
  return DecodeReply(*std::move(reply));
}

void HttpClient::InferAsync(InferOptions options, std::vector<NamedTensor> inputs,
                            InferCallback done) {
  {
    MutexLock lock(&mu_);
    work_.push_back([this, options = std::move(options), inputs = std::move(inputs),
                     done = std::move(done)] { done(Infer(options, inputs)); });
  }
  work_ready_.NotifyOne();
}

}  // namespace inferd
