#include "ir_text.h"

#include <cctype>
#include <cstdlib>

#include "layout.h"

namespace simtriton {

namespace {

bool name_char(char c) {
  // MLIR's suffix-id: letters, digits and $ . _ - (LangRef, "Identifiers and keywords").
  return std::isalnum(static_cast<unsigned char>(c)) || c == '$' || c == '.' || c == '_' || c == '-';
}

// MLIR prints a string attribute with \" \\ and two-hex-digit escapes (\0A) for other bytes.
std::string unescape(std::string_view raw) {
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '\\' || i + 1 >= raw.size()) {
      out += raw[i];
    } else if (i + 2 < raw.size() && std::isxdigit(static_cast<unsigned char>(raw[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(raw[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(raw.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += raw[++i];
    }
  }
  return out;
}

// The end (one past the closer) of the bracketed text opening at `at`, skipping quoted strings.
size_t match_bracket(std::string_view s, size_t at) {
  int depth = 0;
  for (size_t i = at; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') {
      for (++i; i < s.size() && s[i] != '"'; ++i)
        if (s[i] == '\\') ++i;
    } else if (c == '(' || c == '[' || c == '{' || c == '<') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}' || (c == '>' && !(i > 0 && s[i - 1] == '-'))) {
      if (--depth == 0) return i + 1;
    }
  }
  return std::string_view::npos;
}

Type scalar_type(Kind kind) {
  Type type;
  type.elem.kind = kind;
  return type;
}

std::string_view trim(std::string_view t) {
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  return t;
}

class Parser {
 public:
  Parser(std::string_view text, Module* module, std::string* error) : s_(text), m_(module), error_(error) {}

  bool parse_top() {
    while (true) {
      skip_ws();
      if (p_ >= s_.size()) break;
      if (s_[p_] == '#') {
        size_t eq = s_.find('=', p_), eol = s_.find('\n', p_);
        if (eq == std::string_view::npos || eq > eol) return fail("an alias without a definition");
        std::string name(trim(s_.substr(p_, eq - p_)));
        m_->aliases[name] = std::string(trim(s_.substr(eq + 1, eol == std::string_view::npos ? eol : eol - eq - 1)));
        p_ = eol == std::string_view::npos ? s_.size() : eol;
      } else if (eat_word("module")) {
        if (!parse_module_body()) return false;
      } else {
        return fail("expected a module, found '" + std::string(s_.substr(p_, 20)) + "'");
      }
    }
    if (m_->func.name.empty()) return fail("no tt.func public in the module");
    return true;
  }

 private:
  bool parse_module_body() {
    skip_spaces();
    if (eat_word("attributes")) {
      skip_spaces();
      std::string attrs;
      if (!balanced(&attrs)) return fail("unterminated module attributes");
      long long value = 0;
      if (attribute_int(attrs, "ttg.num-warps", &value)) m_->num_warps = static_cast<unsigned>(value);
      if (attribute_int(attrs, "ttg.threads-per-warp", &value)) m_->threads_per_warp = static_cast<unsigned>(value);
    }
    skip_spaces();
    if (!eat("{")) return fail("expected the module's body");
    while (true) {
      skip_ws();
      if (p_ >= s_.size()) return fail("unterminated module");
      if (eat("}")) break;
      if (at("tt.func") && m_->func.name.empty() && s_.substr(p_, s_.find('@', p_) - p_).find("private") ==
                                                           std::string_view::npos) {
        if (!parse_func()) return false;
        continue;
      }
      // Anything else at module level (a private helper, a global): skipped up to the end of its line or body;
      // a call into it is an unsupported op.
      size_t eol = s_.find('\n', p_);
      size_t brace = s_.find('{', p_);
      if (brace != std::string_view::npos && brace < eol && trim(s_.substr(brace + 1, eol - brace - 1)).empty()) {
        p_ = match_bracket(s_, brace);
        if (p_ == std::string_view::npos) return fail("unterminated body");
      } else {
        p_ = eol;
      }
      skip_line();
    }
    skip_line();
    return true;
  }

  bool parse_func() {
    Function& f = m_->func;
    word();  // tt.func
    skip_spaces();
    if (eat_word("public")) skip_spaces();
    if (!eat("@")) return fail("expected the function's name");
    f.name = std::string(word());
    if (!eat("(")) return fail("expected the function's parameters");
    while (true) {
      skip_ws();
      if (eat(")")) break;
      std::string name;
      if (!value_ref(&name)) return fail("expected a parameter");
      skip_spaces();
      if (!eat(":")) return fail("expected a parameter's type");
      auto type = std::make_unique<Type>();
      if (!parse_type(type.get())) return false;
      f.params.push_back(define(name, type.get()));
      f.owned_types.push_back(std::move(type));
      skip_spaces();
      std::string ignored;
      if (at("{") && !balanced(&ignored)) return fail("unterminated parameter attributes");
      skip_spaces();
      if (at("loc(") && !parse_loc(&ignored)) return false;
      skip_spaces();
      eat(",");
    }
    skip_spaces();
    if (at("->")) return fail("a kernel returning values is not supported");
    if (eat_word("attributes")) {
      skip_spaces();
      std::string ignored;
      if (!balanced(&ignored)) return fail("unterminated function attributes");
    }
    skip_spaces();
    if (!parse_region(&f.body, {})) return false;
    skip_line();
    return true;
  }

  // A region at '{': its block's label and arguments (^bb0(%a: T loc(...), ...):) if any, then its ops. `args` are
  // arguments the enclosing op names itself (scf.for's induction variable and iter_args).
  bool parse_region(Block* block, const std::vector<std::pair<std::string, Type>>& args) {
    if (!eat("{")) return fail("expected a region");
    auto saved = names_;
    for (const auto& [name, type] : args) block->args.push_back(define(name, own(type)));
    while (true) {
      skip_ws();
      if (p_ >= s_.size()) return fail("unterminated region");
      if (eat("}")) break;
      if (at("^")) {
        word();
        if (eat("(")) {
          while (true) {
            skip_ws();
            if (eat(")")) break;
            std::string name;
            Type type;
            if (!value_ref(&name)) return fail("expected a block argument");
            skip_spaces();
            if (!eat(":") || !parse_type(&type)) return fail("expected a block argument's type");
            block->args.push_back(define(name, own(type)));
            skip_spaces();
            std::string ignored;
            if (at("loc(") && !parse_loc(&ignored)) return false;
            skip_spaces();
            eat(",");
          }
        }
        skip_spaces();
        eat(":");
        continue;
      }
      if (!parse_op(block)) return false;
    }
    names_ = std::move(saved);
    return true;
  }

  bool parse_op(Block* block) {
    auto op = std::make_unique<Op>();
    op->line = line_at(p_);
    std::vector<std::pair<std::string, int>> results;
    if (at("%")) {
      while (true) {
        std::string name;
        if (!value_ref(&name)) return fail("expected a result");
        int count = 1;
        if (eat(":")) count = std::atoi(std::string(word()).c_str());
        results.emplace_back(name, count);
        skip_spaces();
        if (!eat(",")) break;
        skip_spaces();
      }
      skip_spaces();
      if (!eat("=")) return fail("expected '=' after the results");
      skip_spaces();
    }
    std::vector<Type> before, after;
    bool ok;
    if (at("\"")) {
      size_t end = s_.find('"', p_ + 1);
      op->name = std::string(s_.substr(p_ + 1, end - p_ - 1));
      p_ = end + 1;
      ok = parse_generic(op.get(), &before, &after);
    } else {
      op->name = std::string(word());
      if (op->name == "scf.for") ok = parse_for(op.get(), &after);
      else if (op->name == "scf.if") ok = parse_if(op.get(), &after);
      else if (op->name == "scf.while") ok = parse_while(op.get(), &after);
      else ok = parse_custom(op.get(), &before, &after);
    }
    if (!ok) return false;
    size_t count = 0;
    for (const auto& r : results) count += static_cast<size_t>(r.second);
    if (count > 0) {
      if (!infer_result_types(op.get(), before, after, count)) return false;
      size_t index = 0;
      for (const auto& [name, n] : results) {
        for (int i = 0; i < n; ++i, ++index) {
          int slot = define(n == 1 ? name : name + "#" + std::to_string(i), &op->result_types[index]);
          if (n > 1 && i == 0) names_[name] = slot;
          op->results.push_back(slot);
        }
      }
    }
    block->ops.push_back(std::move(op));
    return true;
  }

  // MLIR's printers omit result types that the operands imply; this recovers them for the ops that do so.
  bool infer_result_types(Op* op, const std::vector<Type>& before, const std::vector<Type>& after, size_t count) {
    const std::string& n = op->name;
    if (!after.empty()) {
      op->result_types = after;
    } else if (n == "arith.cmpi" || n == "arith.cmpf") {
      if (before.empty()) return fail(n + " without a type");
      op->result_types = {before[0]};
      op->result_types[0].elem = ElemType{Kind::I1};
    } else if (n == "tt.load") {
      if (before.empty() || before[0].elem.kind != Kind::Ptr) return fail("tt.load of no pointer type");
      op->result_types = {before[0]};
      op->result_types[0].elem = ElemType{before[0].elem.pointee, Kind::I8};
    } else if (n == "arith.select") {
      if (before.empty()) return fail("arith.select without a type");
      op->result_types = {before.back()};
    } else if (n == "tt.get_program_id" || n == "tt.get_num_programs") {
      op->result_types = {scalar_type(Kind::I32)};
    } else if (n == "arith.constant" && before.empty() && (op->literal == "true" || op->literal == "false")) {
      op->result_types = {scalar_type(Kind::I1)};
    } else if (!before.empty()) {
      op->result_types = {before[0]};
    }
    if (op->result_types.size() != count)
      return fail("cannot tell the result types of " + n);
    return true;
  }

  // Operands, keywords, attribute dictionaries, a string, then `: types [-> types | to type]`, up to the location.
  bool parse_custom(Op* op, std::vector<Type>* before, std::vector<Type>* after) {
    while (true) {
      skip_spaces();
      if (p_ >= s_.size() || s_[p_] == '\n') break;
      if (at("loc(")) {
        if (!parse_loc(&op->loc)) return false;
        continue;
      }
      char c = s_[p_];
      if (c == '%') {
        int slot;
        if (!operand(&slot)) return false;
        op->operands.push_back(slot);
      } else if (c == '"') {
        size_t end = p_ + 1;
        while (end < s_.size() && s_[end] != '"') end += s_[end] == '\\' ? 2 : 1;
        op->text = unescape(s_.substr(p_ + 1, end - p_ - 1));
        p_ = end + 1;
      } else if (c == '{' || (c == '<' && p_ + 1 < s_.size() && s_[p_ + 1] == '{')) {
        if (c == '{' && line_rest_blank(p_ + 1)) {
          op->regions.emplace_back();
          if (!parse_region(&op->regions.back(), {})) return false;
          continue;
        }
        std::string attrs;
        if (!balanced(&attrs)) return fail("unterminated attributes");
        op->attributes += attrs;
      } else if (c == ':') {
        ++p_;
        if (!parse_type_list(before)) return false;
        skip_spaces();
        if (eat("->")) {
          if (!parse_type_list(after)) return false;
        } else if (eat_word("to")) {
          after->emplace_back();
          skip_spaces();
          if (!parse_type(&after->back())) return false;
        }
      } else if (c == ',' || c == '=' || c == '(' || c == ')') {
        ++p_;
      } else {
        size_t start = p_;
        size_t end = p_;
        while (end < s_.size() && !std::isspace(static_cast<unsigned char>(s_[end])) && s_[end] != ',' &&
               s_[end] != ':' && s_[end] != '(' && s_[end] != ')') {
          if (s_[end] == '<' || s_[end] == '[') end = match_bracket(s_, end);
          else ++end;
          if (end == std::string_view::npos) return fail("unterminated token");
        }
        if (end == start) return fail(std::string("unexpected '") + c + "' in " + op->name);
        std::string token(s_.substr(start, end - start));
        p_ = end;
        if (op->name == "arith.constant" && op->literal.empty()) op->literal = token;
        else op->keywords.push_back(token);
      }
    }
    return true;
  }

  // "name"(%operands) <{properties}> ({regions}) {attributes} : (types) -> (types)
  bool parse_generic(Op* op, std::vector<Type>* before, std::vector<Type>* after) {
    if (!eat("(")) return fail("expected the operands of " + op->name);
    while (true) {
      skip_ws();
      if (eat(")")) break;
      int slot;
      if (!operand(&slot)) return false;
      op->operands.push_back(slot);
      skip_ws();
      eat(",");
    }
    skip_spaces();
    if (at("<{")) {
      std::string attrs;
      if (!balanced(&attrs)) return fail("unterminated properties");
      op->attributes += attrs;
      skip_spaces();
    }
    if (eat("(")) {
      while (true) {
        skip_ws();
        if (eat(")")) break;
        op->regions.emplace_back();
        if (!parse_region(&op->regions.back(), {})) return false;
        skip_ws();
        eat(",");
      }
      skip_spaces();
    }
    if (at("{")) {
      std::string attrs;
      if (!balanced(&attrs)) return fail("unterminated attributes");
      op->attributes += attrs;
      skip_spaces();
    }
    if (!eat(":")) return fail("expected the type of " + op->name);
    if (!parse_type_list(before)) return false;
    skip_spaces();
    if (eat("->") && !parse_type_list(after)) return false;
    skip_spaces();
    if (at("loc(")) return parse_loc(&op->loc);
    return true;
  }

  // scf.for [unsigned] %iv = %lb to %ub step %step [iter_args(%a = %init, ...)] [-> (types)] [: type] {body}
  bool parse_for(Op* op, std::vector<Type>* results) {
    skip_spaces();
    if (eat_word("unsigned")) {
      op->keywords.push_back("unsigned");
      skip_spaces();
    }
    std::string iv;
    if (!value_ref(&iv)) return fail("expected scf.for's induction variable");
    std::vector<std::string> iter_names;
    int slot;
    skip_spaces();
    if (!eat("=")) return fail("expected '=' in scf.for");
    for (const char* keyword : {"", "to", "step"}) {
      skip_spaces();
      if (*keyword && !eat_word(keyword)) return fail(std::string("expected '") + keyword + "' in scf.for");
      skip_spaces();
      if (!operand(&slot)) return false;
      op->operands.push_back(slot);
    }
    skip_spaces();
    if (eat("iter_args(")) {
      while (true) {
        skip_ws();
        if (eat(")")) break;
        std::string name;
        if (!value_ref(&name)) return fail("expected an iter_arg");
        skip_spaces();
        eat("=");
        skip_spaces();
        if (!operand(&slot)) return false;
        op->operands.push_back(slot);
        iter_names.push_back(name);
        skip_spaces();
        eat(",");
      }
    }
    skip_spaces();
    if (eat("->") && !parse_type_list(results)) return false;
    skip_spaces();
    Type iv_type = scalar_type(Kind::I32);
    if (eat(":") && (skip_spaces(), !parse_type(&iv_type))) return false;
    if (results->size() != iter_names.size()) return fail("scf.for's iter_args and results disagree");
    std::vector<std::pair<std::string, Type>> args{{iv, iv_type}};
    for (size_t i = 0; i < iter_names.size(); ++i) args.emplace_back(iter_names[i], (*results)[i]);
    skip_spaces();
    op->regions.emplace_back();
    if (!parse_region(&op->regions.back(), args)) return false;
    skip_spaces();
    return !at("loc(") || parse_loc(&op->loc);
  }

  // scf.if %cond [-> (types)] {then} [else {else}]
  bool parse_if(Op* op, std::vector<Type>* results) {
    skip_spaces();
    int slot;
    if (!operand(&slot)) return false;
    op->operands.push_back(slot);
    skip_spaces();
    if (eat("->") && !parse_type_list(results)) return false;
    skip_spaces();
    op->regions.emplace_back();
    if (!parse_region(&op->regions.back(), {})) return false;
    skip_spaces();
    if (eat_word("else")) {
      skip_spaces();
      op->regions.emplace_back();
      if (!parse_region(&op->regions.back(), {})) return false;
      skip_spaces();
    }
    return !at("loc(") || parse_loc(&op->loc);
  }

  // scf.while (%a = %init, ...) : (types) -> (types) {before} do {^bb0(...): after}
  bool parse_while(Op* op, std::vector<Type>* results) {
    skip_spaces();
    if (!eat("(")) return fail("expected scf.while's arguments");
    std::vector<std::string> arg_names;
    while (true) {
      skip_ws();
      if (eat(")")) break;
      std::string name;
      int slot;
      if (!value_ref(&name)) return fail("expected a scf.while argument");
      skip_spaces();
      eat("=");
      skip_spaces();
      if (!operand(&slot)) return false;
      op->operands.push_back(slot);
      arg_names.push_back(name);
      skip_spaces();
      eat(",");
    }
    skip_spaces();
    std::vector<Type> arg_types;
    if (!eat(":") || !parse_type_list(&arg_types)) return fail("expected scf.while's types");
    skip_spaces();
    if (eat("->") && !parse_type_list(results)) return false;
    if (arg_types.size() != arg_names.size()) return fail("scf.while's arguments and types disagree");
    std::vector<std::pair<std::string, Type>> args;
    for (size_t i = 0; i < arg_names.size(); ++i) args.emplace_back(arg_names[i], arg_types[i]);
    skip_spaces();
    op->regions.emplace_back();
    if (!parse_region(&op->regions.back(), args)) return false;
    skip_spaces();
    if (!eat_word("do")) return fail("expected scf.while's do region");
    skip_spaces();
    op->regions.emplace_back();
    if (!parse_region(&op->regions.back(), {})) return false;
    skip_spaces();
    return !at("loc(") || parse_loc(&op->loc);
  }

  // A single type, or a parenthesized list of them, or several separated by commas.
  bool parse_type_list(std::vector<Type>* out) {
    skip_spaces();
    if (eat("(")) {
      while (true) {
        skip_spaces();
        if (eat(")")) return true;
        out->emplace_back();
        if (!parse_type(&out->back())) return false;
        skip_spaces();
        eat(",");
      }
    }
    while (true) {
      out->emplace_back();
      if (!parse_type(&out->back())) return false;
      size_t save = p_;
      skip_spaces();
      if (!eat(",")) {
        p_ = save;
        return true;
      }
      skip_spaces();
    }
  }

  bool parse_type(Type* type) {
    skip_spaces();
    if (!eat("tensor<")) {
      type->tensor = false;
      return parse_elem(&type->elem);
    }
    type->tensor = true;
    while (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_]))) {
      size_t start = p_;
      while (std::isdigit(static_cast<unsigned char>(s_[p_]))) ++p_;
      type->shape.push_back(std::stoll(std::string(s_.substr(start, p_ - start))));
      if (!eat("x")) return fail("malformed tensor shape");
    }
    if (!parse_elem(&type->elem)) return false;
    skip_spaces();
    if (eat(",")) {
      skip_spaces();
      size_t start = p_;
      int depth = 0;
      while (p_ < s_.size() && !(depth == 0 && s_[p_] == '>')) {
        if (s_[p_] == '<' || s_[p_] == '{' || s_[p_] == '[') ++depth;
        if (s_[p_] == '>' || s_[p_] == '}' || s_[p_] == ']') --depth;
        ++p_;
      }
      type->encoding_text = std::string(trim(s_.substr(start, p_ - start)));
      auto cached = layouts_.find(type->encoding_text);
      if (cached == layouts_.end()) {
        std::string why;
        cached = layouts_.emplace(type->encoding_text, parse_layout(type->encoding_text, m_->aliases, &why)).first;
      }
      type->layout = cached->second;
    }
    if (!eat(">")) return fail("malformed tensor type");
    return true;
  }

