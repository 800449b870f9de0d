`include "s2_pkg.svh"
// Task controller: stands in for the ARM core's control role. It holds the task descriptor written by
// the host through the NoC, starts the MLA on a write of REG_START, and records when the task started
// and when the MLA raised its done interrupt (in QPE cycles).
module task_ctrl
(
    input  logic        clk,
    input  logic        rst_n,
    input  logic        ce,
    input  logic [31:0] cycle,
    input  logic        reg_wr,
    input  logic [4:0]  reg_idx,
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic [31:0] reg_data,  // registers are at most 17 bits wide
    /* verilator lint_on UNUSEDSIGNAL */
    output logic        mla_start,
    output logic        op_mm,
    output logic [15:0] dim_wi, dim_hi, dim_d, dim_wf, dim_hf, dim_c,
    output logic [15:0] dim_b_plane_rows,  // 0 = Hi; cleared once the MLA has taken it (one-shot)
    output logic [16:0] a_base, b_base, o_base,
    output logic        a_via_noc,
    output logic [1:0]  a_src_pe,
    input  logic        mla_done,
    output logic        irq_done,
    output logic [31:0] start_cycle,
    output logic [31:0] end_cycle
);
  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      mla_start <= 1'b0;
      irq_done <= 1'b0;
      op_mm <= 1'b0;
      {dim_wi, dim_hi, dim_d, dim_wf, dim_hf, dim_c, dim_b_plane_rows} <= '0;
      {a_base, b_base, o_base} <= '0;
      a_via_noc <= 1'b0;
      a_src_pe <= '0;
      start_cycle <= '0;
      end_cycle <= '0;
    end else if (ce) begin
      mla_start <= 1'b0;
      if (mla_start) dim_b_plane_rows <= '0;  // the MLA latched it this clock
      if (reg_wr) begin
        case (reg_idx)
          REG_OP:     op_mm <= reg_data[0];
          REG_WI:     dim_wi <= reg_data[15:0];
          REG_HI:     dim_hi <= reg_data[15:0];
          REG_D:      dim_d <= reg_data[15:0];
          REG_WF:     dim_wf <= reg_data[15:0];
          REG_HF:     dim_hf <= reg_data[15:0];
          REG_C:      dim_c <= reg_data[15:0];
          REG_A_BASE: a_base <= reg_data[16:0];
          REG_B_BASE: b_base <= reg_data[16:0];
          REG_O_BASE: o_base <= reg_data[16:0];
          REG_A_SRC:  {a_via_noc, a_src_pe} <= reg_data[2:0];
          REG_B_PLANE_ROWS: dim_b_plane_rows <= reg_data[15:0];
          REG_START: begin
            mla_start <= 1'b1;
            irq_done <= 1'b0;
            start_cycle <= cycle + 2;  // first PE clock the MLA works on the task (its SETUP clock)
          end
          default: ;
        endcase
      end
      if (mla_done) begin
        irq_done <= 1'b1;
        end_cycle <= cycle;  // first PE clock after the last result write completed
      end
    end
  end
endmodule
