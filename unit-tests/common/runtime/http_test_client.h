#pragma once
// A deliberately dumb HTTP/1.1 client on raw POSIX sockets for the runtime tests: it lets
// tests send malformed or partial requests that a real client library would refuse to.

#include <string>
#include <string_view>

namespace basalt::runtime::testing {

struct RawResponse {
  int status = 0;    // 0 if nothing parsable arrived.
  std::string head;  // Status line and headers.
  std::string body;
};

// Connects to 127.0.0.1:port; returns the fd (fails the test on error). Reads time out
// after 5 seconds so a broken server fails the test instead of hanging it.
int Connect(int port);
// True if something accepts connections on 127.0.0.1:port.
bool CanConnect(int port);
void SendAll(int fd, std::string_view data);
// Reads one response (Content-Length framed); status 0 on EOF/timeout before a full one.
RawResponse ReadResponse(int fd);
// True if the peer closed (read returns 0 or a reset) within 5 seconds.
bool WaitForClose(int fd);
// True if data or EOF is readable on fd within `timeout_ms`.
bool Readable(int fd, int timeout_ms);
void Close(int fd);

// One request on a fresh connection with "Connection: close".
RawResponse Fetch(int port, std::string_view method, std::string_view path,
                  std::string_view body = {});

RawResponse Parse(std::string_view raw);

}  // namespace basalt::runtime::testing
