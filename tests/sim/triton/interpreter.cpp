#include "interpreter.h"

#include <cmath>
#include <cstring>
#include <set>

#include "layout.h"
#include "ops.h"

namespace simtriton {

namespace {

enum Handler {
  kElementwise,
  kConstant,
  kProgramId,
  kNumPrograms,
  kMakeRange,
  kSplat,
  kBroadcast,
  kSameData,  // expand_dims, reshape, convert_layout: the elements in row-major order do not change
  kTrans,
  kJoin,
  kSplit,
  kLoad,
  kStore,
  kAtomicRmw,
  kAtomicCas,
  kAssert,
  kReduce,
  kScan,
  kFor,
  kIf,
  kWhile,
  kTerminator,  // tt.return, scf.yield, scf.condition, tt.reduce.return, tt.scan.return: hand their operands on
};

bool prepare_block(Module* module, Block* block, std::string* error);

bool prepare_op(Module* module, Op* op, std::string* error) {
  const std::string& n = op->name;
  const Function& f = module->func;
  std::vector<const Type*> types;
  for (int slot : op->operands) types.push_back(f.slot_types[slot]);
  auto where = [&] { return " (TTGIR line " + std::to_string(op->line) + ")"; };

  std::string why;
  switch (make_elementwise(*op, types, &op->fn, &why)) {
    case Elementwise::Yes: op->handler = kElementwise; return true;
    case Elementwise::Unsupported: *error = why + where(); return false;
    case Elementwise::No: break;
  }
  static const std::pair<const char*, Handler> table[] = {
      {"arith.constant", kConstant},   {"tt.get_program_id", kProgramId}, {"tt.get_num_programs", kNumPrograms},
      {"tt.make_range", kMakeRange},   {"tt.splat", kSplat},              {"tt.broadcast", kBroadcast},
      {"tt.expand_dims", kSameData},   {"tt.reshape", kSameData},         {"ttg.convert_layout", kSameData},
      {"tt.trans", kTrans},            {"tt.join", kJoin},                {"tt.split", kSplit},
      {"tt.load", kLoad},              {"tt.store", kStore},              {"tt.atomic_rmw", kAtomicRmw},
      {"tt.atomic_cas", kAtomicCas},   {"tt.assert", kAssert},            {"tt.reduce", kReduce},
      {"scf.for", kFor},               {"scf.if", kIf},                   {"scf.while", kWhile},
      {"tt.return", kTerminator},      {"scf.yield", kTerminator},        {"scf.condition", kTerminator},
      {"tt.reduce.return", kTerminator}, {"tt.scan", kScan},            {"tt.scan.return", kTerminator}};
  for (const auto& [name, handler] : table) {
    if (n == name) op->handler = handler;
  }
  if (op->handler < 0) {
    *error = "unsupported op " + n + where();
    return false;
  }
  if (op->handler == kConstant) {
    if (op->result_types.size() != 1) {
      *error = "arith.constant without one result" + where();
      return false;
    }
    op->constant.resize(1);
    if (!parse_constant(op->literal, op->result_types[0].elem.kind, &op->constant[0], &why)) {
      *error = why + where();
      return false;
    }
  }
  if (op->handler == kAssert) {
    if (!resolve_location(*module, op->loc, &op->assert_file, &op->assert_line)) {
      op->assert_file = "unknown";  // what Triton's lowering passes without a file location
      op->assert_line = 0;
    }
  }
  if (op->handler == kAtomicRmw) {
    static const std::set<std::string> kinds = {"add", "fadd", "max", "min", "umax", "umin", "xchg",
                                                "and", "or",   "xor"};
    if (op->keywords.empty() || !kinds.count(op->keywords[0])) {
      *error = "tt.atomic_rmw " + (op->keywords.empty() ? std::string("?") : op->keywords[0]) +
               " is not supported" + where();
      return false;
    }
  }
  for (Block& region : op->regions) {
    if (!prepare_block(module, &region, error)) return false;
  }
  return true;
}

bool prepare_block(Module* module, Block* block, std::string* error) {
  for (auto& op : block->ops) {
    if (!prepare_op(module, op.get(), error)) return false;
  }
  return true;
}

// Row-major strides and index <-> coordinates.
std::vector<int64_t> coordinates(int64_t index, const std::vector<int64_t>& shape) {
  std::vector<int64_t> coord(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    coord[d] = index % shape[d];
    index /= shape[d];
  }
  return coord;
}

int64_t linear(const std::vector<int64_t>& coord, const std::vector<int64_t>& shape) {
  int64_t index = 0;
  for (size_t d = 0; d < shape.size(); ++d) index = index * shape[d] + coord[d];
  return index;
}

Elem read_elem(const void* address, Kind kind) {
  Elem e;
  e.i = 0;
  switch (kind) {
    case Kind::I1: { uint8_t v; std::memcpy(&v, address, 1); e.i = v != 0; break; }
    case Kind::I8: { int8_t v; std::memcpy(&v, address, 1); e.i = v; break; }
    case Kind::I16: { int16_t v; std::memcpy(&v, address, 2); e.i = v; break; }
    case Kind::I32: { int32_t v; std::memcpy(&v, address, 4); e.i = v; break; }
    case Kind::I64: case Kind::Ptr: std::memcpy(&e.i, address, 8); break;
    case Kind::F16: { uint16_t v; std::memcpy(&v, address, 2); e.f = half_bits_to_double(v); break; }
    case Kind::BF16: { uint16_t v; std::memcpy(&v, address, 2); e.f = bf16_bits_to_double(v); break; }
    case Kind::F32: { float v; std::memcpy(&v, address, 4); e.f = v; break; }
    case Kind::F64: std::memcpy(&e.f, address, 8); break;
  }
  return e;
}

void write_elem(void* address, Kind kind, Elem e) {
  switch (kind) {
    case Kind::I1: { uint8_t v = e.i != 0; std::memcpy(address, &v, 1); break; }
    case Kind::I8: { auto v = static_cast<int8_t>(e.i); std::memcpy(address, &v, 1); break; }
    case Kind::I16: { auto v = static_cast<int16_t>(e.i); std::memcpy(address, &v, 2); break; }
    case Kind::I32: { auto v = static_cast<int32_t>(e.i); std::memcpy(address, &v, 4); break; }
    case Kind::I64: case Kind::Ptr: std::memcpy(address, &e.i, 8); break;
    case Kind::F16: { uint16_t v = double_to_half_bits(e.f); std::memcpy(address, &v, 2); break; }
    case Kind::BF16: { uint16_t v = double_to_bf16_bits(e.f); std::memcpy(address, &v, 2); break; }
    case Kind::F32: { auto v = static_cast<float>(e.f); std::memcpy(address, &v, 4); break; }
    case Kind::F64: std::memcpy(address, &e.f, 8); break;
  }
}

class Program {
 public:
  Program(const Module& module, const DeviceHooks& hooks, std::string* error)
      : m_(module), hooks_(hooks), error_(error), slots_(module.func.slot_types.size()) {}

