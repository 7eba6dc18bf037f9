//===- frontend/ParseModule.cpp ---------------------------------------------------------------===//
//
// Runs the ANTLR-generated lexer and parser, rewrites ANTLR's error
// messages into readable Clang-style diagnostics, and builds the AST from the parse tree.

#include "frontend/Parser.h"

#include "support/Diagnostics.h"
#include "support/SourceManager.h"
#include "support/Target.h"

#include "TDSLLexer.h"
#include "TDSLParser.h"
#include "antlr4-runtime.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <sstream>

namespace tdsl {
namespace {

using P = TDSLParser;

// ---------------------------------------------------------------------------------------------
// Token locations
// ---------------------------------------------------------------------------------------------

SourceLoc tokenBegin(uint32_t file, const antlr4::Token *t) {
  return SourceLoc{file, static_cast<uint32_t>(t->getLine()),
                   static_cast<uint32_t>(t->getCharPositionInLine()) + 1};
}

size_t tokenLength(const antlr4::Token *t) {
  if (t->getType() == antlr4::Token::EOF)
    return 0;
  return t->getStopIndex() >= t->getStartIndex() ? t->getStopIndex() - t->getStartIndex() + 1 : 0;
}

SourceLoc tokenEnd(uint32_t file, const antlr4::Token *t) {
  SourceLoc l = tokenBegin(file, t);
  l.col += static_cast<uint32_t>(tokenLength(t));
  return l;
}

SourceRange tokenRange(uint32_t file, const antlr4::Token *t) {
  return SourceRange(tokenBegin(file, t), tokenEnd(file, t));
}

// ---------------------------------------------------------------------------------------------
// Error reporting
// ---------------------------------------------------------------------------------------------

/// How a token type is named in "expected …" lists: `';'`, `identifier`, `'block'`.
std::string describeTokenType(const antlr4::dfa::Vocabulary &vocab, ssize_t type) {
  if (type == static_cast<ssize_t>(antlr4::Token::EOF))
    return "end of file";
  switch (type) {
  case P::ID:
    return "identifier";
  case P::INT:
    return "integer literal";
  case P::FLOAT:
    return "float literal";
  case P::STRING:
    return "string literal";
  default:
    break;
  }
  std::string lit = vocab.getLiteralName(type);
  if (!lit.empty())
    return lit; // already quoted: 'func'
  return vocab.getDisplayName(type);
}

bool isKeywordToken(size_t type) { return type >= P::IMPORT && type <= P::INF; }

/// What a rule is called in "expected ';' after …".
const char *ruleNoun(antlr4::ParserRuleContext *ctx) {
  switch (ctx->getRuleIndex()) {
  case P::RuleImportDecl:
    return "import";
  case P::RuleAllocStmt:
    return "alloc";
  case P::RuleStmt:
    return "statement";
  case P::RuleExternDecl:
    return "extern declaration";
  case P::RuleIntrinsicDecl:
    return "intrinsic declaration";
  case P::RuleGradDecl:
    return "grad declaration";
  case P::RuleConstDecl:
    return "constant declaration";
  case P::RuleGraphStmt:
    return "statement";
  case P::RuleSchedStmt:
    return "schedule statement";
  case P::RuleCallValue:
    return "call";
  default:
    return "expression";
  }
}

/// The opening bracket of a closing one, or 0 when `text` is not a closing bracket.
char openerOf(const std::string &text) {
  if (text == "')'")
    return '(';
  if (text == "']'")
    return '[';
  if (text == "'}'")
    return '{';
  return 0;
}

/// ANTLR's default recovery with the messages replaced, and two more repairs: a keyword where
/// an identifier belongs, and a wrong token between two right ones, are each taken as the
/// token that was expected (Clang's "expected identifier" and "expected ')'" then go on as if
/// it were there). One error is reported per recovery, so a file yields all its distinct
/// syntax errors without cascades.
class TDSLErrorStrategy : public antlr4::DefaultErrorStrategy {
public:
  TDSLErrorStrategy(uint32_t file, const SourceManager &sm, DiagnosticEngine &diags)
      : file_(file), sm_(sm), diags_(diags) {}

  unsigned errors = 0;

  antlr4::Token *recoverInline(antlr4::Parser *p) override {
    antlr4::misc::IntervalSet expected = getExpectedTokens(p);
    antlr4::Token *t = p->getCurrentToken();
    size_t next = p->getTokenStream()->LA(2);
    // `for i in 0.128 {`: the user meant `0..128`; go on as if the '..' were there.
    if (expected.contains(static_cast<size_t>(P::DOTDOT)) && floatMeantAsRange(p, t)) {
      if (!inErrorRecoveryMode(p))
        reportMissingToken(p);
      return getMissingSymbol(p);
    }
    // `let in = 1;`: the keyword is the name the user meant.
    if (expected.contains(static_cast<size_t>(P::ID)) && isKeywordToken(t->getType()) &&
        followsMissingToken(p, next))
      return substitute(p, t, expected);
    // `let = 1;`: a missing name, not an extra `=`.
    if (expected.contains(static_cast<size_t>(P::ID)) && followsMissingToken(p, t->getType()) &&
        t->getType() != antlr4::Token::EOF) {
      if (!inErrorRecoveryMode(p))
        reportMissingToken(p);
      return getMissingSymbol(p);
    }
    if (antlr4::Token *matched = singleTokenDeletion(p)) {
      p->consume();
      return matched;
    }
    if (singleTokenInsertion(p))
      return getMissingSymbol(p);
    // `block C:i: spatial 4)`: one wrong token where the expected one belongs.
    if (t->getType() != antlr4::Token::EOF && next != antlr4::Token::EOF &&
        followsMissingToken(p, next))
      return substitute(p, t, expected);
    throw antlr4::InputMismatchException(p);
  }

protected:
  void reportNoViableAlternative(antlr4::Parser *p,
                                 const antlr4::NoViableAltException &e) override {
    antlr4::Token *t = e.getOffendingToken();
    if (followsLexicalError(p, t))
      return;
    // The expected tokens are those at the start of the decision; when the alternatives
    // failed further on, they say nothing about the token that does not fit.
    if (e.getStartToken() != t && t->getType() != antlr4::Token::EOF) {
      emit(tokenRange(file_, t), "unexpected " + quote(t));
      return;
    }
    report(p, t, p->getExpectedTokens(), /*missing=*/false);
  }
  void reportInputMismatch(antlr4::Parser *p, const antlr4::InputMismatchException &e) override {
    report(p, e.getOffendingToken(), e.getExpectedTokens(), /*missing=*/false);
  }
  void reportFailedPredicate(antlr4::Parser *p,
                             const antlr4::FailedPredicateException &e) override {
    report(p, e.getOffendingToken(), p->getExpectedTokens(), /*missing=*/false);
  }
  void reportUnwantedToken(antlr4::Parser *p) override {
    if (inErrorRecoveryMode(p))
      return;
    beginErrorCondition(p);
    antlr4::Token *t = p->getCurrentToken();
    if (followsLexicalError(p, t))
      return;
    if (t->getType() == antlr4::Token::EOF || p->getContext()->getRuleIndex() == P::RuleModule) {
      report(p, t, getExpectedTokens(p), /*missing=*/false);
      return;
    }
    emit(tokenRange(file_, t), "unexpected " + quote(t));
  }
  void reportMissingToken(antlr4::Parser *p) override {
    if (inErrorRecoveryMode(p))
      return;
    beginErrorCondition(p);
    report(p, p->getCurrentToken(), getExpectedTokens(p), /*missing=*/true);
  }

private:
  /// True if `type` can come right after the token the parser is trying to match (what ANTLR's
  /// single-token insertion checks for the current token).
  static bool followsMissingToken(antlr4::Parser *p, size_t type) {
    const antlr4::atn::ATN &atn = p->getATN();
    antlr4::atn::ATNState *state = atn.states[p->getState()];
    if (state->transitions.empty())
      return false;
    return atn.nextTokens(state->transitions[0]->target, p->getContext()).contains(type);
  }

