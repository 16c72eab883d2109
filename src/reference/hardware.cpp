// SPDX-License-Identifier: Apache-2.0
#include "blockscale/reference/hardware.h"

#include <map>
#include <mutex>
#include <stdexcept>

#include "hardware_lookup.h"

namespace blockscale::reference {

namespace {

template <class Model>
struct Registry {
  std::mutex mutex;
  std::map<std::string, std::pair<ModelInfo, Model>> models;

  void add(const ModelInfo& info, Model model) {
    // A name is what hardware(<name>) holds, and parse_numerics reads it back: one word.
    if (info.name.empty() || info.name.find_first_of("() \t\n") != std::string::npos) {
      throw std::invalid_argument("hardware model name '" + info.name +
                                  "' must be one word without parentheses (it is read back from hardware(<name>))");
    }
    const std::lock_guard lock(mutex);
    models[info.name] = {info, std::move(model)};
  }
  std::vector<ModelInfo> list() {
    const std::lock_guard lock(mutex);
    std::vector<ModelInfo> out;
    for (const auto& [name, entry] : models) out.push_back(entry.first);
    return out;
  }
  Model find(const std::string& operation, const std::string& name) {
    const std::lock_guard lock(mutex);
    const auto it = models.find(name);
    if (it != models.end()) return it->second.second;
    std::string names;
    for (const auto& [n, entry] : models) names += (names.empty() ? "" : ", ") + n;
    throw RuleError(Rule::no_model, operation,
                    "no hardware model named '" + name + "' is registered (registered: " +
                        (names.empty() ? std::string("none; the emulator library registers its models") : names) + ")");
  }
};

Registry<ScaledMmaModel>& scaled_registry() {
  static Registry<ScaledMmaModel> r;
  return r;
}
Registry<MmaModel>& mma_registry() {
  static Registry<MmaModel> r;
  return r;
}

}  // namespace

void register_scaled_mma_model(const ModelInfo& info, ScaledMmaModel model) {
  scaled_registry().add(info, std::move(model));
}
void register_mma_model(const ModelInfo& info, MmaModel model) { mma_registry().add(info, std::move(model)); }
std::vector<ModelInfo> scaled_mma_models() { return scaled_registry().list(); }
std::vector<ModelInfo> mma_models() { return mma_registry().list(); }

namespace detail {
ScaledMmaModel find_scaled_mma_model(const std::string& name) { return scaled_registry().find("mma_scaled", name); }
MmaModel find_mma_model(const std::string& operation, const std::string& name) {
  return mma_registry().find(operation, name);
}
}  // namespace detail

}  // namespace blockscale::reference