  std::vector<Value>& slots() { return slots_; }
  void set_pid(dim3 pid, dim3 grid) {
    pid_ = pid;
    grid_ = grid;
  }

  Outcome run_block(const Block& block, std::vector<Value>* terminator) {
    for (const auto& op : block.ops) {
      Outcome outcome = run_op(*op, terminator);
      if (outcome != Outcome::Completed) return outcome;
    }
    return Outcome::Completed;
  }

 private:
  const Value& in(const Op& op, size_t i) const { return slots_[op.operands[i]]; }
  Value& out(const Op& op, size_t i = 0) {
    Value& v = slots_[op.results[i]];
    v.type = &op.result_types[i];
    v.e.resize(static_cast<size_t>(op.result_types[i].numel()));
    return v;
  }
  Outcome fail(const Op& op, const std::string& why) {
    *error_ = op.name + ": " + why + " (TTGIR line " + std::to_string(op.line) + ")";
    return Outcome::Error;
  }
  bool accessible(const void* address, size_t bytes) const {
    return !hooks_.accessible || hooks_.accessible(address, bytes);
  }
  Outcome fault() {
    if (hooks_.fault) hooks_.fault(700);  // CUDA_ERROR_ILLEGAL_ADDRESS
    return Outcome::Stopped;
  }
  static bool active(const Value* mask, size_t i) { return mask == nullptr || mask->e[mask->e.size() == 1 ? 0 : i].i; }
  static Elem at(const Value& v, size_t i) { return v.e[v.e.size() == 1 ? 0 : i]; }

