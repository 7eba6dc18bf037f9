//===- ir/SourceLoc.h -------------------------------------------------------------------------===//

#pragma once
// The IR's source locations are the compiler-wide tdsl::SourceLoc of support/SourceLoc.h
// (a header-only, standard-library-only struct {file, line, col; valid()}), so that AST and IR
// positions are one type. Defining the struct a second time here would be a redefinition in
// every file that includes both the AST and the IR.
#include "support/SourceLoc.h"
