// PE SRAM: 128 KB as four word-interleaved 32-bit banks (bank = byte address [3:2]), so a 128-bit line
// touches all four banks. One access port shared by the PE's masters through a fixed-priority arbiter:
//   0 NoC slave (remote reads/writes, operand A of convolutions, DMA data from the DRAM), 1 MLA operand A
//   (local MM), 2 MLA operand B, 3 MLA output writes, 4 DMA (lines it stores, lines it brings from another
//   PE's SRAM).
// A write takes byte enables (req_be): a DMA row need not start or end on a line boundary.
// An access occupies the port for 1 PE clock, or 2 with the prototype's sram2clk flaw. A read's 128-bit
// line is presented on rsp_data during the PE clock after the access completes (rsp_valid one-hot).
// A separate backdoor port (test data load / read-back) bypasses the arbiter and is not timed.
module sram #(
    parameter int NREQ = 4
) (
    input  logic              clk,
    input  logic              rst_n,
    input  logic              ce,          // PE clock enable
    input  logic              flaw_sram2clk,
    input  logic [NREQ-1:0]   req_valid,
    input  logic [NREQ-1:0]   req_we,
    // master i at [17i +: 17], [128i +: 128], [16i +: 16] (flat: Yosys 0.23 takes no array ports)
    input  logic [NREQ*17-1:0]  req_addr,
    input  logic [NREQ*128-1:0] req_wdata,
    input  logic [NREQ*16-1:0]  req_be,
    output logic [NREQ-1:0]   req_grant,   // combinational: taken at the end of this PE clock
    output logic [NREQ-1:0]   rsp_valid,
    output logic [127:0]      rsp_data,
    output logic              busy_o,
    // backdoor
    input  logic              bd_we,
    input  logic [12:0]       bd_line,
    input  logic [127:0]      bd_wdata,
    output logic [127:0]      bd_rdata
);
  localparam int LINES = 8192;
  logic [31:0] bank0[LINES] /*verilator public_flat_rw*/;
  logic [31:0] bank1[LINES] /*verilator public_flat_rw*/;
  logic [31:0] bank2[LINES] /*verilator public_flat_rw*/;
  logic [31:0] bank3[LINES] /*verilator public_flat_rw*/;

  logic              busy;
  logic [NREQ-1:0]   p_onehot;
  logic              p_we;
  logic [12:0]       p_line;
  logic [127:0]      p_wdata;
  logic [15:0]       p_be;

  assign busy_o = busy;

  // fixed priority: lowest index wins
  always_comb begin
    req_grant = '0;
    if (!busy) begin
      for (int i = NREQ - 1; i >= 0; i--) begin
        if (req_valid[i]) req_grant = NREQ'(1) << i;
      end
    end
  end

  logic [NREQ-1:0] g_onehot;
  logic            g_we;
  logic [12:0]     g_line;
  logic [127:0]    g_wdata;
  logic [15:0]     g_be;
  always_comb begin
    g_we = 1'b0;
    g_line = '0;
    g_wdata = '0;
    g_be = '0;
    g_onehot = req_grant;
    for (int i = 0; i < NREQ; i++) begin
      if (req_grant[i]) begin
        g_we = req_we[i];
        g_line = req_addr[17*i + 4 +: 13];
        g_wdata = req_wdata[128*i +: 128];
        g_be = req_be[16*i +: 16];
      end
    end
  end

  // The access that completes at this edge: the pending one (2-clock mode) or the one granted now.
  logic            do_acc;
  logic [NREQ-1:0] a_onehot;
  logic            a_we;
  logic [12:0]     a_line;
  logic [127:0]    a_wdata;
  logic [15:0]     a_be;
  always_comb begin
    if (busy) begin
      do_acc = 1'b1; a_onehot = p_onehot; a_we = p_we; a_line = p_line; a_wdata = p_wdata; a_be = p_be;
    end else begin
      do_acc = (req_grant != 0) && !flaw_sram2clk;
      a_onehot = g_onehot; a_we = g_we; a_line = g_line; a_wdata = g_wdata; a_be = g_be;
    end
  end

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      busy <= 1'b0;
      rsp_valid <= '0;
      p_onehot <= '0;
      p_we <= 1'b0;
      p_line <= '0;
      p_wdata <= '0;
      p_be <= '0;
    end else if (ce) begin
      rsp_valid <= '0;
      if (busy) busy <= 1'b0;
      else if (req_grant != 0 && flaw_sram2clk) begin
        busy <= 1'b1;
        p_onehot <= g_onehot;
        p_we <= g_we;
        p_line <= g_line;
        p_wdata <= g_wdata;
        p_be <= g_be;
      end
      if (do_acc && !a_we) rsp_valid <= a_onehot;
    end
  end

  // Memory arrays: written by an access or by the backdoor; read data registered into rsp_data.
  always_ff @(posedge clk) begin
    if (ce && do_acc) begin
      if (a_we) begin
        for (int b = 0; b < 4; b++) begin
          if (a_be[b])      bank0[a_line][8*b +: 8] <= a_wdata[8*b +: 8];
          if (a_be[4 + b])  bank1[a_line][8*b +: 8] <= a_wdata[32 + 8*b +: 8];
          if (a_be[8 + b])  bank2[a_line][8*b +: 8] <= a_wdata[64 + 8*b +: 8];
          if (a_be[12 + b]) bank3[a_line][8*b +: 8] <= a_wdata[96 + 8*b +: 8];
        end
      end else begin
        rsp_data <= {bank3[a_line], bank2[a_line], bank1[a_line], bank0[a_line]};
      end
    end
    if (bd_we) begin
      bank0[bd_line] <= bd_wdata[31:0];
      bank1[bd_line] <= bd_wdata[63:32];
      bank2[bd_line] <= bd_wdata[95:64];
      bank3[bd_line] <= bd_wdata[127:96];
    end
  end
  assign bd_rdata = {bank3[bd_line], bank2[bd_line], bank1[bd_line], bank0[bd_line]};
endmodule
