// TDSL.g4 — the surface grammar of .tdsl files (spec §2–§8).
//
// The grammar is deliberately permissive where a precise message is better given later:
// dtype names, loop kinds and intrinsic names are plain identifiers here and are checked by
// the AST builder or the semantic checker, which can say what was expected.
grammar TDSL;

// ---------------------------------------------------------------------------------------------
// Module
// ---------------------------------------------------------------------------------------------
module : item* EOF ;

item
  : importDecl
  | constDecl
  | funcDecl
  | graphDecl
  | externDecl
  | scheduleDecl
  | intrinsicDecl
  | gradDecl
  ;

importDecl : IMPORT STRING ';' ;

// `const w: f32[128, 784] = load("w.npy");` (spec §8). The loader's name is an identifier here:
// `load` in source, `hex` in the IR that --emit=ir prints for folded constants.
constDecl : CONST ID ':' type '=' ID '(' STRING ')' ';' ;

qualifiedName : ID ('.' ID)* ;

// ---------------------------------------------------------------------------------------------
// Types and signatures
// ---------------------------------------------------------------------------------------------
type : ID ( '[' exprList? ']' )? ;

param : ID ':' type ;

paramList : param (',' param)* ;

genericParams : '<' genericParam (',' genericParam)* '>' ;
genericParam  : ID ':' ID ;

// `-> (C: f32[N])`, `-> ()` for functions and externs.
funcResults : '(' paramList? ')' ;

funcDecl
  : FUNC ID genericParams? '(' paramList? ')' ARROW funcResults '{' funcBodyItem* '}'
  ;

externDecl
  : EXTERN PURE? FUNC ID '(' paramList? ')' (ARROW funcResults)? '=' STRING ';'
  ;

// `intrinsic NAME(DESC, IMPL);`: a tensor intrinsic for `tensorize` (TVM's TensorIntrin.register):
// DESC is a func whose block a tensorized sub-tree must match, IMPL the func or extern that
// replaces it (docs/schedules.md).
intrinsicDecl : INTRINSIC ID '(' ID ',' ID ')' ';' ;

// `grad NAME = F wrt (P1, …);` (spec §13). `grad` and `wrt` are identifiers (keywords only here,
// spec §2): the AST builder checks their spelling, so both stay usable as names elsewhere.
// The predicate keeps a stray identifier at the start of an item an error there ("expected
// 'import', 'func', …"), as before `grad` existed.
gradDecl : {_input->LT(1)->getText() == "grad"}? ID ID '=' qualifiedName ID '(' ID (',' ID)* ')' ';' ;

// ---------------------------------------------------------------------------------------------
// Function bodies: alloc, for, block
// ---------------------------------------------------------------------------------------------
funcBodyItem
  : allocStmt
  | forStmt
  | blockStmt
  ;

allocStmt : ALLOC ID ':' type (SCOPE '(' ID ')')? allocAttr* ';' ;

// `@align(axis, factor, offset)`: the stride padding storage_align records.
allocAttr : '@' ID '(' exprList? ')' ;

forStmt : FOR ID IN expr DOTDOT expr loopKind? '{' funcBodyItem* '}' ;

loopKind : ID ( '(' STRING ')' )? ;

blockStmt : BLOCK ID '(' axisList? ')' (WHERE expr)? '{' blockBodyItem* '}' ;

axisList : axis (',' axis)* ;

axis : ID ':' (SPATIAL | REDUCE) expr ('=' expr)? ;

blockBodyItem
  : initStmt
  | stmt
  | allocStmt
  | forStmt
  | blockStmt
  ;

initStmt : INIT '{' stmt* '}' ;

stmt
  : ID '[' exprList? ']' assignOp expr ';'                      # storeStmt
  | LET ID '=' expr ';'                                         # letStmt
  | IF expr '{' stmt* '}' (ELSE (ifTail | '{' stmt* '}'))?      # ifStmt
  ;

ifTail : IF expr '{' stmt* '}' (ELSE (ifTail | '{' stmt* '}'))? ;

assignOp : '=' | '+=' | '-=' | '*=' ;

// ---------------------------------------------------------------------------------------------
// Expressions (lowest precedence first)
// ---------------------------------------------------------------------------------------------
expr : orExpr ;

orExpr  : andExpr ('||' andExpr)* ;
andExpr : cmpExpr ('&&' cmpExpr)* ;
cmpExpr : addExpr (cmpOp addExpr)? ;
cmpOp   : '==' | '!=' | '<' | '<=' | '>' | '>=' ;
addExpr : mulExpr (addOp mulExpr)* ;
addOp   : '+' | '-' ;
mulExpr : unaryExpr (mulOp unaryExpr)* ;
mulOp   : '*' | '/' | '%' ;

unaryExpr
  : '-' unaryExpr
  | '!' unaryExpr
  | primary
  ;

