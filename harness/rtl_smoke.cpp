#include <cstdio>
#include <cstdlib>
#include <string>
#include "harness/backend.h"
#include "model/golden.h"
using namespace s2;
int main(int argc, char** argv) {
  HwConfig cfg;
  if (argc > 1 && std::string(argv[1]) == "2") cfg.flaws.sram2clk = true;
  auto rtl = make_rtl_backend(cfg);
  struct R { const char* id; Op op; int a,b,c,d,e,f; int shift; };
  R rows[] = {{"c1",Op::Conv,226,22,3,3,3,4,-1},{"c2",Op::Conv,114,9,64,3,3,4,-1},{"c3",Op::Conv,30,9,256,3,3,4,-1},
              {"c4",Op::Conv,56,14,64,1,1,4,-1},{"c5",Op::Conv,28,14,128,5,5,4,-1},{"c6",Op::Conv,28,10,128,7,7,4,-1},
              {"m1",Op::Mm,64,1,1024,64,0,0,-1},{"c1n",Op::Conv,226,22,3,3,3,4,1},{"m1n",Op::Mm,64,1,1024,64,0,0,1}};
  for (auto& r : rows) {
    Task t; t.id = r.id; t.op = r.op; t.a_src_shift = r.shift; t.seed = 7;
    if (r.op == Op::Conv) t.conv = {r.a,r.b,r.c,r.d,r.e,r.f,1}; else t.mm = {r.a,r.b,r.c,r.d};
    RunOptions o; o.watchdog_cycles = 2000000;
    TaskTrace tr = rtl->run(t, o);
    std::vector<PeOperands> ops; for (int p=0;p<4;++p) ops.push_back(make_operands(t,p));
    int bad = 0;
    for (auto& pt : tr.pes) { auto g = golden_results(t, pt.pe, ops, cfg); if (g != pt.results) ++bad; }
    std::printf("%s cycles=%llu completed=%d badPEs=%d wall=%.3f pe0: comp=%llu out=%llu aw=%llu bw=%llu tiles=%llu steps=%llu\n", r.id,
      (unsigned long long)tr.cycles, tr.completed, bad, tr.wall_s, (unsigned long long)tr.pes[0].phases.compute,
      (unsigned long long)tr.pes[0].phases.output,(unsigned long long)tr.pes[0].phases.a_wait,(unsigned long long)tr.pes[0].phases.b_wait,
      (unsigned long long)tr.pes[0].tiles,(unsigned long long)tr.pes[0].steps);
  }
}
