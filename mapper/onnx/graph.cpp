#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <cmath>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "mapper/onnx/importer.h"

namespace s2::mapper::onnx_reader {

namespace {

static_assert(std::endian::native == std::endian::little, "ONNX's raw_data is little-endian; it is copied as it is");

// the ops the import takes, in the order its messages list them
const char* const kOps[] = {
    "Conv",     "Gemm",    "MatMul",  "Relu",           "MaxPool",          "AveragePool", "GlobalAveragePool",
    "Add",      "Flatten", "Reshape", "QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul",
    "Constant", "BatchNormalization", "Identity", "Dropout", "Clip", "Pad", "Softmax", "LogSoftmax", "Sigmoid", "Squeeze", "Shape", "Gather", "Unsqueeze", "Concat",
    "Split", "Slice", "Transpose", "ReduceMean", "ReduceMax", "Mul", "Tanh", "HardSigmoid", "HardSwish", "LeakyRelu", "PRelu",
    "Sub", "Div", "ConstantOfShape", "Equal", "Where", "Expand", "SplitToSequence", "SequenceAt", "Cast"};

template <class T>
double load(const char* p) {
  T x;
  std::memcpy(&x, p, sizeof x);
  return static_cast<double>(x);
}

}  // namespace

std::string supported_ops() {
  std::string s;
  for (const char* op : kOps) {
    if (!s.empty()) s += ", ";
    s += op;
  }
  return s;
}

std::string dims_str(const std::vector<std::int64_t>& d) {
  std::string s = "[";  // appended piecewise: GCC 12 warns falsely (-Wrestrict) on "," + std::string
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(d[i]);
  }
  s += "]";
  return s;
}

std::size_t element_bytes(int dtype) {
  switch (dtype) {
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
      return 1;
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::INT32:
      return 4;
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::INT64:
      return 8;
  }
  return 0;
}

double raw_value(int dtype, const char* p) {
  switch (dtype) {
    case onnx::TensorProto::INT8:
      return load<std::int8_t>(p);
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
      return load<std::uint8_t>(p);
    case onnx::TensorProto::FLOAT:
      return load<float>(p);
    case onnx::TensorProto::INT32:
      return load<std::int32_t>(p);
    case onnx::TensorProto::DOUBLE:
      return load<double>(p);
    case onnx::TensorProto::INT64:
      return load<std::int64_t>(p);
  }
  return 0;
}

std::string hint_for(const std::string& op) {
  if (op == "Sigmoid" || op == "Softmax" || op == "LogSoftmax")
    return "keep it as the network's last node (the host applies it), or end the exported model before it";
  if (op == "Split" || op == "Slice" || op == "Concat")
    return "only channels (axis 1) are split, sliced or concatenated: keep the batch, height and width whole";
  if (op == "Transpose" || op == "Reshape")
    return "the only transposition taken is ShuffleNet's channel shuffle (Reshape [1,g,C/g,H,W], Transpose [0,2,1,3,4], "
           "Reshape [1,C,H,W]); a flattening only before a fully connected layer";
  if (op == "Resize" || op == "Upsample" || op == "ConvTranspose")
    return "upsampling has no counterpart on the MAC array: run it on the host";
  if (op == "Mul" || op == "Sub" || op == "Div")
    return "fold a constant scaling into the preceding layer's weights before export (the ARM multiplies two maps, or a "
           "map by a per-channel map computed at run time)";
  if (op == "LSTM" || op == "GRU" || op == "RNN")
    return "not a CNN layer: the import takes the ops listed";
  if (op == "Elu" || op == "Selu" || op == "Gelu" || op == "Softplus" || op == "Softsign" || op == "Mish" || op == "Erf")
    return "the ARM's tables take Relu, Clip(0, 6), Sigmoid, HardSigmoid, HardSwish, Tanh, LeakyRelu, PRelu and x * "
           "Sigmoid(x) / HardSigmoid(x): retrain with one of them";
  if (op == "ReduceMean" || op == "ReduceMax" || op == "ReduceSum")
    return "only a mean or max over H and W (a global pooling) is taken";
  return "the import takes " + supported_ops();
}

namespace {

std::string too_big(std::uintmax_t size) {
  return "expected an ONNX model of at most " + std::to_string(kMaxOnnxFileBytes) +
         " bytes (protobuf's limit for one message), got " + std::to_string(size) +
         ": save it with its weights in an external file (onnx.save(model, path, save_as_external_data=True))";
}

// the bytes `dims` give at `elem` bytes a value; nullopt: more than 2^64
std::optional<std::uint64_t> data_bytes(const std::vector<std::int64_t>& dims, std::size_t elem) {
  std::uint64_t n = elem;
  for (const std::int64_t d : dims)
    if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(d), &n)) return std::nullopt;
  return n;
}

std::string bytes_str(std::optional<std::uint64_t> n) {
  return n ? std::to_string(*n) : "more than " + std::to_string(std::numeric_limits<std::uint64_t>::max());
}

// `raw` (n values of `dtype`, each `elem` bytes) appended to v
void append_values(std::vector<double>& v, int dtype, const char* raw, std::size_t n, std::size_t elem) {
  for (std::size_t i = 0; i < n; ++i) v.push_back(raw_value(dtype, raw + i * elem));
}