  Outcome run_op(const Op& op, std::vector<Value>* terminator) {
    switch (op.handler) {
      case kElementwise: return elementwise(op);
      case kConstant: {
        Value& r = out(op);
        std::fill(r.e.begin(), r.e.end(), op.constant[0]);
        return Outcome::Completed;
      }
      case kProgramId:
      case kNumPrograms: {
        dim3 source = op.handler == kProgramId ? pid_ : grid_;
        std::string axis = op.keywords.empty() ? "x" : op.keywords[0];
        long long numbered = -1;
        if (axis != "x" && axis != "y" && axis != "z" && attribute_int(op.attributes, "axis", &numbered))
          axis = std::string(1, static_cast<char>('x' + numbered));
        out(op).e[0].i = axis == "z" ? source.z : axis == "y" ? source.y : source.x;
        return Outcome::Completed;
      }
      case kMakeRange: {
        long long start = 0;
        attribute_int(op.attributes, "start", &start);
        Value& r = out(op);
        for (size_t i = 0; i < r.e.size(); ++i)
          r.e[i].i = wrap_int(r.type->elem.kind, start + static_cast<long long>(i));
        return Outcome::Completed;
      }
      case kSplat: {
        Elem v = in(op, 0).e[0];
        Value& r = out(op);
        std::fill(r.e.begin(), r.e.end(), v);
        return Outcome::Completed;
      }
      case kBroadcast: return broadcast(op);
      case kSameData: {
        std::vector<Elem> data = in(op, 0).e;
        Value& r = out(op);
        if (data.size() != r.e.size()) return fail(op, "changes the number of elements");
        r.e = std::move(data);
        return Outcome::Completed;
      }
      case kTrans: return trans(op);
      case kJoin: {
        const Value &a = in(op, 0), &b = in(op, 1);
        Value& r = out(op);
        for (size_t i = 0; i < a.e.size(); ++i) {
          r.e[2 * i] = a.e[i];
          r.e[2 * i + 1] = b.e[i];
        }
        return Outcome::Completed;
      }
      case kSplit: {
        std::vector<Elem> data = in(op, 0).e;
        Value& a = out(op, 0);
        Value& b = out(op, 1);
        for (size_t i = 0; i < a.e.size(); ++i) {
          a.e[i] = data[2 * i];
          b.e[i] = data[2 * i + 1];
        }
        return Outcome::Completed;
      }
      case kLoad: return load(op);
      case kStore: return store(op);
      case kAtomicRmw: return atomic_rmw(op);
      case kAtomicCas: return atomic_cas(op);
      case kAssert: return assert_op(op);
      case kReduce: return reduce(op);
      case kScan: return scan(op);
      case kFor: return for_op(op);
      case kIf: return if_op(op);
      case kWhile: return while_op(op);
      case kTerminator:
        if (terminator != nullptr) {
          terminator->clear();
          for (size_t i = 0; i < op.operands.size(); ++i) terminator->push_back(in(op, i));
        }
        return Outcome::Completed;
      default: return fail(op, "not prepared");
    }
  }

