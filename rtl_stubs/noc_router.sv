`include "s2_pkg.svh"
// QPE NoC router (data NoC). Runs on the NoC clock (twice the PE clock). It takes at most one packet per
// clock from its input channels (port x message class), chosen round-robin among those whose destination
// channel has room, and delivers it into the destination's output FIFO LATENCY clocks later. Room is
// reserved at acceptance, so a packet in the pipeline never stalls; packets of one input channel to one
// output channel stay in order. Requests and responses travel in separate channels (s2_pkg).
// The output channel is the packet's local port if it is addressed to this router's QPE (my_x, my_y), else
// the mesh link towards it, X first, then Y (thesis 2.3.4). A packet bound for a neighbour enters the
// link's FIFO one clock earlier, LATENCY - 1 clocks after acceptance, so that the neighbour takes it LATENCY
// clocks after this router did: a hop costs the router's latency (thesis 2.3.3), as the model's hop does.
// Coordinates are inputs, not parameters, so that every QPE of a chip is the same verilated module.
module noc_router
#(
    parameter int LATENCY = 4,
    parameter int OUT_DEPTH = 4,
    // A mesh link's FIFO holds the packets of a credit round trip (accepted, LATENCY - 1 clocks to the FIFO,
    // a clock for the neighbour to take it, a clock for the room to show), so one flow, or several, can use
    // a link at the router's full rate, as the model's router passes them. (With OUT_DEPTH it passed about
    // 0.8 packets per NoC clock.)
    parameter int LINK_DEPTH = 8
) (
    input  logic     clk,
    input  logic     rst_n,
    input  logic [COORD_BITS-1:0] my_x,
    input  logic [COORD_BITS-1:0] my_y,
    // input channels: the senders' FIFO heads; the router pops them
    input  logic     in_valid[NUM_CH],
    input  noc_pkt_t in_pkt  [NUM_CH],
    output logic     in_pop  [NUM_CH],
    // output channels: router-owned FIFOs; receivers pop them
    output logic     out_valid[NUM_CH],
    output noc_pkt_t out_pkt  [NUM_CH],
    input  logic     out_pop  [NUM_CH],
    // activity (model/activity.h), since reset: packets a PE or the DRAM port put into the NoC here (the
    // host's are the test bench's, not the chip's work), and packets accepted for a mesh link (a hop each;
    // the neighbour counts the next)
    output logic [63:0] noc_packets,
    output logic [63:0] noc_packet_hops,
    // nothing in flight: the pipeline and every output FIFO empty (with no input valid, a clock changes
    // nothing that is read: the pipeline's payload registers behind an empty valid are not)
    output logic     idle
);
  localparam int CW = $clog2((OUT_DEPTH > LINK_DEPTH ? OUT_DEPTH : LINK_DEPTH) + 1);
  localparam int IW = $clog2(NUM_CH);

  logic     pipe_v[LATENCY];
  noc_pkt_t pipe_p[LATENCY];
  logic [IW-1:0] rr;  // input channel with the highest priority this clock

  logic [CW-1:0] out_count[NUM_CH];
  logic          out_empty[NUM_CH];
  logic [3:0]    reserved[NUM_CH];  // packets in the pipeline per output channel

  function automatic logic [IW-1:0] ch_of(input node_t dst, input pkt_kind_e kind);
    int port;
    if (dst.x > my_x) port = EAST_PORT;
    else if (dst.x < my_x) port = WEST_PORT;
    else if (dst.y > my_y) port = SOUTH_PORT;
    else if (dst.y < my_y) port = NORTH_PORT;
    else port = 32'(dst.port);
    return IW'(port * NUM_CLASSES + (pkt_class(kind) ? CLS_RSP : CLS_REQ));
  endfunction
  function automatic logic to_mesh(input logic [IW-1:0] ch);
    return 32'(ch) >= NORTH_PORT * NUM_CLASSES;
  endfunction
  // the pipeline stage from which a packet enters its output FIFO (a link's one stage early)
  logic [IW-1:0] pipe_ch[LATENCY];
  logic          pipe_exit[LATENCY];
  always_comb begin
    for (int s = 0; s < LATENCY; s++) begin
      pipe_ch[s] = ch_of(pipe_p[s].dst, pipe_p[s].kind);
      pipe_exit[s] = pipe_v[s] && (s == LATENCY - 1 || (s == LATENCY - 2 && to_mesh(pipe_ch[s])));
    end
  end

  always_comb begin
    for (int c = 0; c < NUM_CH; c++) begin
      reserved[c] = '0;
      for (int s = 0; s < LATENCY; s++) begin
        if (pipe_v[s] && pipe_ch[s] == IW'(c)) reserved[c] = reserved[c] + 1'b1;
      end
    end
  end

  logic       room[NUM_CH];  // room in output channel c
  always_comb begin
    for (int c = 0; c < NUM_CH; c++)
      room[c] = (32'(out_count[c]) + 32'(reserved[c])) < (to_mesh(IW'(c)) ? LINK_DEPTH : OUT_DEPTH);
  end

  logic          acc_v;
  logic [IW-1:0] acc_ch;
  always_comb begin
    acc_v = 1'b0;
    acc_ch = '0;
    for (int k = NUM_CH - 1; k >= 0; k--) begin
      logic [IW-1:0] c;
      c = IW'((32'(rr) + k) % NUM_CH);
      if (in_valid[c] && room[ch_of(in_pkt[c].dst, in_pkt[c].kind)]) begin
        acc_v = 1'b1;
        acc_ch = c;
      end
    end
    for (int c = 0; c < NUM_CH; c++) in_pop[c] = acc_v && (acc_ch == IW'(c));
  end

  noc_pkt_t acc_pkt;
  assign acc_pkt = in_pkt[acc_ch];

  logic acc_injected, acc_hop;
  assign acc_injected = acc_v && 32'(acc_ch) / NUM_CLASSES != HOST_PORT && !to_mesh(acc_ch);
  assign acc_hop = acc_v && to_mesh(ch_of(acc_pkt.dst, acc_pkt.kind));

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      for (int s = 0; s < LATENCY; s++) pipe_v[s] <= 1'b0;
      rr <= '0;
      noc_packets <= '0;
      noc_packet_hops <= '0;
    end else begin
`ifndef SYNTHESIS  // the harness's activity counters: instrumentation, left out of the area (tools/synth.sh)
      if (acc_injected) noc_packets <= noc_packets + 1;
      if (acc_hop) noc_packet_hops <= noc_packet_hops + 1;