primary
  : INT                                   # intLit
  | FLOAT                                 # floatLit
  | TRUE                                  # trueLit
  | FALSE                                 # falseLit
  | INF                                   # infLit
  | ID '[' exprList? ']'                  # loadExpr
  | ID '(' exprList? ')'                  # callExpr
  | ID                                    # nameExpr
  | '(' expr ')'                          # parenExpr
  ;

exprList : expr (',' expr)* ;

// ---------------------------------------------------------------------------------------------
// Graphs
// ---------------------------------------------------------------------------------------------
graphDecl
  : GRAPH ID genericParams? '(' paramList? ')' ARROW graphResults '{' graphStmt* '}'
  ;

graphResults
  : type
  | '(' type (',' type)* ')'
  ;

graphStmt
  : DATAFLOW '{' graphStmt* '}'                                  # dataflowStmt
  | OUTPUT ID (',' ID)* ';'                                      # outputStmt
  | RETURN ID (',' ID)* ';'                                      # returnStmt
  | idList '=' callValue ';'                                     # bindStmt
  | callValue ';'                                                # callOnlyStmt
  | ID '=' ID '(' ID ',' '[' exprList? ']' ')' ';'               # reshapeStmt
  ;

idList : ID (',' ID)* ;

callValue
  : CALL qualifiedName ('<' addExpr (',' addExpr)* '>')? '(' callArgs? ')' (ARROW type)?
  ;

callArgs : expr (',' expr)* ;

// ---------------------------------------------------------------------------------------------
// Schedules
// ---------------------------------------------------------------------------------------------
scheduleDecl
  : SCHEDULE qualifiedName (FOR ID)? ('(' schedParam (',' schedParam)* ')')? '{' schedStmt* '}'
  ;

schedParam : ID '=' expr ;

schedStmt
  : idList '=' ID '(' schedArgs? ')' ';'     # schedBind
  | ID '(' schedArgs? ')' ';'                # schedCall
  ;

schedArgs : schedArg (',' schedArg)* ;

schedArg
  : '(' ID (',' ID)* ')' FATARROW '(' exprList ')'   # schedLambda
  | '[' schedArgs? ']'                               # schedList
  | STRING                                           # schedString
  | expr                                             # schedExpr
  ;

// ---------------------------------------------------------------------------------------------
// Lexer
// ---------------------------------------------------------------------------------------------
IMPORT   : 'import' ;
FUNC     : 'func' ;
GRAPH    : 'graph' ;
EXTERN   : 'extern' ;
PURE     : 'pure' ;
SCHEDULE : 'schedule' ;
INTRINSIC : 'intrinsic' ;
CONST    : 'const' ;
FOR      : 'for' ;
IN       : 'in' ;
BLOCK    : 'block' ;
SPATIAL  : 'spatial' ;
REDUCE   : 'reduce' ;
INIT     : 'init' ;
ALLOC    : 'alloc' ;
SCOPE    : 'scope' ;
IF       : 'if' ;
ELSE     : 'else' ;
LET      : 'let' ;
DATAFLOW : 'dataflow' ;
OUTPUT   : 'output' ;
RETURN   : 'return' ;
CALL     : 'call' ;
WHERE    : 'where' ;
TRUE     : 'true' ;
FALSE    : 'false' ;
INF      : 'inf' ;

ARROW    : '->' ;
FATARROW : '=>' ;
DOTDOT   : '..' ;

FLOAT
  : DIGITS '.' DIGITS EXPONENT?
  | '.' DIGITS EXPONENT?
  | DIGITS EXPONENT
  ;
INT
  : '0' [xX] [0-9a-fA-F] ('_'? [0-9a-fA-F])*
  | DIGITS
  ;
fragment DIGITS   : [0-9] ('_'? [0-9])* ;
fragment EXPONENT : [eE] [+-]? [0-9]+ ;

STRING : '"' ( '\\' . | ~["\\\r\n] )* '"' ;

ID : [A-Za-z_] [A-Za-z0-9_]* ;

LINE_COMMENT  : '//' ~[\r\n]* -> skip ;
BLOCK_COMMENT : '/*' .*? '*/' -> skip ;
WS            : [ \t\r\n]+ -> skip ;

// Lexical errors go to the hidden channel: the parser goes on without them and the frontend
// reports each at its location.
UNTERMINATED_STRING  : '"' ( '\\' . | ~["\\\r\n] )* -> channel(HIDDEN) ;
// Never contains `*/`: a terminated comment is longer as BLOCK_COMMENT, so only a comment that
// runs to the end of the file lexes as this.
UNTERMINATED_COMMENT : '/*' ( ~'*' | '*'+ ~[*/] )* '*'* EOF -> channel(HIDDEN) ;
ERROR_CHAR : . -> channel(HIDDEN) ;