  bool parse_elem(ElemType* elem) {
    if (eat("!tt.ptr<")) {
      ElemType pointee;
      if (at("tensor<")) return fail("block pointers (!tt.ptr<tensor<...>>) are not supported");
      if (!parse_elem(&pointee)) return false;
      *elem = ElemType{Kind::Ptr, pointee.kind};
      skip_spaces();
      if (eat(",")) word();  // the address space
      if (!eat(">")) return fail("malformed pointer type");
      return true;
    }
    std::string_view name = word();
    static const std::pair<std::string_view, Kind> kinds[] = {
        {"i1", Kind::I1},   {"i8", Kind::I8},     {"i16", Kind::I16}, {"i32", Kind::I32}, {"i64", Kind::I64},
        {"f16", Kind::F16}, {"bf16", Kind::BF16}, {"f32", Kind::F32}, {"f64", Kind::F64}};
    for (const auto& [text, kind] : kinds) {
      if (name == text) {
        *elem = ElemType{kind};
        return true;
      }
    }
    return fail("type " + std::string(name) + " is not supported");
  }

  bool parse_loc(std::string* loc) {
    size_t end = match_bracket(s_, p_ + 3);
    if (end == std::string_view::npos) return fail("unterminated loc(...)");
    *loc = std::string(s_.substr(p_ + 4, end - p_ - 5));
    p_ = end;
    return true;
  }

