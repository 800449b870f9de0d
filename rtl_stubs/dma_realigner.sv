// The DMA's line realigner, for transfers between two PEs' SRAMs: a row of row_bytes bytes starts at byte
// src_off of the first 16-byte line it is read in and must start at byte dst_off of the first line it is
// written in. It takes the row's source lines in order (src_lines of them) and gives its destination lines
// in order (dst_lines), each with the byte enables of the row's bytes in it: destination line k is the
// 32-byte window {source line k-lag+1, source line k-lag} shifted down by (src_off - dst_off) mod 16 bytes,
// lag = 1 when src_off < dst_off. It holds the last two source lines; it takes a source line only when the
// destination line due next does not still need the older of the two, so one line in and one line out per
// PE clock in the steady state. The row ends with its last destination line; the next row starts at once.
module dma_realigner (
    input  logic         clk,
    input  logic         rst_n,
    input  logic         ce,
    input  logic [3:0]   src_off,
    input  logic [3:0]   dst_off,
    input  logic [16:0]  row_bytes,
    // source lines
    input  logic         src_valid,
    input  logic [127:0] src_data,
    output logic         src_take,
    // destination lines
    output logic         dst_valid,
    output logic [127:0] dst_data,
    output logic [15:0]  dst_be,
    output logic         dst_last,  // this destination line is the row's last
    input  logic         dst_fire
);
  logic [13:0] src_lines, dst_lines;
  assign src_lines = 14'((18'(src_off) + 18'(row_bytes) + 18'd15) >> 4);
  assign dst_lines = 14'((18'(dst_off) + 18'(row_bytes) + 18'd15) >> 4);

  logic [4:0] delta;  // src_off - dst_off, two's complement
  assign delta = {1'b0, src_off} - {1'b0, dst_off};
  logic       lag;
  logic [3:0] shift_bytes;
  assign lag = delta[4];
  assign shift_bytes = delta[3:0];

  logic [13:0]  taken, given;  // source lines taken, destination lines given, in this row
  logic [127:0] cur, prev;     // source lines taken-1 and taken-2

  // the last source line destination line j needs (j - lag, and the one after when the window straddles)
  function automatic logic [14:0] last_needed(input logic [13:0] j);
    logic [14:0] n;
    n = 15'(j) + 15'(shift_bytes != 0) - 15'(lag);
    last_needed = n < 15'(src_lines) ? n : 15'(src_lines) - 15'd1;
  endfunction
  logic due_now, due_next;  // destination lines `given` and `given` + 1 can be formed from what is held
  assign due_now = given < dst_lines && taken != 0 && last_needed(given) < 15'(taken);
  assign due_next = given + 14'd1 < dst_lines && taken != 0 && last_needed(given + 14'd1) < 15'(taken);

  assign dst_valid = due_now;
  assign dst_last = given + 14'd1 == dst_lines;
  assign src_take = src_valid && taken < src_lines && (!due_now || (dst_fire && !due_next));

  // the window's low line is source line given - lag: the newest held, or the one before
  logic         low_is_cur;
  logic [255:0] window;
  assign low_is_cur = 15'(given) + 15'd1 - 15'(lag) == 15'(taken);
  assign window = {cur, low_is_cur ? cur : prev};
  assign dst_data = window[{1'b0, shift_bytes, 3'b000} +: 128];

  always_comb begin
    for (int b = 0; b < 16; b++) begin
      logic [17:0] pos;  // the byte's offset from the first destination line's start
      pos = {given, 4'(b)};
      dst_be[b] = pos >= 18'(dst_off) && pos < 18'(dst_off) + 18'(row_bytes);
    end
  end

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      taken <= '0;
      given <= '0;
      cur <= '0;
      prev <= '0;
    end else if (ce) begin
      if (src_take) begin
        prev <= cur;
        cur <= src_data;
        taken <= taken + 14'd1;
      end
      if (dst_fire) begin
        if (dst_last) begin
          taken <= '0;
          given <= '0;
        end else begin
          given <= given + 14'd1;
        end
      end
    end
  end
endmodule
