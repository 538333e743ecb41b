// leader_election_helper: one leader-election candidate as its own process, for the
// two-process integration test (leader_election_integration_test.cc). It campaigns for a
// Lease and prints one line per transition on stdout, flushed at once:
//
//   LEADING <identity>      on_started_leading ran
//   STOPPED <identity>      on_stopped_leading ran
//   NEWLEADER <identity>    the observed holder changed ("" when released)
//   EXIT <status>           Run() returned (SIGTERM/SIGINT: releases the Lease first)
//
//   leader_election_helper --kubeconfig=K --namespace=NS --name=LEASE --identity=ID
//       [--leader-elect-lease-duration=3s --leader-elect-renew-deadline=2s
//        --leader-elect-retry-period=500ms]

#include <signal.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "common/client/client.h"
#include "common/client/flags.h"
#include "common/ctrlkit/leader_election.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace {

std::mutex out_mu;

void Say(const std::string& line) {
  std::lock_guard<std::mutex> l(out_mu);
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace basalt;
  // Block the stop signals in every thread; the main thread takes them with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<ctrlkit::LeaderElectionFlags> le_flags = ctrlkit::ParseLeaderElectionFlags(args);
  if (!le_flags.ok()) {
    std::fprintf(stderr, "%s\n", std::string(MessageOf(le_flags.status())).c_str());
    return 2;
  }
  client::FlagSet flags("leader_election_helper");
  client::ClientOptions client_options;
  client_options.AddFlags(flags);
  std::string ns, name, identity;
  flags.String("namespace", &ns, "Lease namespace");
  flags.String("name", &name, "Lease name");
  flags.String("identity", &identity, "candidate identity");
  if (absl::Status s = flags.Parse(args); !s.ok()) {
    std::fprintf(stderr, "%s\n%s", std::string(MessageOf(s)).c_str(), flags.Usage().c_str());
    return 2;
  }
  absl::StatusOr<std::unique_ptr<client::Client>> client =
      client::Client::FromOptions(client_options);
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", std::string(MessageOf(client.status())).c_str());
    return 1;
  }

  ctrlkit::LeaderElectionConfig config;
  le_flags->ApplyTo(config);
  config.lease_namespace = ns;
  config.lease_name = name;
  config.identity = identity;
  config.callbacks.on_started_leading = [&](std::stop_token stop) {
    Say(fmt::format("LEADING {}", identity));
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock<std::mutex> l(m);
    cv.wait(l, stop, [] { return false; });
  };
  config.callbacks.on_stopped_leading = [&] { Say(fmt::format("STOPPED {}", identity)); };
  config.callbacks.on_new_leader = [](const std::string& id) {
    Say(fmt::format("NEWLEADER {}", id));
  };
  absl::StatusOr<std::unique_ptr<ctrlkit::LeaderElector>> elector =
      ctrlkit::LeaderElector::New(client->get(), std::move(config));
  if (!elector.ok()) {
    std::fprintf(stderr, "%s\n", std::string(MessageOf(elector.status())).c_str());
    return 2;
  }

  std::stop_source stop;
  absl::Status result;
  std::thread runner([&] {
    result = (*elector)->Run(stop.get_token());
    // Lost the Lease: wake the main thread, which waits for a signal.
    if (!stop.stop_requested()) kill(getpid(), SIGTERM);
  });
  int signo = 0;
  sigwait(&signals, &signo);
  stop.request_stop();
  runner.join();
  Say(fmt::format("EXIT {}", result.ok() ? std::string("OK") : std::string(MessageOf(result))));
  return result.ok() ? 0 : 1;
}
