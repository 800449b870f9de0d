// Placeholder translation unit: the mapper is not built yet (see mapper/README.md).
namespace s2::mapper {
int version() { return 0; }
}  // namespace s2::mapper