  bool value_ref(std::string* name) {
    if (!at("%")) return false;
    size_t start = p_++;
    while (p_ < s_.size() && name_char(s_[p_])) ++p_;
    if (p_ + 1 < s_.size() && s_[p_] == '#' && std::isdigit(static_cast<unsigned char>(s_[p_ + 1]))) {
      ++p_;
      while (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_]))) ++p_;
    }
    *name = std::string(s_.substr(start, p_ - start));
    return true;
  }

  bool operand(int* slot) {
    std::string name;
    if (!value_ref(&name)) return fail("expected an operand");
    auto found = names_.find(name);
    if (found == names_.end()) return fail("use of undefined value " + name);
    *slot = found->second;
    return true;
  }

  int define(const std::string& name, const Type* type) {
    int slot = static_cast<int>(m_->func.slot_types.size());
    m_->func.slot_types.push_back(type);
    names_[name] = slot;
    return slot;
  }

  const Type* own(const Type& type) {
    m_->func.owned_types.push_back(std::make_unique<Type>(type));
    return m_->func.owned_types.back().get();
  }

  bool balanced(std::string* out) {
    size_t end = match_bracket(s_, p_);
    if (end == std::string_view::npos) return false;
    *out = std::string(s_.substr(p_, end - p_));
    p_ = end;
    return true;
  }

  bool line_rest_blank(size_t from) const {
    size_t eol = s_.find('\n', from);
    return trim(s_.substr(from, eol == std::string_view::npos ? eol : eol - from)).empty();
  }

  std::string_view word() {
    size_t start = p_;
    while (p_ < s_.size() && (name_char(s_[p_]) || s_[p_] == '^')) ++p_;
    return s_.substr(start, p_ - start);
  }
  bool at(std::string_view t) const { return s_.substr(p_, t.size()) == t; }
  bool eat(std::string_view t) {
    if (!at(t)) return false;
    p_ += t.size();
    return true;
  }
  bool eat_word(std::string_view t) {
    if (!at(t) || (p_ + t.size() < s_.size() && name_char(s_[p_ + t.size()]))) return false;
    p_ += t.size();
    return true;
  }
  void skip_spaces() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\r')) ++p_;
  }
  void skip_ws() {
    while (p_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[p_]))) ++p_;
  }
  void skip_line() {
    size_t eol = s_.find('\n', p_);
    p_ = eol == std::string_view::npos ? s_.size() : eol;
  }
  int line_at(size_t pos) const {
    int line = 1;
    for (size_t i = 0; i < pos && i < s_.size(); ++i) line += s_[i] == '\n';
    return line;
  }
  bool fail(const std::string& why) {
    *error_ = "TTGIR line " + std::to_string(line_at(p_)) + ": " + why;
    return false;
  }

  std::string_view s_;
  size_t p_ = 0;
  Module* m_;
  std::string* error_;
  std::map<std::string, int> names_;
  std::map<std::string, std::shared_ptr<const Layout>> layouts_;
};

