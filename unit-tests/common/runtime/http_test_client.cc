#include "unit-tests/common/runtime/http_test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>

#include "fmt/format.h"

namespace basalt::runtime::testing {

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  timeval timeout{};
  timeout.tv_sec = 5;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  return fd;
}

bool CanConnect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool connected = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return connected;
}

void SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    REQUIRE(n > 0);
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

RawResponse Parse(std::string_view raw) {
  RawResponse response;
  const std::size_t end = raw.find("\r\n\r\n");
  if (end == std::string_view::npos || !raw.starts_with("HTTP/1.")) return response;
  response.head = std::string(raw.substr(0, end));
  response.body = std::string(raw.substr(end + 4));
  response.status = std::atoi(std::string(raw.substr(9, 3)).c_str());
  return response;
}

RawResponse ReadResponse(int fd) {
  std::string raw;
  char buf[4096];
  for (;;) {
    const std::size_t end = raw.find("\r\n\r\n");
    if (end != std::string::npos) {
      RawResponse response = Parse(raw);
      std::size_t length = 0;
      const std::size_t cl = response.head.find("Content-Length: ");
      if (cl != std::string::npos)
        length = std::strtoul(response.head.c_str() + cl + 16, nullptr, 10);
      if (response.body.size() >= length) {
        response.body.resize(length);
        return response;
      }
    }
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return RawResponse{};
    raw.append(buf, static_cast<std::size_t>(n));
  }
}

bool WaitForClose(int fd) {
  char buf[4096];
  for (;;) {
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n == 0) return true;
    if (n < 0) return errno == ECONNRESET;
  }
}

bool Readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, timeout_ms) == 1;
}

void Close(int fd) { close(fd); }

RawResponse Fetch(int port, std::string_view method, std::string_view path, std::string_view body) {
  const int fd = Connect(port);
  SendAll(fd, fmt::format("{} {} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n"
                          "Content-Length: {}\r\n\r\n{}",
                          method, path, body.size(), body));
  RawResponse response = ReadResponse(fd);
  Close(fd);
  return response;
}

}  // namespace basalt::runtime::testing