  Outcome elementwise(const Op& op) {
    size_t arity = op.operands.size();
    if (arity > 8) return fail(op, "too many operands");
    const Value* ins[8];
    for (size_t k = 0; k < arity; ++k) ins[k] = &in(op, k);
    // SSA: the result's slot is none of the operands', so resizing it leaves them in place.
    Value& r = out(op);
    Elem args[8];
    for (size_t i = 0; i < r.e.size(); ++i) {
      for (size_t k = 0; k < arity; ++k) args[k] = at(*ins[k], i);
      r.e[i] = op.fn(args);
    }
    return Outcome::Completed;
  }

  Outcome broadcast(const Op& op) {
    const Value& a = in(op, 0);
    const std::vector<int64_t>& from = a.type->shape;
    Value& r = out(op);
    const std::vector<int64_t>& to = r.type->shape;
    if (from.size() != to.size()) return fail(op, "changes the rank");
    for (size_t i = 0; i < r.e.size(); ++i) {
      std::vector<int64_t> c = coordinates(static_cast<int64_t>(i), to);
      for (size_t d = 0; d < c.size(); ++d)
        if (from[d] == 1) c[d] = 0;
      r.e[i] = a.e[static_cast<size_t>(linear(c, from))];
    }
    return Outcome::Completed;
  }

  Outcome trans(const Op& op) {
    std::vector<long long> order;
    if (!attribute_ints(op.attributes, "order", &order)) return fail(op, "without an order");
    const Value& a = in(op, 0);
    Value& r = out(op);
    const std::vector<int64_t>& from = a.type->shape;
    if (order.size() != from.size()) return fail(op, "order and rank disagree");
    for (size_t i = 0; i < r.e.size(); ++i) {
      std::vector<int64_t> c = coordinates(static_cast<int64_t>(i), r.type->shape), src(from.size());
      for (size_t d = 0; d < order.size(); ++d) src[static_cast<size_t>(order[d])] = c[d];
      r.e[i] = a.e[static_cast<size_t>(linear(src, from))];
    }
    return Outcome::Completed;
  }

  // tt.load %ptr[, %mask[, %other]]: masked-off elements never touch memory and take `other` (0 without one).
  Outcome load(const Op& op) {
    const Value& ptr = in(op, 0);
    const Value* mask = op.operands.size() > 1 ? &in(op, 1) : nullptr;
    const Value* other = op.operands.size() > 2 ? &in(op, 2) : nullptr;
    Value& r = out(op);
    Kind kind = r.type->elem.kind;
    size_t size = byte_size(kind);
    for (size_t i = 0; i < r.e.size(); ++i) {
      if (active(mask, i) && !accessible(reinterpret_cast<const void*>(at(ptr, i).i), size)) return fault();
    }
    for (size_t i = 0; i < r.e.size(); ++i) {
      if (active(mask, i)) {
        r.e[i] = read_elem(reinterpret_cast<const void*>(at(ptr, i).i), kind);
      } else if (other != nullptr) {
        r.e[i] = at(*other, i);
      } else {
        r.e[i].i = 0;
      }
    }
    return Outcome::Completed;
  }

  // tt.store %ptr, %value[, %mask]; every address is checked before any is written (a fault stops the kernel).
  Outcome store(const Op& op) {
    const Value& ptr = in(op, 0);
    const Value& value = in(op, 1);
    const Value* mask = op.operands.size() > 2 ? &in(op, 2) : nullptr;
    Kind kind = value.type->elem.kind;
    size_t size = byte_size(kind);
    size_t n = std::max(ptr.e.size(), value.e.size());
    for (size_t i = 0; i < n; ++i) {
      if (active(mask, i) && !accessible(reinterpret_cast<const void*>(at(ptr, i).i), size)) return fault();
    }
    for (size_t i = 0; i < n; ++i) {
      if (active(mask, i)) write_elem(reinterpret_cast<void*>(at(ptr, i).i), kind, at(value, i));
    }
    return Outcome::Completed;
  }

