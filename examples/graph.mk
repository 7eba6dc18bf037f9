# examples/graph.mk — the rules of the graph examples (cnn, mlp): each one's Makefile sets GRAPH
# (the graph, in GRAPH.tdsl), INPUTS (its parameters, in order: the .npy files model.py writes)
# and BATCH (the batch model.py writes), then includes this file.
#
#   make TDSL_RUN=/path/to/tdsl-run run   # tdsl-run (reference interpreter; RUN_FLAGS= for JIT)
#   make TDSLC=/path/to/tdslc cpp         # main.cpp linked with the emitted object
#                                         # (route: TDSLC_ROUTE, default --via=cpp)
TDSLC ?= tdslc
TDSLC_ROUTE ?= --via=cpp   # empty: the LLVM route, once it compiles graphs
TDSL_RUN ?= tdsl-run
RUN_FLAGS ?= --interpret
PYTHON ?= /usr/bin/python3
OUT ?= out
OMP_LIBDIR ?= /usr/lib/llvm-19/lib

.PHONY: run cpp clean
$(OUT)/ref.npy: model.py
	mkdir -p $(OUT)
	$(PYTHON) model.py write $(OUT) $(BATCH)

run: $(OUT)/ref.npy
	$(TDSL_RUN) $(GRAPH).tdsl --func $(GRAPH) $(RUN_FLAGS) $(foreach n,$(INPUTS),--input $(n)=$(OUT)/$(n).npy) --output o=$(OUT)/o.npy
	$(PYTHON) model.py compare $(OUT) $(OUT)/o.npy

$(OUT)/$(GRAPH).o: $(GRAPH).tdsl
	mkdir -p $(OUT)
	$(TDSLC) $(GRAPH).tdsl --emit=obj $(TDSLC_ROUTE) -MD -MF $@.d -o $@
$(OUT)/$(GRAPH).h: $(GRAPH).tdsl
	mkdir -p $(OUT)
	$(TDSLC) $(GRAPH).tdsl --emit=header -MD -MF $@.d -o $@
$(OUT)/main: main.cpp $(OUT)/$(GRAPH).o $(OUT)/$(GRAPH).h
	g++ -std=c++17 -O2 -Wall -Wextra -I$(OUT) main.cpp $(OUT)/$(GRAPH).o -o $@ -L$(OMP_LIBDIR) -Wl,-rpath,$(OMP_LIBDIR) -lomp -lm -lpthread

cpp: $(OUT)/main $(OUT)/ref.npy
	$(OUT)/main $(OUT)

clean:
	rm -rf $(OUT)

-include $(OUT)/$(GRAPH).o.d $(OUT)/$(GRAPH).h.d
