// Reading a user's text file (task vectors, layer lists, split files, configurations) with bounds: the
// file's size is checked before anything is read, and the text must be UTF-8 (every name in it may end up
// in a JSON report, which holds UTF-8 only). Errors name the file, and the line and column where they can.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace s2 {

// The byte offset of the first byte that does not belong to a valid UTF-8 sequence; nullopt if all do.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

// The whole file, at most `max_bytes`; throws std::runtime_error "PATH: cannot open the WHAT",
// "PATH: expected a WHAT of at most N bytes, got M", or "PATH:LINE:COLUMN: expected UTF-8 text, got byte 0xXX".
std::string read_text_file(const std::string& path, std::uintmax_t max_bytes, const std::string& what);

// The bytes of a file, at most `max_bytes`, read with a bound from any kind of file: a FIFO without a writer
// gives what it holds and never blocks the open, /dev/zero is refused once it passes the bound. With
// `regular_only` (files a run wrote: journals, reports) anything but a regular file is refused, "PATH: a
// FIFO, expected the WHAT (a regular file)". Throws std::runtime_error as read_text_file does.
std::string read_file_bounded(const std::string& path, std::uintmax_t max_bytes, const std::string& what,
                              bool regular_only = false);

}  // namespace s2
