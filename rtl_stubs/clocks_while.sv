// The PE clocks in which a condition held, counted by its edges instead of clock by clock: the PE clock a
// stretch of it began (`since`) and the clocks of the stretches already ended (`ended`), read as
// ended + (cycle - since) while one runs. So its registers change only in the PE clock after the condition
// did (`settled` low), and a unit that waits (its wait counted here) leaves the QPE quiescent
// (rtl_stubs/README.md, "Activity-driven evaluation"). Exact while a stretch lasts fewer than 2^32 PE clocks.
module clocks_while
#(
    parameter int WIDTH = 32
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic             ce,
    input  logic [31:0]      cycle,   // this PE clock's number (qpe.sv cycle_q)
    input  logic             clear,   // count from 0 again (this clock counts if cond holds)
    input  logic             cond,    // this PE clock counts
    output logic [WIDTH-1:0] count,   // the PE clocks before this one in which cond held, since reset or clear
    output logic             settled  // the next PE clock edge changes no register here
);
  logic        running;  // cond held in the last PE clock: a stretch runs since `since`
  logic [31:0] since;
  logic [WIDTH-1:0] ended;
  logic [31:0] stretch;  // PE clocks of the stretch running, modulo 2^32 as cycle
  assign stretch = cycle - since;
  assign count = ended + (running ? WIDTH'(stretch) : '0);
  assign settled = !clear && running == cond;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      running <= 1'b0;
      since <= '0;
      ended <= '0;
    end else if (ce) begin
      if (clear) begin
        ended <= '0;
        running <= cond;
        since <= cycle;
      end else if (cond && !running) begin
        running <= 1'b1;
        since <= cycle;
      end else if (!cond && running) begin
        running <= 1'b0;
        ended <= ended + WIDTH'(stretch);
      end
    end
  end
endmodule
