#include "common/informer/informer_factory.h"

#include "fmt/format.h"

namespace basalt::informer {

SharedInformerFactory::SharedInformerFactory(client::Client* client, ReflectorOptions defaults)
    : client_(client), defaults_(std::move(defaults)) {}

SharedInformerFactory::~SharedInformerFactory() { Shutdown(); }

std::string SharedInformerFactory::KeyFor(const InformerOptions& o) {
  const ListWatchSource& s = o.source;
  // '\n' cannot appear in any of these fields.
  return fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n{}", s.resource.group, s.resource.version,
                     s.resource.resource, s.namespace_name, s.label_selector, s.field_selector,
                     o.transform.name());
}

SharedInformer* SharedInformerFactory::InformerFor(InformerOptions options) {
  const std::string key = KeyFor(options);
  std::lock_guard<std::mutex> l(mu_);
  auto it = informers_.find(key);
  if (it != informers_.end()) {
    for (auto& [name, fn] : options.indexers) {
      // An existing index of the same name is taken to be the same function.
      (void)it->second->AddIndexers({{name, std::move(fn)}});
    }
    return it->second.get();
  }
  if (options.reflector.clock == nullptr) options.reflector.clock = defaults_.clock;
  if (!options.reflector.random) options.reflector.random = defaults_.random;
  if (!options.reflector.on_backoff) options.reflector.on_backoff = defaults_.on_backoff;
  auto informer = std::make_unique<SharedInformer>(client_, std::move(options));
  SharedInformer* raw = informer.get();
  informers_.emplace(key, std::move(informer));
  if (started_) raw->Start();
  return raw;
}

SharedInformer* SharedInformerFactory::InformerFor(const client::ResourceRef& resource,
                                                   std::string namespace_name) {
  InformerOptions options;
  options.source.resource = resource;
  options.source.namespace_name = std::move(namespace_name);
  options.reflector = defaults_;
  return InformerFor(std::move(options));
}

void SharedInformerFactory::Start() {
  std::lock_guard<std::mutex> l(mu_);
  started_ = true;
  for (auto& [key, informer] : informers_) informer->Start();
}

bool SharedInformerFactory::WaitForCacheSync(const std::stop_token& stop,
                                             std::chrono::milliseconds timeout) const {
  std::vector<const SharedInformer*> all;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& [key, informer] : informers_) all.push_back(informer.get());
  }
  return informer::WaitForCacheSync(stop, timeout, all);
}

void SharedInformerFactory::Shutdown() {
  std::lock_guard<std::mutex> l(mu_);
  for (auto& [key, informer] : informers_) informer->Stop();
}

size_t SharedInformerFactory::size() const {
  std::lock_guard<std::mutex> l(mu_);
  return informers_.size();
}

}  // namespace basalt::informer