  // tt.atomic_rmw KIND, sem, scope, %ptr, %val[, %mask]: each active element, in order, reads the old value (the
  // result), combines and writes. Memory ordering and scope mean nothing to one sequential program.
  Outcome atomic_rmw(const Op& op) {
    const Value& ptr = in(op, 0);
    const Value& val = in(op, 1);
    const Value* mask = op.operands.size() > 2 ? &in(op, 2) : nullptr;
    Value& r = out(op);
    Kind kind = r.type->elem.kind;
    size_t size = byte_size(kind);
    const std::string& what = op.keywords[0];
    for (size_t i = 0; i < r.e.size(); ++i) {
      if (active(mask, i) && !accessible(reinterpret_cast<const void*>(at(ptr, i).i), size)) return fault();
    }
    for (size_t i = 0; i < r.e.size(); ++i) {
      if (!active(mask, i)) {
        r.e[i].i = 0;
        continue;
      }
      void* address = reinterpret_cast<void*>(at(ptr, i).i);
      Elem old = read_elem(address, kind), v = at(val, i), next = v;
      if (is_float(kind)) {
        if (what == "fadd") next.f = round_float(kind, kind == Kind::F64 ? old.f + v.f
                                                                         : static_cast<float>(old.f) + static_cast<float>(v.f));
        else if (what == "max") next.f = std::fmax(old.f, v.f);
        else if (what == "min") next.f = std::fmin(old.f, v.f);
      } else {
        int64_t a = signed_of(kind, old.i), b = signed_of(kind, v.i);
        uint64_t ua = unsigned_of(kind, old.i), ub = unsigned_of(kind, v.i);
        if (what == "add") next.i = wrap_int(kind, static_cast<int64_t>(ua + ub));
        else if (what == "max") next.i = a > b ? old.i : v.i;
        else if (what == "min") next.i = a < b ? old.i : v.i;
        else if (what == "umax") next.i = ua > ub ? old.i : v.i;
        else if (what == "umin") next.i = ua < ub ? old.i : v.i;
        else if (what == "and") next.i = wrap_int(kind, static_cast<int64_t>(ua & ub));
        else if (what == "or") next.i = wrap_int(kind, static_cast<int64_t>(ua | ub));
        else if (what == "xor") next.i = wrap_int(kind, static_cast<int64_t>(ua ^ ub));
        else if (what == "fadd") return fail(op, "fadd on integers");
      }
      write_elem(address, kind, next);
      r.e[i] = old;
    }
    return Outcome::Completed;
  }

  Outcome atomic_cas(const Op& op) {
    const Value& ptr = in(op, 0);
    const Value& cmp = in(op, 1);
    const Value& val = in(op, 2);
    Value& r = out(op);
    Kind kind = r.type->elem.kind;
    size_t size = byte_size(kind);
    for (size_t i = 0; i < r.e.size(); ++i) {
      if (!accessible(reinterpret_cast<const void*>(at(ptr, i).i), size)) return fault();
    }
    for (size_t i = 0; i < r.e.size(); ++i) {
      void* address = reinterpret_cast<void*>(at(ptr, i).i);
      Elem old = read_elem(address, kind);
      // Compared bit for bit, as the hardware's atom.cas does.
      Elem expected = at(cmp, i);
      bool equal = is_float(kind) ? std::memcmp(&old.f, &expected.f, sizeof(double)) == 0 : old.i == expected.i;
      if (equal) write_elem(address, kind, at(val, i));
      r.e[i] = old;
    }
    return Outcome::Completed;
  }