// Frees an initializer's data once its values are in consts_: the protobuf's copy would stay beside them
// for the whole import (VGG-16's is 528 MB). Swapping with an empty one frees; clear() keeps the capacity.
void release_data(onnx::TensorProto& t) {
  if (t.has_raw_data()) std::string().swap(*t.mutable_raw_data());
  google::protobuf::RepeatedField<float>().Swap(t.mutable_float_data());
  google::protobuf::RepeatedField<double>().Swap(t.mutable_double_data());
  google::protobuf::RepeatedField<std::int32_t>().Swap(t.mutable_int32_data());
  google::protobuf::RepeatedField<std::int64_t>().Swap(t.mutable_int64_data());
}

}  // namespace

void Importer::parse(const std::string* bytes) {
  std::optional<google::protobuf::io::ArrayInputStream> array;
  std::optional<google::protobuf::io::FileInputStream> file;
  google::protobuf::io::ZeroCopyInputStream* in = nullptr;
  if (bytes) {
    if (bytes->size() > kMaxOnnxFileBytes) fail(too_big(bytes->size()));
    in = &array.emplace(bytes->data(), static_cast<int>(bytes->size()));
  } else {
    // parsed as it is read: a whole file in memory beside the protobuf would double the weights
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(path_, ec);
    if (ec) fail("cannot read the ONNX model: " + ec.message());
    if (size > kMaxOnnxFileBytes) fail(too_big(size));
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail("cannot open the ONNX model: " + std::string(std::strerror(errno)));
    in = &file.emplace(fd);
    file->SetCloseOnDelete(true);
  }
  google::protobuf::io::CodedInputStream coded(in);
  // protobuf 3.21's default is already INT_MAX, older ones stopped at 64 MB: the bound is ours, set here
  coded.SetTotalBytesLimit(static_cast<int>(kMaxOnnxFileBytes));
  if (!model_.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    fail("not an ONNX model: the protobuf does not parse (a truncated file, or another format)");
  if (!model_.has_graph() || model_.graph().node_size() == 0)
    fail("not an ONNX model: it has no graph, or a graph without nodes (a truncated file?)");
}

Const Importer::read_tensor(const onnx::TensorProto& t, const std::string& what) const {
  if (t.has_segment()) fail(what + ": a segmented tensor is not supported");
  Const c;
  c.dtype = t.data_type();
  c.what = what;
  for (const std::int64_t d : t.dims()) {
    if (d < 0) fail(what + ": negative dimension in " + dims_str({t.dims().begin(), t.dims().end()}));
    c.dims.push_back(d);
  }
  const std::size_t bytes = element_bytes(t.data_type());
  if (bytes == 0)
    fail(what + ": data type " + std::to_string(t.data_type()) +
         " is not supported (float, double, int8, uint8, int32, int64, bool are)");
  // the dims are checked against the data present before anything is allocated
  const std::optional<std::uint64_t> need = data_bytes(c.dims, bytes);
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    read_external(t, what, c, need, bytes);
    return c;
  }
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (!need || raw.size() != *need)
      fail(what + ": holds " + std::to_string(raw.size()) + " bytes, its dims " + dims_str(c.dims) + " need " +
           bytes_str(need));
    const std::size_t count = raw.size() / bytes;
    c.v.reserve(count);
    append_values(c.v, t.data_type(), raw.data(), count, bytes);
    return c;
  }
  const std::optional<std::uint64_t> values = data_bytes(c.dims, 1);
  auto take = [&](const auto& field) {
    if (!values || static_cast<std::uint64_t>(field.size()) != *values)
      fail(what + ": holds " + std::to_string(field.size()) + " values, its dims " + dims_str(c.dims) + " say " +
           bytes_str(values));
    c.v.resize(static_cast<std::size_t>(field.size()));
    std::size_t i = 0;
    for (const auto x : field) c.v[i++] = static_cast<double>(x);
  };
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      take(t.float_data());
      break;
    case onnx::TensorProto::DOUBLE:
      take(t.double_data());
      break;
    case onnx::TensorProto::INT64:
      take(t.int64_data());
      break;
    default:  // int8, uint8, bool and int32 are stored as int32
      take(t.int32_data());
      break;
  }
  if (t.data_type() == onnx::TensorProto::INT8 || t.data_type() == onnx::TensorProto::UINT8) {
    const double lo = t.data_type() == onnx::TensorProto::INT8 ? -128 : 0;
    for (const double x : c.v)
      if (x < lo || x > lo + 255) fail(what + ": value " + std::to_string(x) + " is out of its 8-bit type's range");
  }
  return c;
}

