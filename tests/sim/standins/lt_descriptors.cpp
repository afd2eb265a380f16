#include "lt_descriptors.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "blas_types.h"

namespace standins::lt {
namespace {

constexpr uint64_t kMinusOne32 = 0xffffffffu;

// Sizes and defaults as cublasLt.h documents each attribute.
constexpr std::array kMatmulDescSpecs{
    AttributeSpec{CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, 4, CUBLAS_COMPUTE_32F},
    AttributeSpec{CUBLASLT_MATMUL_DESC_SCALE_TYPE, 4, CUDA_R_32F},
    AttributeSpec{CUBLASLT_MATMUL_DESC_POINTER_MODE, 4, CUBLASLT_POINTER_MODE_HOST},
    AttributeSpec{CUBLASLT_MATMUL_DESC_TRANSA, 4, CUBLAS_OP_N},
    AttributeSpec{CUBLASLT_MATMUL_DESC_TRANSB, 4, CUBLAS_OP_N},
    AttributeSpec{CUBLASLT_MATMUL_DESC_TRANSC, 4, CUBLAS_OP_N},
    AttributeSpec{CUBLASLT_MATMUL_DESC_FILL_MODE, 4, CUBLAS_FILL_MODE_FULL},
    AttributeSpec{CUBLASLT_MATMUL_DESC_EPILOGUE, 4, CUBLASLT_EPILOGUE_DEFAULT},
    AttributeSpec{CUBLASLT_MATMUL_DESC_BIAS_POINTER, 8, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, 8, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, 8, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, 8, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, 8, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE, 8, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, 4, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, 8, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, 8, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, 8, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, 8, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, 8, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, 4, kMinusOne32},
    AttributeSpec{CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER, 8, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER, 8, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_FAST_ACCUM, 1, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, 4, kMinusOne32},
    AttributeSpec{CUBLASLT_MATMUL_DESC_A_SCALE_MODE, 4, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_B_SCALE_MODE, 4, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_C_SCALE_MODE, 4, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_D_SCALE_MODE, 4, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_MODE, 4, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER, 8, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE, 4, 0},
    AttributeSpec{CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, 8, 0},
};

constexpr std::array kLayoutSpecs{
    AttributeSpec{CUBLASLT_MATRIX_LAYOUT_TYPE, 4, CUDA_R_32F},
    AttributeSpec{CUBLASLT_MATRIX_LAYOUT_ORDER, 4, CUBLASLT_ORDER_COL},
    AttributeSpec{CUBLASLT_MATRIX_LAYOUT_ROWS, 8, 0},
    AttributeSpec{CUBLASLT_MATRIX_LAYOUT_COLS, 8, 0},
    AttributeSpec{CUBLASLT_MATRIX_LAYOUT_LD, 8, 0},
    AttributeSpec{CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 4, 1},
    AttributeSpec{CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, 8, 0},
    AttributeSpec{CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, 8, 0},
    AttributeSpec{CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, 4, CUBLASLT_BATCH_MODE_STRIDED},
};

constexpr std::array kPreferenceSpecs{
    AttributeSpec{CUBLASLT_MATMUL_PREF_SEARCH_MODE, 4, CUBLASLT_SEARCH_BEST_FIT},
    AttributeSpec{CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, 8, 0},
    AttributeSpec{CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, 4, CUBLASLT_REDUCTION_SCHEME_MASK},
    AttributeSpec{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, 4, 256},
    AttributeSpec{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, 4, 256},
    AttributeSpec{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, 4, 256},
    AttributeSpec{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, 4, 256},
    AttributeSpec{CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT, 4, 0},  // float 0.0f
    AttributeSpec{CUBLASLT_MATMUL_PREF_IMPL_MASK, 8, ~uint64_t{0}},
};

constexpr std::array kAlgoConfigSpecs{
    AttributeSpec{CUBLASLT_ALGO_CONFIG_ID, 4, 0},
    AttributeSpec{CUBLASLT_ALGO_CONFIG_TILE_ID, 4, CUBLASLT_MATMUL_TILE_UNDEFINED},
    AttributeSpec{CUBLASLT_ALGO_CONFIG_SPLITK_NUM, 4, 1},
    AttributeSpec{CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, 4, CUBLASLT_REDUCTION_SCHEME_NONE},
    AttributeSpec{CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, 4, 0},
    AttributeSpec{CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, 4, 0},
    AttributeSpec{CUBLASLT_ALGO_CONFIG_STAGES_ID, 4, CUBLASLT_MATMUL_STAGES_UNDEFINED},
    AttributeSpec{CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, 2, 0},
    AttributeSpec{CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, 2, 0},
};

// The algo's 64 bytes: a tag, then one 32-bit word per configuration attribute (none is wider), in kAlgoConfigSpecs
// order, the ID first. cuBLASLt documents the structure as trivially serializable: it holds values, no pointers.
constexpr uint64_t kAlgoTag = 0x73696d2d616c676f;  // "sim-algo"
static_assert(sizeof(uint64_t) + kAlgoConfigSpecs.size() * sizeof(uint32_t) <= sizeof(cublasLtMatmulAlgo_t));

int algo_word(int attribute) {
  for (size_t i = 0; i < kAlgoConfigSpecs.size(); ++i)
    if (kAlgoConfigSpecs[i].id == attribute) return static_cast<int>(i);
  return -1;
}

uint32_t read_word(const cublasLtMatmulAlgo_t& algo, int word) {
  uint32_t value = 0;
  std::memcpy(&value, reinterpret_cast<const char*>(algo.data) + sizeof(uint64_t) + word * sizeof(uint32_t),
              sizeof value);
  return value;
}

void write_word(cublasLtMatmulAlgo_t& algo, int word, uint32_t value) {
  std::memcpy(reinterpret_cast<char*>(algo.data) + sizeof(uint64_t) + word * sizeof(uint32_t), &value, sizeof value);
}

template <typename Object, uint64_t Tag, typename Handle>
Object* object(Handle handle) {
  auto* candidate = reinterpret_cast<Object*>(handle);
  return candidate != nullptr && candidate->tag == Tag ? candidate : nullptr;
}

bool valid_op(int32_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }

char op_letter(int32_t op) { return op == CUBLAS_OP_N ? 'n' : op == CUBLAS_OP_T ? 't' : 'c'; }

// A layout as a matrix: its stored shape and strides.
struct Shape {
  cudaDataType type;
  int64_t rows, cols, ld, batch, batch_stride;
};

// What the simulator models of a layout: column-major, strided batches, interleaved (not planar) complex.
bool modelled_layout(const Layout& layout, std::string* unsupported) {
  if (layout.attributes.value<int32_t>(CUBLASLT_MATRIX_LAYOUT_ORDER) != CUBLASLT_ORDER_COL)
    *unsupported = "cublasLtMatmul with a matrix order other than CUBLASLT_ORDER_COL";
  else if (layout.attributes.value<uint32_t>(CUBLASLT_MATRIX_LAYOUT_BATCH_MODE) != CUBLASLT_BATCH_MODE_STRIDED)
    *unsupported = "cublasLtMatmul with pointer-array batches";
  else if (layout.attributes.value<int64_t>(CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET) != 0)
    *unsupported = "cublasLtMatmul with planar complex matrices";
  else
    return true;
  return false;
}

Shape shape(const Layout& layout) {
  const Attributes& a = layout.attributes;
  return Shape{static_cast<cudaDataType>(a.value<uint32_t>(CUBLASLT_MATRIX_LAYOUT_TYPE)),
               static_cast<int64_t>(a.value<uint64_t>(CUBLASLT_MATRIX_LAYOUT_ROWS)),
               static_cast<int64_t>(a.value<uint64_t>(CUBLASLT_MATRIX_LAYOUT_COLS)),
               a.value<int64_t>(CUBLASLT_MATRIX_LAYOUT_LD),
               a.value<int32_t>(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT),
               a.value<int64_t>(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET)};
}

gemm::Operand operand(const Shape& s, int32_t op) {
  bool transposed = op != CUBLAS_OP_N;
  return gemm::Operand{nullptr, s.type, transposed ? s.ld : 1, transposed ? 1 : s.ld, s.batch_stride, false};
}

// The epilogues the simulated kernel applies: bias, ReLU and GELU, alone or combined. Auxiliary outputs and
// gradients (the *_AUX, D* and BGRAD* epilogues) are not modelled.
bool epilogue(uint32_t value, gemm::Activation* activation, bool* bias) {
  switch (value) {
    case CUBLASLT_EPILOGUE_DEFAULT: *activation = gemm::Activation::none, *bias = false; return true;
    case CUBLASLT_EPILOGUE_RELU: *activation = gemm::Activation::relu, *bias = false; return true;
    case CUBLASLT_EPILOGUE_GELU: *activation = gemm::Activation::gelu, *bias = false; return true;
    case CUBLASLT_EPILOGUE_BIAS: *activation = gemm::Activation::none, *bias = true; return true;
    case CUBLASLT_EPILOGUE_RELU_BIAS: *activation = gemm::Activation::relu, *bias = true; return true;
    case CUBLASLT_EPILOGUE_GELU_BIAS: *activation = gemm::Activation::gelu, *bias = true; return true;
    default: return false;
  }
}

// FP8 scaling, amax and auxiliary outputs: set pointers the simulated kernel would have to honour.
bool scaling_requested(const Attributes& a) {
  for (int id : {CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                 CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER,
                 CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER,
                 CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER,
                 CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER})
    if (a.value<uint64_t>(id) != 0) return true;
  for (int id : {CUBLASLT_MATMUL_DESC_A_SCALE_MODE, CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
                 CUBLASLT_MATMUL_DESC_C_SCALE_MODE, CUBLASLT_MATMUL_DESC_D_SCALE_MODE,
                 CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_MODE, CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE})
    if (a.value<int32_t>(id) != 0) return true;
  return false;
}

}  // namespace

MatmulDesc::MatmulDesc() : attributes(kMatmulDescSpecs) {}
Layout::Layout() : attributes(kLayoutSpecs) {}
Preference::Preference() : attributes(kPreferenceSpecs) {}

MatmulDesc* matmul_desc(cublasLtMatmulDesc_t handle) { return object<MatmulDesc, kMatmulDescTag>(handle); }
Layout* layout(cublasLtMatrixLayout_t handle) { return object<Layout, kLayoutTag>(handle); }
Preference* preference(cublasLtMatmulPreference_t handle) { return object<Preference, kPreferenceTag>(handle); }

void init_algo(cublasLtMatmulAlgo_t* algo) {
  *algo = cublasLtMatmulAlgo_t{};
  algo->data[0] = kAlgoTag;
  for (size_t i = 0; i < kAlgoConfigSpecs.size(); ++i)
    write_word(*algo, static_cast<int>(i), static_cast<uint32_t>(kAlgoConfigSpecs[i].default_bits));
}

bool is_algo(const cublasLtMatmulAlgo_t* algo) {
  return algo != nullptr && algo->data[0] == kAlgoTag && read_word(*algo, algo_word(CUBLASLT_ALGO_CONFIG_ID)) == 0;
}

// The ID is read-only: cublasLtMatmulAlgoInit sets it (cublasLt.h).
cublasStatus_t set_algo_config(cublasLtMatmulAlgo_t* algo, int attribute, const void* buffer, size_t size) {
  int word = algo_word(attribute);
  if (algo == nullptr || word < 0 || attribute == CUBLASLT_ALGO_CONFIG_ID || buffer == nullptr ||
      size != kAlgoConfigSpecs[static_cast<size_t>(word)].size)
    return CUBLAS_STATUS_INVALID_VALUE;
  uint32_t value = 0;
  std::memcpy(&value, buffer, size);
  write_word(*algo, word, value);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t get_algo_config(const cublasLtMatmulAlgo_t* algo, int attribute, void* buffer, size_t size,
                               size_t* written) {
  int word = algo_word(attribute);
  if (algo == nullptr || word < 0) return CUBLAS_STATUS_INVALID_VALUE;
  size_t needed = kAlgoConfigSpecs[static_cast<size_t>(word)].size;
  if (size == 0) {
    if (written == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *written = needed;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (buffer == nullptr || size != needed) return CUBLAS_STATUS_INVALID_VALUE;
  uint32_t value = read_word(*algo, word);
  std::memcpy(buffer, &value, size);
  if (written != nullptr) *written = size;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t plan(const MatmulDesc& desc, const Layout& a_layout, const Layout& b_layout, const Layout& c_layout,
                    const Layout& d_layout, gemm::Problem* problem, std::string* unsupported) {
  const Attributes& attributes = desc.attributes;
  auto compute = static_cast<cublasComputeType_t>(attributes.value<int32_t>(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE));
  auto scale_type = static_cast<cudaDataType>(attributes.value<int32_t>(CUBLASLT_MATMUL_DESC_SCALE_TYPE));
  int32_t transa = attributes.value<int32_t>(CUBLASLT_MATMUL_DESC_TRANSA);
  int32_t transb = attributes.value<int32_t>(CUBLASLT_MATMUL_DESC_TRANSB);
  if (!valid_op(transa) || !valid_op(transb)) return CUBLAS_STATUS_INVALID_VALUE;

  // Shapes: op(A) m x k, op(B) k x n, C and D m x n, each with a leading dimension covering its rows.
  Shape a = shape(a_layout), b = shape(b_layout), c = shape(c_layout), d = shape(d_layout);
  int64_t m = transa == CUBLAS_OP_N ? a.rows : a.cols, k = transa == CUBLAS_OP_N ? a.cols : a.rows;
  int64_t b_rows = transb == CUBLAS_OP_N ? b.rows : b.cols, n = transb == CUBLAS_OP_N ? b.cols : b.rows;
  if (b_rows != k || c.rows != m || c.cols != n || d.rows != m || d.cols != n) return CUBLAS_STATUS_INVALID_VALUE;
  for (const Shape* s : {&a, &b, &c, &d})
    if (s->rows < 0 || s->cols < 0 || s->ld < std::max<int64_t>(1, s->rows) || s->batch != d.batch || s->batch < 1)
      return CUBLAS_STATUS_INVALID_VALUE;

  for (const Layout* l : {&a_layout, &b_layout, &c_layout, &d_layout})
    if (!modelled_layout(*l, unsupported)) return CUBLAS_STATUS_NOT_SUPPORTED;
  // Alpha and beta in the compute type's scale type; half compute may also take float scalars.
  ComputeMode mode;
  bool types_modelled = modelled_combination(compute, a.type, b.type, c.type, &mode) && d.type == c.type;
  if (!types_modelled ||
      !(scale_type == mode.scale_type || (is_float16_compute(compute) && scale_type == CUDA_R_32F))) {
    *unsupported = "cublasLtMatmul with these compute, scale and matrix types";
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (attributes.value<int32_t>(CUBLASLT_MATMUL_DESC_TRANSC) != CUBLAS_OP_N ||
      attributes.value<int32_t>(CUBLASLT_MATMUL_DESC_FILL_MODE) != CUBLAS_FILL_MODE_FULL) {
    *unsupported = "cublasLtMatmul with a transposed or triangular C";
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  int32_t pointer_mode = attributes.value<int32_t>(CUBLASLT_MATMUL_DESC_POINTER_MODE);
  if (pointer_mode != CUBLASLT_POINTER_MODE_HOST && pointer_mode != CUBLASLT_POINTER_MODE_DEVICE) {
    *unsupported = "cublasLtMatmul with alpha/beta vectors";
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  gemm::Activation activation = gemm::Activation::none;
  bool bias = false;
  if (!epilogue(attributes.value<uint32_t>(CUBLASLT_MATMUL_DESC_EPILOGUE), &activation, &bias)) {
    *unsupported = "cublasLtMatmul with an epilogue other than bias, ReLU or GELU";
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (scaling_requested(attributes)) {
    *unsupported = "cublasLtMatmul with scaling, amax or auxiliary-output pointers";
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  int32_t bias_type = attributes.value<int32_t>(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE);
  if (bias && bias_type != -1 && !gemm::modelled_type(static_cast<cudaDataType>(bias_type))) {
    *unsupported = "cublasLtMatmul with a bias of this type";
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }

  gemm::Problem& p = *problem;
  p = gemm::Problem{};
  p.m = m, p.n = n, p.k = k, p.batch = d.batch;
  p.a = operand(a, transa);
  p.b = operand(b, transb);
  p.c = operand(c, CUBLAS_OP_N);
  p.d = operand(d, CUBLAS_OP_N);
  p.scale_type = scale_type;
  p.accumulate_in_double = mode.accumulate_in_double;
  p.activation = activation;
  // The bias pointer itself is the caller's to fill in; its type defaults to D's (cublasLt.h).
  p.bias_type = bias_type == -1 ? d.type : static_cast<cudaDataType>(bias_type);
  p.bias_batch_stride = attributes.value<int64_t>(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE);
  p.op_a = op_letter(transa), p.op_b = op_letter(transb);
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace standins::lt
