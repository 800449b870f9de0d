// Reading one JSON value as a C++ type without undefined behaviour: nlohmann's get<T>() converts a number
// of any kind to any arithmetic type, and a double beyond the target's range (1e300 into an int) is
// undefined behaviour (found by fuzzing the journal reader). json_field checks the kind and the range
// first and throws std::invalid_argument("expected ..., got ...") otherwise.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

namespace s2 {

template <typename T, typename Json>
T json_field(const Json& v) {
  auto fail = [&](const std::string& expected) {
    std::string got = v.dump();
    if (got.size() > 40) got = got.substr(0, 40) + "...";
    return std::invalid_argument("expected " + expected + ", got " + got);
  };
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) throw fail("true or false");
    return v.template get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    const std::string range = "an integer from " + std::to_string(std::numeric_limits<T>::min()) + " to " +
                              std::to_string(std::numeric_limits<T>::max());
    if (v.is_number_unsigned()) {
      const auto u = v.template get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) throw fail(range);
      return static_cast<T>(u);
    }
    if (v.is_number_integer()) {
      const auto i = v.template get<std::int64_t>();
      if constexpr (std::is_unsigned_v<T>) {
        if (i < 0) throw fail(range);
        if (static_cast<std::uint64_t>(i) > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
          throw fail(range);
      } else {
        if (i < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
            i > static_cast<std::int64_t>(std::numeric_limits<T>::max()))
          throw fail(range);
      }
      return static_cast<T>(i);
    }
    throw fail(range);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) throw fail("a number");
    return v.template get<T>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) throw fail("a string");
    return v.template get<std::string>();
  } else {  // a list of T's elements
    if (!v.is_array()) throw fail("a list");
    T out;
    for (const auto& e : v) out.push_back(json_field<typename T::value_type>(e));
    return out;
  }
}

// A record's field `key` as T (json_field), or `otherwise` where the record has no such field. Errors name
// the field: "field 'KEY': expected ..., got ...".
template <typename T, typename Json>
T json_member_or(const Json& j, const char* key, T otherwise) {
  if (!j.is_object() || !j.contains(key)) return otherwise;
  try {
    return json_field<T>(j.at(key));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("field '") + key + "': " + e.what());
  }
}

// The same for a field the record must have: "field 'KEY': missing" otherwise.
template <typename T, typename Json>
T json_member(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) throw std::invalid_argument(std::string("field '") + key + "': missing");
  return json_member_or<T>(j, key, T{});
}

// A field the record may leave out or set to null: nullopt then (errors as json_member's).
template <typename T, typename Json>
std::optional<T> json_member_opt(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return json_member<T>(j, key);
}

// What a report writes for an optional value: the value, or null.
template <typename T>
nlohmann::ordered_json json_or_null(const std::optional<T>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

}  // namespace s2