void Importer::read_external(const onnx::TensorProto& t, const std::string& what, Const& c,
                             std::optional<std::uint64_t> need, std::size_t elem) const {
  namespace fs = std::filesystem;
  if (t.has_raw_data()) fail(what + ": its data is in an external file and in raw_data too");
  std::string location;
  std::uint64_t offset = 0;
  std::optional<std::uint64_t> length;
  for (const onnx::StringStringEntryProto& kv : t.external_data()) {
    const std::string& k = kv.key();
    if (k == "location") {
      location = kv.value();
    } else if (k == "offset" || k == "length") {
      const std::string& v = kv.value();
      std::uint64_t n = 0;
      const bool digits = !v.empty() && v.size() <= 19 && std::all_of(v.begin(), v.end(), [](char ch) {
        return ch >= '0' && ch <= '9';
      });
      if (!digits) fail(what + ": external data's " + k + " " + in_quotes(v) + " is not a byte count");
      for (const char ch : v) n = n * 10 + static_cast<std::uint64_t>(ch - '0');
      (k == "offset" ? offset : length.emplace()) = n;
    } else if (k != "checksum") {  // a SHA-1 of the data, for tools: not checked
      fail(what + ": external data key " + in_quotes(k) + " is not known (location, offset, length, checksum are)");
    }
  }
  if (location.empty()) fail(what + ": its data is in an external file, but no location names it");
  // ONNX puts the file relative to the model's directory; one outside it (an absolute path, a "..") is
  // refused, as onnx.load refuses it: a model must not read any file its user can
  const fs::path rel(location);
  const fs::path norm = rel.lexically_normal();
  if (rel.has_root_path())
    fail(what + ": its external data location " + in_quotes(location) +
         " is an absolute path; expected one relative to the model's directory");
  if (norm.empty() || *norm.begin() == "..")
    fail(what + ": its external data location " + in_quotes(location) + " leaves the model's directory");
  const fs::path file = fs::path(path_).parent_path() / norm;
  const std::string where = what + ": its external data file " + file.string();
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) fail(where + " does not exist or is not a file");
  const std::uintmax_t size = fs::file_size(file, ec);
  if (ec) fail(where + " cannot be read: " + ec.message());
  if (length && (!need || *length != *need))
    fail(where + ": length " + std::to_string(*length) + " bytes, its dims " + dims_str(c.dims) + " need " +
         bytes_str(need));
  const std::uint64_t got = offset < size ? size - offset : 0;
  if (!need || offset > size || got < *need)
    fail(where + " holds " + std::to_string(size) + " bytes: expected " + bytes_str(need) + " from offset " +
         std::to_string(offset) + " (its dims " + dims_str(c.dims) + "), got " + std::to_string(got));
  std::ifstream f(file, std::ios::binary);
  if (!f.seekg(static_cast<std::streamoff>(offset))) fail(where + " cannot be read at offset " + std::to_string(offset));
  // converted a chunk at a time: the tensor's bytes are never held whole beside its values
  c.v.reserve(static_cast<std::size_t>(*need / elem));
  std::vector<char> chunk((std::size_t(1) << 20) / elem * elem);
  for (std::uint64_t left = *need; left > 0;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, chunk.size()));
    f.read(chunk.data(), static_cast<std::streamsize>(n));
    if (f.gcount() != static_cast<std::streamsize>(n)) fail(where + " changed while it was read");
    append_values(c.v, t.data_type(), chunk.data(), n / elem, elem);
    left -= n;
  }
}

void Importer::visit(const Ctx& c) {
  if (!collect_) {
    node(c);
    return;
  }
  try {
    node(c);
  } catch (const NetworkError& e) {
    std::string why = e.what();
    if (why.find(" is not supported (the import takes") != std::string::npos)
      why = path_ + ": " + c.label + ": op type " + in_quotes(c.n.op_type()) + " is not supported: " + hint_for(c.n.op_type());
    problems_.push_back(why);
    std::optional<Act> first_map;
    for (int k = 0; k < c.n.input_size() && !first_map; ++k)
      if (const auto it = acts_.find(canon(c.n.input(k))); it != acts_.end()) first_map = it->second;
    for (int k = 0; k < c.n.output_size(); ++k) {
      const std::string& o = c.n.output(k);
      if (o.empty() || acts_.count(o) || consts_.count(o) || alias_.count(o)) continue;
      std::optional<Act> like = refused_output(c, k);
      if (!like) like = first_map;
      if (like) {
        Act a = *like;
        a.cls = scales_.make(o);
        acts_[o] = a;
        producer_[o] = c.label;
      }
    }
  }
}