  // tt.assert: if any element of the condition is false, every thread holding a false element (per the operand's
  // layout) reports, in ascending order, and the kernel stops: the device traps after __assertfail.
  Outcome assert_op(const Op& op) {
    const Value& cond = in(op, 0);
    const Type& type = *cond.type;
    std::set<unsigned> threads;
    bool failed = false;
    unsigned block_threads = m_.num_warps * m_.threads_per_warp;
    for (size_t i = 0; i < cond.e.size(); ++i) {
      if (cond.e[i].i) continue;
      failed = true;
      if (!type.tensor) {
        // A scalar is computed by every thread of the block, so every thread fails.
        for (unsigned t = 0; t < block_threads; ++t) threads.insert(t);
        break;
      }
      if (!type.layout) {
        return fail(op, "its operand has no usable layout (" +
                            (type.encoding_text.empty() ? std::string("TTIR, not TTGIR") : type.encoding_text) +
                            "): the failing threads cannot be named");
      }
      for (unsigned t : threads_holding(*type.layout, type.shape, coordinates(static_cast<int64_t>(i), type.shape),
                                        m_.threads_per_warp))
        threads.insert(t);
    }
    if (!failed) return Outcome::Completed;
    for (unsigned t : threads) {
      AssertFailure failure;
      failure.file = op.assert_file;
      failure.line = op.assert_line;
      failure.message = op.text;
      failure.block = pid_;
      failure.thread = dim3(t, 0, 0);
      if (hooks_.assert_failed) hooks_.assert_failed(failure);
    }
    return Outcome::Stopped;
  }

  // What tt.reduce and tt.scan share: the axis, a combine region taking two tuples of the operands' elements, the
  // operands. False when the op is not of that shape.
  bool combine_along_axis(const Op& op, long long* axis, std::vector<const Value*>* inputs) {
    size_t count = op.operands.size();
    if (!attribute_int(op.attributes, "axis", axis) || op.regions.size() != 1 ||
        op.regions[0].args.size() != 2 * count || op.results.size() != count)
      return false;
    for (size_t k = 0; k < count; ++k) inputs->push_back(&in(op, k));
    return true;
  }

  // tt.reduce: the combine region folds the elements along `axis`. For floats the order matters; this combines
  // pairwise in a tree (neighbours first), the shape of the device's shuffle reductions, not a left-to-right sum.
  Outcome reduce(const Op& op) {
    long long axis = 0;
    std::vector<const Value*> inputs;
    if (!combine_along_axis(op, &axis, &inputs)) return fail(op, "without an axis and a combine region");
    size_t count = inputs.size();
    const Block& region = op.regions[0];
    const std::vector<int64_t>& shape = inputs[0]->type->shape;
    std::vector<int64_t> kept(shape);
    int64_t length = shape[static_cast<size_t>(axis)];
    kept.erase(kept.begin() + axis);
    int64_t outputs = 1;
    for (int64_t d : kept) outputs *= d;
    std::vector<std::vector<Elem>> results(count, std::vector<Elem>(static_cast<size_t>(outputs)));
    std::vector<std::vector<Elem>> level;  // level[j]: the tuple (one element per operand) of one partial result
    std::vector<Value> yielded;
    for (int64_t o = 0; o < outputs; ++o) {
      std::vector<int64_t> c = coordinates(o, kept);
      c.insert(c.begin() + axis, 0);
      level.assign(static_cast<size_t>(length), std::vector<Elem>(count));
      for (int64_t j = 0; j < length; ++j) {
        c[static_cast<size_t>(axis)] = j;
        int64_t index = linear(c, shape);
        for (size_t k = 0; k < count; ++k) level[static_cast<size_t>(j)][k] = inputs[k]->e[static_cast<size_t>(index)];
      }
      while (level.size() > 1) {
        std::vector<std::vector<Elem>> next;
        for (size_t j = 0; j < level.size(); j += 2) {
          if (j + 1 == level.size()) {
            next.push_back(level[j]);
            continue;
          }
          for (size_t k = 0; k < count; ++k) {
            set_scalar(region.args[k], level[j][k]);
            set_scalar(region.args[count + k], level[j + 1][k]);
          }
          Outcome outcome = run_block(region, &yielded);
          if (outcome != Outcome::Completed) return outcome;
          if (yielded.size() != count) return fail(op, "combine region yields the wrong number of values");
          std::vector<Elem> tuple(count);
          for (size_t k = 0; k < count; ++k) tuple[k] = yielded[k].e[0];
          next.push_back(std::move(tuple));
        }
        level = std::move(next);
      }
      for (size_t k = 0; k < count; ++k) results[k][static_cast<size_t>(o)] = level[0][k];
    }
    for (size_t k = 0; k < count; ++k) {
      Value& r = out(op, k);
      r.e = std::move(results[k]);
    }
    return Outcome::Completed;
  }

