#include "webhook/server/cert_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/escaping.h"
#include "common/util/json.h"
#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::webhook::server {
namespace {

constexpr char kCaFile[] = "ca.crt";
constexpr char kCertFile[] = "tls.crt";
constexpr char kKeyFile[] = "tls.key";

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Writes `content` to `path` through a temporary file and rename, so a reader never sees a
// half-written file.
absl::Status WriteFileAtomically(const std::string& path, const std::string& content, mode_t mode) {
  const std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) {
    return absl::InternalError(fmt::format("cannot create {}: {}", tmp, std::strerror(errno)));
  }
  size_t written = 0;
  while (written < content.size()) {
    ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return absl::InternalError(fmt::format("cannot write {}: {}", tmp, std::strerror(err)));
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return absl::InternalError(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return absl::InternalError(
        fmt::format("cannot rename {} to {}: {}", tmp, path, std::strerror(err)));
  }
  return absl::OkStatus();
}

std::string DataValue(const json::Value& secret, std::string_view key) {
  const json::Value* data = json::Find(secret, "data");
  if (data == nullptr) return "";
  std::string decoded;
  std::string_view encoded = json::GetString(*data, key);
  if (!absl::Base64Unescape(std::string(encoded), &decoded)) return "";
  return decoded;
}

void SetData(json::Document& secret, const CertificateBundle& bundle) {
  auto& a = secret.GetAllocator();
  json::Value& data = json::EnsureObject(secret, "data", a);
  json::Set(data, kCaFile, json::MakeString(absl::Base64Escape(bundle.ca_cert_pem), a), a);
  json::Set(data, kCertFile, json::MakeString(absl::Base64Escape(bundle.cert_pem), a), a);
  json::Set(data, kKeyFile, json::MakeString(absl::Base64Escape(bundle.key_pem), a), a);
}

std::string NewSecretJson(const std::string& ns, const std::string& name,
                          const CertificateBundle& bundle) {
  json::Document secret(rapidjson::kObjectType);
  auto& a = secret.GetAllocator();
  json::Set(secret, "apiVersion", json::MakeString("v1", a), a);
  json::Set(secret, "kind", json::MakeString("Secret", a), a);
  json::Value& metadata = json::EnsureObject(secret, "metadata", a);
  json::Set(metadata, "name", json::MakeString(name, a), a);
  json::Set(metadata, "namespace", json::MakeString(ns, a), a);
  json::Value& labels = json::EnsureObject(metadata, "labels", a);
  json::Set(labels, "app.kubernetes.io/managed-by", json::MakeString("vc-webhook-manager", a), a);
  json::Set(secret, "type", json::MakeString("kubernetes.io/tls", a), a);
  SetData(secret, bundle);
  return json::Serialize(secret);
}

}  // namespace

absl::StatusOr<CertificateBundle> LoadCertificateFiles(const std::string& cert_file,
                                                       const std::string& key_file,
                                                       const std::string& ca_file) {
  CertificateBundle bundle;
  BASALT_ASSIGN_OR_RETURN(bundle.cert_pem, ReadFile(cert_file));
  BASALT_ASSIGN_OR_RETURN(bundle.key_pem, ReadFile(key_file));
  BASALT_ASSIGN_OR_RETURN(bundle.ca_cert_pem, ReadFile(ca_file));
  if (absl::Status s = CheckUserSuppliedBundle(bundle); !s.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("--tls-cert-file {}, --tls-private-key-file {}, "
                    "--ca-cert-file {}: {}",
                    cert_file, key_file, ca_file, MessageOf(s)));
  }
  return bundle;
}

