// fuzz_kubeconfig: LoadKubeconfig on arbitrary file content. The kubeconfig is written to a
// private temporary directory that also holds a CA, a client certificate and key, and a token
// file, so relative file references in the input resolve.
//
// Invariants checked:
//  - no crash, no exception escapes (yaml-cpp throws; config.cc must convert to Status);
//  - a loaded config names a server and its source;
//  - loading the same file twice (KUBECONFIG=a:a) gives the same config as loading it once
//    (kubectl's merge rules: the first definition of every name wins).

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#include "common/client/config.h"
#include "fmt/format.h"
#include "fuzz/fuzz_check.h"

namespace client = basalt::client;

namespace {

void WriteFile(const std::string& path, std::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

const std::string& Dir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                       "/basalt-fuzz-kubeconfig-XXXXXX";
    FUZZ_CHECK(mkdtemp(tmpl.data()) != nullptr, "mkdtemp failed");
    WriteFile(tmpl + "/ca.crt", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
    WriteFile(tmpl + "/client.crt",
              "-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n");
    WriteFile(tmpl + "/client.key",
              "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n");
    WriteFile(tmpl + "/token", "eyJhbGciOiJSUzI1NiJ9.fuzz\n");
    // The path outlives `dir` (a static destroyed before atexit handlers registered during
    // its initialization run).
    static const std::string* const cleanup = new std::string(tmpl);
    std::atexit([] {
      for (const char* f : {"ca.crt", "client.crt", "client.key", "token", "config"}) {
        std::remove((*cleanup + "/" + f).c_str());
      }
      rmdir(cleanup->c_str());
    });
    return tmpl;
  }();
  return dir;
}

bool SameConfig(const client::RestConfig& a, const client::RestConfig& b) {
  return a.server == b.server && a.ca_pem == b.ca_pem && a.client_cert_pem == b.client_cert_pem &&
         a.client_key_pem == b.client_key_pem && a.bearer_token == b.bearer_token &&
         a.bearer_token_file == b.bearer_token_file &&
         a.insecure_skip_tls_verify == b.insecure_skip_tls_verify &&
         a.tls_server_name == b.tls_server_name && a.default_namespace == b.default_namespace;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = Dir() + "/config";
  WriteFile(path, std::string_view(reinterpret_cast<const char*>(data), size));

  client::KubeconfigOptions once;
  once.paths = {path};
  absl::StatusOr<client::RestConfig> one = client::LoadKubeconfig(once);

  client::KubeconfigOptions twice = once;
  twice.paths = {path, path};
  absl::StatusOr<client::RestConfig> two = client::LoadKubeconfig(twice);
  FUZZ_CHECK(one.ok() == two.ok(), fmt::format("loading the file once: {}, twice: {}",
                                               one.status().ToString(), two.status().ToString()));
  if (!one.ok()) return 0;
  FUZZ_CHECK(!one->server.empty() && !one->source.empty(), "a loaded config without a server");
  FUZZ_CHECK(SameConfig(*one, *two), "loading the same file twice changed the config");

  // An explicit context that does not exist is an error naming it.
  client::KubeconfigOptions missing = once;
  missing.context = "no-such-context-\x01";
  FUZZ_CHECK(!client::LoadKubeconfig(missing).ok(), "a missing context was accepted");
  return 0;
}