`endif
      pipe_v[0] <= acc_v;
      pipe_p[0] <= acc_pkt;
      for (int s = 1; s < LATENCY; s++) begin
        pipe_v[s] <= pipe_v[s-1] && !pipe_exit[s-1];
        pipe_p[s] <= pipe_p[s-1];
      end
      if (acc_v) rr <= (acc_ch == IW'(NUM_CH - 1)) ? '0 : acc_ch + 1'b1;
    end
  end

  always_comb begin
    idle = 1'b1;
    for (int s = 0; s < LATENCY; s++) if (pipe_v[s]) idle = 1'b0;
    for (int c = 0; c < NUM_CH; c++) if (!out_empty[c]) idle = 1'b0;
  end

  for (genvar c = 0; c < NUM_CH; c++) begin : g_out
    localparam int DEPTH = c >= NORTH_PORT * NUM_CLASSES ? LINK_DEPTH : OUT_DEPTH;
    logic full_unused;
    logic [$clog2(DEPTH + 1)-1:0] count;
    assign out_count[c] = CW'(count);
    fifo #(.WIDTH($bits(noc_pkt_t)), .DEPTH(DEPTH)) u_out (
        .clk, .rst_n,
        // a local port's packet leaves the last stage, a link's the one before: two packets may leave in
        // one clock, never for the same channel
        .push((pipe_exit[LATENCY-1] && pipe_ch[LATENCY-1] == IW'(c)) || (pipe_exit[LATENCY-2] && pipe_ch[LATENCY-2] == IW'(c))),
        .push_data((pipe_exit[LATENCY-2] && pipe_ch[LATENCY-2] == IW'(c)) ? pipe_p[LATENCY-2] : pipe_p[LATENCY-1]),
        .pop(out_pop[c]),
        .head(out_pkt[c]),
        .empty(out_empty[c]),
        .full(full_unused),
        .count(count)
    );
    assign out_valid[c] = !out_empty[c];
  end
endmodule