bool resolve(const Module& module, std::string_view loc, std::string* file, unsigned* line, int depth) {
  loc = trim(loc);
  if (depth > 64) return false;
  if (loc.rfind("loc(", 0) == 0 && loc.back() == ')') loc = trim(loc.substr(4, loc.size() - 5));
  if (loc.empty() || loc == "unknown") return false;
  if (loc[0] == '#') {
    auto alias = module.aliases.find(std::string(loc));
    return alias != module.aliases.end() && resolve(module, alias->second, file, line, depth + 1);
  }
  if (loc[0] == '"') {
    size_t end = 1;
    while (end < loc.size() && loc[end] != '"') end += loc[end] == '\\' ? 2 : 1;
    std::string_view rest = trim(loc.substr(std::min(end + 1, loc.size())));
    if (!rest.empty() && rest[0] == ':') {  // "file":line:col
      *file = unescape(loc.substr(1, end - 1));
      *line = static_cast<unsigned>(std::strtoul(std::string(rest.substr(1)).c_str(), nullptr, 10));
      return true;
    }
    if (!rest.empty() && rest[0] == '(') {  // "name"(child): a NameLoc
      size_t close = match_bracket(rest, 0);
      return close != std::string_view::npos && resolve(module, rest.substr(1, close - 2), file, line, depth + 1);
    }
    return false;
  }
  if (loc.rfind("callsite(", 0) == 0) {
    // callsite(callee at caller): Triton's assert lowering takes the callee's location.
    std::string_view inner = loc.substr(9, loc.size() - 10);
    size_t split = std::string_view::npos;
    for (size_t i = 0; i < inner.size(); ++i) {
      char c = inner[i];
      if (c == '"') {
        size_t end = inner.find('"', i + 1);
        if (end == std::string_view::npos) break;
        i = end;
      } else if (c == '(' || c == '[' || c == '<') {
        size_t end = match_bracket(inner, i);
        if (end == std::string_view::npos) break;
        i = end - 1;
      } else if (inner.substr(i, 4) == " at ") {
        split = i;
        break;
      }
    }
    if (split == std::string_view::npos) return false;
    return resolve(module, inner.substr(0, split), file, line, depth + 1) ||
           resolve(module, inner.substr(split + 4), file, line, depth + 1);
  }
  if (loc.rfind("fused", 0) == 0) {
    size_t open = loc.find('[');
    if (open == std::string_view::npos) return false;
    size_t close = match_bracket(loc, open);
    std::string_view items = loc.substr(open + 1, close - open - 2);
    size_t start = 0;
    for (size_t i = 0; i <= items.size(); ++i) {
      if (i == items.size() || items[i] == ',') {
        if (resolve(module, items.substr(start, i - start), file, line, depth + 1)) return true;
        start = i + 1;
      } else if (items[i] == '(' || items[i] == '<' || items[i] == '[') {
        i = match_bracket(items, i) - 1;
      } else if (items[i] == '"') {
        i = items.find('"', i + 1);
      }
    }
    return false;
  }
  return false;
}