  /// True if the token before `t` is a float like `0.128` that reads as a range `0..128`.
  static bool floatMeantAsRange(antlr4::Parser *p, antlr4::Token *t) {
    antlr4::Token *prev = previousToken(p, t);
    if (!prev || prev->getType() != P::FLOAT)
      return false;
    std::string text = prev->getText();
    return text[0] != '.' && text.find_first_of("eE") == std::string::npos;
  }

  /// True if a lexical error (an invalid character, an unterminated string or comment) lies
  /// just before `t`: a syntax error there is its consequence, already reported.
  static bool followsLexicalError(antlr4::Parser *p, antlr4::Token *t) {
    auto *stream = dynamic_cast<antlr4::BufferedTokenStream *>(p->getTokenStream());
    return stream && !stream->getHiddenTokensToLeft(t->getTokenIndex()).empty();
  }

  /// Reports `t` as the wrong token and consumes it as if it were the expected one.
  antlr4::Token *substitute(antlr4::Parser *p, antlr4::Token *t,
                            const antlr4::misc::IntervalSet &expected) {
    if (!inErrorRecoveryMode(p)) {
      beginErrorCondition(p);
      report(p, t, expected, /*missing=*/false);
    }
    p->consume();
    reportMatch(p);
    return t;
  }

  static std::string quote(antlr4::Token *t) {
    if (t->getType() == antlr4::Token::EOF)
      return "end of file";
    if (t->getType() == P::ID)
      return "identifier '" + t->getText() + "'";
    if (t->getType() == P::INT || t->getType() == P::FLOAT)
      return "number '" + t->getText() + "'";
    if (t->getType() == P::STRING)
      return "string literal";
    if (isKeywordToken(t->getType()))
      return "keyword '" + t->getText() + "'";
    return "'" + t->getText() + "'";
  }

  /// The token before `t` on the default channel (null at the start of the file).
  static antlr4::Token *previousToken(antlr4::Parser *p, antlr4::Token *t) {
    auto *stream = p->getTokenStream();
    for (ssize_t i = static_cast<ssize_t>(t->getTokenIndex()) - 1; i >= 0; --i) {
      antlr4::Token *prev = stream->get(static_cast<size_t>(i));
      if (prev->getChannel() == antlr4::Token::DEFAULT_CHANNEL)
        return prev;
    }
    return nullptr;
  }

  /// The unmatched `open` bracket before `t` in the rule being parsed: the one a missing
  /// closing bracket would match.
  static antlr4::Token *unmatchedOpener(antlr4::Parser *p, antlr4::Token *t, char open) {
    const char close = open == '(' ? ')' : open == '[' ? ']' : '}';
    antlr4::Token *start = p->getContext()->getStart();
    if (!start)
      return nullptr;
    auto *stream = p->getTokenStream();
    unsigned depth = 0;
    for (ssize_t i = static_cast<ssize_t>(t->getTokenIndex()) - 1;
         i >= static_cast<ssize_t>(start->getTokenIndex()) && i >= 0; --i) {
      antlr4::Token *tok = stream->get(static_cast<size_t>(i));
      if (tok->getChannel() != antlr4::Token::DEFAULT_CHANNEL)
        continue;
      std::string text = tok->getText();
      if (text.size() != 1)
        continue;
      if (text[0] == close)
        ++depth;
      if (text[0] == open) {
        if (depth == 0)
          return tok;
        --depth;
      }
    }
    return nullptr;
  }

  void report(antlr4::Parser *p, antlr4::Token *t, const antlr4::misc::IntervalSet &expected,
              bool missing) {
    if (followsLexicalError(p, t))
      return;
    const auto &vocab = p->getVocabulary();
    std::vector<ssize_t> want = expected.toList();
    auto wants = [&](ssize_t type) { return expected.contains(type); };
    antlr4::Token *prev = previousToken(p, t);
    const bool atEof = t->getType() == antlr4::Token::EOF;
    // A missing token is reported just after the previous token (Clang's "expected ';' after");
    // one at end of file at the end of the last line.
    const SourceRange afterPrev = prev ? SourceRange(tokenEnd(file_, prev)) : tokenRange(file_, t);
    const SourceRange at = atEof ? SourceRange(sm_.endOfFile(file_)) : tokenRange(file_, t);
    const SourceRange where = atEof ? at : missing ? afterPrev : at;
    const std::string found = atEof ? " at end of file" : missing ? "" : ", found " + quote(t);
    antlr4::ParserRuleContext *ctx = p->getContext();

    // `x = relu(h);` in a graph: the statement was taken for a reshape.
    if (auto *r = dynamic_cast<P::ReshapeStmtContext *>(ctx)) {
      if (r->ID().size() >= 2 && r->ID(1)->getText() != "reshape") {
        emit(range(r->ID(1)), "expected 'call' or 'reshape' after '='");
        return;
      }
    }
    if (ctx->getRuleIndex() == P::RuleModule && !atEof) {
      emit(at, "expected 'import', 'func', 'graph', 'extern' or 'schedule'" + found);
      return;
    }

    const bool exprStart = wants(P::INT) && wants(P::ID) && wants(P::FLOAT);
    const ssize_t semi = tokenTypeOf(vocab, "';'");
    if (semi >= 0 && wants(semi) && (missing || want.size() <= 3 || !exprStart)) {
      emit(afterPrev, std::string("expected ';' after ") + ruleNoun(ctx));
      return;
    }
    // `for i in 0.128 {`: a float literal where `LO..HI` was meant.
    if (wants(P::DOTDOT) && floatMeantAsRange(p, t)) {
      std::string text = prev->getText();
      std::string fix = text.substr(0, text.find('.')) + ".." + text.substr(text.find('.') + 1);
      emit(tokenRange(file_, prev), "expected '..' in loop range; '" + text +
                                        "' is a float literal (did you mean '" + fix + "'?)");
      return;
    }
    if (exprStart && want.size() > 4) {
      emit(atEof ? at : missing ? afterPrev : at, "expected expression" + found);
      return;
    }
    if (wants(P::ID) && isKeywordToken(t->getType())) {
      emit(at, "expected identifier; '" + t->getText() + "' is a reserved keyword");
      return;
    }

    // A closing bracket is what matters at end of file, and when the other choice is only
    // a ',': `(a, b` wants ')', an unclosed body wants '}'.
    const ssize_t comma = tokenTypeOf(vocab, "','");
    for (ssize_t type : want) {
      char open = openerOf(vocab.getLiteralName(type));
      if (!open)
        continue;
      bool onlyCloserOrComma = want.size() == 1 || (want.size() == 2 && wants(comma));
      if (!atEof && !onlyCloserOrComma)
        break;
      Diagnostic *d = emit(where, "expected " + describeTokenType(vocab, type) + found);
      if (antlr4::Token *o = d ? unmatchedOpener(p, t, open) : nullptr)
        d->note(tokenRange(file_, o), std::string("to match this '") + open + "'");
      return;
    }

    if (want.size() == 1 && want[0] == P::ID) {
      emit(where, "expected identifier" + found);
      return;
    }
    if (!want.empty() && want.size() <= 4) {
      std::string list;
      for (size_t i = 0; i < want.size(); ++i) {
        if (i)
          list += i + 1 == want.size() ? " or " : ", ";
        list += describeTokenType(vocab, want[i]);
      }
      emit(where, "expected " + list + found);
      return;
    }
    emit(at, atEof ? "unexpected end of file" : "unexpected " + quote(t));
  }