std::optional<Act> Importer::refused_output(const Ctx& c, int out) const {
  const std::string& t = c.n.op_type();
  std::vector<Act> in;
  for (int k = 0; k < c.n.input_size(); ++k)
    if (const auto it = acts_.find(canon(c.n.input(k))); it != acts_.end()) in.push_back(it->second);
  if (in.empty()) return std::nullopt;
  const Act& x = in.front();
  auto ints = [&](const char* name) -> std::vector<std::int64_t> {
    for (const onnx::AttributeProto& a : c.n.attribute())
      if (a.name() == name) return {a.ints().begin(), a.ints().end()};
    return {};
  };
  auto integer = [&](const char* name, std::int64_t otherwise) {
    for (const onnx::AttributeProto& a : c.n.attribute())
      if (a.name() == name) return a.i();
    return otherwise;
  };
  auto weights = [&](int k) -> const Const* {
    const auto it = k < c.n.input_size() ? consts_.find(c.n.input(k)) : consts_.end();
    return it == consts_.end() ? nullptr : &it->second;
  };
  const bool conv = t == "Conv" || t == "QLinearConv", pool = t == "MaxPool" || t == "AveragePool";
  if ((conv || pool) && x.rank == 4) {
    std::vector<std::int64_t> k = ints("kernel_shape");
    const Const* w = conv ? weights(t == "Conv" ? 1 : 3) : nullptr;
    if (k.size() != 2 && w && w->dims.size() == 4) k = {w->dims[2], w->dims[3]};
    if (k.size() != 2 || (conv && (!w || w->dims.size() != 4))) return std::nullopt;
    std::vector<std::int64_t> s = ints("strides"), d = ints("dilations"), p = ints("pads");
    if (s.size() != 2) s = {1, 1};
    if (d.size() != 2) d = {1, 1};
    if (p.size() != 4) p = {0, 0, 0, 0};
    const auto within = [](const std::vector<std::int64_t>& v, std::int64_t lo) {
      return std::all_of(v.begin(), v.end(), [&](std::int64_t e) { return e >= lo && e <= kMaxSide; });
    };
    if (!within(k, 1) || !within(s, 1) || !within(d, 1) || !within(p, 0)) return std::nullopt;  // what a fuzzer writes
    std::string auto_pad;
    for (const onnx::AttributeProto& a : c.n.attribute())
      if (a.name() == "auto_pad") auto_pad = a.s();
    const bool ceil = integer("ceil_mode", 0) != 0;
    // ONNX's output size along one axis (0: height, 1: width)
    auto side = [&](std::int64_t n, int axis) -> std::int64_t {
      if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return (n + s[axis] - 1) / s[axis];
      const std::int64_t span = n + (auto_pad == "VALID" ? 0 : p[axis] + p[axis + 2]) - d[axis] * (k[axis] - 1) - 1;
      if (span < 0) return 0;
      return (ceil ? (span + s[axis] - 1) / s[axis] : span / s[axis]) + 1;
    };
    const std::int64_t H = side(x.shape.H, 0), W = side(x.shape.W, 1), D = conv ? w->dims[0] : x.shape.D;
    if (H < 1 || W < 1 || D < 1 || H > kMaxSide || W > kMaxSide || D > kMaxChannels) return std::nullopt;
    return Act{{static_cast<int>(W), static_cast<int>(H), static_cast<int>(D)}, 4, 0};
  }
  if ((t == "GlobalAveragePool" || t == "GlobalMaxPool") && x.rank == 4) return Act{{1, 1, x.shape.D}, 4, 0};
  if ((t == "ReduceMean" || t == "ReduceMax") && x.rank == 4) {
    std::vector<std::int64_t> axes = ints("axes");
    if (const Const* a = weights(1); a && axes.empty())
      for (const double v : a->v) axes.push_back(to_i64(v));
    std::vector<std::int64_t> d = x.dims();
    std::vector<bool> reduced(4, axes.empty());
    for (const std::int64_t ax : axes) {
      if (ax < -4 || ax > 3) return std::nullopt;
      reduced[static_cast<std::size_t>((ax + 4) % 4)] = true;
    }
    std::vector<std::int64_t> kept;
    for (std::size_t k = 0; k < 4; ++k) {
      if (reduced[k]) d[k] = 1;
      if (!reduced[k]) kept.push_back(d[k]);
    }
    if (integer("keepdims", 1) != 0) return Act{{static_cast<int>(d[3]), static_cast<int>(d[2]), static_cast<int>(d[1])}, 4, 0};
    if (kept.size() == 2 && kept[0] == 1) return Act{{static_cast<int>(kept[1]), 1, 1}, 2, 0};
    return std::nullopt;
  }
  if (t == "Slice" && x.rank == 4 && c.n.input_size() >= 4) {
    // a range of channels with any step, as ONNX computes it
    const Const *st = weights(1), *en = weights(2), *ax = weights(3), *sp = c.n.input_size() > 4 ? weights(4) : nullptr;
    if (!st || !en || !ax || st->v.size() != 1 || en->v.size() != 1 || ax->v.size() != 1 || (ax->v[0] != 1 && ax->v[0] != -3))
      return std::nullopt;
    const double D = x.shape.D, step = sp && sp->v.size() == 1 ? sp->v[0] : 1;
    auto at = [&](double v) { return std::clamp(v < 0 ? v + D : v, 0.0, D); };
    const double b = at(st->v[0]), e = at(en->v[0]);
    if (!(step >= 1) || e <= b) return std::nullopt;
    return Act{{x.shape.W, x.shape.H, static_cast<int>(std::ceil((e - b) / step))}, 4, 0};
  }
  if (t == "Split" && x.rank == 4 && (integer("axis", 0) == 1 || integer("axis", 0) == -3)) {
    std::vector<std::int64_t> sizes = ints("split");
    if (const Const* s = weights(1); s && sizes.empty())
      for (const double v : s->v) sizes.push_back(to_i64(v));
    if (sizes.empty() && c.n.output_size() > 0 && x.shape.D % c.n.output_size() == 0)
      sizes.assign(static_cast<std::size_t>(c.n.output_size()), x.shape.D / c.n.output_size());
    if (static_cast<int>(sizes.size()) != c.n.output_size()) return std::nullopt;
    const std::int64_t d = sizes[static_cast<std::size_t>(out)];
    if (d < 1 || d > x.shape.D) return std::nullopt;
    return Act{{x.shape.W, x.shape.H, static_cast<int>(d)}, 4, 0};
  }
  if ((t == "Mul" || t == "Add") && in.size() == 2 && in[0].rank == 4 && in[1].rank == 4)  // broadcasting
    return in[0].shape.elements() >= in[1].shape.elements() ? in[0] : in[1];
  if (t == "Flatten" && x.rank == 4 && integer("axis", 1) == 1)
    return Act{{static_cast<int>(x.shape.elements()), 1, 1}, 2, 0};
  if (t == "Gemm" || t == "MatMul" || t == "QLinearMatMul") {
    const Const* w = weights(t == "QLinearMatMul" ? 3 : 1);
    if (!w || w->dims.size() != 2) return std::nullopt;
    const std::int64_t n = w->dims[t == "Gemm" && integer("transB", 0) != 0 ? 0 : 1];
    if (n < 1 || n > kMaxChannels) return std::nullopt;
    return Act{{static_cast<int>(n), 1, 1}, 2, 0};
  }
  if (t == "Concat" && x.rank == 4 && (integer("axis", 1) == 1 || integer("axis", 1) == -3) &&
      in.size() == static_cast<std::size_t>(c.n.input_size())) {
    long long D = 0;
    for (const Act& a : in) {
      if (a.rank != 4 || a.shape.H != x.shape.H || a.shape.W != x.shape.W) return std::nullopt;
      D += a.shape.D;
    }
    if (D > kMaxChannels) return std::nullopt;
    return Act{{x.shape.W, x.shape.H, static_cast<int>(D)}, 4, 0};
  }
  return std::nullopt;
}

