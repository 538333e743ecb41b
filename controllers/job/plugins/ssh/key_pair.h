#pragma once
// RSA key pairs for the ssh job plugin, through OpenSSL's EVP API.
//
// Thread-safe (OpenSSL 3 is thread-safe for these calls); no shared state.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace basalt::controllers {

struct SshKeyPair {
  std::string private_key_pem;  // PKCS#1 PEM ("-----BEGIN RSA PRIVATE KEY-----")
  std::string public_key;       // OpenSSH authorized_keys form ("ssh-rsa AAAA...")
};

// Generates an RSA key pair of `bits` bits (the ssh plugin uses 2048).
absl::StatusOr<SshKeyPair> GenerateRsaKeyPair(int bits);

// The OpenSSH public key ("ssh-rsa <base64>") of an RSA private key in PEM (PKCS#1 or PKCS#8).
absl::StatusOr<std::string> OpenSshPublicKeyFromPrivatePem(std::string_view private_key_pem);

}  // namespace basalt::controllers
