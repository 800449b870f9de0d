// An SNN layer (model/snn_layer.h) read from NumPy files, as `s2cosim snn --weights W.npy --spikes S.npy` will
// take it: the weights int8 of shape (delays, pre, post), the spikes uint8 or bool of shape (timesteps, pre),
// each 0 or 1. Both headers are checked against each other and against SnnLimits before any data is read
// (stimulus/npy_file.h); the writers of a layer and its currents are outputs/snn_outputs.h.
#pragma once

#include <string>

#include "model/snn_layer.h"

namespace s2 {

// Throws std::runtime_error "FILE: FIELD ...: what is wrong, what was expected" for either file: missing, not
// .npy (npy_file.h's messages), a dtype or a number of dimensions other than the above, a size outside
// SnnLimits (from the header alone), pre-neurons that disagree ("S.npy: spikes shape (5, 12): 12 pre-neurons,
// but W.npy has 13 (its dimension 1)"), data shorter or longer than the shape, a spike other than 0 or 1 (the
// first by index, "S.npy: spike [t][i] is 2, expected 0 or 1").
SnnLayer read_snn_layer(const std::string& weights_npy, const std::string& spikes_npy);
// The same for the files' bytes; the names stand for the files in messages (the fuzz target's entry).
SnnLayer parse_snn_layer(const std::string& weights_bytes, const std::string& weights_name, const std::string& spikes_bytes,
                         const std::string& spikes_name);

}  // namespace s2