void Importer::read_graph() {
  const onnx::GraphProto& g = model_.graph();
  if (g.sparse_initializer_size() > 0) fail("sparse initializers are not supported");
  for (onnx::TensorProto& t : *model_.mutable_graph()->mutable_initializer()) {
    if (t.name().empty()) fail("an initializer has no name");
    if (consts_.count(t.name())) fail("initializer " + in_quotes(t.name()) + " is defined twice");
    consts_[t.name()] = read_tensor(t, "initializer " + in_quotes(t.name()));
    release_data(t);
  }
  for (const onnx::NodeProto& n : g.node())
    for (const std::string& in : n.input()) ++uses_[in];
  std::vector<const onnx::ValueInfoProto*> inputs;
  for (const onnx::ValueInfoProto& v : g.input())
    if (!consts_.count(v.name())) inputs.push_back(&v);  // older exporters list initializers as inputs too
  if (inputs.size() != 1) {
    std::string names;
    for (const auto* v : inputs) names += (names.empty() ? "" : ", ") + in_quotes(v->name());
    fail("the graph has " + std::to_string(inputs.size()) + " inputs" + (names.empty() ? "" : " (" + names + ")") +
         "; the hardware runs a network with one");
  }
  if (g.output_size() != 1) {
    std::string names;
    for (const auto& v : g.output()) names += (names.empty() ? "" : ", ") + in_quotes(v.name());
    fail("the graph has " + std::to_string(g.output_size()) + " outputs" + (names.empty() ? "" : " (" + names + ")") +
         "; the hardware runs a network with one");
  }
  // an op the hardware has no counterpart for is the first thing to say, before any shape
  if (!collect_)
    for (int i = 0; i < g.node_size(); ++i) supported(ctx(g.node(i), i + 1));
  read_input(*inputs[0]);
  for (int i = 0; i < g.node_size(); ++i) visit(ctx(g.node(i), i + 1));
  if (!problems_.empty()) return;
  const std::string& out = g.output(0).name();
  if (consts_.count(out)) fail("the graph's output " + in_quotes(out) + " is a constant");
  if (!alias_.count(out) && !acts_.count(out))
    fail("the graph's output " + in_quotes(out) + " is not computed by any node (a dangling name)");
  output_ = canon(out);
}

void Importer::read_input(const onnx::ValueInfoProto& v) {
  const std::string what = "the graph's input " + in_quotes(v.name());
  if (v.name().empty()) fail("the graph's input has no name");
  if (!v.type().has_tensor_type()) fail(what + " is not a tensor");
  const auto& tt = v.type().tensor_type();
  if (tt.elem_type() != onnx::TensorProto::FLOAT)
    fail(what + " has element type " + std::to_string(tt.elem_type()) +
         "; expected float (1), quantized inside the model");
  if (!tt.has_shape()) fail(what + " has no shape; expected [1,C,H,W] or [1,N]");
  std::vector<std::int64_t> d;
  for (int k = 0; k < tt.shape().dim_size(); ++k) {
    const auto& dim = tt.shape().dim(k);
    if (!dim.has_dim_value() && k == 0) {  // a dynamic batch (dynamic_axes): the hardware runs one input
      notes_.push_back(what + ": its batch dimension is symbolic" +
                       (dim.has_dim_param() ? " (" + in_quotes(dim.dim_param()) + ")" : std::string()) + "; run with a batch of 1");
      d.push_back(1);
      continue;
    }
    if (!dim.has_dim_value())
      fail(what + ": dimension " + std::to_string(k) + " is symbolic" +
           (dim.has_dim_param() ? " (" + in_quotes(dim.dim_param()) + ")" : std::string()) +
           "; the import needs a fixed shape (a symbolic batch is taken as 1)");
    if (dim.dim_value() < 1)
      fail(what + ": dimension " + std::to_string(k) + " is " + std::to_string(dim.dim_value()));
    d.push_back(dim.dim_value());
  }
  if (d.size() != 4 && d.size() != 2) fail(what + " has shape " + dims_str(d) + "; expected [1,C,H,W] or [1,N]");
  if (d[0] != 1)
    fail(what + " has batch " + std::to_string(d[0]) + " " + dims_str(d) + "; the hardware runs one image (batch 1)");
  Act a;
  a.rank = static_cast<int>(d.size());
  if (a.rank == 4) {
    if (d[1] > kMaxChannels || d[2] > kMaxSide || d[3] > kMaxSide)
      fail(what + " has shape " + dims_str(d) + ": more than " + std::to_string(kMaxChannels) +
           " channels or sides over " + std::to_string(kMaxSide));
    a.shape = {static_cast<int>(d[3]), static_cast<int>(d[2]), static_cast<int>(d[1])};
  } else {
    if (d[1] > kMaxMapValues)
      fail(what + " has shape " + dims_str(d) + ": more than " + std::to_string(kMaxMapValues) + " values");
    a.shape = {static_cast<int>(d[1]), 1, 1};
  }
  if (a.shape.elements() > kMaxMapValues)
    fail(what + " has " + std::to_string(a.shape.elements()) + " values; expected at most " +
         std::to_string(kMaxMapValues));
  a.cls = scales_.make(v.name());
  input_ = v.name();
  acts_[input_] = a;
  producer_[input_] = what;
  net_.input = a.shape;
}

