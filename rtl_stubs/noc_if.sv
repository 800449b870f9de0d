`include "s2_pkg.svh"
// PE's interface to the QPE router, per message class (request, response): an outbound FIFO (pushed on
// the PE clock, popped by the router on the NoC clock); inbound, the router's output FIFOs, popped on the
// PE clock. Inbound requests go to the task controller (REG_WR) or to the NoC slave, which
// serves reads and writes of this PE's SRAM for other PEs, for this PE's own MLA (convolution operand A)
// and for the host. Inbound responses are operand-A data for the MLA and are always taken.
module noc_if
#(
    parameter logic [1:0] PE_ID = 2'd0,
    parameter int OUT_DEPTH = 4
) (
    input  logic         clk,
    input  logic         rst_n,
    input  logic         ce,
    input  node_t        me,               // this PE's node (its QPE's coordinates, port PE_ID)
    input  logic         flaw_neighbor_conv,
    // towards the router, class k (CLS_REQ, CLS_RSP) at [k] and [k*NOC_PKT_BITS +: NOC_PKT_BITS]
    output logic [NUM_CLASSES-1:0]              out_valid,
    output logic [NUM_CLASSES*NOC_PKT_BITS-1:0] out_pkt,
    input  logic [NUM_CLASSES-1:0]              out_pop,
    // from the router
    input  logic [NUM_CLASSES-1:0]              rt_valid,
    input  logic [NUM_CLASSES*NOC_PKT_BITS-1:0] rt_pkt,
    output logic [NUM_CLASSES-1:0]              rt_pop,
    // register writes from the NoC; held while the ARM port writes a register (reg_hold)
    input  logic         reg_hold,
    output logic         reg_wr,
    output logic [4:0]   reg_idx,
    output logic [31:0]  reg_data,
    // MLA operand A over the NoC
    input  logic         na_req_valid,
    input  logic [2:0]   na_req_dst,
    input  logic [16:0]  na_req_addr,
    input  logic [RTAG_INDEX_BITS+1:0] na_req_widx,  // the word's index in the MLA's tile (low bits)
    output logic         na_req_ready,
    output logic         na_rsp_valid,
    output logic [127:0] na_rsp_data,
    // the DMA: its packets to the DRAM, the last lines of its read requests written into SRAM, the DRAM's
    // acknowledgements of its written requests
    input  logic         dma_pkt_valid,
    input  noc_pkt_t     dma_pkt,
    output logic         dma_pkt_ready,
    output logic         dma_request_done,
    output logic         dma_ack,
    output logic         dma_rd_rsp_valid,  // the data of a line the DMA read from another PE's SRAM
    output logic [127:0] dma_rd_rsp_data,
    // SRAM master 0 (highest priority)
    output logic         s_valid,
    output logic         s_we,
    output logic [16:0]  s_addr,
    output logic [127:0] s_wdata,
    output logic [15:0]  s_be,
    input  logic         s_grant,
    input  logic         s_rsp,
    input  logic [127:0] sram_rdata,
    // nothing in flight here: both outbound FIFOs empty and the NoC slave idle
    output logic         idle
);
  // ---------------- outbound, one FIFO per class ----------------
  logic [NUM_CLASSES-1:0]              ob_push, ob_full, ob_empty;
  logic [NUM_CLASSES*NOC_PKT_BITS-1:0] ob_data;

  // ---------------- inbound ----------------
  // The router's output FIFOs are the asynchronous NoC FIFOs: the PE pops them on its own clock.
  logic [NUM_CLASSES-1:0] in_valid, in_pop;

  for (genvar k = 0; k < NUM_CLASSES; k++) begin : g_cls
    logic [$clog2(OUT_DEPTH+1)-1:0] ob_count_unused;
    fifo #(.WIDTH(NOC_PKT_BITS), .DEPTH(OUT_DEPTH)) u_out (
        .clk, .rst_n, .push(ob_push[k]), .push_data(ob_data[k*NOC_PKT_BITS +: NOC_PKT_BITS]), .pop(out_pop[k]),
        .head(out_pkt[k*NOC_PKT_BITS +: NOC_PKT_BITS]),
        .empty(ob_empty[k]), .full(ob_full[k]), .count(ob_count_unused));
    assign out_valid[k] = !ob_empty[k];
    assign in_valid[k] = rt_valid[k];
    assign rt_pop[k] = in_pop[k];
  end

  // ---------------- NoC slave ----------------
  // Serves MEM_RD / MEM_WR straight from the head of the inbound request queue: it asks for the SRAM port
  // while the packet waits there and pops it when the port is granted. A read's data goes out as RD_RSP
  // in the PE clock it arrives (or, if the response FIFO is full, as soon as there is room). A MEM_WRA
  // (another DMA's last line of a row) is acknowledged with a DMA_ACK in the PE clock after its write.
  typedef enum logic [1:0] {SL_IDLE, SL_WAIT, SL_SEND} sl_state_e;
  sl_state_e sl_state;
  noc_pkt_t  sl_pkt;      // the read being served, then its response
  noc_pkt_t  rq;           // the inbound request at its queue's head
  /* verilator lint_off UNUSEDSIGNAL */
  noc_pkt_t  rs;           // the inbound response at its queue's head: its kind, a_read and data are used
  /* verilator lint_on UNUSEDSIGNAL */
  assign rq = rt_pkt[CLS_REQ*NOC_PKT_BITS +: NOC_PKT_BITS];
  assign rs = rt_pkt[CLS_RSP*NOC_PKT_BITS +: NOC_PKT_BITS];

  logic head_is_mem;
  logic head_is_dma;
  assign head_is_dma = rq.kind == PKT_DMA_DATA || rq.kind == PKT_DMA_LAST;
  logic head_is_write;
  assign head_is_write = rq.kind == PKT_MEM_WR || rq.kind == PKT_MEM_WRA || head_is_dma;
  assign head_is_mem = in_valid[CLS_REQ] && (rq.kind == PKT_MEM_RD || head_is_write);
  assign s_valid = (sl_state == SL_IDLE) && head_is_mem;
  assign s_we = head_is_write;
  assign s_addr = rq.addr;
  assign s_wdata = rq.data;
  assign s_be = rq.be;
  assign dma_request_done = ce && s_valid && s_grant && rq.kind == PKT_DMA_LAST;

  // A read from this PE's own MLA is answered to this PE; a remote MLA's operand-A read is answered to
  // the PE its return tag names (which is the requester, unless the tag was formed wrongly: neighbor_conv).
  logic remote_a_read;
  assign remote_a_read = sl_pkt.a_read && sl_pkt.src != me;
  noc_pkt_t rsp_pkt;
  always_comb begin
    rsp_pkt = sl_pkt;
    rsp_pkt.dst = sl_pkt.src;
    if (remote_a_read) rsp_pkt.dst.port = {1'b0, sl_pkt.rtag[RTAG_INDEX_BITS +: 2]};
    rsp_pkt.src = me;
    rsp_pkt.kind = PKT_RD_RSP;
    rsp_pkt.be = '0;
    rsp_pkt.data = sram_rdata;
  end
  logic rsp_now;
  assign rsp_now = (sl_state == SL_WAIT) && s_rsp;
  assign ob_push[CLS_RSP] = ce && !ob_full[CLS_RSP] && (rsp_now || sl_state == SL_SEND);
  assign ob_data[CLS_RSP*NOC_PKT_BITS +: NOC_PKT_BITS] = rsp_now ? rsp_pkt : sl_pkt;
  noc_pkt_t ack_pkt;  // the acknowledgement of the MEM_WRA at the queue's head
  always_comb begin
    ack_pkt = '0;
    ack_pkt.dst = rq.src;
    ack_pkt.src = me;
    ack_pkt.kind = PKT_DMA_ACK;
    ack_pkt.addr = rq.addr;
  end

  // the MLA's operand-A read requests. The return tag is {PE, word index} formed by one adder. The correct
  // hardware gives it only the index bits the field holds; with flaw_neighbor_conv it is given the whole
  // index, as in the prototype, so from word 2^RTAG_INDEX_BITS of a tile on the index carries into the PE bits.
  localparam int RTAG_BITS = RTAG_INDEX_BITS + 2;
  logic [RTAG_BITS-1:0] rtag_index;
  assign rtag_index = flaw_neighbor_conv ? na_req_widx : {2'b00, na_req_widx[RTAG_INDEX_BITS-1:0]};
  logic [RTAG_BITS-1:0] rtag_sum;  // the adder is as wide as the tag: a carry out of the index goes into the PE
  assign rtag_sum = {PE_ID, {RTAG_INDEX_BITS{1'b0}}} + rtag_index;
  noc_pkt_t a_req_pkt;
  always_comb begin
    a_req_pkt.dst = {me.x, me.y, na_req_dst};
    a_req_pkt.src = me;
    a_req_pkt.kind = PKT_MEM_RD;
    a_req_pkt.a_read = 1'b1;
    a_req_pkt.rtag = rtag_sum;
    a_req_pkt.be = '0;
    a_req_pkt.addr = na_req_addr;
    a_req_pkt.data = '0;
  end
  assign ob_data[CLS_REQ*NOC_PKT_BITS +: NOC_PKT_BITS] = na_req_valid ? a_req_pkt : dma_pkt;
  assign ob_push[CLS_REQ] = ce && !ob_full[CLS_REQ] && (na_req_valid || dma_pkt_valid);
  assign na_req_ready = !ob_full[CLS_REQ];
  assign dma_pkt_ready = !ob_full[CLS_REQ] && !na_req_valid;

  // ---------------- inbound dispatch ----------------
  assign reg_wr = in_valid[CLS_REQ] && rq.kind == PKT_REG_WR && !reg_hold;
  assign reg_idx = rq.addr[4:0];
  assign reg_data = rq.data[31:0];
  assign in_pop[CLS_REQ] = ce && (reg_wr || (s_valid && s_grant));
  logic rsp_is_ack;
  assign rsp_is_ack = rs.kind == PKT_DMA_ACK;
  // operand-A space is reserved when the read is requested, so a response is always taken
  // responses to the MLA's operand-A reads, and to the DMA's reads of another PE's SRAM (a_read clear)
  assign na_rsp_valid = in_valid[CLS_RSP] && !rsp_is_ack && rs.a_read;
  assign na_rsp_data = rs.data;
  assign dma_rd_rsp_valid = in_valid[CLS_RSP] && !rsp_is_ack && !rs.a_read;
  assign dma_rd_rsp_data = rs.data;
  assign dma_ack = ce && in_valid[CLS_RSP] && rsp_is_ack;
  assign in_pop[CLS_RSP] = ce && in_valid[CLS_RSP];

  assign idle = ob_empty == '1 && sl_state == SL_IDLE;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      sl_state <= SL_IDLE;
      sl_pkt <= '0;
    end else if (ce) begin
      case (sl_state)
        SL_IDLE: if (s_valid && s_grant && !s_we) begin
          sl_pkt <= rq;
          sl_state <= SL_WAIT;
        end else if (s_valid && s_grant && rq.kind == PKT_MEM_WRA) begin
          sl_pkt <= ack_pkt;
          sl_state <= SL_SEND;
        end
        SL_WAIT: if (s_rsp) begin
          if (ob_full[CLS_RSP]) begin
            sl_pkt <= rsp_pkt;
            sl_state <= SL_SEND;
          end else sl_state <= SL_IDLE;
        end
        SL_SEND: if (!ob_full[CLS_RSP]) sl_state <= SL_IDLE;
        default: sl_state <= SL_IDLE;
      endcase
    end
  end
endmodule