  SourceRange range(antlr4::tree::TerminalNode *n) { return tokenRange(file_, n->getSymbol()); }

  static ssize_t tokenTypeOf(const antlr4::dfa::Vocabulary &vocab, const std::string &literal) {
    for (size_t i = 0; i <= vocab.getMaxTokenType(); ++i)
      if (vocab.getLiteralName(i) == literal)
        return static_cast<ssize_t>(i);
    return -1;
  }

  /// Reports one error; null when one was already reported at that place.
  Diagnostic *emit(SourceRange at, std::string msg) {
    // Recovery can stumble twice over one place; one message per location is enough.
    if (!reported_.insert({at.begin.line, at.begin.col}).second)
      return nullptr;
    ++errors;
    return &diags_.error(at, std::move(msg));
  }

  uint32_t file_;
  const SourceManager &sm_;
  DiagnosticEngine &diags_;
  std::set<std::pair<uint32_t, uint32_t>> reported_;
};

/// ANTLR prints to stderr by default; every message goes through the error strategy instead.
class SilentListener : public antlr4::BaseErrorListener {};

// ---------------------------------------------------------------------------------------------
// Lexical checks that run before parsing
// ---------------------------------------------------------------------------------------------

constexpr unsigned kMaxNesting = 256;
/// Binary operators make left-nested trees that later phases walk recursively.
constexpr unsigned kMaxExprDepth = 2048;

enum class LexResult { Ok, Errors, TooDeep };

/// True if a token ends an operand, so that a `-` after it is binary.
bool endsOperand(const antlr4::Token *t) {
  switch (t->getType()) {
  case P::ID:
  case P::INT:
  case P::FLOAT:
  case P::TRUE:
  case P::FALSE:
  case P::INF:
    return true;
  default:
    return t->getText() == ")" || t->getText() == "]";
  }
}

/// The length of the well-formed UTF-8 sequence at `at` (0 when it is not one: a stray
/// continuation byte, an invalid lead byte such as 0xFF, a truncated or overlong sequence), so
/// that a message echoes only whole characters.
size_t utf8Length(const std::string &source, size_t at) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(source[i]); };
  unsigned char c = byte(at);
  size_t len = c >= 0xC2 && c <= 0xDF   ? 2
               : c >= 0xE0 && c <= 0xEF ? 3
               : c >= 0xF0 && c <= 0xF4 ? 4
                                        : 0;
  if (!len || at + len > source.size())
    return 0;
  for (size_t i = 1; i < len; ++i)
    if ((byte(at + i) & 0xC0) != 0x80)
      return 0;
  // Overlong forms and surrogates, as RFC 3629 excludes them.
  unsigned char d = byte(at + 1);
  if ((c == 0xE0 && d < 0xA0) || (c == 0xED && d > 0x9F) || (c == 0xF0 && d < 0x90) ||
      (c == 0xF4 && d > 0x8F))
    return 0;
  return len;
}

/// Reports an invalid character, an unterminated string or comment (lexed onto the hidden
/// channel so that parsing continues without them); false if `t` is none of those.
bool reportLexicalError(uint32_t file, const std::string &source, const antlr4::Token *t,
                        DiagnosticEngine &diags) {
  switch (t->getType()) {
  case P::ERROR_CHAR: {
    size_t at = t->getStartIndex();
    unsigned char c = static_cast<unsigned char>(source[at]);
    // One message per character: UTF-8 continuation bytes belong to the lead byte's message.
    if ((c & 0xC0) == 0x80 && at > 0 && (static_cast<unsigned char>(source[at - 1]) & 0x80))
      return true;
    std::ostringstream msg;
    if (c >= 0x20 && c < 0x7f) {
      msg << "invalid character '" << source[at] << "'";
    } else if (size_t len = utf8Length(source, at)) {
      msg << "invalid character '" << source.substr(at, len) << "'";
    } else {
      msg << "invalid byte 0x" << std::hex << static_cast<unsigned>(c) << " in source";
    }
    diags.error(tokenRange(file, t), msg.str());
    return true;
  }
  case P::UNTERMINATED_STRING:
    diags.error(SourceRange(tokenBegin(file, t)), "unterminated string literal");
    return true;
  case P::UNTERMINATED_COMMENT:
    diags.error(SourceRange(tokenBegin(file, t)), "unterminated /* comment");
    return true;
  default:
    return false;
  }
}

bool isBinaryOperator(const std::string &text) {
  static const std::set<std::string> ops = {
      "+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||"};
  return ops.count(text) != 0;
}

