#include "common/runtime/signals.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "common/util/log.h"
#include "fmt/format.h"

namespace basalt::runtime {
namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT};
// Written by the destructor to wake the thread; no signal has number 0.
constexpr unsigned char kWakeByte = 0;

// The write end of the active watcher's pipe, read by the signal handler.
std::atomic<int> g_signal_write_fd{-1};
static_assert(std::atomic<int>::is_always_lock_free, "used from a signal handler");

struct sigaction g_previous[2];

extern "C" void OnSignal(int signo) {
  const int saved_errno = errno;
  const int fd = g_signal_write_fd.load();
  if (fd >= 0) {
    const unsigned char byte = static_cast<unsigned char>(signo);
    // Non-blocking: if the pipe is somehow full, the signal is already pending there.
    [[maybe_unused]] const ssize_t n = write(fd, &byte, 1);
  }
  errno = saved_errno;
}

absl::Status ErrnoError(std::string_view what) {
  return absl::InternalError(fmt::format("{}: {}", what, std::strerror(errno)));
}

}  // namespace

SignalWatcher::SignalWatcher(std::function<void(int)> on_signal, bool exit_on_second_signal)
    : on_signal_(std::move(on_signal)), exit_on_second_signal_(exit_on_second_signal) {}

absl::Status SignalWatcher::Start() {
  if (started_) return absl::FailedPreconditionError("SignalWatcher already started");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return ErrnoError("pipe2");
  // Only the writer is non-blocking: the handler must never block; the thread should.
  if (fcntl(fds[1], F_SETFL, O_NONBLOCK) != 0) {
    const absl::Status status = ErrnoError("fcntl");
    close(fds[0]);
    close(fds[1]);
    return status;
  }
  int expected = -1;
  if (!g_signal_write_fd.compare_exchange_strong(expected, fds[1])) {
    close(fds[0]);
    close(fds[1]);
    return absl::FailedPreconditionError("another SignalWatcher is active");
  }
  read_fd_ = fds[0];
  write_fd_ = fds[1];
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int i = 0; i < 2; ++i) sigaction(kSignals[i], &action, &g_previous[i]);
  started_ = true;
  thread_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

SignalWatcher::~SignalWatcher() {
  if (!started_) return;
  for (int i = 0; i < 2; ++i) sigaction(kSignals[i], &g_previous[i], nullptr);
  g_signal_write_fd = -1;
  const unsigned char wake = kWakeByte;
  [[maybe_unused]] const ssize_t n = write(write_fd_, &wake, 1);
  thread_.join();
  close(read_fd_);
  close(write_fd_);
}

void SignalWatcher::Loop() {
  int received = 0;
  for (;;) {
    unsigned char byte = 0;
    const ssize_t n = read(read_fd_, &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || byte == kWakeByte) return;
    const int signo = byte;
    ++received;
    if (received > 1 && exit_on_second_signal_) {
      BASALT_LOG_WARNING("Second signal received; exiting immediately", "signal", strsignal(signo));
      std::_Exit(128 + signo);
    }
    BASALT_LOG_INFO("Signal received; shutting down", "signal", strsignal(signo));
    on_signal_(signo);
  }
}

}  // namespace basalt::runtime
