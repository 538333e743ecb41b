#include "common/client/transport.h"

#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/client/https_transport.h"

using basalt::client::CancelToken;
using basalt::client::FindHeader;
using basalt::client::Headers;
using basalt::client::LineFramer;

namespace {

// Feeds `stream` cut at the given offsets and returns the lines delivered.
std::vector<std::string> Frame(const std::string& stream, const std::vector<size_t>& cuts) {
  std::vector<std::string> lines;
  auto collect = [&lines](std::string_view line) {
    lines.emplace_back(line);
    return absl::OkStatus();
  };
  LineFramer framer;
  size_t pos = 0;
  for (size_t cut : cuts) {
    REQUIRE(framer.Feed(std::string_view(stream).substr(pos, cut - pos), collect).ok());
    pos = cut;
  }
  REQUIRE(framer.Feed(std::string_view(stream).substr(pos), collect).ok());
  REQUIRE(framer.Finish(collect).ok());
  return lines;
}

}  // namespace

TEST_CASE("LineFramer: lines come out whole wherever the chunks are cut", "[transport]") {
  const std::string stream =
      "{\"type\":\"ADDED\",\"object\":{\"a\":1}}\n{\"type\":\"MODIFIED\"}\r\n\n{\"x\":\"y\"}\n";
  const std::vector<std::string> expected = {"{\"type\":\"ADDED\",\"object\":{\"a\":1}}",
                                             "{\"type\":\"MODIFIED\"}", "{\"x\":\"y\"}"};
  // Every single cut and every pair of cuts.
  for (size_t i = 0; i <= stream.size(); ++i) {
    REQUIRE(Frame(stream, {i}) == expected);
    for (size_t j = i; j <= stream.size(); ++j) REQUIRE(Frame(stream, {i, j}) == expected);
  }
  // One byte at a time.
  std::vector<size_t> every;
  for (size_t i = 1; i < stream.size(); ++i) every.push_back(i);
  REQUIRE(Frame(stream, every) == expected);
}

TEST_CASE("LineFramer: a last line without newline is delivered by Finish", "[transport]") {
  std::vector<std::string> lines;
  auto collect = [&lines](std::string_view line) {
    lines.emplace_back(line);
    return absl::OkStatus();
  };
  LineFramer framer;
  REQUIRE(framer.Feed("a\nbc", collect).ok());
  REQUIRE(lines == std::vector<std::string>{"a"});
  REQUIRE(framer.buffered() == 2);
  REQUIRE(framer.Finish(collect).ok());
  REQUIRE(lines == std::vector<std::string>{"a", "bc"});
}

TEST_CASE("LineFramer: a failing callback stops the feed with its status", "[transport]") {
  int calls = 0;
  LineFramer framer;
  absl::Status s = framer.Feed("1\n2\n3\n", [&calls](std::string_view) {
    ++calls;
    return calls == 2 ? absl::CancelledError("stop") : absl::OkStatus();
  });
  REQUIRE(s.code() == absl::StatusCode::kCancelled);
  REQUIRE(calls == 2);
}

TEST_CASE("CancelToken: the canceller runs once, also when registered after Cancel",
          "[transport]") {
  CancelToken token;
  int runs = 0;
  token.SetCanceller([&runs] { ++runs; });
  REQUIRE(!token.cancelled());
  token.Cancel();
  token.Cancel();
  REQUIRE(runs == 1);
  REQUIRE(token.cancelled());

  CancelToken early;
  early.Cancel();
  int late_runs = 0;
  early.SetCanceller([&late_runs] { ++late_runs; });
  REQUIRE(late_runs == 1);
  early.ClearCanceller();
}

TEST_CASE("FindHeader: lookup ignores case", "[transport]") {
  Headers h = {{"Content-Type", "application/json"}, {"retry-after", "3"}};
  REQUIRE(FindHeader(h, "content-type") == "application/json");
  REQUIRE(FindHeader(h, "Retry-After") == "3");
  REQUIRE(FindHeader(h, "X-Missing").empty());
}

TEST_CASE("ParseServer: host, port, IPv6 and path prefix", "[transport]") {
  using basalt::client::ParseServer;
  auto a = ParseServer("https://127.0.0.1:6443");
  REQUIRE(a.ok());
  REQUIRE(a->host == "127.0.0.1");
  REQUIRE(a->port == "6443");
  REQUIRE(a->prefix.empty());
  auto b = ParseServer("https://api.example.com/k8s/clusters/c1/");
  REQUIRE(b.ok());
  REQUIRE(b->host == "api.example.com");
  REQUIRE(b->port == "443");
  REQUIRE(b->prefix == "/k8s/clusters/c1");
  auto c = ParseServer("https://[fd00::1]:443");
  REQUIRE(c.ok());
  REQUIRE(c->host == "fd00::1");
  REQUIRE(c->port == "443");
  REQUIRE(ParseServer("http://127.0.0.1:8080").status().code() ==
          absl::StatusCode::kInvalidArgument);
  REQUIRE_FALSE(ParseServer("https://:443").ok());
  REQUIRE_FALSE(ParseServer("https://h:port").ok());
  REQUIRE_FALSE(ParseServer("https://[::1").ok());
}

TEST_CASE("NewHttpsTransport: unusable TLS material is rejected up front, naming the field",
          "[transport]") {
  basalt::client::RestConfig config;
  config.server = "https://127.0.0.1:6443";
  config.source = "kubeconfig /x";
  config.ca_pem = "not a pem";
  auto t = basalt::client::NewHttpsTransport(config);
  REQUIRE(t.status().code() == absl::StatusCode::kInvalidArgument);
  REQUIRE(std::string(t.status().message()).find("certificate-authority") != std::string::npos);
  config.ca_pem.clear();
  config.client_cert_pem = "garbage";
  config.client_key_pem = "garbage";
  t = basalt::client::NewHttpsTransport(config);
  REQUIRE(std::string(t.status().message()).find("client-certificate") != std::string::npos);
}