/// Reports lexical errors, and refuses nesting deep enough to exhaust the stack of the parser
/// or of the recursive walks over the AST. Nesting counts open brackets, unary operators still
/// waiting for their operand's end, and `else if` links of an open chain; an expression's depth
/// also counts its binary operators.
LexResult checkTokens(uint32_t file, const std::string &source, antlr4::CommonTokenStream &tokens,
                      DiagnosticEngine &diags) {
  bool ok = true;
  std::vector<antlr4::Token *> code; // the default channel, EOF included
  for (antlr4::Token *t : tokens.getTokens()) {
    if (reportLexicalError(file, source, t, diags))
      ok = false;
    if (t->getChannel() == antlr4::Token::DEFAULT_CHANNEL)
      code.push_back(t);
  }

  // Per bracket level: pending unary and binary operators, and `else if` links.
  std::vector<unsigned> unary(1, 0), binary(1, 0), links(1, 0);
  unsigned depth = 0, unaryTotal = 0, binaryTotal = 0, linkTotal = 0;
  for (size_t i = 0; i < code.size(); ++i) {
    antlr4::Token *t = code[i];
    if (t->getType() == antlr4::Token::EOF)
      break;
    const antlr4::Token *next = i + 1 < code.size() ? code[i + 1] : nullptr;
    const std::string text = t->getText();
    if (text == "(" || text == "[" || text == "{") {
      ++depth;
      unary.push_back(0);
      binary.push_back(0);
      links.push_back(0);
    } else if (text == ")" || text == "]" || text == "}") {
      if (depth) {
        unaryTotal -= unary.back();
        binaryTotal -= binary.back();
        linkTotal -= links.back();
        unary.pop_back();
        binary.pop_back();
        links.pop_back();
        --depth;
      }
      // A branch's `}` not followed by `else` ends the `else if` chain at its level.
      if (text == "}" && (!next || next->getType() != P::ELSE)) {
        linkTotal -= links[depth];
        links[depth] = 0;
      }
    } else if ((text == "-" || text == "!") && (i == 0 || !endsOperand(code[i - 1]))) {
      ++unary[depth];
      ++unaryTotal;
    } else if (t->getType() == P::ELSE && next && next->getType() == P::IF) {
      ++links[depth];
      ++linkTotal;
    } else if (isBinaryOperator(text)) {
      // The operand before has ended; the expression goes on.
      unaryTotal -= unary[depth];
      unary[depth] = 0;
      ++binary[depth];
      ++binaryTotal;
    } else if (!endsOperand(t)) {
      // The expression has ended (an operand may still be followed by `[` or `(`).
      unaryTotal -= unary[depth];
      binaryTotal -= binary[depth];
      unary[depth] = binary[depth] = 0;
    }
    if (depth + unaryTotal + linkTotal > kMaxNesting) {
      diags.error(tokenRange(file, t),
                  "nesting is too deep (more than " + std::to_string(kMaxNesting) + " levels)");
      return LexResult::TooDeep;
    }
    if (depth + unaryTotal + linkTotal + binaryTotal > kMaxExprDepth) {
      diags.error(tokenRange(file, t), "expression is too complex (more than " +
                                           std::to_string(kMaxExprDepth) + " nested operations)");
      return LexResult::TooDeep;
    }
  }
  return ok ? LexResult::Ok : LexResult::Errors;
}

// ---------------------------------------------------------------------------------------------
// Parse tree to AST
// ---------------------------------------------------------------------------------------------

class ASTBuilder {
public:
  ASTBuilder(uint32_t file, const std::string &source, DiagnosticEngine &diags)
      : file_(file), source_(source), diags_(diags) {}

  std::unique_ptr<ast::Module> build(P::ModuleContext *ctx) {
    auto m = std::make_unique<ast::Module>();
    m->fileId = file_;
    for (P::ItemContext *item : ctx->item()) {
      if (auto *c = item->importDecl())
        m->items.push_back(import(c));
      else if (auto *c = item->constDecl())
        m->items.push_back(constDecl(c));
      else if (auto *c = item->funcDecl())
        m->items.push_back(func(c));
      else if (auto *c = item->graphDecl())
        m->items.push_back(graph(c));
      else if (auto *c = item->externDecl())
        m->items.push_back(externDecl(c));
      else if (auto *c = item->scheduleDecl())
        m->items.push_back(schedule(c));
      else if (auto *c = item->intrinsicDecl())
        m->items.push_back(intrinsic(c));
      else if (auto *c = item->gradDecl())
        if (ast::ItemPtr g = grad(c))
          m->items.push_back(std::move(g));
    }
    return m;
  }

private:
  SourceRange range(antlr4::ParserRuleContext *ctx) {
    antlr4::Token *stop = ctx->getStop() ? ctx->getStop() : ctx->getStart();
    return SourceRange(tokenBegin(file_, ctx->getStart()), tokenEnd(file_, stop));
  }
  SourceRange range(antlr4::tree::TerminalNode *n) { return tokenRange(file_, n->getSymbol()); }

  ast::Ident ident(antlr4::tree::TerminalNode *n) {
    ast::Ident id;
    id.name = n->getText();
    id.range = range(n);
    return id;
  }

  /// A token's text as written (non-ASCII bytes included).
  std::string sourceText(antlr4::tree::TerminalNode *n) {
    const antlr4::Token *t = n->getSymbol();
    return source_.substr(t->getStartIndex(), tokenLength(t));
  }

  std::string unescape(antlr4::tree::TerminalNode *n) {
    std::string text = sourceText(n);
    std::string out;
    for (size_t i = 1; i + 1 < text.size(); ++i) {
      char c = text[i];
      if (c != '\\') {
        out += c;
        continue;
      }
      char e = text[++i];
      if (e == 'n')
        out += '\n';
      else if (e == '"' || e == '\\')
        out += e;
      else {
        SourceLoc l = tokenBegin(file_, n->getSymbol());
        l.col += static_cast<uint32_t>(i - 1);
        diags_.error(SourceRange(l, SourceLoc{l.file, l.line, l.col + 2}),
                     std::string("unknown escape sequence '\\") + e + "'");
        out += e;
      }
    }
    return out;
  }

  // -- items ----------------------------------------------------------------------------------

  ast::ItemPtr import(P::ImportDeclContext *c) {
    auto d = std::make_unique<ast::ImportDecl>();
    d->range = range(c);
    d->path = unescape(c->STRING());
    d->pathRange = range(c->STRING());
    if (d->path.empty())
      diags_.error(d->pathRange, "empty import path");
    return d;
  }

  std::vector<ast::Param> params(P::ParamListContext *c) {
    std::vector<ast::Param> out;
    if (!c)
      return out;
    for (P::ParamContext *p : c->param()) {
      ast::Param param;
      param.range = range(p);
      param.name = ident(p->ID());
      param.type = type(p->type());
      out.push_back(std::move(param));
    }
    return out;
  }

  std::vector<ast::GenericParam> generics(P::GenericParamsContext *c) {
    std::vector<ast::GenericParam> out;
    if (!c)
      return out;
    for (P::GenericParamContext *g : c->genericParam()) {
      ast::GenericParam gp;
      gp.range = range(g);
      gp.name = ident(g->ID(0));
      gp.dtype = ident(g->ID(1));
      out.push_back(std::move(gp));
    }
    return out;
  }