absl::StatusOr<CertificateBundle> EnsureCertificateDir(const std::string& dir,
                                                       const CertificateRequest& request) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(fmt::format("cannot create {}: {}", dir, ec.message()));
  const std::string ca_path = fmt::format("{}/{}", dir, kCaFile);
  const std::string cert_path = fmt::format("{}/{}", dir, kCertFile);
  const std::string key_path = fmt::format("{}/{}", dir, kKeyFile);

  auto ca = ReadFile(ca_path);
  auto cert = ReadFile(cert_path);
  auto key = ReadFile(key_path);
  if (ca.ok() && cert.ok() && key.ok()) {
    CertificateBundle existing{*ca, *cert, *key};
    absl::Status check = CheckBundle(existing, request, std::chrono::system_clock::now());
    if (check.ok()) {
      BASALT_LOG_INFO("Reusing serving certificate", "dir", dir);
      return existing;
    }
    BASALT_LOG_INFO("Regenerating serving certificate", "dir", dir, "reason", MessageOf(check));
  }
  BASALT_ASSIGN_OR_RETURN(CertificateBundle bundle, GenerateSelfSignedBundle(request));
  // Key first: a reader that sees the new certificate also finds its key.
  BASALT_RETURN_IF_ERROR(WriteFileAtomically(key_path, bundle.key_pem, 0600));
  BASALT_RETURN_IF_ERROR(WriteFileAtomically(cert_path, bundle.cert_pem, 0644));
  BASALT_RETURN_IF_ERROR(WriteFileAtomically(ca_path, bundle.ca_cert_pem, 0644));
  BASALT_LOG_INFO("Generated self-signed CA and serving certificate", "dir", dir);
  return bundle;
}

absl::StatusOr<CertificateBundle> EnsureCertificateSecret(client::Client& client,
                                                          const std::string& ns,
                                                          const std::string& name,
                                                          const CertificateRequest& request) {
  constexpr int kAttempts = 5;
  absl::Status last;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    absl::StatusOr<json::Document> secret = client.Get(client::Secrets(), ns, name);
    if (secret.ok()) {
      CertificateBundle existing{DataValue(*secret, kCaFile), DataValue(*secret, kCertFile),
                                 DataValue(*secret, kKeyFile)};
      absl::Status check = CheckBundle(existing, request, std::chrono::system_clock::now());
      if (check.ok()) {
        BASALT_LOG_INFO("Reusing serving certificate", "secret", fmt::format("{}/{}", ns, name));
        return existing;
      }
      BASALT_LOG_INFO("Regenerating serving certificate", "secret", fmt::format("{}/{}", ns, name),
                      "reason", MessageOf(check));
      BASALT_ASSIGN_OR_RETURN(CertificateBundle bundle, GenerateSelfSignedBundle(request));
      // The body keeps the resourceVersion just read: a concurrent writer makes this a
      // conflict, and the next attempt adopts its certificate.
      SetData(*secret, bundle);
      absl::StatusOr<json::Document> updated =
          client.Update(client::Secrets(), json::Serialize(*secret));
      if (updated.ok()) return bundle;
      last = updated.status();
      if (last.code() != absl::StatusCode::kAborted) return last;
      continue;
    }
    if (secret.status().code() != absl::StatusCode::kNotFound) return secret.status();
    BASALT_ASSIGN_OR_RETURN(CertificateBundle bundle, GenerateSelfSignedBundle(request));
    absl::StatusOr<json::Document> created =
        client.Create(client::Secrets(), ns, NewSecretJson(ns, name, bundle));
    if (created.ok()) {
      BASALT_LOG_INFO("Stored new self-signed CA and serving certificate", "secret",
                      fmt::format("{}/{}", ns, name));
      return bundle;
    }
    last = created.status();
    if (last.code() != absl::StatusCode::kAlreadyExists &&
        last.code() != absl::StatusCode::kAborted) {
      return last;
    }
    // Another replica created it first: read and use theirs.
  }
  return absl::AbortedError(
      fmt::format("could not settle the certificate Secret {}/{} after {} "
                  "attempts: {}",
                  ns, name, kAttempts, MessageOf(last)));
}

}  // namespace basalt::webhook::server
