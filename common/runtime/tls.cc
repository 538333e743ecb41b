#include "common/runtime/tls.h"

#include <openssl/ssl.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>
#include <mutex>
#include <string>

#include "absl/base/thread_annotations.h"
#include "common/util/log.h"
#include "fmt/format.h"

namespace basalt::runtime {

namespace ssl = boost::asio::ssl;

struct ServingCertificate::State {
  std::mutex mu;
  std::shared_ptr<ssl::context> current ABSL_GUARDED_BY(mu);
};

ServingCertificate::ServingCertificate() : state_(std::make_shared<State>()) {}

absl::Status ServingCertificate::Update(std::string_view cert_chain_pem,
                                        std::string_view private_key_pem) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  boost::system::error_code ec;
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                           ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                           ssl::context::no_tlsv1_1 | ssl::context::single_dh_use,
                       ec);
  if (ec) return absl::InternalError(fmt::format("TLS context options: {}", ec.message()));
  context->use_certificate_chain(boost::asio::buffer(cert_chain_pem.data(), cert_chain_pem.size()),
                                 ec);
  if (ec) return absl::InvalidArgumentError(fmt::format("TLS certificate: {}", ec.message()));
  context->use_private_key(boost::asio::buffer(private_key_pem.data(), private_key_pem.size()),
                           ssl::context::pem, ec);
  if (ec) return absl::InvalidArgumentError(fmt::format("TLS private key: {}", ec.message()));
  if (SSL_CTX_check_private_key(context->native_handle()) != 1) {
    return absl::InvalidArgumentError("TLS private key does not match the certificate");
  }
  {
    std::lock_guard<std::mutex> l(state_->mu);
    state_->current = std::move(context);
  }
  BASALT_LOG_INFO("Serving certificate updated");
  return absl::OkStatus();
}

TlsContextProvider ServingCertificate::Provider() const {
  return [state = state_]() -> std::shared_ptr<ssl::context> {
    std::lock_guard<std::mutex> l(state->mu);
    return state->current;
  };
}

}  // namespace basalt::runtime