  // tt.scan: the inclusive prefix of the combine region along `axis` (from the end with reverse = true), each
  // result the combination of the previous result with the next element, left to right. (The device combines in a
  // tree within warps; for integer sums, the usual case in Inductor's cumsum, the order does not matter.)
  Outcome scan(const Op& op) {
    long long axis = 0;
    long long reverse = 0;
    std::vector<const Value*> inputs;
    if (!combine_along_axis(op, &axis, &inputs)) return fail(op, "without an axis and a combine region");
    attribute_int(op.attributes, "reverse", &reverse);
    size_t count = inputs.size();
    const Block& region = op.regions[0];
    const std::vector<int64_t>& shape = inputs[0]->type->shape;
    std::vector<int64_t> others(shape);
    int64_t length = shape[static_cast<size_t>(axis)];
    others.erase(others.begin() + axis);
    int64_t lines = 1;
    for (int64_t d : others) lines *= d;
    std::vector<std::vector<Elem>> results(count, std::vector<Elem>(inputs[0]->e.size()));
    std::vector<Value> yielded;
    for (int64_t o = 0; o < lines; ++o) {
      std::vector<int64_t> c = coordinates(o, others);
      c.insert(c.begin() + axis, 0);
      std::vector<Elem> running(count);
      for (int64_t step = 0; step < length; ++step) {
        c[static_cast<size_t>(axis)] = reverse != 0 ? length - 1 - step : step;
        size_t index = static_cast<size_t>(linear(c, shape));
        if (step == 0) {
          for (size_t k = 0; k < count; ++k) running[k] = inputs[k]->e[index];
        } else {
          for (size_t k = 0; k < count; ++k) {
            set_scalar(region.args[k], running[k]);
            set_scalar(region.args[count + k], inputs[k]->e[index]);
          }
          Outcome outcome = run_block(region, &yielded);
          if (outcome != Outcome::Completed) return outcome;
          if (yielded.size() != count) return fail(op, "combine region yields the wrong number of values");
          for (size_t k = 0; k < count; ++k) running[k] = yielded[k].e[0];
        }
        for (size_t k = 0; k < count; ++k) results[k][index] = running[k];
      }
    }
    for (size_t k = 0; k < count; ++k) out(op, k).e = std::move(results[k]);
    return Outcome::Completed;
  }

  void set_scalar(int slot, Elem e) {
    Value& v = slots_[slot];
    v.type = m_.func.slot_types[slot];
    v.e.assign(1, e);
  }

  void set_args(const Block& block, const std::vector<Value>& values, size_t from) {
    for (size_t i = 0; i + from < block.args.size() && i < values.size(); ++i) {
      int slot = block.args[i + from];
      slots_[slot].type = m_.func.slot_types[slot];
      slots_[slot].e = values[i].e;
    }
  }

  void set_results(const Op& op, const std::vector<Value>& values) {
    for (size_t i = 0; i < op.results.size() && i < values.size(); ++i) {
      Value& r = out(op, i);
      r.e = values[i].e;
    }
  }

