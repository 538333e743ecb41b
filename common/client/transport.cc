#include "common/client/transport.h"

#include <strings.h>

namespace basalt::client {

std::string_view FindHeader(const Headers& headers, std::string_view name) {
  for (const auto& [key, value] : headers) {
    if (key.size() == name.size() && strncasecmp(key.data(), name.data(), name.size()) == 0) {
      return value;
    }
  }
  return {};
}

void CancelToken::Cancel() {
  std::lock_guard<std::mutex> l(mu_);
  if (cancelled_) return;
  cancelled_ = true;
  if (canceller_) canceller_();
}

bool CancelToken::cancelled() const {
  std::lock_guard<std::mutex> l(mu_);
  return cancelled_;
}

void CancelToken::SetCanceller(std::function<void()> fn) {
  std::lock_guard<std::mutex> l(mu_);
  canceller_ = std::move(fn);
  if (cancelled_ && canceller_) canceller_();
}

void CancelToken::ClearCanceller() {
  std::lock_guard<std::mutex> l(mu_);
  canceller_ = nullptr;
}

absl::Status LineFramer::Feed(std::string_view bytes, const LineCallback& on_line) {
  while (!bytes.empty()) {
    size_t nl = bytes.find('\n');
    if (nl == std::string_view::npos) {
      partial_.append(bytes);
      return absl::OkStatus();
    }
    std::string_view line;
    if (partial_.empty()) {
      line = bytes.substr(0, nl);
    } else {
      partial_.append(bytes.substr(0, nl));
      line = partial_;
    }
    bytes.remove_prefix(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    absl::Status s = line.empty() ? absl::OkStatus() : on_line(line);
    partial_.clear();
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status LineFramer::Finish(const LineCallback& on_line) {
  if (partial_.empty()) return absl::OkStatus();
  std::string line = std::move(partial_);
  partial_.clear();
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.empty()) return absl::OkStatus();
  return on_line(line);
}

}  // namespace basalt::client
