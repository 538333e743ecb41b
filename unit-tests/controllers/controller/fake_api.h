#pragma once
// FakeApiServer: an in-memory stand-in for the API server behind a FakeTransport, for the
// reconcile-loop tests. It keeps objects by URL path, answers GET / POST (AlreadyExists on a
// taken name) / PUT / PATCH (acknowledged, not applied) / DELETE (with the UID precondition)
// like kube-apiserver, and records every request so tests can assert what a reconcile did.
// Informer caches are not simulated: tests fill informer::Store objects themselves, which
// lets them reproduce a lagging cache.
//
// Thread-safe (reconciles create pods from several threads).

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/client/client.h"
#include "common/client/testing/fake_transport.h"
#include "common/informer/object.h"
#include "common/informer/store.h"
#include "common/util/json.h"
#include "fmt/format.h"

namespace basalt::controllers::testing {

class FakeApiServer {
 public:
  FakeApiServer() {
    auto transport = std::make_unique<client::FakeTransport>();
    transport->SetFallback([this](const client::Request& r) { return Handle(r); });
    client_ = std::make_unique<client::Client>(std::move(transport));
  }

  client::Client& client() { return *client_; }

  // Stores `json` at `path` (e.g. "/api/v1/namespaces/ns/pods/p").
  void Put(const std::string& path, const std::string& json) {
    std::lock_guard<std::mutex> l(mu_);
    objects_[path] = json;
  }
  bool Has(const std::string& path) const {
    std::lock_guard<std::mutex> l(mu_);
    return objects_.count(path) > 0;
  }
  std::string Object(const std::string& path) const {
    std::lock_guard<std::mutex> l(mu_);
    auto it = objects_.find(path);
    return it == objects_.end() ? std::string() : it->second;
  }

  // "VERB path" of every request, in order.
  std::vector<std::string> Calls() const {
    std::lock_guard<std::mutex> l(mu_);
    return calls_;
  }
  std::vector<client::Request> Requests() const {
    std::lock_guard<std::mutex> l(mu_);
    return requests_;
  }
  // Requests whose "VERB path" starts with `prefix`.
  std::vector<client::Request> RequestsMatching(const std::string& verb,
                                                const std::string& path_prefix) const {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<client::Request> out;
    for (const auto& r : requests_) {
      if (r.verb == verb && r.path.rfind(path_prefix, 0) == 0) out.push_back(r);
    }
    return out;
  }
  // Answers every later `verb` request whose path starts with `path_prefix` with an error
  // (e.g. 422 Invalid for pods whose template the real API server would reject).
  void FailRequests(const std::string& verb, const std::string& path_prefix, int code,
                    const std::string& reason, const std::string& message) {
    std::lock_guard<std::mutex> l(mu_);
    failures_.push_back({verb, path_prefix, code, reason, message});
  }
  void ClearFailures() {
    std::lock_guard<std::mutex> l(mu_);
    failures_.clear();
  }

  void ClearCalls() {
    std::lock_guard<std::mutex> l(mu_);
    calls_.clear();
    requests_.clear();
  }

 private:
  static client::Response Status(int code, std::string_view reason, std::string_view msg) {
    return client::Response{
        code,
        {{"Content-Type", "application/json"}},
        fmt::format(
            R"({{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"{}","message":"{}","code":{}}})",
            reason, msg, code)};
  }
  static client::Response Ok(int code, std::string body) {
    return client::Response{code, {{"Content-Type", "application/json"}}, std::move(body)};
  }

