`include "s2_pkg.svh"
// Machine learning accelerator (MLA) of one PE: a ROWS x COLS array of int8 MACs with 29-bit wrapping
// accumulators, its operand A/B fetch units and the output stage. See rtl_stubs/README.md for the
// microarchitecture and the cost of each phase in PE clocks. All state advances on the PE clock enable.
module mla
#(
    parameter int ROWS = 4,
    parameter int COLS = 16,
    parameter int A_DEPTH = 2    // operand-A words held or in flight
) (
    input  logic         clk,
    input  logic         rst_n,
    input  logic         ce,
    input  logic [31:0]  cycle,      // PE clocks since reset (the phase counters count by edges: clocks_while)
    input  logic         flaw_sram2clk,
    input  logic         flaw_mm_wide_a,
    // task (from the task controller)
    input  logic         start,
    input  logic         op_mm,
    input  logic [15:0]  dim_wi,     // conv Wi | mm W_A
    input  logic [15:0]  dim_hi,     // conv Hi | mm H_A
    input  logic [15:0]  dim_d,      // conv D  | mm W_B
    input  logic [15:0]  dim_wf,
    input  logic [15:0]  dim_hf,
    input  logic [15:0]  dim_c,
    input  logic [15:0]  dim_b_plane_rows,  // conv: operand-B rows per input plane in SRAM, 0 = dim_hi
    input  logic [16:0]  a_base,
    input  logic [16:0]  b_base,
    input  logic [16:0]  o_base,
    input  logic         a_via_noc,
    input  logic [1:0]   a_src_pe,
    output logic         busy,
    output logic         done_pulse,
    // waiting for an operand (rtl_stubs/README.md, "Activity-driven evaluation"): in its CONV/MM stage, not
    // stepping, asking for nothing and receiving nothing; until an operand arrives a clock changes none of
    // its registers but the edge-counted statistics', and those only while not counts_settled
    output logic         waiting,
    output logic         counts_settled,
    // SRAM masters: operand A (local MM), operand B, output writes
    output logic         sa_valid,
    output logic [16:0]  sa_addr,
    input  logic         sa_grant,
    input  logic         sa_rsp,
    output logic         sb_valid,
    output logic [16:0]  sb_addr,
    input  logic         sb_grant,
    input  logic         sb_rsp,
    output logic         so_valid,
    output logic [16:0]  so_addr,
    output logic [127:0] so_wdata,
    input  logic         so_grant,
    input  logic [127:0] sram_rdata,
    // operand A through the NoC: read requests out, read data in
    output logic         na_req_valid,
    output logic [2:0]   na_req_dst,
    output logic [16:0]  na_req_addr,
    output logic [RTAG_INDEX_BITS+1:0] na_req_widx,  // low bits of the word's index in the tile
    input  logic         na_req_ready,
    input  logic         na_rsp_valid,
    input  logic [127:0] na_rsp_data,
    // statistics
    output logic [31:0]  st_compute_cycles,
    output logic [31:0]  st_output_cycles,
    output logic [31:0]  st_a_wait,
    output logic [31:0]  st_b_wait,
    output logic [31:0]  st_tiles,
    output logic [31:0]  st_steps,
    // activity since reset (model/activity.h): per clock the array fires, each MAC unit once, inside the
    // tile (its operand-A row and operand-B column exist) or padding
    output logic [63:0]  act_mac_ops,
    output logic [63:0]  act_mac_padding_ops
);
  localparam int A_BYTES_PER_WORD = 16;
  localparam int STEPS_PER_A_WORD = A_BYTES_PER_WORD / ROWS;
  localparam int OUT_WORDS_MAX = COLS / 4;
  localparam int MM_A_COUNT_BITS = 5;  // the prototype's MM-mode count of operand-A words received

  typedef enum logic [2:0] {S_IDLE, S_SETUP, S_COMPUTE, S_OUTPUT, S_OUT_WAIT} state_e;
  state_e state;

  // ---------------- task geometry, latched at start ----------------
  logic        mm;
  logic [15:0] plane_rows, wf, hf;  // plane_rows: operand-B rows from one input plane to the next
  logic [15:0] conv_wo;               // Wi - Wf + 1 of the task being started
  assign conv_wo = dim_wi - dim_wf + 16'd1;
  logic [15:0] wo, ho;                 // output width/height (mm: W_B, 1)
  logic [15:0] n_groups, n_xt;         // filter/row groups, column tiles
  logic [15:0] n_a_rows;               // operand-A rows: conv filters (C) | mm rows of A (H_A)
  logic [16:0] b_stride;               // bytes per operand-B row
  logic [16:0] a_group_stride;         // bytes per filter group / row group of operand A
  logic [16:0] o_stride;               // results (32-bit) per output row
  logic [31:0] rows_per_tile;          // conv: D*Hf input rows | mm: W_A steps
  logic [31:0] steps_per_tile;
  logic [31:0] a_words_per_tile;
  logic [15:0] refills_per_row;        // 32-bit refill reads per input row

  function automatic logic [31:0] align(input logic [31:0] v, input int unsigned a);
    align = ((v + a - 1) / a) * a;
  endfunction

  // ---------------- loop counters ----------------
  logic [15:0] g, y, xt;               // current tile
  logic [15:0] x0, tw;                 // tile's first output column and width
  assign x0 = xt * 16'(COLS);
  assign tw = ((wo - x0) < 16'(COLS)) ? (wo - x0) : 16'(COLS);
  logic [15:0] g0, th;                 // tile's first operand-A row and its rows inside the task
  assign g0 = g * 16'(ROWS);
  assign th = ((n_a_rows - g0) < 16'(ROWS)) ? (n_a_rows - g0) : 16'(ROWS);
  logic [31:0] tile_macs;              // MAC units of a step inside the tile
  assign tile_macs = 32'(th) * 32'(tw);

  // step engine
  logic [31:0] step;                   // steps done in this tile
  logic [31:0] row;                    // input row of the step engine
  logic [15:0] kx;
  // operand-B fetch unit
  logic [31:0] fb_row;
  logic [15:0] fb_j;                   // 0 = row start word, 1.. = refill words
  logic [15:0] fb_d, fb_ky;
  logic        fb_done;
  logic        b_inflight, b_inf_start;
  logic [3:0]  b_inf_off;
  logic        b_stage_v;
  logic [COLS*8-1:0] b_stage;
  // operand-A fetch unit
  logic [31:0] a_issued;
  logic [2:0]  a_outstanding;
  logic [127:0] a_fifo[A_DEPTH];
  logic [2:0]  a_count;
  logic [MM_A_COUNT_BITS-1:0] a_rcvd_mm;  // operand-A words received over the NoC in this MM tile
  logic [$clog2(A_DEPTH)-1:0] a_rd, a_wr;
  // window and accumulators
  logic [7:0]  win[COLS];
  logic [31:0] refw;
  logic signed [28:0] acc[ROWS][COLS];
  // output stage
  logic [15:0] out_r, out_q;
  logic        out_wait;

  // ---------------- operand B ----------------
  logic [15:0] n_out_words;
  assign n_out_words = (tw + 16'd3) >> 2;

  logic        b_rsp_now;
  logic [COLS*8-1:0] b_rsp_word;
  assign b_rsp_now = sb_rsp;
  always_comb begin
    b_rsp_word = '0;
    if (b_inf_start) begin
      for (int i = 0; i < COLS; i++) b_rsp_word[i*8 +: 8] = sram_rdata[(32'(b_inf_off) + i) * 8 +: 8];
    end else begin
      b_rsp_word[31:0] = sram_rdata[32'(b_inf_off) * 8 +: 32];
    end
  end
  logic              b_avail;
  logic [COLS*8-1:0] b_word;
  assign b_avail = b_stage_v || b_rsp_now;
  assign b_word  = b_stage_v ? b_stage : b_rsp_word;

  // ---------------- step engine ----------------
  logic a_arrive;             // an operand-A word arrives this clock (NoC response or local SRAM read)
  logic [127:0] a_arrive_data;
  logic need_b, a_ok, fire, last_kx, last_step;
  assign need_b = (kx == 0) || (((kx - 16'd1) & 16'd3) == 0);
  assign a_ok = (a_count != 0) || a_arrive;  // an arriving word is usable in the clock it arrives
  assign last_kx = (kx == wf - 16'd1);
  assign last_step = (step == steps_per_tile - 1);
  // In MM mode with operand A over the NoC, the last step waits until the tile's operand-A words have all
  // arrived, so that no response of this tile can land in the next one. The correct hardware knows that
  // they have (the last step needs the last word); with flaw_mm_wide_a the check is the prototype's, a
  // compare of the MM_A_COUNT_BITS-bit received count with the tile's word count, which can never become
  // true from 2^MM_A_COUNT_BITS words per tile on.
  logic [MM_A_COUNT_BITS-1:0] a_rcvd_mm_now;
  assign a_rcvd_mm_now = a_rcvd_mm + MM_A_COUNT_BITS'(a_arrive);
  logic end_hold;
  assign end_hold = flaw_mm_wide_a && mm && a_via_noc && last_step &&
                    (32'(a_rcvd_mm_now) != a_words_per_tile);
  assign fire = (state == S_COMPUTE) && a_ok && (!need_b || b_avail) && !end_hold;

  logic [31:0] row_after;               // row the engine is in after this clock
  assign row_after = (fire && last_kx) ? row + 1 : row;

  // A bytes of this step
  logic [127:0] a_head;
  assign a_head = (a_count != 0) ? a_fifo[a_rd] : a_arrive_data;
  logic [31:0] a_off;
  assign a_off = (step % STEPS_PER_A_WORD) * ROWS;
  logic a_pop;
  assign a_pop = fire && (((step % STEPS_PER_A_WORD) == STEPS_PER_A_WORD - 1) || last_step);

  // window after this step
  logic [7:0] win_next[COLS];
  always_comb begin
    logic [7:0] byte_in;
    logic [15:0] ref_byte;
    ref_byte = (kx - 16'd1) & 16'd3;
    byte_in = need_b ? b_word[7:0] : refw[8 * 32'(ref_byte) +: 8];
    for (int i = 0; i < COLS; i++) begin
      if (kx == 0) win_next[i] = b_word[i*8 +: 8];
      else if (i == COLS - 1) win_next[i] = byte_in;
      else win_next[i] = win[i+1];
    end
  end

  // ---------------- operand-B fetch requests ----------------
  logic b_slot_free;
  // one operand-B word at a time: requested only when none is in flight, staged or arriving unused
  assign b_slot_free = (!b_inflight || b_rsp_now) && (b_stage_v ? (fire && need_b) : (!b_rsp_now || (fire && need_b)));
  assign sb_valid = (state == S_COMPUTE) && !fb_done && b_slot_free && (fb_row <= row_after);
  always_comb begin
    logic [31:0] line_row;
    if (mm) line_row = fb_row;
    else line_row = 32'(fb_d) * 32'(plane_rows) + 32'(y) + 32'(fb_ky);
    sb_addr = 17'(32'(b_base) + line_row * 32'(b_stride) + 32'(x0) +
                  ((fb_j == 0) ? 32'd0 : 32'(COLS) + 32'd4 * (32'(fb_j) - 1)));
  end

  // ---------------- operand-A fetch requests ----------------
  logic a_room;
  logic [16:0] a_addr_next;
  // a word's slot is free again in the clock its last step uses it
  assign a_room = (32'(a_outstanding) + 32'(a_count) - (a_pop ? 1 : 0) < A_DEPTH) &&
                  (a_issued < a_words_per_tile);
  assign a_addr_next = 17'(32'(a_base) + 32'(g) * 32'(a_group_stride) + a_issued * 16);
  assign sa_valid = (state == S_COMPUTE) && !a_via_noc && a_room;
  assign sa_addr = a_addr_next;
  assign na_req_valid = (state == S_COMPUTE) && a_via_noc && a_room;
  assign na_req_addr = a_addr_next;
  assign na_req_dst = {1'b0, a_src_pe};
  assign na_req_widx = a_issued[RTAG_INDEX_BITS+1:0];
  logic a_issue;
  assign a_issue = a_via_noc ? (na_req_valid && na_req_ready) : (sa_valid && sa_grant);
  assign a_arrive = a_via_noc ? na_rsp_valid : sa_rsp;
  assign a_arrive_data = a_via_noc ? na_rsp_data : sram_rdata;

  // ---------------- output stage ----------------
  assign so_valid = (state == S_OUTPUT);
  always_comb begin
    logic [31:0] orow;
    if (mm) orow = 32'(g) * ROWS + 32'(out_r);
    else orow = (32'(g) * ROWS + 32'(out_r)) * 32'(ho) + 32'(y);
    so_addr = 17'(32'(o_base) + (orow * 32'(o_stride) + 32'(x0) + 32'(out_q) * 4) * 4);
    so_wdata = '0;
    for (int k = 0; k < 4; k++) begin
      for (int r = 0; r < ROWS; r++) begin
        for (int cc = 0; cc < OUT_WORDS_MAX; cc++) begin
          if (16'(r) == out_r && 16'(cc) == out_q) so_wdata[k*32 +: 32] = 32'(acc[r][cc*4+k]);
        end
      end
    end
  end
  logic out_last;
  assign out_last = (out_r == 16'(ROWS - 1)) && (out_q == n_out_words - 1);
  logic last_tile;
  assign last_tile = (xt == n_xt - 1) && (y == ho - 1) && (g == n_groups - 1);

  assign busy = (state != S_IDLE);
  assign waiting = (state == S_COMPUTE) && !fire && !sa_valid && !sb_valid && !na_req_valid && !a_arrive && !b_rsp_now;

  // The CONV/MM stage's clocks and its stalls on operand A (none there, or the last step held: end_hold) and
  // on operand B tick while the MLA waits: counted by their edges (clocks_while), so that waiting changes
  // no register. A task's start clears them.
  logic task_start;
  assign task_start = (state == S_IDLE) && start;
  logic [2:0] settled;
  clocks_while u_compute_clocks (
      .clk, .rst_n, .ce, .cycle, .clear(task_start), .cond(state == S_COMPUTE), .count(st_compute_cycles),
      .settled(settled[0]));
  clocks_while u_a_wait_clocks (
      .clk, .rst_n, .ce, .cycle, .clear(task_start), .cond((state == S_COMPUTE) && !fire && (!a_ok || end_hold)),
      .count(st_a_wait), .settled(settled[1]));
  clocks_while u_b_wait_clocks (
      .clk, .rst_n, .ce, .cycle, .clear(task_start), .cond((state == S_COMPUTE) && !fire && a_ok && !end_hold),
      .count(st_b_wait), .settled(settled[2]));
  assign counts_settled = settled == '1;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      state <= S_IDLE;
      done_pulse <= 1'b0;
      b_inflight <= 1'b0;
      b_stage_v <= 1'b0;
      a_count <= '0;
      a_outstanding <= '0;
      a_rd <= '0;
      a_wr <= '0;
      st_output_cycles <= '0;
      st_tiles <= '0; st_steps <= '0;
      act_mac_ops <= '0; act_mac_padding_ops <= '0;
    end else if (ce) begin
      done_pulse <= 1'b0;
      case (state)
        S_IDLE: if (start) begin
          mm <= op_mm;
          plane_rows <= (dim_b_plane_rows != 0) ? dim_b_plane_rows : dim_hi; wf <= dim_wf; hf <= dim_hf;
          if (op_mm) begin
            // mm: A is [W_A=dim_wi, H_A=dim_hi], B is [W_B=dim_d, H_B=W_A]
            wo <= dim_d; ho <= 16'd1;
            wf <= 16'd1; hf <= 16'd1;
            n_groups <= 16'((32'(dim_hi) + ROWS - 1) / ROWS);
            n_a_rows <= dim_hi;
            n_xt <= 16'((32'(dim_d) + COLS - 1) / COLS);
            b_stride <= 17'(align(32'(dim_d), 16));
            a_group_stride <= 17'(align(32'(dim_wi) * ROWS, 16));
            o_stride <= 17'(align(32'(dim_d), 16));
            rows_per_tile <= 32'(dim_wi);
            steps_per_tile <= 32'(dim_wi);
            a_words_per_tile <= (32'(dim_wi) * ROWS + 15) / 16;
            refills_per_row <= 16'd0;
          end else begin
            wo <= conv_wo; ho <= dim_hi - dim_hf + 16'd1;
            n_groups <= 16'((32'(dim_c) + ROWS - 1) / ROWS);
            n_a_rows <= dim_c;
            n_xt <= 16'((32'(conv_wo) + COLS - 1) / COLS);
            b_stride <= 17'(align(32'(dim_wi), 16));
            a_group_stride <= 17'(align(32'(dim_d) * 32'(dim_hf) * 32'(dim_wf) * ROWS, 16));
            o_stride <= 17'(align(32'(conv_wo), 4));
            rows_per_tile <= 32'(dim_d) * 32'(dim_hf);
            steps_per_tile <= 32'(dim_d) * 32'(dim_hf) * 32'(dim_wf);
            a_words_per_tile <= (32'(dim_d) * 32'(dim_hf) * 32'(dim_wf) * ROWS + 15) / 16;
            refills_per_row <= (dim_wf + 16'd2) >> 2;  // ceil((Wf-1)/4)
          end
          g <= '0; y <= '0; xt <= '0;
          st_output_cycles <= '0;
          st_tiles <= '0; st_steps <= '0;
          state <= S_SETUP;
        end
        S_SETUP: begin
          // one clock to set the tile up: clear the accumulators, rewind the fetch units
          for (int r = 0; r < ROWS; r++) for (int i = 0; i < COLS; i++) acc[r][i] <= '0;
          step <= '0; row <= '0; kx <= '0;
          fb_row <= '0; fb_j <= '0; fb_d <= '0; fb_ky <= '0; fb_done <= 1'b0;
          a_issued <= '0;
          a_rcvd_mm <= '0;
          state <= S_COMPUTE;
        end
        S_COMPUTE: begin
          // operand-B fetch unit
          if (sb_valid && sb_grant) begin
            b_inflight <= 1'b1;
            b_inf_start <= (fb_j == 0);
            b_inf_off <= sb_addr[3:0];
            if (fb_j == refills_per_row) begin
              fb_j <= '0;
              fb_row <= fb_row + 1;
              if (fb_ky == hf - 1) begin fb_ky <= '0; fb_d <= fb_d + 1'b1; end
              else fb_ky <= fb_ky + 1'b1;
              if (fb_row == rows_per_tile - 1) fb_done <= 1'b1;
            end else fb_j <= fb_j + 1'b1;
          end else if (b_rsp_now) b_inflight <= 1'b0;
          if (b_rsp_now && !(fire && need_b && !b_stage_v)) begin
            b_stage_v <= 1'b1;
            b_stage <= b_rsp_word;
          end else if (fire && need_b && b_stage_v) b_stage_v <= 1'b0;
          // operand-A fetch unit
          if (a_issue) a_issued <= a_issued + 1;
          a_outstanding <= a_outstanding + (a_issue ? 3'd1 : 3'd0) - (a_arrive ? 3'd1 : 3'd0);
          if (a_arrive) begin
            a_rcvd_mm <= a_rcvd_mm_now;
            a_fifo[a_wr] <= a_arrive_data;
            a_wr <= (32'(a_wr) == A_DEPTH - 1) ? '0 : a_wr + 1'b1;
          end
          if (a_pop) a_rd <= (32'(a_rd) == A_DEPTH - 1) ? '0 : a_rd + 1'b1;
          a_count <= a_count + (a_arrive ? 3'd1 : 3'd0) - (a_pop ? 3'd1 : 3'd0);
          // MAC array step
          if (fire) begin
            for (int i = 0; i < COLS; i++) win[i] <= win_next[i];
            if (need_b && kx != 0) refw <= b_word[31:0];
            for (int r = 0; r < ROWS; r++) begin
              for (int i = 0; i < COLS; i++) begin
                acc[r][i] <= acc[r][i] + 29'($signed(a_head[(32'(a_off) + r) * 8 +: 8]) * $signed(win_next[i]));
              end
            end
            st_steps <= st_steps + 1;
`ifndef SYNTHESIS  // the harness's activity counters: instrumentation, left out of the area (tools/synth.sh)
            act_mac_ops <= act_mac_ops + 64'(tile_macs);
            act_mac_padding_ops <= act_mac_padding_ops + 64'(ROWS * COLS) - 64'(tile_macs);