  // scf.for: lb, ub, step, then the iter_args' initial values; iterates while iv < ub (signed unless `unsigned`).
  Outcome for_op(const Op& op) {
    const Block& body = op.regions[0];
    Kind kind = m_.func.slot_types[body.args[0]]->elem.kind;
    bool is_unsigned = !op.keywords.empty() && op.keywords[0] == "unsigned";
    int64_t iv = in(op, 0).e[0].i, ub = in(op, 1).e[0].i, step = in(op, 2).e[0].i;
    if ((is_unsigned ? unsigned_of(kind, step) : static_cast<uint64_t>(signed_of(kind, step))) == 0 ||
        (!is_unsigned && signed_of(kind, step) < 0))
      return fail(op, "a step that is not positive");
    std::vector<Value> carried;
    for (size_t i = 3; i < op.operands.size(); ++i) carried.push_back(in(op, i));
    std::vector<Value> yielded;
    while (is_unsigned ? unsigned_of(kind, iv) < unsigned_of(kind, ub) : signed_of(kind, iv) < signed_of(kind, ub)) {
      set_scalar(body.args[0], Elem{iv});
      set_args(body, carried, 1);
      Outcome outcome = run_block(body, &yielded);
      if (outcome != Outcome::Completed) return outcome;
      carried = yielded;
      int64_t next = wrap_int(kind, static_cast<int64_t>(static_cast<uint64_t>(iv) + static_cast<uint64_t>(step)));
      // A step past the type's end wraps: the loop is over.
      if (is_unsigned ? unsigned_of(kind, next) <= unsigned_of(kind, iv) : signed_of(kind, next) <= signed_of(kind, iv))
        break;
      iv = next;
    }
    set_results(op, carried);
    return Outcome::Completed;
  }

  Outcome if_op(const Op& op) {
    bool cond = in(op, 0).e[0].i != 0;
    if (!cond && op.regions.size() < 2) return Outcome::Completed;
    std::vector<Value> yielded;
    Outcome outcome = run_block(op.regions[cond ? 0 : 1], &yielded);
    if (outcome != Outcome::Completed) return outcome;
    set_results(op, yielded);
    return Outcome::Completed;
  }

  // scf.while: the before region ends in scf.condition(%c) %args: while %c, the after region runs on %args and
  // yields the next arguments of the before region; otherwise %args are the results.
  Outcome while_op(const Op& op) {
    std::vector<Value> carried;
    for (size_t i = 0; i < op.operands.size(); ++i) carried.push_back(in(op, i));
    std::vector<Value> condition, yielded;
    while (true) {
      set_args(op.regions[0], carried, 0);
      Outcome outcome = run_block(op.regions[0], &condition);
      if (outcome != Outcome::Completed) return outcome;
      if (condition.empty()) return fail(op, "without a condition");
      std::vector<Value> args(condition.begin() + 1, condition.end());
      if (!condition[0].e[0].i) {
        set_results(op, args);
        return Outcome::Completed;
      }
      set_args(op.regions[1], args, 0);
      outcome = run_block(op.regions[1], &yielded);
      if (outcome != Outcome::Completed) return outcome;
      carried = yielded;
    }
  }

  const Module& m_;
  const DeviceHooks& hooks_;
  std::string* error_;
  std::vector<Value> slots_;
  dim3 pid_, grid_;
};

}  // namespace

bool prepare_module(Module* module, std::string* error) { return prepare_block(module, &module->func.body, error); }

Outcome run_grid(const Module& module, void* const* args, dim3 grid, const DeviceHooks& hooks, std::string* error) {
  Program program(module, hooks, error);
  const Function& f = module.func;
  // Parameters: scalars read from their bytes (pointers as addresses).
  for (size_t i = 0; i < f.params.size(); ++i) {
    int slot = f.params[i];
    const Type* type = f.slot_types[slot];
    if (type->tensor) {
      *error = "a tensor parameter is not supported";
      return Outcome::Error;
    }
    Value& v = program.slots()[slot];
    v.type = type;
    v.e.assign(1, read_elem(args[i], type->elem.kind));
  }
  for (unsigned z = 0; z < grid.z; ++z) {
    for (unsigned y = 0; y < grid.y; ++y) {
      for (unsigned x = 0; x < grid.x; ++x) {
        program.set_pid(dim3(x, y, z), grid);
        Outcome outcome = program.run_block(f.body, nullptr);
        if (outcome != Outcome::Completed) return outcome;
      }
    }
  }
  return Outcome::Completed;
}

}  // namespace simtriton
