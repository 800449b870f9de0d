`include "s2_pkg.svh"
// Processing element: SRAM, MLA, DMA, NoC interface and the task controller. The ARM core itself is not in
// this RTL: whoever drives the ARM port (the harness's C++ ARM, harness/backends/rtl/rtl_chip.h) plays it,
// writing the PE's registers one per PE clock as the ARM's local bus would.
module pe
#(
    parameter int ROWS = 4,
    parameter int COLS = 16,
    parameter logic [1:0] PE_ID = 2'd0
) (
    input  logic         clk,
    input  logic         rst_n,
    input  logic         ce,
    input  logic [COORD_BITS-1:0] qpe_x,  // this PE's QPE in the mesh
    input  logic [COORD_BITS-1:0] qpe_y,
    input  logic [31:0]  cycle,
    input  logic         flaw_sram2clk,
    input  logic         flaw_neighbor_conv,
    input  logic         flaw_mm_wide_a,
    // router side, class k at [k] and [k*NOC_PKT_BITS +: NOC_PKT_BITS]
    output logic [NUM_CLASSES-1:0]              out_valid,
    output logic [NUM_CLASSES*NOC_PKT_BITS-1:0] out_pkt,
    input  logic [NUM_CLASSES-1:0]              out_pop,
    input  logic [NUM_CLASSES-1:0]              in_valid,
    input  logic [NUM_CLASSES*NOC_PKT_BITS-1:0] in_pkt,
    output logic [NUM_CLASSES-1:0]              in_pop,
    // ARM port: one register write per PE clock (takes precedence over a REG_WR from the NoC)
    input  logic         arm_wr,
    input  logic [4:0]   arm_idx,
    input  logic [31:0]  arm_data,
    // status
    output logic         busy,
    output logic         dma_busy,
    output logic         irq_done,
    output logic         quiescent,      // with nothing arriving, a clock changes no register (see below)
    input  logic [4:0]   stat_sel,
    output logic [31:0]  stat_value,
    // backdoor
    input  logic         bd_we,
    input  logic [12:0]  bd_line,
    input  logic [127:0] bd_wdata,
    output logic [127:0] bd_rdata
);
  // SRAM masters: 0 NoC slave, 1 MLA operand A, 2 MLA operand B, 3 MLA output, 4 DMA (reads and writes)
  logic [4:0]   rq_valid, rq_we, rq_grant;
  logic [4:0]   rs_valid;  // [3]: writes have no response
  logic [5*17-1:0]  rq_addr;   // master i at [17i +: 17], [128i +: 128], [16i +: 16]
  logic [5*128-1:0] rq_wdata;
  logic [5*16-1:0]  rq_be;
  logic [127:0] sram_rdata;
  logic         sram_busy;

  sram #(.NREQ(5)) u_sram (
      .clk, .rst_n, .ce, .flaw_sram2clk,
      .req_valid(rq_valid), .req_we(rq_we), .req_addr(rq_addr), .req_wdata(rq_wdata), .req_be(rq_be),
      .req_grant(rq_grant), .rsp_valid(rs_valid), .rsp_data(sram_rdata), .busy_o(sram_busy),
      .bd_we, .bd_line, .bd_wdata, .bd_rdata);

  logic         noc_reg_wr, reg_wr;
  logic [4:0]   noc_reg_idx, reg_idx;
  logic [31:0]  noc_reg_data, reg_data;
  assign reg_wr = arm_wr || noc_reg_wr;
  assign reg_idx = arm_wr ? arm_idx : noc_reg_idx;
  assign reg_data = arm_wr ? arm_data : noc_reg_data;
  logic         dma_pkt_valid, dma_pkt_ready, dma_request_done, dma_ack, dma_rd_rsp_valid;
  logic [127:0] dma_rd_rsp_data;
  noc_pkt_t     dma_pkt;
  logic         na_req_valid, na_req_ready, na_rsp_valid, noc_if_idle, mla_waiting, mla_counts_settled, dma_waiting;
  logic [2:0]   na_req_dst;
  logic [16:0]  na_req_addr;
  logic [RTAG_INDEX_BITS+1:0] na_req_widx;
  logic [127:0] na_rsp_data;

  node_t me;
  assign me = {qpe_x, qpe_y, 1'b0, PE_ID};  // {x, y, port}

  noc_if #(.PE_ID(PE_ID)) u_noc_if (
      .clk, .rst_n, .ce, .me, .flaw_neighbor_conv,
      .out_valid, .out_pkt, .out_pop, .rt_valid(in_valid), .rt_pkt(in_pkt), .rt_pop(in_pop),
      .reg_hold(arm_wr), .reg_wr(noc_reg_wr), .reg_idx(noc_reg_idx), .reg_data(noc_reg_data),
      .na_req_valid, .na_req_dst, .na_req_addr, .na_req_widx, .na_req_ready, .na_rsp_valid, .na_rsp_data,
      .dma_pkt_valid, .dma_pkt, .dma_pkt_ready, .dma_request_done, .dma_ack, .dma_rd_rsp_valid, .dma_rd_rsp_data,
      .s_valid(rq_valid[0]), .s_we(rq_we[0]), .s_addr(rq_addr[17*0 +: 17]), .s_wdata(rq_wdata[128*0 +: 128]), .s_be(rq_be[16*0 +: 16]),
      .s_grant(rq_grant[0]), .s_rsp(rs_valid[0]), .sram_rdata, .idle(noc_if_idle));

  logic        mla_start, op_mm, a_via_noc, mla_done;
  logic [15:0] dim_wi, dim_hi, dim_d, dim_wf, dim_hf, dim_c, dim_b_plane_rows;
  logic [16:0] a_base, b_base, o_base;
  logic [1:0]  a_src_pe;
  logic [31:0] start_cycle, end_cycle;

  task_ctrl u_task_ctrl (
      .clk, .rst_n, .ce, .cycle, .reg_wr, .reg_idx, .reg_data,
      .mla_start, .op_mm, .dim_wi, .dim_hi, .dim_d, .dim_wf, .dim_hf, .dim_c, .dim_b_plane_rows,
      .a_base, .b_base, .o_base, .a_via_noc, .a_src_pe,
      .mla_done, .irq_done, .start_cycle, .end_cycle);

  logic [31:0] st_compute, st_output, st_a_wait, st_b_wait, st_tiles, st_steps;
  // activity counters since reset (s2_pkg.svh ACT_*)
  logic [63:0] act_mac, act_mac_pad, act_rd_mla_a, act_rd_mla_b, act_wr_mla_out, act_rd_dma, act_wr_dma, act_busy;

  mla #(.ROWS(ROWS), .COLS(COLS)) u_mla (
      .clk, .rst_n, .ce, .cycle, .flaw_sram2clk, .flaw_mm_wide_a,
      .start(mla_start), .op_mm, .dim_wi, .dim_hi, .dim_d, .dim_wf, .dim_hf, .dim_c, .dim_b_plane_rows,
      .a_base, .b_base, .o_base, .a_via_noc, .a_src_pe,
      .busy, .done_pulse(mla_done), .waiting(mla_waiting), .counts_settled(mla_counts_settled),
      .sa_valid(rq_valid[1]), .sa_addr(rq_addr[17*1 +: 17]), .sa_grant(rq_grant[1]), .sa_rsp(rs_valid[1]),
      .sb_valid(rq_valid[2]), .sb_addr(rq_addr[17*2 +: 17]), .sb_grant(rq_grant[2]), .sb_rsp(rs_valid[2]),
      .so_valid(rq_valid[3]), .so_addr(rq_addr[17*3 +: 17]), .so_wdata(rq_wdata[128*3 +: 128]), .so_grant(rq_grant[3]),
      .sram_rdata,
      .na_req_valid, .na_req_dst, .na_req_addr, .na_req_widx, .na_req_ready, .na_rsp_valid, .na_rsp_data,
      .st_compute_cycles(st_compute), .st_output_cycles(st_output), .st_a_wait, .st_b_wait,
      .st_tiles, .st_steps,
      .act_mac_ops(act_mac), .act_mac_padding_ops(act_mac_pad));

  dma u_dma (
      .clk, .rst_n, .ce, .me, .reg_wr, .reg_idx, .reg_data, .busy(dma_busy), .waiting(dma_waiting),
      .pkt_valid(dma_pkt_valid), .pkt(dma_pkt), .pkt_ready(dma_pkt_ready),
      .request_done(dma_request_done), .ack(dma_ack), .rd_rsp_valid(dma_rd_rsp_valid), .rd_rsp_data(dma_rd_rsp_data),
      .s_valid(rq_valid[4]), .s_we(rq_we[4]), .s_addr(rq_addr[17*4 +: 17]), .s_wdata(rq_wdata[128*4 +: 128]), .s_be(rq_be[16*4 +: 16]),
      .s_grant(rq_grant[4]), .s_rsp(rs_valid[4]), .sram_rdata);

  assign rq_we[1] = 1'b0;
  assign rq_we[2] = 1'b0;
  assign rq_we[3] = 1'b1;
  assign rq_wdata[128*1 +: 128] = '0;
  assign rq_wdata[128*2 +: 128] = '0;
  assign rq_be[16*1 +: 16] = '0;
  assign rq_be[16*2 +: 16] = '0;
  assign rq_be[16*3 +: 16] = '1;

  // Quiescent: the MLA and the DMA each idle or only waiting for a packet, the edge-counted clocks settled
  // (clocks_while), no task just started or just done, no SRAM access or response pending, nothing queued
  // for the router or held by the NoC slave. With its ARM port quiet and nothing for it at the router, a
  // clock then changes no register here (the harness's activity-driven evaluation relies on it:
  // rtl_stubs/README.md, "Activity-driven evaluation").
  logic busy_clocks_settled;
  assign quiescent = (!busy || mla_waiting) && mla_counts_settled && (!dma_busy || dma_waiting) && busy_clocks_settled &&
                     !mla_done && !mla_start && noc_if_idle && !sram_busy && rs_valid == '0;

  // SRAM bytes by the master granted the port: a read is a whole line (16 bytes), a write the bytes it enables
  logic [4:0] be_bytes;
  always_comb begin
    be_bytes = '0;
    for (int i = 0; i < 5; i++)
      if (rq_grant[i]) for (int k = 0; k < 16; k++) be_bytes = be_bytes + 5'(rq_be[16*i + k]);
  end
  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      act_rd_mla_a <= '0; act_rd_mla_b <= '0; act_wr_mla_out <= '0;
      act_rd_dma <= '0; act_wr_dma <= '0;
    end else if (ce) begin
`ifndef SYNTHESIS  // the harness's activity counters: instrumentation, left out of the area (tools/synth.sh)
      if (rq_grant[1]) act_rd_mla_a <= act_rd_mla_a + 64'd16;
      if (rq_grant[2]) act_rd_mla_b <= act_rd_mla_b + 64'd16;
      if (rq_grant[3]) act_wr_mla_out <= act_wr_mla_out + 64'(be_bytes);
      // the DMA/NoC port: the NoC slave (requests arriving over the NoC) and the DMA
      if ((rq_grant[0] && !rq_we[0]) || (rq_grant[4] && !rq_we[4])) act_rd_dma <= act_rd_dma + 64'd16;
      if ((rq_grant[0] && rq_we[0]) || (rq_grant[4] && rq_we[4])) act_wr_dma <= act_wr_dma + 64'(be_bytes);
