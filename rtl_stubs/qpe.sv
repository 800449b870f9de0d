`include "s2_pkg.svh"
// QPE top: 4 PEs around one NoC router, a host port and a DRAM port into the router, an ARM port per PE,
// status/statistics and a backdoor for test data. `clk` is the NoC clock; the PEs run on every second edge (the PE clock is half the NoC
// clock). The host-port protocol is documented in rtl_stubs/README.md; it is the interface a user's
// own QPE RTL adapter must drive (harness/backends/rtl/ is the only code that knows these names).
module qpe
#(
    parameter int ROWS = 4,
    parameter int COLS = 16
) (
    input  logic         clk,
    input  logic         rst_n,
    // this QPE's position in the chip's mesh (0, 0 alone: QPE-DRAM); registered: set before reset ends
    input  logic [COORD_BITS-1:0] qpe_x,
    input  logic [COORD_BITS-1:0] qpe_y,
    // flaw switches (run time; 0 = correct hardware); registered: a change takes effect a NoC clock later
    input  logic         flaw_sram2clk,
    input  logic         flaw_neighbor_conv,
    input  logic         flaw_mm_wide_a,
    // host port, NoC clock: a packet is taken on a clock edge where host_valid && host_ready
    input  logic         host_valid,
    output logic         host_ready,
    input  logic [2:0]   host_dst,
    input  logic [1:0]   host_kind,
    input  logic [16:0]  host_addr,
    input  logic [127:0] host_data,
    // host responses (read data), popped with host_rsp_pop
    output logic         host_rsp_valid,
    output logic [2:0]   host_rsp_src,
    output logic [16:0]  host_rsp_addr,
    output logic [127:0] host_rsp_data,
    input  logic         host_rsp_pop,
    // DRAM port (QPE-DRAM): the DMAs' requests come out here (popped with dram_req_pop); the DRAM's
    // packets go in (DMA_DATA and DMA_ACK), one per NoC clock edge with dram_valid && dram_ready
    output logic         dram_req_valid,
    output node_t        dram_req_src,
    output logic [3:0]   dram_req_kind,
    output logic [16:0]  dram_req_addr,
    output logic [127:0] dram_req_data,
    input  logic         dram_req_pop,
    input  logic         dram_valid,
    output logic         dram_ready,
    input  node_t        dram_dst,
    input  logic [3:0]   dram_kind,
    input  logic [16:0]  dram_addr,
    input  logic [15:0]  dram_be,
    input  logic [127:0] dram_data,
    // mesh links to the neighbouring routers, NoC clock, channel (direction - NORTH_PORT) * 2 + class:
    // this router's link FIFOs (the neighbour pops them) and the neighbours' (this router pops them).
    // Unused at the mesh's edges (nothing routes off the mesh) and alone.
    output logic [NUM_MESH_CH-1:0]                     mesh_out_valid,
    output logic [NUM_MESH_CH*$bits(noc_pkt_t)-1:0]    mesh_out_pkt,
    input  logic [NUM_MESH_CH-1:0]                     mesh_out_pop,
    input  logic [NUM_MESH_CH-1:0]                     mesh_in_valid,
    input  logic [NUM_MESH_CH*$bits(noc_pkt_t)-1:0]    mesh_in_pkt,
    output logic [NUM_MESH_CH-1:0]                     mesh_in_pop,
    // activity since reset (rtl_stubs/README.md, "Activity"): packets this router's PEs and DRAM port put
    // into the NoC, and packets it sent over its mesh links
    output logic [63:0]  noc_packets,
    output logic [63:0]  noc_packet_hops,
    // ARM port per PE (PE p: arm_wr[p], arm_idx[5p +: 5], arm_data[32p +: 32]), PE clock
    input  logic [3:0]   arm_wr,
    input  logic [19:0]  arm_idx,
    input  logic [127:0] arm_data,
    // status
    output logic [31:0]  cycle,          // PE clocks since reset
    output logic         quiescent,      // with quiet inputs, a clock changes nothing but ce and cycle_q (rtl_stubs/README.md)
    output logic         edge_quiet,     // with quiet inputs, the next clock edge does (quiescent, or not a PE clock edge)
    output logic [3:0]   pe_busy,
    output logic [3:0]   pe_irq_done,
    output logic [3:0]   dma_busy,
    input  logic [1:0]   stat_pe,
    input  logic [4:0]   stat_sel,
    output logic [31:0]  stat_value,
    // backdoor into one PE's SRAM (untimed)
    input  logic [1:0]   bd_pe,
    input  logic         bd_we,
    input  logic [12:0]  bd_line,
    input  logic [127:0] bd_wdata,
    output logic [127:0] bd_rdata
);
  // PE clock enable: every second NoC clock edge. The QPE's only free-running state: the harness advances
  // it by the clocks it did not evaluate a quiescent QPE (public: rtl_stubs/README.md, "Activity-driven evaluation").
  logic ce /*verilator public_flat_rw*/;
  logic [31:0] cycle_q /*verilator public_flat_rw*/;
  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      ce <= 1'b0;
      cycle_q <= '0;
    end else begin
      ce <= ~ce;
      if (ce) cycle_q <= cycle_q + 1;
    end
  end
  assign cycle = cycle_q;

  // router channels: port * NUM_CLASSES + class
  logic     r_in_valid [NUM_CH];
  noc_pkt_t r_in_pkt   [NUM_CH];
  logic     r_in_pop   [NUM_CH];
  logic     r_out_valid[NUM_CH];
  noc_pkt_t r_out_pkt  [NUM_CH];
  logic     r_out_pop  [NUM_CH];
  localparam int HOST_REQ = HOST_PORT * NUM_CLASSES + CLS_REQ;
  localparam int HOST_RSP = HOST_PORT * NUM_CLASSES + CLS_RSP;

  // The QPE's place in the mesh and the flaw switches are static while tasks run: registered, they take effect a
  // NoC clock after they are set, and the logic they feed (every packet's route, the SRAM port, the MLA) is
  // clocked logic for a simulator instead of logic that depends on the QPE's inputs, which Verilator evaluates
  // again in every evaluation (the chip RTL 1.4x as fast: docs/figures.md, "The chip RTL: registered static inputs").
  logic [COORD_BITS-1:0] at_x, at_y;
  logic sram2clk_q, neighbor_conv_q, mm_wide_a_q;
  always_ff @(posedge clk) begin
    at_x <= qpe_x;
    at_y <= qpe_y;
    sram2clk_q <= flaw_sram2clk;
    neighbor_conv_q <= flaw_neighbor_conv;
    mm_wide_a_q <= flaw_mm_wide_a;
  end
  logic router_idle;
  logic [NUM_PE-1:0] pe_quiescent;
  noc_router u_router (
      .clk, .rst_n, .my_x(at_x), .my_y(at_y),
      .in_valid(r_in_valid), .in_pkt(r_in_pkt), .in_pop(r_in_pop),
      .out_valid(r_out_valid), .out_pkt(r_out_pkt), .out_pop(r_out_pop), .noc_packets, .noc_packet_hops,
      .idle(router_idle));

  // host port: a small FIFO on the NoC clock
  noc_pkt_t host_pkt;
  logic host_full, host_empty;
  logic [2:0] host_count_unused;
  assign host_pkt.dst = '{x: at_x, y: at_y, port: host_dst};
  assign host_pkt.src = '{x: at_x, y: at_y, port: 3'(HOST_PORT)};
  assign host_pkt.kind = pkt_kind_e'({2'b00, host_kind});
  assign host_pkt.be = '1;
  assign host_pkt.a_read = 1'b0;
  assign host_pkt.rtag = '0;
  assign host_pkt.addr = host_addr;
  assign host_pkt.data = host_data;
  fifo #(.WIDTH($bits(noc_pkt_t)), .DEPTH(4)) u_host_in (
      .clk, .rst_n, .push(host_valid && !host_full), .push_data(host_pkt),
      .pop(r_in_pop[HOST_REQ]), .head(r_in_pkt[HOST_REQ]), .empty(host_empty), .full(host_full),
      .count(host_count_unused));
  assign host_ready = !host_full;
  assign r_in_valid[HOST_REQ] = !host_empty;
  // the host sends no responses and receives no requests
  assign r_in_valid[HOST_RSP] = 1'b0;
  assign r_in_pkt[HOST_RSP] = '0;
  assign r_out_pop[HOST_REQ] = r_out_valid[HOST_REQ];  // dropped: nothing addresses requests to the host

  assign host_rsp_valid = r_out_valid[HOST_RSP];
  assign host_rsp_src = r_out_pkt[HOST_RSP].src.port;
  assign host_rsp_addr = r_out_pkt[HOST_RSP].addr;
  assign host_rsp_data = r_out_pkt[HOST_RSP].data;
  assign r_out_pop[HOST_RSP] = host_rsp_pop && r_out_valid[HOST_RSP];

  // DRAM port: the DRAM's packets enter through one FIFO per message class (data as requests to the
  // PEs' NoC slaves, row acknowledgements as responses to their DMAs)
  localparam int DRAM_REQ = DRAM_PORT * NUM_CLASSES + CLS_REQ;
  localparam int DRAM_RSP = DRAM_PORT * NUM_CLASSES + CLS_RSP;
  noc_pkt_t dram_pkt;
  assign dram_pkt.dst = dram_dst;
  assign dram_pkt.src = '{x: at_x, y: at_y, port: 3'(DRAM_PORT)};
  assign dram_pkt.kind = pkt_kind_e'(dram_kind);
  assign dram_pkt.a_read = 1'b0;
  assign dram_pkt.rtag = '0;
  assign dram_pkt.be = dram_be;
  assign dram_pkt.addr = dram_addr;
  assign dram_pkt.data = dram_data;
  logic dram_in_full[NUM_CLASSES], dram_in_empty[NUM_CLASSES], dram_in_push[NUM_CLASSES];
  logic dram_rsp_class;
  assign dram_rsp_class = pkt_class(dram_pkt.kind);
  for (genvar k = 0; k < NUM_CLASSES; k++) begin : g_dram_in
    logic [2:0] count_unused;
    assign dram_in_push[k] = dram_valid && !dram_in_full[k] && (dram_rsp_class == (k == CLS_RSP));
    fifo #(.WIDTH($bits(noc_pkt_t)), .DEPTH(4)) u_in (
        .clk, .rst_n, .push(dram_in_push[k]), .push_data(dram_pkt),
        .pop(r_in_pop[DRAM_PORT * NUM_CLASSES + k]), .head(r_in_pkt[DRAM_PORT * NUM_CLASSES + k]),
        .empty(dram_in_empty[k]), .full(dram_in_full[k]), .count(count_unused));
    assign r_in_valid[DRAM_PORT * NUM_CLASSES + k] = !dram_in_empty[k];
  end
  assign dram_ready = !dram_in_full[dram_rsp_class ? CLS_RSP : CLS_REQ];
  assign dram_req_valid = r_out_valid[DRAM_REQ];
  assign dram_req_src = r_out_pkt[DRAM_REQ].src;
  assign dram_req_kind = r_out_pkt[DRAM_REQ].kind;
  assign dram_req_addr = r_out_pkt[DRAM_REQ].addr;
  assign dram_req_data = r_out_pkt[DRAM_REQ].data;
  assign r_out_pop[DRAM_REQ] = dram_req_pop && r_out_valid[DRAM_REQ];
  assign r_out_pop[DRAM_RSP] = r_out_valid[DRAM_RSP];  // dropped: nothing sends responses to the DRAM

  for (genvar m = 0; m < NUM_MESH_CH; m++) begin : g_mesh
    localparam int CH = NORTH_PORT * NUM_CLASSES + m;
    localparam int W = $bits(noc_pkt_t);
    assign mesh_out_valid[m] = r_out_valid[CH];
    assign mesh_out_pkt[m*W +: W] = r_out_pkt[CH];
    assign r_out_pop[CH] = mesh_out_pop[m];
    assign r_in_valid[CH] = mesh_in_valid[m];
    assign r_in_pkt[CH] = mesh_in_pkt[m*W +: W];
    assign mesh_in_pop[m] = r_in_pop[CH];
  end

  logic [31:0]  pe_stat [NUM_PE];
  logic [127:0] pe_bd_rdata[NUM_PE];

  for (genvar p = 0; p < NUM_PE; p++) begin : g_pe
    // the PE's router channels, class k at [k] and [k*NOC_PKT_BITS +: NOC_PKT_BITS] of its ports
    logic [NUM_CLASSES-1:0]              out_valid, out_pop, in_valid, in_pop;
    logic [NUM_CLASSES*NOC_PKT_BITS-1:0] out_pkt, in_pkt;
    for (genvar k = 0; k < NUM_CLASSES; k++) begin : g_cls
      localparam int CH = p * NUM_CLASSES + k;
      assign r_in_valid[CH] = out_valid[k];
      assign r_in_pkt[CH] = out_pkt[k*NOC_PKT_BITS +: NOC_PKT_BITS];
      assign out_pop[k] = r_in_pop[CH];
      assign in_valid[k] = r_out_valid[CH];
      assign in_pkt[k*NOC_PKT_BITS +: NOC_PKT_BITS] = r_out_pkt[CH];
      assign r_out_pop[CH] = in_pop[k];
    end
    pe #(.ROWS(ROWS), .COLS(COLS), .PE_ID(2'(p))) u_pe (
        .clk, .rst_n, .ce, .qpe_x(at_x), .qpe_y(at_y), .cycle,
        .flaw_sram2clk(sram2clk_q), .flaw_neighbor_conv(neighbor_conv_q), .flaw_mm_wide_a(mm_wide_a_q),
        .out_valid, .out_pkt, .out_pop, .in_valid, .in_pkt, .in_pop,
        .arm_wr(arm_wr[p]), .arm_idx(arm_idx[5*p +: 5]), .arm_data(arm_data[32*p +: 32]),
        .busy(pe_busy[p]), .dma_busy(dma_busy[p]), .irq_done(pe_irq_done[p]), .quiescent(pe_quiescent[p]),
        .stat_sel, .stat_value(pe_stat[p]),
        .bd_we(bd_we && bd_pe == 2'(p)), .bd_line, .bd_wdata, .bd_rdata(pe_bd_rdata[p]));
  end

  // Nothing for the router to do: its pipeline and output FIFOs, the host and DRAM-port FIFOs and the PEs'
  // outbound FIFOs empty.
  logic noc_idle;
  always_comb begin
    noc_idle = router_idle && host_empty && dram_in_empty[CLS_REQ] && dram_in_empty[CLS_RSP];
    for (int c = 0; c < NUM_PE * NUM_CLASSES; c++) if (r_in_valid[c]) noc_idle = 1'b0;
  end
  // That, and every PE quiescent (idle, or its MLA or DMA only waiting for a packet): with no input (ARM
  // writes, mesh packets, a DRAM or host packet) a clock then changes nothing but ce and cycle_q, which the
  // harness advances itself. The PEs change state on PE clock edges only (ce), so with the router idle an
  // edge that is not one (ce low) changes nothing but ce either, whatever the PEs do.
  assign quiescent = noc_idle && pe_quiescent == '1;
  assign edge_quiet = noc_idle && (pe_quiescent == '1 || !ce);

  assign stat_value = pe_stat[stat_pe];
  assign bd_rdata = pe_bd_rdata[bd_pe];
endmodule