  absl::StatusOr<client::Response> Handle(const client::Request& r) {
    std::lock_guard<std::mutex> l(mu_);
    std::string path = r.path.substr(0, r.path.find('?'));
    calls_.push_back(r.verb + " " + path);
    requests_.push_back(r);
    for (const Failure& f : failures_) {
      if (r.verb == f.verb && path.rfind(f.path_prefix, 0) == 0) {
        return Status(f.code, f.reason, f.message);
      }
    }
    if (r.verb == "GET") {
      auto it = objects_.find(path);
      if (it == objects_.end()) return Status(404, "NotFound", "not found");
      return Ok(200, it->second);
    }
    if (r.verb == "POST") {
      absl::StatusOr<json::Document> doc = json::Parse(r.body);
      if (!doc.ok()) return Status(400, "BadRequest", "bad json");
      json::Value& meta = json::EnsureObject(*doc, "metadata", doc->GetAllocator());
      std::string name(json::GetString(meta, "name"));
      if (name.empty()) name = fmt::format("{}{}", json::GetString(meta, "generateName"), ++seq_);
      const std::string key = path + "/" + name;
      if (objects_.count(key) > 0) return Status(409, "AlreadyExists", "already exists");
      json::Set(meta, "name", json::MakeString(name, doc->GetAllocator()), doc->GetAllocator());
      json::Set(meta, "uid", json::MakeString(fmt::format("uid-{}", ++seq_), doc->GetAllocator()),
                doc->GetAllocator());
      json::Set(meta, "resourceVersion",
                json::MakeString(std::to_string(++rv_), doc->GetAllocator()), doc->GetAllocator());
      // The status subresource: status is not set on create.
      json::Remove(*doc, "status");
      objects_[key] = json::Serialize(*doc);
      return Ok(201, objects_[key]);
    }
    if (r.verb == "PUT") {
      std::string key = path;
      if (key.size() > 7 && key.substr(key.size() - 7) == "/status") key.resize(key.size() - 7);
      if (objects_.count(key) == 0) return Status(404, "NotFound", "not found");
      absl::StatusOr<json::Document> doc = json::Parse(r.body);
      if (!doc.ok()) return Status(400, "BadRequest", "bad json");
      json::Value& meta = json::EnsureObject(*doc, "metadata", doc->GetAllocator());
      json::Set(meta, "resourceVersion",
                json::MakeString(std::to_string(++rv_), doc->GetAllocator()), doc->GetAllocator());
      objects_[key] = json::Serialize(*doc);
      return Ok(200, objects_[key]);
    }
    if (r.verb == "PATCH") {
      std::string key = path;
      if (key.size() > 7 && key.substr(key.size() - 7) == "/status") key.resize(key.size() - 7);
      auto it = objects_.find(key);
      if (it == objects_.end()) return Status(404, "NotFound", "not found");
      return Ok(200, it->second);
    }
    if (r.verb == "DELETE") {
      auto it = objects_.find(path);
      if (it == objects_.end()) return Status(404, "NotFound", "not found");
      absl::StatusOr<json::Document> opts = json::Parse(r.body.empty() ? "{}" : r.body);
      absl::StatusOr<json::Document> obj = json::Parse(it->second);
      if (opts.ok() && obj.ok()) {
        const json::Value* uid = json::FindPath(*opts, {"preconditions", "uid"});
        const json::Value* have = json::FindPath(*obj, {"metadata", "uid"});
        if (uid != nullptr && (have == nullptr || json::AsView(*uid) != json::AsView(*have))) {
          return Status(409, "Conflict", "precondition failed: UID mismatch");
        }
      }
      objects_.erase(it);
      return Ok(200, R"({"kind":"Status","apiVersion":"v1","status":"Success"})");
    }
    return Status(405, "MethodNotAllowed", "unsupported");
  }

  struct Failure {
    std::string verb;
    std::string path_prefix;
    int code;
    std::string reason;
    std::string message;
  };

  std::unique_ptr<client::Client> client_;
  mutable std::mutex mu_;
  std::vector<Failure> failures_;
  std::map<std::string, std::string> objects_;
  std::vector<std::string> calls_;
  std::vector<client::Request> requests_;
  int seq_ = 0;
  int rv_ = 100;
};

// Puts `json` into `store` as an informer would.
inline void CacheObject(informer::Store& store, const std::string& json) {
  absl::StatusOr<json::Document> doc = json::Parse(json);
  if (!doc.ok()) std::abort();
  const std::string key = *informer::KeyOf(*doc);
  const std::string rv(json::GetString(*json::FindPath(*doc, {"metadata"}), "resourceVersion"));
  store.Upsert(
      informer::Object::Make<json::Document>(key, rv, informer::ShareDocument(std::move(*doc))));
}

}  // namespace basalt::controllers::testing