`endif
    end
  end
  // clocks with the MLA or the DMA busy: they tick while a unit waits, so counted by their edges (an
  // activity counter: instrumentation, left out of the area as the others)
`ifndef SYNTHESIS
  clocks_while #(.WIDTH(64)) u_busy_clocks (
      .clk, .rst_n, .ce, .cycle, .clear(1'b0), .cond(busy || dma_busy), .count(act_busy),
      .settled(busy_clocks_settled));
`else
  assign act_busy = '0;
  assign busy_clocks_settled = 1'b1;
`endif

  // the counter a selector from STAT_ACT_BASE on reads (two selectors each: low, high half)
  logic [63:0] act_sel;
  always_comb begin
    case ((stat_sel - STAT_ACT_BASE) >> 1)
      5'(ACT_MAC_OPS):         act_sel = act_mac;
      5'(ACT_MAC_PADDING_OPS): act_sel = act_mac_pad;
      5'(ACT_SRAM_RD_MLA_A):   act_sel = act_rd_mla_a;
      5'(ACT_SRAM_RD_MLA_B):   act_sel = act_rd_mla_b;
      5'(ACT_SRAM_WR_MLA_OUT): act_sel = act_wr_mla_out;
      5'(ACT_SRAM_RD_DMA):     act_sel = act_rd_dma;
      5'(ACT_SRAM_WR_DMA):     act_sel = act_wr_dma;
      5'(ACT_BUSY_CYCLES):     act_sel = act_busy;
      default:                 act_sel = '0;
    endcase
  end
  always_comb begin
    case (stat_sel)
      STAT_START_CYCLE:    stat_value = start_cycle;
      STAT_END_CYCLE:      stat_value = end_cycle;
      STAT_COMPUTE_CYCLES: stat_value = st_compute;
      STAT_OUTPUT_CYCLES:  stat_value = st_output;
      STAT_A_WAIT_CYCLES:  stat_value = st_a_wait;
      STAT_B_WAIT_CYCLES:  stat_value = st_b_wait;
      STAT_TILES:          stat_value = st_tiles;
      STAT_STEPS:          stat_value = st_steps;
      default:
        if (stat_sel >= STAT_ACT_BASE) stat_value = stat_sel[0] ? act_sel[63:32] : act_sel[31:0];
        else stat_value = '0;
    endcase
  end
endmodule
