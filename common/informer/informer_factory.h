#pragma once
// SharedInformerFactory hands out one SharedInformer per distinct (resource, namespace, label
// selector, field selector, transform name), so the controllers of one process share one
// list+watch per resource however many of them ask.
//
//   SharedInformerFactory factory(client);
//   SharedInformer* pods = factory.InformerFor({.source = {.resource = client::Pods()}});
//   SharedInformer* jobs = factory.InformerFor({.source = {.resource = client::VolcanoJobs()}});
//   ... add handlers ...
//   factory.Start();
//   if (!factory.WaitForCacheSync(stop, std::chrono::minutes(2))) ...
//
// The first request for a key fixes the informer's Transform behaviour and reflector options
// (resync period included); later requests only add their indexers (an index name already
// present is assumed to be the same function and kept).
//
// Thread-safety: thread-safe. Ownership: owns the informers (pointers stay valid until the
// factory is destroyed); borrows the Client.

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "common/client/client.h"
#include "common/informer/shared_informer.h"

namespace basalt::informer {

class SharedInformerFactory {
 public:
  // `defaults` are the reflector options of informers requested without their own clock,
  // random source or backoff hook (tests inject a FakeClock once here).
  explicit SharedInformerFactory(client::Client* client, ReflectorOptions defaults = {});
  SharedInformerFactory(const SharedInformerFactory&) = delete;
  SharedInformerFactory& operator=(const SharedInformerFactory&) = delete;
  ~SharedInformerFactory();  // Shutdown()

  // The informer for `options`, created on first request. Started at once if the factory has
  // been started.
  SharedInformer* InformerFor(InformerOptions options);
  // Whole documents of `resource` in `namespace_name` ("" = all).
  SharedInformer* InformerFor(const client::ResourceRef& resource, std::string namespace_name = "");

  // Starts every informer, and makes later ones start as they are created.
  void Start();
  // Waits for every informer created so far (real time); false on timeout or stop.
  bool WaitForCacheSync(const std::stop_token& stop, std::chrono::milliseconds timeout) const;
  // Stops every informer.
  void Shutdown();

  size_t size() const;

 private:
  static std::string KeyFor(const InformerOptions& options);

  client::Client* const client_;
  const ReflectorOptions defaults_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<SharedInformer>> informers_;  // guarded by mu_
  bool started_ = false;                                              // guarded by mu_
};

}  // namespace basalt::informer