  ast::Type type(P::TypeContext *c) {
    ast::Type t;
    t.range = range(c);
    t.dtype = ident(c->ID());
    t.isTensor = c->children.size() > 1;
    if (c->exprList())
      t.dims = exprs(c->exprList());
    return t;
  }

  ast::ItemPtr func(P::FuncDeclContext *c) {
    auto f = std::make_unique<ast::FuncDecl>();
    f->range = range(c);
    f->name = ident(c->ID());
    f->generics = generics(c->genericParams());
    f->inputs = params(c->paramList());
    f->outputs = params(c->funcResults()->paramList());
    for (P::FuncBodyItemContext *item : c->funcBodyItem())
      f->body.push_back(bodyItem(item));
    return f;
  }

  ast::ItemPtr constDecl(P::ConstDeclContext *c) {
    auto d = std::make_unique<ast::ConstDecl>();
    d->range = range(c);
    d->name = ident(c->ID(0));
    d->type = type(c->type());
    d->text = unescape(c->STRING());
    d->textRange = range(c->STRING());
    ast::Ident loader = ident(c->ID(1));
    if (loader.name == "hex")
      d->source = ast::ConstDecl::Source::Hex;
    else if (loader.name != "load") {
      diags_.error(loader.range, "unknown constant initializer '" + loader.name +
                                     "'; expected load(\"FILE.npy\")");
      d->text.clear(); // nothing to look for
    } else if (d->text.empty())
      diags_.error(d->textRange, "empty constant file path");
    return d;
  }

  ast::ItemPtr intrinsic(P::IntrinsicDeclContext *c) {
    auto d = std::make_unique<ast::IntrinsicDecl>();
    d->range = range(c);
    d->name = ident(c->ID(0));
    d->desc = ident(c->ID(1));
    d->impl = ident(c->ID(2));
    return d;
  }

  /// `grad NAME = F wrt (P1, …);`: the grammar reads `grad` (its predicate checks it) and `wrt`
  /// as identifiers.
  ast::ItemPtr grad(P::GradDeclContext *c) {
    std::vector<antlr4::tree::TerminalNode *> ids = c->ID();
    if (ids[2]->getText() != "wrt") {
      diags_.error(range(ids[2]), "expected 'wrt' after 'grad " + ids[1]->getText() + " = " +
                                      c->qualifiedName()->getText() + "', got '" +
                                      ids[2]->getText() + "'");
      return nullptr;
    }
    auto d = std::make_unique<ast::GradDecl>();
    d->range = range(c);
    d->name = ident(ids[1]);
    d->func = qualified(c->qualifiedName());
    for (size_t i = 3; i < ids.size(); ++i)
      d->wrt.push_back(ident(ids[i]));
    return d;
  }

  ast::ItemPtr externDecl(P::ExternDeclContext *c) {
    auto e = std::make_unique<ast::ExternDecl>();
    e->range = range(c);
    e->name = ident(c->ID());
    e->pure = c->PURE() != nullptr;
    e->inputs = params(c->paramList());
    if (c->funcResults())
      e->outputs = params(c->funcResults()->paramList());
    e->symbol = unescape(c->STRING());
    e->symbolRange = range(c->STRING());
    if (e->symbol.empty())
      diags_.error(e->symbolRange, "empty extern symbol name");
    return e;
  }

  ast::ItemPtr graph(P::GraphDeclContext *c) {
    auto g = std::make_unique<ast::GraphDecl>();
    g->range = range(c);
    g->name = ident(c->ID());
    g->generics = generics(c->genericParams());
    g->inputs = params(c->paramList());
    P::GraphResultsContext *r = c->graphResults();
    g->tupleResult = r->getStart()->getText() == "(";
    for (P::TypeContext *t : r->type())
      g->results.push_back(type(t));
    for (P::GraphStmtContext *s : c->graphStmt())
      g->body.push_back(graphStmt(s));
    return g;
  }

  ast::ItemPtr schedule(P::ScheduleDeclContext *c) {
    auto s = std::make_unique<ast::ScheduleDecl>();
    s->range = range(c);
    s->func = qualified(c->qualifiedName());
    if (c->FOR()) {
      ast::Ident target = ident(c->ID());
      if (!parseTarget(target.name))
        diags_.error(target.range,
                     "unknown schedule target '" + target.name + "'; expected 'cpu' or 'cuda'");
      s->target = target;
    }
    for (P::SchedParamContext *p : c->schedParam()) {
      ast::SchedParam sp;
      sp.range = range(p);
      sp.name = ident(p->ID());
      sp.value = expr(p->expr());
      s->params.push_back(std::move(sp));
    }
    for (P::SchedStmtContext *st : c->schedStmt())
      s->body.push_back(schedStmt(st));
    return s;
  }

  ast::QualifiedName qualified(P::QualifiedNameContext *c) {
    ast::QualifiedName q;
    q.range = range(c);
    for (auto *id : c->ID())
      q.parts.push_back(id->getText());
    return q;
  }

  // -- function bodies ------------------------------------------------------------------------

  ast::StmtPtr bodyItem(P::FuncBodyItemContext *c) {
    if (auto *a = c->allocStmt())
      return alloc(a);
    if (auto *f = c->forStmt())
      return forStmt(f);
    return block(c->blockStmt());
  }

  ast::StmtPtr alloc(P::AllocStmtContext *c) {
    auto a = std::make_unique<ast::AllocStmt>();
    a->range = range(c);
    a->name = ident(c->ID(0));
    a->type = type(c->type());
    for (P::AllocAttrContext *attr : c->allocAttr()) {
      ast::Ident name = ident(attr->ID());
      std::vector<ast::ExprPtr> args;
      if (attr->exprList())
        args = exprs(attr->exprList());
      if (name.name != "align" || args.size() != 3) {
        diags_.error(name.range, name.name != "align"
                                     ? "unknown alloc attribute '@" + name.name +
                                           "'; expected @align(axis, factor, offset)"
                                     : "@align takes 3 arguments (axis, factor, offset), got " +
                                           std::to_string(args.size()));
        continue;
      }
      ast::AllocStmt::Align al;
      al.range = range(attr);
      al.axis = std::move(args[0]);
      al.factor = std::move(args[1]);
      al.offset = std::move(args[2]);
      a->aligns.push_back(std::move(al));
    }
    if (c->SCOPE()) {
      a->scopeWritten = true;
      ast::Ident scope = ident(c->ID(1));
      if (scope.name == "global")
        a->scope = ast::Scope::Global;
      else if (scope.name == "shared")
        a->scope = ast::Scope::Shared;
      else if (scope.name == "local")
        a->scope = ast::Scope::Local;
      else
        diags_.error(scope.range, "unknown memory scope '" + scope.name +
                                      "'; expected 'global', 'shared' or 'local'");
    }
    return a;
  }

