`include "s2_pkg.svh"
// Chip top (thesis 2.3.4): a MESH_COLS x MESH_ROWS mesh of QPEs, each router linked to its four
// neighbours (north = y - 1, east = x + 1, south = y + 1, west = x - 1). Packets are routed X first, then Y,
// by the routers themselves (noc_router.sv), so the chip is only wiring: QPE i sits at x = i % MESH_COLS,
// y = i / MESH_COLS (QPEs numbered row by row, as the model's ChipShape).
//
// Every router's host and DRAM ports come out of the chip, per QPE; the configuration decides which of them
// have a DRAM or the host behind them (the prototype: DRAMs at the west and east edges, the host through
// the four centre agents; model/hw_config.h ChipShape). A port with nothing behind it is left idle: nothing
// is addressed to it. The per-QPE buses are the QPE's ports side by side, QPE i at [i * width +: width].
//
// The RTL backend does not simulate this module flat: Verilator 5 writes each instance's code out again
// (about 3.9 MB of C++ per QPE), so harness/backends/rtl/linked_qpes.h builds the QPE once and links the QPEs'
// mesh ports clock by clock from the same neighbours as below (model/noc/mesh.h Mesh::neighbour). A test
// verilates this module flat at 2x2 and shows the two clock-for-clock equal (tests/chip_sv_equivalence_test.cpp;
// rtl_stubs/README.md, "The chip").
module chip
#(
    parameter int MESH_COLS = 6,
    parameter int MESH_ROWS = 6,
    parameter int ROWS = 4,
    parameter int COLS = 16,
    localparam int NQ = MESH_COLS * MESH_ROWS,
    localparam int NPE = NQ * NUM_PE,
    localparam int PW = $bits(noc_pkt_t)
) (
    input  logic              clk,
    input  logic              rst_n,
    // flaw switches, for the whole chip (run time; 0 = correct hardware)
    input  logic              flaw_sram2clk,
    input  logic              flaw_neighbor_conv,
    input  logic              flaw_mm_wide_a,
    // host ports, per QPE (qpe.sv)
    input  logic [NQ-1:0]     host_valid,
    output logic [NQ-1:0]     host_ready,
    input  logic [NQ*3-1:0]   host_dst,
    input  logic [NQ*2-1:0]   host_kind,
    input  logic [NQ*17-1:0]  host_addr,
    input  logic [NQ*128-1:0] host_data,
    output logic [NQ-1:0]     host_rsp_valid,
    output logic [NQ*3-1:0]   host_rsp_src,
    output logic [NQ*17-1:0]  host_rsp_addr,
    output logic [NQ*128-1:0] host_rsp_data,
    input  logic [NQ-1:0]     host_rsp_pop,
    // DRAM ports, per QPE (qpe.sv)
    output logic [NQ-1:0]     dram_req_valid,
    output logic [NQ*$bits(node_t)-1:0] dram_req_src,
    output logic [NQ*4-1:0]   dram_req_kind,
    output logic [NQ*17-1:0]  dram_req_addr,
    output logic [NQ*128-1:0] dram_req_data,
    input  logic [NQ-1:0]     dram_req_pop,
    input  logic [NQ-1:0]     dram_valid,
    output logic [NQ-1:0]     dram_ready,
    input  logic [NQ*$bits(node_t)-1:0] dram_dst,
    input  logic [NQ*4-1:0]   dram_kind,
    input  logic [NQ*17-1:0]  dram_addr,
    input  logic [NQ*16-1:0]  dram_be,
    input  logic [NQ*128-1:0] dram_data,
    // activity per QPE (qpe.sv), 64 bits each
    output logic [NQ*64-1:0]  noc_packets,
    output logic [NQ*64-1:0]  noc_packet_hops,
    // ARM ports, per chip PE p = QPE * 4 + PE: arm_wr[p], arm_idx[5p +: 5], arm_data[32p +: 32]
    input  logic [NPE-1:0]    arm_wr,
    input  logic [NPE*5-1:0]  arm_idx,
    input  logic [NPE*32-1:0] arm_data,
    // status, per chip PE
    output logic [31:0]       cycle,
    output logic [NQ-1:0]     qpe_quiescent, // per QPE: only waiting, if at all (qpe.sv quiescent)
    output logic [NQ-1:0]     qpe_edge_quiet, // per QPE: its next edge changes nothing but ce (qpe.sv edge_quiet)
    output logic [NPE-1:0]    pe_busy,
    output logic [NPE-1:0]    pe_irq_done,
    output logic [NPE-1:0]    dma_busy,
    // statistics and backdoor of one QPE at a time
    input  logic [$clog2(NQ+1)-1:0] sel_qpe,
    input  logic [1:0]        stat_pe,
    input  logic [4:0]        stat_sel,
    output logic [31:0]       stat_value,
    input  logic [1:0]        bd_pe,
    input  logic              bd_we,
    input  logic [12:0]       bd_line,
    input  logic [127:0]      bd_wdata,
    output logic [127:0]      bd_rdata
);
  // the mesh links: QPE i's link FIFOs towards each direction, and the pops its neighbours give them
  // (links towards the edge have no reader: a 1x1 mesh reads none of them)
  /* verilator lint_off UNUSEDSIGNAL */
  logic [NUM_MESH_CH-1:0]    link_valid[NQ];
  logic [NUM_MESH_CH*PW-1:0] link_pkt  [NQ];
  logic [NUM_MESH_CH-1:0]    in_pop    [NQ];  // QPE i's pops of its neighbours' link FIFOs
  /* verilator lint_on UNUSEDSIGNAL */
  logic [NUM_MESH_CH-1:0]    link_pop  [NQ];  // pops of QPE i's link FIFOs
  logic [NUM_MESH_CH-1:0]    in_valid  [NQ];
  logic [NUM_MESH_CH*PW-1:0] in_pkt    [NQ];
  logic [31:0]               qpe_cycle [NQ];
  logic [31:0]               qpe_stat  [NQ];
  logic [127:0]              qpe_bd    [NQ];

  // the neighbour of QPE q in direction d (0 north, 1 east, 2 south, 3 west), or -1 at the edge
  function automatic int neighbour(input int q, input int d);
    int x, y;
    x = q % MESH_COLS;
    y = q / MESH_COLS;
    case (d)
      0: return y > 0 ? q - MESH_COLS : -1;
      1: return x < MESH_COLS - 1 ? q + 1 : -1;
      2: return y < MESH_ROWS - 1 ? q + MESH_COLS : -1;
      default: return x > 0 ? q - 1 : -1;
    endcase
  endfunction

  for (genvar q = 0; q < NQ; q++) begin : g_qpe
    for (genvar d = 0; d < NUM_DIRS; d++) begin : g_dir
      localparam int N = neighbour(q, d);
      localparam int BACK = (d + 2) % NUM_DIRS;  // the neighbour's link towards q
      for (genvar k = 0; k < NUM_CLASSES; k++) begin : g_cls
        localparam int M = d * NUM_CLASSES + k;
        localparam int MB = BACK * NUM_CLASSES + k;
        if (N >= 0) begin : g_link
          assign in_valid[q][M] = link_valid[N][MB];
          assign in_pkt[q][M*PW +: PW] = link_pkt[N][MB*PW +: PW];
          assign link_pop[q][M] = in_pop[N][MB];
        end else begin : g_edge
          assign in_valid[q][M] = 1'b0;
          assign in_pkt[q][M*PW +: PW] = '0;
          assign link_pop[q][M] = 1'b0;  // nothing is routed off the mesh
        end
      end
    end

    qpe #(.ROWS(ROWS), .COLS(COLS)) u_qpe (
        .clk, .rst_n,
        .qpe_x(COORD_BITS'(q % MESH_COLS)), .qpe_y(COORD_BITS'(q / MESH_COLS)),
        .flaw_sram2clk, .flaw_neighbor_conv, .flaw_mm_wide_a,
        .host_valid(host_valid[q]), .host_ready(host_ready[q]), .host_dst(host_dst[q*3 +: 3]),
        .host_kind(host_kind[q*2 +: 2]), .host_addr(host_addr[q*17 +: 17]), .host_data(host_data[q*128 +: 128]),
        .host_rsp_valid(host_rsp_valid[q]), .host_rsp_src(host_rsp_src[q*3 +: 3]),
        .host_rsp_addr(host_rsp_addr[q*17 +: 17]), .host_rsp_data(host_rsp_data[q*128 +: 128]),
        .host_rsp_pop(host_rsp_pop[q]),
        .dram_req_valid(dram_req_valid[q]), .dram_req_src(dram_req_src[q*$bits(node_t) +: $bits(node_t)]),
        .dram_req_kind(dram_req_kind[q*4 +: 4]), .dram_req_addr(dram_req_addr[q*17 +: 17]),
        .dram_req_data(dram_req_data[q*128 +: 128]), .dram_req_pop(dram_req_pop[q]),
        .dram_valid(dram_valid[q]), .dram_ready(dram_ready[q]), .dram_dst(dram_dst[q*$bits(node_t) +: $bits(node_t)]),
        .dram_kind(dram_kind[q*4 +: 4]), .dram_addr(dram_addr[q*17 +: 17]), .dram_be(dram_be[q*16 +: 16]),
        .dram_data(dram_data[q*128 +: 128]),
        .mesh_out_valid(link_valid[q]), .mesh_out_pkt(link_pkt[q]), .mesh_out_pop(link_pop[q]),
        .mesh_in_valid(in_valid[q]), .mesh_in_pkt(in_pkt[q]), .mesh_in_pop(in_pop[q]),
        .noc_packets(noc_packets[q*64 +: 64]), .noc_packet_hops(noc_packet_hops[q*64 +: 64]),
        .arm_wr(arm_wr[q*NUM_PE +: NUM_PE]), .arm_idx(arm_idx[q*NUM_PE*5 +: NUM_PE*5]),
        .arm_data(arm_data[q*NUM_PE*32 +: NUM_PE*32]),
        .cycle(qpe_cycle[q]), .quiescent(qpe_quiescent[q]), .edge_quiet(qpe_edge_quiet[q]), .pe_busy(pe_busy[q*NUM_PE +: NUM_PE]), .pe_irq_done(pe_irq_done[q*NUM_PE +: NUM_PE]),
        .dma_busy(dma_busy[q*NUM_PE +: NUM_PE]),
        .stat_pe, .stat_sel, .stat_value(qpe_stat[q]),
        .bd_pe, .bd_we(bd_we && 32'(sel_qpe) == q), .bd_line, .bd_wdata, .bd_rdata(qpe_bd[q]));
  end

  // every QPE counts the same PE clocks from the same reset
  assign cycle = qpe_cycle[0];
  assign stat_value = qpe_stat[32'(sel_qpe) < NQ ? 32'(sel_qpe) : 0];
  assign bd_rdata = qpe_bd[32'(sel_qpe) < NQ ? 32'(sel_qpe) : 0];
endmodule