`endif
            step <= step + 1;
            if (last_kx) begin kx <= '0; row <= row + 1; end
            else kx <= kx + 1'b1;
            if (last_step) begin
              state <= S_OUTPUT;
              out_r <= '0; out_q <= '0;
            end
          end
        end
        S_OUTPUT: begin
          st_output_cycles <= st_output_cycles + 1;
          if (so_grant) begin
            if (out_last) begin
              out_wait <= flaw_sram2clk;
              state <= S_OUT_WAIT;
            end else if (out_q == n_out_words - 1) begin
              out_q <= '0; out_r <= out_r + 1'b1;
            end else out_q <= out_q + 1'b1;
          end
        end
        S_OUT_WAIT: begin
          // the last write completes; then the next tile, or done
          st_output_cycles <= st_output_cycles + 1;
          if (out_wait) out_wait <= 1'b0;
          else begin
            st_tiles <= st_tiles + 1;
            if (last_tile) begin
              state <= S_IDLE;
              done_pulse <= 1'b1;
            end else begin
              state <= S_SETUP;
              if (xt != n_xt - 1) xt <= xt + 1'b1;
              else begin
                xt <= '0;
                if (y != ho - 1) y <= y + 1'b1;
                else begin y <= '0; g <= g + 1'b1; end
              end
            end
          end
        end
        default: state <= S_IDLE;
      endcase
    end
  end
endmodule