  ast::StmtPtr forStmt(P::ForStmtContext *c) {
    auto f = std::make_unique<ast::ForStmt>();
    f->range = range(c);
    f->var = ident(c->ID());
    f->lo = expr(c->expr(0));
    f->hi = expr(c->expr(1));
    if (P::LoopKindContext *k = c->loopKind()) {
      ast::Ident kind = ident(k->ID());
      f->kindWritten = true;
      static const std::pair<const char *, ast::LoopKind> kinds[] = {
          {"serial", ast::LoopKind::Serial},
          {"parallel", ast::LoopKind::Parallel},
          {"vectorized", ast::LoopKind::Vectorized},
          {"unrolled", ast::LoopKind::Unrolled},
          {"thread", ast::LoopKind::Thread}};
      bool known = false;
      for (auto &[name, value] : kinds)
        if (kind.name == name) {
          f->loopKind = value;
          known = true;
        }
      if (!known) {
        diags_.error(kind.range, "unknown loop kind '" + kind.name +
                                     "'; expected serial, parallel, vectorized, unrolled or "
                                     "thread(\"tag\")");
      } else if (f->loopKind == ast::LoopKind::Thread) {
        if (!k->STRING()) {
          diags_.error(kind.range, "thread loop needs a tag: thread(\"threadIdx.x\")");
        } else {
          f->threadTag = unescape(k->STRING());
          static const std::set<std::string> tags = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                                     "threadIdx.x", "threadIdx.y", "threadIdx.z"};
          if (!tags.count(f->threadTag))
            diags_.error(range(k->STRING()), "unknown thread tag \"" + f->threadTag +
                                                 "\"; expected blockIdx.x|y|z or threadIdx.x|y|z");
        }
      } else if (k->STRING()) {
        diags_.error(range(k->STRING()), "loop kind '" + kind.name + "' takes no argument");
      }
    }
    for (P::FuncBodyItemContext *item : c->funcBodyItem())
      f->body.push_back(bodyItem(item));
    return f;
  }

  ast::StmtPtr block(P::BlockStmtContext *c) {
    auto b = std::make_unique<ast::BlockStmt>();
    b->range = range(c);
    b->name = ident(c->ID());
    if (P::AxisListContext *axes = c->axisList()) {
      for (P::AxisContext *a : axes->axis()) {
        ast::Axis axis;
        axis.range = range(a);
        axis.name = ident(a->ID());
        axis.kind = a->REDUCE() ? ast::AxisKind::Reduce : ast::AxisKind::Spatial;
        axis.extent = expr(a->expr(0));
        if (a->expr().size() > 1)
          axis.binding = expr(a->expr(1));
        b->axes.push_back(std::move(axis));
      }
    }
    if (c->expr())
      b->where = expr(c->expr());
    for (P::BlockBodyItemContext *item : c->blockBodyItem()) {
      if (auto *i = item->initStmt()) {
        auto init = std::make_unique<ast::InitStmt>();
        init->range = range(i);
        for (P::StmtContext *s : i->stmt())
          init->body.push_back(stmt(s));
        b->body.push_back(std::move(init));
      } else if (auto *s = item->stmt()) {
        b->body.push_back(stmt(s));
      } else if (auto *a = item->allocStmt()) {
        b->body.push_back(alloc(a));
      } else if (auto *f = item->forStmt()) {
        b->body.push_back(forStmt(f));
      } else if (auto *bl = item->blockStmt()) {
        b->body.push_back(block(bl));
      }
    }
    return b;
  }

  std::vector<ast::StmtPtr> stmts(const std::vector<P::StmtContext *> &list) {
    std::vector<ast::StmtPtr> out;
    for (P::StmtContext *s : list)
      out.push_back(stmt(s));
    return out;
  }

  ast::StmtPtr ifChain(antlr4::ParserRuleContext *c, P::ExprContext *cond,
                       const std::vector<P::StmtContext *> &body, P::IfTailContext *tail,
                       bool hasElse) {
    auto s = std::make_unique<ast::IfStmt>();
    s->range = range(c);
    s->cond = expr(cond);
    // The grammar puts the then-statements and else-statements in one list; the else part
    // starts after the token `else`.
    size_t elseTokenIndex = SIZE_MAX;
    for (auto *child : c->children)
      if (auto *term = dynamic_cast<antlr4::tree::TerminalNode *>(child))
        if (term->getSymbol()->getType() == P::ELSE)
          elseTokenIndex = term->getSymbol()->getTokenIndex();
    for (P::StmtContext *st : body) {
      if (st->getStart()->getTokenIndex() > elseTokenIndex)
        s->elseBody.push_back(stmt(st));
      else
        s->thenBody.push_back(stmt(st));
    }
    s->hasElse = hasElse;
    if (tail)
      s->elseBody.push_back(
          ifChain(tail, tail->expr(), tail->stmt(), tail->ifTail(), tail->ELSE() != nullptr));
    return s;
  }

  ast::StmtPtr stmt(P::StmtContext *c) {
    if (auto *s = dynamic_cast<P::StoreStmtContext *>(c)) {
      auto st = std::make_unique<ast::StoreStmt>();
      st->range = range(c);
      st->buffer = ident(s->ID());
      if (s->exprList())
        st->indices = exprs(s->exprList());
      std::string op = s->assignOp()->getText();
      st->op = op == "="    ? ast::AssignOp::Set
               : op == "+=" ? ast::AssignOp::Add
               : op == "-=" ? ast::AssignOp::Sub
                            : ast::AssignOp::Mul;
      st->value = expr(s->expr());
      return st;
    }
    if (auto *s = dynamic_cast<P::LetStmtContext *>(c)) {
      auto st = std::make_unique<ast::LetStmt>();
      st->range = range(c);
      st->name = ident(s->ID());
      st->value = expr(s->expr());
      return st;
    }
    auto *s = dynamic_cast<P::IfStmtContext *>(c);
    return ifChain(s, s->expr(), s->stmt(), s->ifTail(), s->ELSE() != nullptr);
  }

  // -- graphs ---------------------------------------------------------------------------------

  ast::CallValue callValue(P::CallValueContext *c) {
    ast::CallValue v;
    v.range = range(c);
    v.callee = qualified(c->qualifiedName());
    for (P::AddExprContext *a : c->addExpr())
      v.constArgs.push_back(addExpr(a));
    if (c->callArgs())
      for (P::ExprContext *e : c->callArgs()->expr())
        v.args.push_back(expr(e));
    if (c->type())
      v.declaredType = type(c->type());
    return v;
  }

  std::vector<ast::Ident> idents(const std::vector<antlr4::tree::TerminalNode *> &ids) {
    std::vector<ast::Ident> out;
    for (auto *id : ids)
      out.push_back(ident(id));
    return out;
  }

  ast::GraphStmtPtr graphStmt(P::GraphStmtContext *c) {
    if (auto *s = dynamic_cast<P::DataflowStmtContext *>(c)) {
      auto d = std::make_unique<ast::DataflowStmt>();
      d->range = range(c);
      for (P::GraphStmtContext *inner : s->graphStmt())
        d->body.push_back(graphStmt(inner));
      return d;
    }
    if (auto *s = dynamic_cast<P::OutputStmtContext *>(c)) {
      auto o = std::make_unique<ast::OutputStmt>();
      o->range = range(c);
      o->names = idents(s->ID());
      return o;
    }
    if (auto *s = dynamic_cast<P::ReturnStmtContext *>(c)) {
      auto r = std::make_unique<ast::ReturnStmt>();
      r->range = range(c);
      r->names = idents(s->ID());
      return r;
    }
    if (auto *s = dynamic_cast<P::BindStmtContext *>(c)) {
      auto b = std::make_unique<ast::BindStmt>();
      b->range = range(c);
      b->targets = idents(s->idList()->ID());
      b->call = callValue(s->callValue());
      return b;
    }
    if (auto *s = dynamic_cast<P::CallOnlyStmtContext *>(c)) {
      auto b = std::make_unique<ast::CallStmt>();
      b->range = range(c);
      b->call = callValue(s->callValue());
      return b;
    }
    auto *s = dynamic_cast<P::ReshapeStmtContext *>(c);
    auto r = std::make_unique<ast::ReshapeStmt>();
    r->range = range(c);
    r->target = ident(s->ID(0));
    ast::Ident fn = ident(s->ID(1));
    if (fn.name != "reshape")
      diags_.error(fn.range, "expected 'call' or 'reshape' after '=', found '" + fn.name + "'");
    r->source = ident(s->ID(2));
    if (s->exprList())
      r->shape = exprs(s->exprList());
    return r;
  }

  // -- schedules ------------------------------------------------------------------------------

  ast::SchedStmt schedStmt(P::SchedStmtContext *c) {
    ast::SchedStmt s;
    s.range = range(c);
    P::SchedArgsContext *args = nullptr;
    if (auto *b = dynamic_cast<P::SchedBindContext *>(c)) {
      s.targets = idents(b->idList()->ID());
      s.primitive = ident(b->ID());
      args = b->schedArgs();
    } else {
      auto *call = dynamic_cast<P::SchedCallContext *>(c);
      s.primitive = ident(call->ID());
      args = call->schedArgs();
    }
    if (args)
      for (P::SchedArgContext *a : args->schedArg())
        s.args.push_back(schedArg(a));
    return s;
  }

  ast::SchedArg schedArg(P::SchedArgContext *c) {
    ast::SchedArg a;
    a.range = range(c);
    if (auto *e = dynamic_cast<P::SchedExprContext *>(c)) {
      a.kind = ast::SchedArgKind::Expr;
      a.expr = expr(e->expr());
    } else if (auto *s = dynamic_cast<P::SchedStringContext *>(c)) {
      a.kind = ast::SchedArgKind::String;
      a.str = unescape(s->STRING());
    } else if (auto *l = dynamic_cast<P::SchedListContext *>(c)) {
      a.kind = ast::SchedArgKind::List;
      if (l->schedArgs())
        for (P::SchedArgContext *inner : l->schedArgs()->schedArg())
          a.list.push_back(schedArg(inner));
    } else if (auto *lam = dynamic_cast<P::SchedLambdaContext *>(c)) {
      a.kind = ast::SchedArgKind::Lambda;
      a.lambdaParams = idents(lam->ID());
      for (P::ExprContext *e : lam->exprList()->expr()) {
        ast::SchedArg r;
        r.range = range(e);
        r.expr = expr(e);
        a.list.push_back(std::move(r));
      }
    }
    return a;
  }

  // -- expressions ----------------------------------------------------------------------------

  std::vector<ast::ExprPtr> exprs(P::ExprListContext *c) {
    std::vector<ast::ExprPtr> out;
    for (P::ExprContext *e : c->expr())
      out.push_back(expr(e));
    return out;
  }

  ast::ExprPtr binary(ast::BinaryOp op, ast::ExprPtr lhs, ast::ExprPtr rhs) {
    auto b = std::make_unique<ast::BinaryExpr>();
    b->range = SourceRange(lhs->range.begin, rhs->range.end);
    b->op = op;
    b->lhs = std::move(lhs);
    b->rhs = std::move(rhs);
    return b;
  }

  ast::ExprPtr expr(P::ExprContext *c) { return orExpr(c->orExpr()); }

  ast::ExprPtr orExpr(P::OrExprContext *c) {
    ast::ExprPtr e = andExpr(c->andExpr(0));
    for (size_t i = 1; i < c->andExpr().size(); ++i)
      e = binary(ast::BinaryOp::Or, std::move(e), andExpr(c->andExpr(i)));
    return e;
  }

  ast::ExprPtr andExpr(P::AndExprContext *c) {
    ast::ExprPtr e = cmpExpr(c->cmpExpr(0));
    for (size_t i = 1; i < c->cmpExpr().size(); ++i)
      e = binary(ast::BinaryOp::And, std::move(e), cmpExpr(c->cmpExpr(i)));
    return e;
  }

  ast::ExprPtr cmpExpr(P::CmpExprContext *c) {
    ast::ExprPtr e = addExpr(c->addExpr(0));
    if (!c->cmpOp())
      return e;
    std::string op = c->cmpOp()->getText();
    ast::BinaryOp k = op == "=="   ? ast::BinaryOp::EQ
                      : op == "!=" ? ast::BinaryOp::NE
                      : op == "<"  ? ast::BinaryOp::LT
                      : op == "<=" ? ast::BinaryOp::LE
                      : op == ">"  ? ast::BinaryOp::GT
                                   : ast::BinaryOp::GE;
    return binary(k, std::move(e), addExpr(c->addExpr(1)));
  }

  ast::ExprPtr addExpr(P::AddExprContext *c) {
    ast::ExprPtr e = mulExpr(c->mulExpr(0));
    for (size_t i = 1; i < c->mulExpr().size(); ++i) {
      ast::BinaryOp k = c->addOp(i - 1)->getText() == "+" ? ast::BinaryOp::Add : ast::BinaryOp::Sub;
      e = binary(k, std::move(e), mulExpr(c->mulExpr(i)));
    }
    return e;
  }

  ast::ExprPtr mulExpr(P::MulExprContext *c) {
    ast::ExprPtr e = unaryExpr(c->unaryExpr(0));
    for (size_t i = 1; i < c->unaryExpr().size(); ++i) {
      std::string op = c->mulOp(i - 1)->getText();
      ast::BinaryOp k = op == "*"   ? ast::BinaryOp::Mul
                        : op == "/" ? ast::BinaryOp::Div
                                    : ast::BinaryOp::Mod;
      e = binary(k, std::move(e), unaryExpr(c->unaryExpr(i)));
    }
    return e;
  }

  ast::ExprPtr unaryExpr(P::UnaryExprContext *c) {
    if (c->primary())
      return primary(c->primary());
    auto u = std::make_unique<ast::UnaryExpr>();
    u->range = range(c);
    u->op = c->getStart()->getText() == "-" ? ast::UnaryOp::Neg : ast::UnaryOp::Not;
    u->operand = unaryExpr(c->unaryExpr());
    return u;
  }

  ast::ExprPtr primary(P::PrimaryContext *c) {
    SourceRange r = range(c);
    if (auto *p = dynamic_cast<P::IntLitContext *>(c))
      return intLit(p->INT(), r);
    if (auto *p = dynamic_cast<P::FloatLitContext *>(c))
      return floatLit(p->FLOAT(), r);
    if (dynamic_cast<P::TrueLitContext *>(c) || dynamic_cast<P::FalseLitContext *>(c)) {
      auto b = std::make_unique<ast::BoolLit>();
      b->range = r;
      b->value = dynamic_cast<P::TrueLitContext *>(c) != nullptr;
      return b;
    }
    if (dynamic_cast<P::InfLitContext *>(c)) {
      auto i = std::make_unique<ast::InfLit>();
      i->range = r;
      return i;
    }
    if (auto *p = dynamic_cast<P::LoadExprContext *>(c)) {
      auto l = std::make_unique<ast::LoadExpr>();
      l->range = r;
      l->buffer = ident(p->ID());
      if (p->exprList())
        l->indices = exprs(p->exprList());
      return l;
    }
    if (auto *p = dynamic_cast<P::CallExprContext *>(c)) {
      auto call = std::make_unique<ast::CallExpr>();
      call->range = r;
      call->callee = ident(p->ID());
      if (p->exprList())
        call->args = exprs(p->exprList());
      return call;
    }
    if (auto *p = dynamic_cast<P::NameExprContext *>(c)) {
      auto n = std::make_unique<ast::NameExpr>();
      n->range = r;
      n->name = p->ID()->getText();
      return n;
    }
    auto *p = dynamic_cast<P::ParenExprContext *>(c);
    return expr(p->expr());
  }

  static std::string stripUnderscores(const std::string &s) {
    std::string out;
    for (char ch : s)
      if (ch != '_')
        out += ch;
    return out;
  }

  ast::ExprPtr intLit(antlr4::tree::TerminalNode *n, SourceRange r) {
    auto lit = std::make_unique<ast::IntLit>();
    lit->range = r;
    lit->text = n->getText();
    std::string digits = stripUnderscores(lit->text);
    bool hex = digits.size() > 1 && (digits[1] == 'x' || digits[1] == 'X');
    errno = 0;
    unsigned long long v =
        std::strtoull(hex ? digits.c_str() + 2 : digits.c_str(), nullptr, hex ? 16 : 10);
    if (errno == ERANGE ||
        v > static_cast<unsigned long long>(std::numeric_limits<int64_t>::max()) + 1)
      diags_.error(r, "integer literal '" + lit->text + "' is too large for i64");
    lit->value = v;
    return lit;
  }

  ast::ExprPtr floatLit(antlr4::tree::TerminalNode *n, SourceRange r) {
    auto lit = std::make_unique<ast::FloatLit>();
    lit->range = r;
    lit->text = n->getText();
    std::string digits = stripUnderscores(lit->text);
    lit->value = std::strtod(digits.c_str(), nullptr);
    if (std::isinf(lit->value))
      diags_.error(r, "float literal '" + lit->text + "' is out of range");
    return lit;
  }

  uint32_t file_;
  const std::string &source_;
  DiagnosticEngine &diags_;
};

} // namespace

