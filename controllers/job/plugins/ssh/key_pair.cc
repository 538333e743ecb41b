#include "controllers/job/plugins/ssh/key_pair.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <memory>
#include <vector>

#include "absl/strings/escaping.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

struct PkeyCtxFree {
  void operator()(EVP_PKEY_CTX* p) const { EVP_PKEY_CTX_free(p); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct BioFree {
  void operator()(BIO* p) const { BIO_free(p); }
};
struct BnFree {
  void operator()(BIGNUM* p) const { BN_free(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using BnPtr = std::unique_ptr<BIGNUM, BnFree>;

absl::Status OpenSslError(std::string_view what) {
  unsigned long code = ERR_get_error();
  char buf[256] = {0};
  if (code != 0) ERR_error_string_n(code, buf, sizeof(buf));
  ERR_clear_error();
  return absl::InternalError(fmt::format("{}: {}", what, code != 0 ? buf : "unknown error"));
}

void PutString(std::string& out, std::string_view s) {
  const uint32_t n = static_cast<uint32_t>(s.size());
  out.push_back(static_cast<char>(n >> 24));
  out.push_back(static_cast<char>(n >> 16));
  out.push_back(static_cast<char>(n >> 8));
  out.push_back(static_cast<char>(n));
  out.append(s);
}

// RFC 4251 mpint: big-endian two's complement, a leading zero byte when the top bit is set.
void PutMpint(std::string& out, const BIGNUM* bn) {
  std::vector<unsigned char> bytes(static_cast<size_t>(BN_num_bytes(bn)));
  BN_bn2bin(bn, bytes.data());
  std::string s;
  if (!bytes.empty() && (bytes[0] & 0x80) != 0) s.push_back('\0');
  s.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  PutString(out, s);
}

absl::StatusOr<std::string> OpenSshPublicKey(EVP_PKEY* pkey) {
  BIGNUM* n_raw = nullptr;
  BIGNUM* e_raw = nullptr;
  if (EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_N, &n_raw) != 1) {
    return OpenSslError("reading RSA modulus");
  }
  BnPtr n(n_raw);
  if (EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_E, &e_raw) != 1) {
    return OpenSslError("reading RSA exponent");
  }
  BnPtr e(e_raw);
  std::string blob;
  PutString(blob, "ssh-rsa");
  PutMpint(blob, e.get());
  PutMpint(blob, n.get());
  return "ssh-rsa " + absl::Base64Escape(blob);
}

}  // namespace

absl::StatusOr<SshKeyPair> GenerateRsaKeyPair(int bits) {
  std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree> ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, nullptr));
  if (ctx == nullptr || EVP_PKEY_keygen_init(ctx.get()) != 1 ||
      EVP_PKEY_CTX_set_rsa_keygen_bits(ctx.get(), bits) != 1) {
    return OpenSslError("preparing RSA key generation");
  }
  EVP_PKEY* raw = nullptr;
  if (EVP_PKEY_keygen(ctx.get(), &raw) != 1) return OpenSslError("generating RSA key");
  PkeyPtr pkey(raw);

  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || PEM_write_bio_PrivateKey_traditional(bio.get(), pkey.get(), nullptr,
                                                             nullptr, 0, nullptr, nullptr) != 1) {
    return OpenSslError("encoding RSA private key");
  }
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  SshKeyPair pair;
  pair.private_key_pem.assign(data, static_cast<size_t>(len));
  auto pub = OpenSshPublicKey(pkey.get());
  if (!pub.ok()) return pub.status();
  pair.public_key = *std::move(pub);
  return pair;
}

absl::StatusOr<std::string> OpenSshPublicKeyFromPrivatePem(std::string_view private_key_pem) {
  std::unique_ptr<BIO, BioFree> bio(
      BIO_new_mem_buf(private_key_pem.data(), static_cast<int>(private_key_pem.size())));
  if (bio == nullptr) return OpenSslError("reading private key");
  PkeyPtr pkey(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (pkey == nullptr) {
    ERR_clear_error();
    return absl::InvalidArgumentError("not a PEM private key");
  }
  if (EVP_PKEY_get_base_id(pkey.get()) != EVP_PKEY_RSA) {
    return absl::InvalidArgumentError("not an RSA private key");
  }
  return OpenSshPublicKey(pkey.get());
}

}  // namespace basalt::controllers