// The text after `key` [= or "key" =] in an attribute dictionary, or npos.
size_t value_start(std::string_view attributes, std::string_view key) {
  size_t at = 0;
  while ((at = attributes.find(key, at)) != std::string_view::npos) {
    size_t after = at + key.size();
    bool starts = at == 0 || !name_char(attributes[at - 1]);
    if (after < attributes.size() && attributes[after] == '"') ++after;
    while (after < attributes.size() && attributes[after] == ' ') ++after;
    if (starts && after < attributes.size() && attributes[after] == '=') {
      ++after;
      while (after < attributes.size() && attributes[after] == ' ') ++after;
      return after;
    }
    at += key.size();
  }
  return std::string_view::npos;
}

}  // namespace

bool parse_module(std::string_view text, Module* module, std::string* error) {
  Parser parser(text, module, error);
  return parser.parse_top();
}

bool resolve_location(const Module& module, std::string_view loc, std::string* file, unsigned* line) {
  return resolve(module, loc, file, line, 0);
}

bool attribute_int(std::string_view attributes, std::string_view key, long long* value) {
  size_t start = value_start(attributes, key);
  if (start == std::string_view::npos) return false;
  std::string rest(attributes.substr(start, 32));
  char* end = nullptr;
  *value = std::strtoll(rest.c_str(), &end, 10);
  if (end == rest.c_str()) {
    if (rest.rfind("true", 0) == 0) *value = 1;
    else if (rest.rfind("false", 0) == 0) *value = 0;
    else return false;
  }
  return true;
}

bool attribute_string(std::string_view attributes, std::string_view key, std::string* value) {
  size_t start = value_start(attributes, key);
  if (start == std::string_view::npos || attributes[start] != '"') return false;
  size_t end = start + 1;
  while (end < attributes.size() && attributes[end] != '"') end += attributes[end] == '\\' ? 2 : 1;
  *value = unescape(attributes.substr(start + 1, end - start - 1));
  return true;
}

bool attribute_ints(std::string_view attributes, std::string_view key, std::vector<long long>* values) {
  size_t start = value_start(attributes, key);
  if (start == std::string_view::npos) return false;
  size_t open = attributes.find_first_of(":[", start);
  size_t close = attributes.find_first_of(">]", start);
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return false;
  values->clear();
  std::string items(attributes.substr(open + 1, close - open - 1));
  for (char* cursor = items.data(); *cursor;) {
    char* end = nullptr;
    long long v = std::strtoll(cursor, &end, 10);
    if (end == cursor) {
      ++cursor;
      continue;
    }
    values->push_back(v);
    cursor = end;
  }
  return true;
}

}  // namespace simtriton