std::unique_ptr<ast::Module> parseModule(const SourceManager &sm, uint32_t fileId,
                                         DiagnosticEngine &diags) {
  const std::string &text = sm.text(fileId);
  // ANTLR decodes its input as UTF-8 and rejects malformed bytes. Bytes outside ASCII only
  // matter inside comments and strings, so each becomes one placeholder character: columns
  // stay byte columns (as Clang's), and token texts are read back from the original buffer.
  std::string ascii = text;
  for (char &c : ascii)
    if (static_cast<unsigned char>(c) >= 0x80 || c == '\0')
      c = '\x01';
  antlr4::ANTLRInputStream input(ascii);
  TDSLLexer lexer(&input);
  SilentListener silent;
  lexer.removeErrorListeners();
  lexer.addErrorListener(&silent);
  antlr4::CommonTokenStream tokens(&lexer);
  tokens.fill();

  // Too deep a nesting stops here: parsing it could exhaust the stack.
  LexResult lex = checkTokens(fileId, text, tokens, diags);
  if (lex == LexResult::TooDeep || diags.limitReached())
    return nullptr;

  TDSLParser parser(&tokens);
  parser.removeErrorListeners();
  parser.addErrorListener(&silent);
  // Two-stage parsing, as ANTLR's authors advise: SLL prediction (no full-context lookahead)
  // with a strategy that gives up at the first error, which parses every valid file several
  // times faster; only a file it gives up on is parsed again with full LL prediction and the
  // strategy that diagnoses and recovers.
  auto *simulator = parser.getInterpreter<antlr4::atn::ParserATNSimulator>();
  simulator->setPredictionMode(antlr4::atn::PredictionMode::SLL);
  parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
  P::ModuleContext *tree = nullptr;
  try {
    tree = parser.module();
  } catch (const antlr4::ParseCancellationException &) {
    tree = nullptr;
  }
  auto strategy = std::make_shared<TDSLErrorStrategy>(fileId, sm, diags);
  if (!tree) {
    tokens.seek(0);
    parser.reset();
    simulator->setPredictionMode(antlr4::atn::PredictionMode::LL);
    parser.setErrorHandler(strategy);
    tree = parser.module();
  }
  if (strategy->errors || lex != LexResult::Ok)
    return nullptr;

  ASTBuilder builder(fileId, text, diags);
  auto module = builder.build(tree);
  module->path = sm.path(fileId);
  return module;
}

bool isKeyword(std::string_view word) {
  // The generated lexer decides: a keyword is one token of a keyword type.
  antlr4::ANTLRInputStream input{std::string(word)};
  TDSLLexer lexer(&input);
  lexer.removeErrorListeners();
  std::unique_ptr<antlr4::Token> first = lexer.nextToken();
  return isKeywordToken(first->getType()) && first->getText().size() == word.size();
}

} // namespace tdsl
