#include "controllers/job/plugins/ssh/ssh.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "controllers/job/plugins/ssh/key_pair.h"
#include "unit-tests/controllers/job/plugins/pod_inspect.h"

namespace basalt::controllers {
namespace {

using namespace testing;

api::Job Job() {
  return MakeJob("mpi")
      .Namespace("hpc")
      .Task(MakeTask("master").Replicas(1).Container("c").InitContainer("i"))
      .Task(MakeTask("worker").Replicas(2).Container("c"))
      .Build();
}

std::string SecretValue(const json::Value& secret, std::string_view key) {
  const json::Value* data = json::Find(secret, "data");
  REQUIRE(data != nullptr);
  const std::string encoded(json::GetString(*data, key));
  std::string decoded;
  REQUIRE(absl::Base64Unescape(encoded, &decoded));
  CHECK(absl::Base64Escape(decoded) == encoded);  // standard alphabet, padded
  return decoded;
}

TEST_CASE("SshPlugin: the Secret holds a matching RSA key pair and the ssh config",
          "[controllers][job][plugins]") {
  const api::Job job = Job();
  auto plugin = NewSshPlugin({});
  REQUIRE(plugin.ok());
  auto objs = (*plugin)->OnJobAdd(job);
  REQUIRE(objs.ok());
  REQUIRE(objs->size() == 1);
  const json::Value& secret = (*objs)[0];
  CHECK(StringAt(secret, {"kind"}) == "Secret");
  CHECK(StringAt(secret, {"metadata", "name"}) == "mpi-ssh");
  CHECK(StringAt(secret, {"metadata", "namespace"}) == "hpc");
  std::vector<std::string> keys;
  for (const auto& m : json::Find(secret, "data")->GetObject())
    keys.emplace_back(json::AsView(m.name));
  CHECK(keys == std::vector<std::string>{"id_rsa", "id_rsa.pub", "authorized_keys", "config"});

  const std::string priv = SecretValue(secret, "id_rsa");
  const std::string pub = SecretValue(secret, "id_rsa.pub");
  CHECK(priv.rfind("-----BEGIN RSA PRIVATE KEY-----", 0) == 0);
  CHECK(pub.rfind("ssh-rsa AAAAB3NzaC1yc2E", 0) == 0);
  CHECK(SecretValue(secret, "authorized_keys") == pub);
  auto derived = OpenSshPublicKeyFromPrivatePem(priv);
  REQUIRE(derived.ok());
  CHECK(*derived == pub);  // the public key belongs to the private key
  // 2048-bit modulus: the OpenSSH blob is 279 bytes -> 372 base64 characters.
  CHECK(pub.size() == std::string("ssh-rsa ").size() + 372);

  CHECK(SecretValue(secret, "config") ==
        "StrictHostKeyChecking no\n"
        "UserKnownHostsFile /dev/null\n"
        "Host mpi-master-0\n  HostName mpi-master-0.mpi\n  Port 22\n"
        "Host mpi-worker-0\n  HostName mpi-worker-0.mpi\n  Port 22\n"
        "Host mpi-worker-1\n  HostName mpi-worker-1.mpi\n  Port 22\n");
  CHECK((*plugin)->OnJobDelete(job) == std::vector<ObjectRef>{{"v1", "Secret", "hpc", "mpi-ssh"}});
}

TEST_CASE("SshPlugin: each run generates a fresh key pair", "[controllers][job][plugins]") {
  auto a = GenerateRsaKeyPair(2048);
  auto b = GenerateRsaKeyPair(2048);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->public_key != b->public_key);
}

TEST_CASE("SshPlugin: provided keys and port are used", "[controllers][job][plugins]") {
  auto pair = GenerateRsaKeyPair(2048);
  REQUIRE(pair.ok());
  const api::Job job = Job();
  auto plugin = NewSshPlugin({"--ssh-private-key=" + pair->private_key_pem, "--ssh-port=2222"});
  REQUIRE(plugin.ok());
  auto objs = (*plugin)->OnJobAdd(job);
  REQUIRE(objs.ok());
  CHECK(SecretValue((*objs)[0], "id_rsa") == pair->private_key_pem);
  CHECK(SecretValue((*objs)[0], "id_rsa.pub") == pair->public_key);  // derived
  CHECK(SecretValue((*objs)[0], "config").find("  Port 2222\n") != std::string::npos);

  for (std::string port : {"0", "70000", "ssh"}) {
    INFO(port);
    auto p = NewSshPlugin({"--ssh-port=" + port, "--ssh-private-key=" + pair->private_key_pem});
    REQUIRE(p.ok());
    auto o = (*p)->OnJobAdd(job);
    REQUIRE(o.ok());
    CHECK(SecretValue((*o)[0], "config").find("  Port 22\n") != std::string::npos);
  }
  auto broken = NewSshPlugin({"--ssh-private-key=not a key"});
  REQUIRE(broken.ok());
  CHECK_FALSE((*broken)->OnJobAdd(job).ok());
}

TEST_CASE("SshPlugin: pods mount the keys at the key path", "[controllers][job][plugins]") {
  const api::Job job = Job();
  struct Case {
    std::vector<std::string> args;
    std::string path;
    int mode;
  };
  for (const Case& c :
       std::vector<Case>{{{}, "/root/.ssh", 0600},
                         {{"--ssh-key-file-path=/home/u/.ssh"}, "/home/u/.ssh", 0644}}) {
    INFO(c.path);
    auto plugin = NewSshPlugin(c.args);
    REQUIRE(plugin.ok());
    json::Document pod = PodWith(**plugin, job, "master", 0);
    const json::Value* vol = Volume(pod, "mpi-ssh");
    REQUIRE(vol != nullptr);
    CHECK(StringAt(*vol, {"secret", "secretName"}) == "mpi-ssh");
    CHECK(json::GetInt(*json::Find(*vol, "secret"), "defaultMode") == c.mode);
    CHECK(json::Serialize(*json::FindPath(*vol, {"secret", "items"})) ==
          R"([{"key":"id_rsa","path":".ssh/id_rsa"},{"key":"id_rsa.pub","path":".ssh/id_rsa.pub"},)"
          R"({"key":"authorized_keys","path":".ssh/authorized_keys"},)"
          R"({"key":"config","path":".ssh/config"}])");
    for (bool init : {false, true}) {
      for (const json::Value* ctr : Containers(pod, init)) {
        const json::Value* m = Mount(*ctr, "mpi-ssh");
        REQUIRE(m != nullptr);
        CHECK(json::GetString(*m, "mountPath") == c.path);
        CHECK(json::GetString(*m, "subPath") == ".ssh");
      }
    }
  }
}

TEST_CASE("SshPlugin: the public key is ssh-rsa and the base64 of its wire-format blob",
          "[controllers][job][plugins]") {
  auto keys = GenerateRsaKeyPair(2048);
  REQUIRE(keys.ok());
  REQUIRE(keys->public_key.rfind("ssh-rsa ", 0) == 0);
  const std::string encoded = keys->public_key.substr(std::string("ssh-rsa ").size());
  std::string blob;
  REQUIRE(absl::Base64Unescape(encoded, &blob));
  CHECK(absl::Base64Escape(blob) == encoded);
  // RFC 4253: string "ssh-rsa", mpint e, mpint n (here 4 + 7, 4 + 3, 4 + 257 bytes).
  CHECK(blob.substr(0, 11) == std::string("\0\0\0\x07ssh-rsa", 11));
  CHECK(blob.size() == 279);
}

}  // namespace
}  // namespace basalt::controllers
