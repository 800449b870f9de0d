`include "s2_pkg.svh"
// The DMA's transfers with another PE's SRAM (the far end of REG_DMA_START is a PE's node): the requester
// does all the work, so the far PE's NoC slave serves plain line reads and writes and keeps no state per
// requester (and two PEs reading each other cannot deadlock: the reads' data comes back as responses,
// which are always taken).
//   Load (far SRAM -> own SRAM): for each row, a PKT_MEM_RD per far SRAM line it touches, one per PE clock,
//   at most READS_IN_FLIGHT lines asked for and not yet realigned (the line buffer holds that many, so its
//   responses are always taken). The realigner (dma_realigner.sv) turns the far lines into own lines, which
//   are written through the DMA's SRAM port with the row's byte enables. Done when the last is written.
//   Store (own SRAM -> far SRAM): for each row, the own lines read through the DMA's SRAM port into the same
//   buffer, realigned into far lines, sent as PKT_MEM_WR with byte enables; the row's last as PKT_MEM_WRA,
//   which the far NoC slave acknowledges with PKT_DMA_ACK once written (packets keep their order on the
//   route). A row's reads start while fewer than STORE_REQUESTS_IN_FLIGHT rows are unacknowledged. Done
//   when every row is acknowledged.
// Rows and planes go in order on both sides; the reads of the next row start while the current row is
// still being realigned.
module dma_peer
#(
    parameter int READS_IN_FLIGHT = 32,
    parameter int STORE_REQUESTS_IN_FLIGHT = 2
) (
    input  logic         clk,
    input  logic         rst_n,
    input  logic         ce,
    input  node_t        me,
    // the transfer (the DMA's registers; they hold still while it runs)
    input  logic         start,
    input  logic         store,
    input  node_t        far,
    input  logic [16:0]  far_addr,
    input  logic [16:0]  far_row_stride,
    input  logic [16:0]  far_plane_stride,
    input  logic [16:0]  own_addr,
    input  logic [16:0]  own_row_stride,
    input  logic [16:0]  own_plane_stride,
    input  logic [16:0]  row_bytes,
    input  logic [16:0]  rows,
    input  logic [16:0]  planes,
    output logic         busy,
    // waiting for the far PE (dma.sv waiting): nothing to read or ask for (every line asked for, the line
    // buffer full, or a store's rows unacknowledged at the limit), nothing to write or send, not ending
    output logic         waiting,
    // packets to the far PE
    output logic         pkt_valid,
    output noc_pkt_t     pkt,
    input  logic         pkt_ready,
    // the far PE's answers: its read data (load), its acknowledgements (store)
    input  logic         rsp_valid,
    input  logic [127:0] rsp_data,
    input  logic         ack,
    // the DMA's SRAM port: reads of the lines a store sends, writes of the lines a load brings
    output logic         s_valid,
    output logic         s_we,
    output logic [16:0]  s_addr,
    output logic [127:0] s_wdata,
    output logic [15:0]  s_be,
    input  logic         s_grant,
    input  logic         s_rsp,
    input  logic [127:0] sram_rdata
);
  logic        active, issued_all, written_all, is_store;
  node_t       far_node;
  // the side lines are read from (far for a load, own for a store) and the side they are written to
  logic [16:0] src_row_stride, src_plane_stride, dst_row_stride, dst_plane_stride;
  assign src_row_stride = is_store ? own_row_stride : far_row_stride;
  assign src_plane_stride = is_store ? own_plane_stride : far_plane_stride;
  assign dst_row_stride = is_store ? far_row_stride : own_row_stride;
  assign dst_plane_stride = is_store ? far_plane_stride : own_plane_stride;

  // ---------------- reads: the source lines, row by row ----------------
  logic [16:0] rd_plane_base, rd_row_addr, rd_row, rd_plane, rd_line_addr;
  logic [13:0] rd_lines_left;  // of the current row; 0 = the row has not started
  localparam int HELD_BITS = $clog2(READS_IN_FLIGHT + 1);
  localparam int OPEN_BITS = $clog2(STORE_REQUESTS_IN_FLIGHT + 2);
  logic [HELD_BITS-1:0] held;       // lines read or asked for and not yet taken by the realigner
  logic [OPEN_BITS-1:0] rows_open;  // store: rows started and not yet acknowledged
  logic        rd_row_start, rd_go, rd_fire, rd_row_end;
  logic [13:0] rd_row_lines;
  assign rd_row_lines = 14'(((rd_row_addr + row_bytes - 17'd1) >> 4) - (rd_row_addr >> 4)) + 14'd1;
  assign rd_row_start = rd_lines_left == 0;
  assign rd_go = active && !issued_all && held < HELD_BITS'(READS_IN_FLIGHT) &&
                 !(is_store && rd_row_start && rows_open >= OPEN_BITS'(STORE_REQUESTS_IN_FLIGHT));
  logic [16:0] rd_addr;
  assign rd_addr = rd_row_start ? {rd_row_addr[16:4], 4'b0} : rd_line_addr;
  assign rd_row_end = rd_row_start ? rd_row_lines == 14'd1 : rd_lines_left == 14'd1;

  // ---------------- the line buffer and the realigner ----------------
  logic         buf_push, buf_empty, buf_full_unused;
  logic [127:0] buf_head;
  logic [$clog2(READS_IN_FLIGHT+1)-1:0] buf_count_unused;
  logic         src_take, dst_valid, dst_last, dst_fire;
  logic [127:0] dst_data;
  logic [15:0]  dst_be;
  assign buf_push = ce && (is_store ? s_rsp : rsp_valid);
  fifo #(.WIDTH(128), .DEPTH(READS_IN_FLIGHT)) u_buffer (
      .clk, .rst_n, .push(buf_push), .push_data(is_store ? sram_rdata : rsp_data), .pop(ce && src_take),
      .head(buf_head), .empty(buf_empty), .full(buf_full_unused), .count(buf_count_unused));

  logic [16:0] wr_src_row, wr_src_plane, wr_dst_row, wr_dst_plane, wr_row, wr_plane, wr_line_addr;
  logic        wr_row_first;  // no destination line of the current row given yet
  dma_realigner u_realigner (
      .clk, .rst_n, .ce, .src_off(wr_src_row[3:0]), .dst_off(wr_dst_row[3:0]), .row_bytes,
      .src_valid(!buf_empty), .src_data(buf_head), .src_take,
      .dst_valid, .dst_data, .dst_be, .dst_last, .dst_fire);
  logic [16:0] wr_addr;
  assign wr_addr = wr_row_first ? {wr_dst_row[16:4], 4'b0} : wr_line_addr;

  // ---------------- ports ----------------
  always_comb begin
    pkt = '0;
    pkt.dst = far_node;
    pkt.src = me;
    pkt_valid = 1'b0;
    s_valid = 1'b0;
    s_we = 1'b0;
    s_addr = rd_addr;
    s_wdata = dst_data;
    s_be = dst_be;
    if (is_store) begin
      // own lines read through the SRAM port, far lines sent
      s_valid = rd_go;
      pkt_valid = active && dst_valid;
      pkt.kind = dst_last ? PKT_MEM_WRA : PKT_MEM_WR;
      pkt.addr = wr_addr;
      pkt.be = dst_be;
      pkt.data = dst_data;
    end else begin
      // far lines asked for, own lines written through the SRAM port
      pkt_valid = rd_go;
      pkt.kind = PKT_MEM_RD;
      pkt.addr = rd_addr;
      s_valid = active && dst_valid;
      s_we = 1'b1;
      s_addr = wr_addr;
    end
  end
  assign rd_fire = rd_go && (is_store ? s_grant : pkt_ready);
  assign dst_fire = active && dst_valid && (is_store ? pkt_ready : s_grant);
  assign busy = active;
  assign waiting = active && !rd_go && buf_empty && !dst_valid && !(written_all && rows_open == 0) &&
                   !rsp_valid && !ack && !s_rsp;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      {active, issued_all, written_all, is_store} <= '0;
      far_node <= '0;
      {rd_plane_base, rd_row_addr, rd_row, rd_plane, rd_line_addr} <= '0;
      rd_lines_left <= '0;
      held <= '0;
      rows_open <= '0;
      {wr_src_row, wr_src_plane, wr_dst_row, wr_dst_plane, wr_row, wr_plane, wr_line_addr} <= '0;
      wr_row_first <= 1'b1;
    end else if (ce) begin
      if (start) begin
        active <= 1'b1;
        issued_all <= 1'b0;
        written_all <= 1'b0;
        is_store <= store;
        far_node <= far;
        rd_plane_base <= store ? own_addr : far_addr;
        rd_row_addr <= store ? own_addr : far_addr;
        {rd_row, rd_plane} <= '0;
        rd_lines_left <= '0;
        wr_src_row <= store ? own_addr : far_addr;
        wr_src_plane <= store ? own_addr : far_addr;
        wr_dst_row <= store ? far_addr : own_addr;
        wr_dst_plane <= store ? far_addr : own_addr;
        {wr_row, wr_plane} <= '0;
        wr_row_first <= 1'b1;
      end

      // reads
      if (rd_fire) begin
        rd_line_addr <= rd_addr + 17'd16;
        if (rd_row_end) begin
          rd_lines_left <= '0;
          if (rd_row + 17'd1 == rows) begin
            rd_row <= '0;
            rd_plane <= rd_plane + 17'd1;
            rd_plane_base <= rd_plane_base + src_plane_stride;
            rd_row_addr <= rd_plane_base + src_plane_stride;
            if (rd_plane + 17'd1 == planes) issued_all <= 1'b1;
          end else begin
            rd_row <= rd_row + 17'd1;
            rd_row_addr <= rd_row_addr + src_row_stride;
          end
        end else begin
          rd_lines_left <= (rd_row_start ? rd_row_lines : rd_lines_left) - 14'd1;
        end
      end
      held <= held + HELD_BITS'(rd_fire) - HELD_BITS'(src_take);
      rows_open <= rows_open + OPEN_BITS'(is_store && rd_fire && rd_row_start) - OPEN_BITS'(ack);

      // writes
      if (dst_fire) begin
        wr_line_addr <= wr_addr + 17'd16;
        wr_row_first <= dst_last;
        if (dst_last) begin
          if (wr_row + 17'd1 == rows) begin
            wr_row <= '0;
            wr_plane <= wr_plane + 17'd1;
            wr_src_plane <= wr_src_plane + src_plane_stride;
            wr_src_row <= wr_src_plane + src_plane_stride;
            wr_dst_plane <= wr_dst_plane + dst_plane_stride;
            wr_dst_row <= wr_dst_plane + dst_plane_stride;
            if (wr_plane + 17'd1 == planes) written_all <= 1'b1;
          end else begin
            wr_row <= wr_row + 17'd1;
            wr_src_row <= wr_src_row + src_row_stride;
            wr_dst_row <= wr_dst_row + dst_row_stride;
          end
        end
      end
      if (active && written_all && rows_open == 0 && !start) active <= 1'b0;
    end
  end
endmodule