std::string Importer::canon(const std::string& name) const {
  const auto it = alias_.find(name);
  return it == alias_.end() ? name : it->second;
}

std::pair<std::string, Act> Importer::act_in(const Ctx& c, int k, bool padded_ok) const {
  const std::string name = c.in(k);
  if (consts_.count(name))
    c.fail("input " + std::to_string(k + 1) + " " + in_quotes(name) + " is a constant; expected a feature map here");
  if (const auto f = folded_.find(name); f != folded_.end())
    c.fail("reads " + in_quotes(name) + ", the map before " + f->second +
           " folded into its layer; only that node may read it (the hardware computes the folded map alone)");
  const std::string cn = canon(name);
  if (shuffle_parts_.count(cn))
    c.fail("reads " + in_quotes(name) + ", a part of a channel shuffle: only ShuffleNet's Reshape [1,g,C/g,H,W], Transpose "
           "[0,2,1,3,4], Reshape [1,C,H,W] is taken");
  if (!padded_ok && pads_.count(cn))
    c.fail("reads " + in_quotes(name) + ", the output of " + producer_.at(cn) +
           "; a Pad is taken only right before a Conv (the hardware pads inside the convolution's block)");
  const auto it = acts_.find(cn);
  if (it == acts_.end())
    c.fail("input " + in_quotes(name) +
           " is not the graph's input, an initializer or an earlier node's output (a dangling name)");
  return {cn, it->second};
}

std::pair<std::string, int> Importer::unpadded(const std::string& map) const {
  const auto it = pads_.find(map);
  return it == pads_.end() ? std::pair<std::string, int>{map, 0} : it->second;
}

const Const& Importer::const_in(const Ctx& c, int k, const std::string& role) const {
  const std::string name = c.in(k);
  const auto it = consts_.find(name);
  if (it != consts_.end()) return it->second;
  if (alias_.count(name) || acts_.count(name))
    c.fail("input " + in_quotes(name) + " (" + role + ") is a feature map; expected an initializer");
  c.fail("input " + in_quotes(name) + " (" + role +
         ") is not an initializer or an earlier node's output (a missing initializer)");
}

std::string Importer::new_output(const Ctx& c) const {
  if (c.n.output_size() < 1 || c.out().empty()) c.fail("has no output");
  for (int k = 1; k < c.n.output_size(); ++k)
    if (!c.n.output(k).empty())
      c.fail("output " + std::to_string(k + 1) + " " + in_quotes(c.n.output(k)) + " is not supported");
  const std::string& o = c.out();
  if (consts_.count(o) || acts_.count(o) || alias_.count(o)) c.fail("output " + in_quotes(o) + " is defined twice");
  return o;
}

void Importer::add_act(const Ctx& c, const std::string& name, const Act& a) {
  if (a.shape.elements() > kMaxMapValues)
    c.fail("output " + to_string(a.shape) + " has more than " + std::to_string(kMaxMapValues) + " values");
  acts_[name] = a;
  producer_[name] = c.label;
}

int Importer::scale_exponent(const Ctx& c, int k, const std::string& role) const {
  const Const& s = const_in(c, k, role);
  if (s.v.empty()) c.fail(role + " " + in_quotes(c.in(k)) + " is empty");
  if (!std::all_of(s.v.begin(), s.v.end(), [&](double x) { return x == s.v[0]; }))
    c.fail(role + " " + in_quotes(c.in(k)) + " has " + std::to_string(s.v.size()) +
           " different values (per-channel scales); only weights may have them (a DequantizeLinear of int8 "
           "weights, along their output axis): a map has one exponent");
  return scale_exponents(c, k, role)[0];
}

