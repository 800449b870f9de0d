// Temporary: replaced by the SystemC model backend.
#include <stdexcept>
#include "harness/backend.h"
namespace s2 {
std::unique_ptr<Backend> make_model_backend(const HwConfig&) { throw std::runtime_error("model backend not built yet"); }
}  // namespace s2
