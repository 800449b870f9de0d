#include "model/systemc.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define S2_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define S2_ASAN 1
#endif

#ifdef S2_ASAN
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace s2 {

void announce_stack_to_asan() {
#ifdef S2_ASAN
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void* bottom = nullptr;
  std::size_t size = 0;
  const bool known = pthread_attr_getstack(&attr, &bottom, &size) == 0;
  pthread_attr_destroy(&attr);
  if (!known) return;
  // a switch to the stack the thread is on: ASan takes its bounds, nothing moves
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, bottom, size);
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
}

}  // namespace s2