std::vector<int> Importer::scale_exponents(const Ctx& c, int k, const std::string& role) const {
  const Const& s = const_in(c, k, role);
  if (s.v.empty()) c.fail(role + " " + in_quotes(c.in(k)) + " is empty");
  std::vector<int> e;
  e.reserve(s.v.size());
  for (std::size_t i = 0; i < s.v.size(); ++i) {
    const auto x = exponent_of_scale(s.v[i]);
    if (!x)
      c.fail(role + " " + in_quotes(c.in(k)) + (s.v.size() > 1 ? " value " + std::to_string(i) : std::string()) +
             " is " + std::to_string(s.v[i]) + ", not a power of two (the hardware requantizes by shifting right)");
    e.push_back(*x);
  }
  return e;
}

void Importer::zero_point(const Ctx& c, int k, bool required, const std::string& role) const {
  if (!c.has(k)) {
    if (required) c.fail(role + " is missing");
    return;
  }
  const Const& z = const_in(c, k, role);
  if (z.dtype == onnx::TensorProto::UINT8)
    c.fail(role + " " + in_quotes(c.in(k)) + " is uint8; the hardware's maps and weights are int8");
  if (z.dtype != onnx::TensorProto::INT8 && z.dtype != onnx::TensorProto::INT32)
    c.fail(role + " " + in_quotes(c.in(k)) + " has type " + std::to_string(z.dtype) + "; expected int8");
  if (!z.all_zero()) c.fail(role + " " + in_quotes(c.in(k)) + " is not 0 (the hardware quantizes symmetrically)");
}

void Importer::set_scale(const Ctx& c, const std::string& map, int e) {
  const std::string why = scales_.set(acts_.at(map).cls, e, c.label);
  if (!why.empty()) c.fail("map " + in_quotes(map) + ": " + why);
}

Importer::Window Importer::window(const Ctx& c, const Attrs& a, const Shape3& in, int kH, int kW, bool pool) const {
  if (kH < 1 || kW < 1 || kH > kMaxSide || kW > kMaxSide)
    c.fail("kernel " + std::to_string(kH) + "x" + std::to_string(kW) + " is out of range 1.." +
           std::to_string(kMaxSide));
  const auto strides = a.ints("strides").value_or(std::vector<std::int64_t>{1, 1});
  if (strides.size() != 2) c.fail("strides " + dims_str(strides) + ": expected 2 values (a 2-D window)");
  if (strides[0] != strides[1])
    c.fail("strides " + dims_str(strides) + " differ: the hardware's window moves by one stride in both directions");
  if (strides[0] < 1 || strides[0] > kMaxSide) c.fail("stride " + std::to_string(strides[0]) + " is out of range");
  if (const auto dil = a.ints("dilations"))
    if (dil->size() != 2 || (*dil)[0] != 1 || (*dil)[1] != 1)
      c.fail("dilations " + dims_str(*dil) +
             ": a dilated window is not supported (the MAC array's filters are dense)");
  const std::string auto_pad = a.s("auto_pad", "NOTSET");
  std::vector<std::int64_t> pads = a.ints("pads").value_or(std::vector<std::int64_t>{0, 0, 0, 0});
  if (pads.size() != 4) c.fail("pads " + dims_str(pads) + ": expected 4 values");
  const std::int64_t s = strides[0];
  if (auto_pad == "VALID") {
    pads = {0, 0, 0, 0};
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    // the output is ceil(in / stride); the extra padding goes to the end (UPPER) or the beginning (LOWER)
    const std::int64_t side[2] = {in.H, in.W}, k[2] = {kH, kW};
    for (int ax = 0; ax < 2; ++ax) {
      const std::int64_t total = std::max<std::int64_t>(((side[ax] + s - 1) / s - 1) * s + k[ax] - side[ax], 0);
      const std::int64_t small = total / 2, big = total - small;
      pads[ax] = auto_pad == "SAME_UPPER" ? small : big;
      pads[ax + 2] = auto_pad == "SAME_UPPER" ? big : small;
    }
  } else if (auto_pad != "NOTSET") {
    c.fail("auto_pad " + in_quotes(auto_pad) + " is not supported");
  }
  for (const std::int64_t p : pads)
    if (p < 0 || p > kMaxSide) c.fail("pads " + dims_str(pads) + " are out of range");
  Window w;
  w.stride = static_cast<int>(s);
  w.pad = static_cast<int>(pads[0]);
  for (int k = 0; k < 4; ++k) w.pads[static_cast<std::size_t>(k)] = static_cast<int>(pads[static_cast<std::size_t>(k)]);
  // a convolution takes pads that differ per side by framing its kernel with zeros (Importer::conv); a
  // pooling window cannot be framed
  if (!w.alike() && pool)
    c.fail("pads " + dims_str(pads) +
           " (top, left, bottom, right) differ: a pooling's PADD pads every side alike (one pad per layer, as the "
           "thesis's parser takes it)");
  const std::int64_t pw = in.W + pads[1] + pads[3], ph = in.H + pads[0] + pads[2];
  if (kW > pw || kH > ph)
    c.fail("window " + std::to_string(kH) + "x" + std::to_string(kW) + " is larger than the padded input " +
           std::to_string(ph) + "x" + std::to_string(pw));
  w.out = {static_cast<int>((pw - kW) / s + 1), static_cast<int>((ph - kH) / s + 1), in.D};
  w.floor_out = w.out;
  if (pool && a.i("ceil_mode", 0) != 0) {
    // one more window over the end where the rows or columns left over do not fill one: the padding that
    // makes the last window whole (less than a stride, so an axis without one left over keeps its size)
    const std::int64_t cw = (pw - kW + s - 1) / s + 1, ch = (ph - kH + s - 1) / s + 1;
    const std::int64_t ew = (cw - 1) * s + kW - pw, eh = (ch - 1) * s + kH - ph;
    w.pad_end = static_cast<int>(std::max<std::int64_t>({ew, eh, 0}));
    w.out = {static_cast<int>(cw), static_cast<int>(ch), in.D};
  }
  return w;
}

Importer::Ctx Importer::ctx(const onnx::NodeProto& n, int index) const {
  return Ctx{*this, n, index,
             "node " + (n.name().empty() ? "#" + std::to_string(index) : n.name()) + " (" + n.op_type() + ")"};
}

void Importer::supported(const Ctx& c) const {
  if (!c.n.domain().empty() && c.n.domain() != "ai.onnx")
    c.fail("op domain " + in_quotes(c.n.domain()) + " is not supported (the import takes these standard ONNX ops: " +
           supported_ops() + ")" +
           (c.n.domain() == "com.microsoft"
                ? "; onnxruntime's quantizer writes its contrib ops (QLinearAdd, QGemm, ...) in the QOperator format: "
                  "quantize with quant_format=QuantFormat.QDQ, or give the float model (the import quantizes it)"
                : std::string()));
  const std::string& t = c.n.op_type();
  for (const char* op : kOps)
    if (t == op) return;
  c.fail("op type " + in_quotes(t) + " is not supported (the import takes " + supported_ops() + ")");
}

void Importer::node(const Ctx& c) {
  const std::string& t = c.n.op_type();
  if (t == "Constant")
    constant(c);
  else if (t == "QuantizeLinear")
    quantize_linear(c);
  else if (t == "DequantizeLinear")
    dequantize_linear(c);
  else if (t == "Conv" || t == "QLinearConv")
    conv(c, t == "QLinearConv");
  else if (t == "Gemm" || t == "MatMul" || t == "QLinearMatMul")
    fc(c);
  else if (t == "Relu")
    relu(c);
  else if (t == "MaxPool" || t == "AveragePool")
    pool(c, t == "MaxPool");
  else if (t == "GlobalAveragePool")
    global_pool(c);
  else if (t == "Add")
    add(c);
  else if (t == "Reshape" && c.has(0) && shuffle_parts_.count(canon(c.in(0))))
    shuffle(c, 3);
  else if (t == "Reshape" && c.has(1) && consts_.count(c.in(1)) && consts_.at(c.in(1)).v.size() == 5)
    shuffle(c, 1);
  else if (t == "Transpose")
    shuffle(c, 2);
  else if (t == "Flatten" || t == "Reshape")
    flatten(c, t == "Reshape");
  else if (t == "Mul")
    mul(c);
  else if (t == "Sub" || t == "Div")
    arithmetic(c);
  else if (t == "Split")
    split(c);
  else if (t == "SplitToSequence")
    split_to_sequence(c);
  else if (t == "SequenceAt")
    sequence_at(c);
  else if (t == "ConstantOfShape" || t == "Equal" || t == "Where" || t == "Expand" || t == "Cast")
    shape_arithmetic(c);
  else if (t == "Slice")
    slice(c);
  else if (t == "ReduceMean" || t == "ReduceMax")
    reduce(c, t == "ReduceMax");
  else if (t == "Tanh" || t == "HardSigmoid" || t == "HardSwish" || t == "LeakyRelu" || t == "PRelu" ||
           (t == "Sigmoid" && !(c.n.output_size() == 1 && c.out() == model_.graph().output(0).name())))
    activation(c);
  else if (t == "Squeeze")
    squeeze(c);
  else if (t == "BatchNormalization")
    batch_norm(c);
  else if (t == "Identity" || t == "Dropout")
    pass_through(c, t == "Dropout");
  else if (t == "Clip")
    clip(c);
  else if (t == "Pad")
    pad(c);
  else if (t == "Softmax" || t == "LogSoftmax" || t == "Sigmoid")
    final_activation(c);
  else if (t == "Concat" && std::any_of(c.n.input().begin(), c.n.input().end(), [&](const std::string& i) {
             return acts_.count(canon(i)) != 0 || shuffle_parts_.count(canon(i)) != 0;
           }))
    concat(c);
  else if (t == "Shape" || t == "Gather" || t == "Unsqueeze" || t == "Concat")
    shape_arithmetic(c);
  else
    supported(c);
}

std::string Importer::finish(const Ctx& c, Node nd, std::vector<std::string> in, Act out, bool own_scale) {
  nd.index = c.index;
  nd.label = c.label;
  nd.in = std::move(in);
  nd.out = new_output(c);
  out.cls = own_scale ? scales_.make(nd.out) : acts_.at(nd.in[0]).cls;
  add_act(c, nd.out, out);
  nodes_.push_back(std::move(nd));
  return nodes_.back().out;
}

[[noreturn]] void Importer::fail_at(const Node& n, const std::string& why) const {
  throw NetworkError(path_ + ": " + n.label + ": " + why);
}

}  // namespace s2::mapper::onnx_reader
