`include "s2_pkg.svh"
// The PE's DMA (thesis 3.1): moves a 3-D strided block (planes x rows x row bytes) between the DRAM and the
// PE's SRAM, programmed through registers 16..25 (s2_pkg) and started by REG_DMA_START.
// It asks the DRAM in requests (dma_request_t): a load one per plane, a store one per row; the DRAM places
// the bytes (rows start and end anywhere in a line, in SRAM and in DRAM) and sends a read's data as one
// packet per SRAM line (the lines a plane's rows share go in one packet).
//   Load (DRAM -> SRAM): one request for the whole transfer, PKT_DRAM_RD (the first plane) then
//   PKT_DRAM_RDX (the planes); the DRAM serves its planes back to back and answers with their SRAM lines
//   as PKT_DMA_DATA (byte enables), the transfer's last as PKT_DMA_LAST; the NoC slave writes them; the
//   transfer is done when that last line has been written. (Requests per plane let four DMAs' planes
//   interleave at the DRAM: every PE's load then ends late, together, and the PEs compute in a convoy
//   while the DRAM idles.)
//   Store (SRAM -> DRAM): per row a PKT_DRAM_WR, then the row's SRAM lines as PKT_DRAM_WDATA, read through
//   the DMA's own SRAM port (lowest priority), one line in flight; at most STORE_REQUESTS_IN_FLIGHT rows
//   unacknowledged (PKT_DMA_ACK); done when every row is acknowledged. (A whole plane per request would
//   send its lines at one per clock, faster than the DRAM takes them.)
// A transfer whose far end is another PE's SRAM (a PE port) is dma_peer's: the requester reads or writes
// that SRAM line by line through the far PE's NoC slave.
// The store limits keep the DMAs at the DRAM's pace: four DMAs sending a packet per clock each would fill
// the router (two packets per PE clock), stalling the MLAs' operand-A reads and letting the router's
// arbitration, not the DRAM, decide whose requests are served first.
module dma
#(
    parameter int STORE_REQUESTS_IN_FLIGHT = 2,
    parameter int READS_IN_FLIGHT = 32  // transfers with another PE's SRAM (dma_peer)
) (
    input  logic         clk,
    input  logic         rst_n,
    input  logic         ce,
    input  node_t        me,  // this PE's node
    // register writes (the ARM port or the NoC)
    input  logic         reg_wr,
    input  logic [4:0]   reg_idx,
    input  logic [31:0]  reg_data,
    output logic         busy,
    // waiting for the far end (rtl_stubs/README.md, "Activity-driven evaluation"): every request sent and
    // its data or acknowledgements outstanding, or a store's next row held back by the rows unacknowledged;
    // until a packet arrives a clock changes none of its registers
    output logic         waiting,
    // packets to the DRAM, through the PE's outbound request FIFO
    output logic         pkt_valid,
    output noc_pkt_t     pkt,
    input  logic         pkt_ready,
    // from the NoC interface: a read request's last line was written into SRAM / a DMA_ACK arrived / the
    // data of a line it read from another PE's SRAM
    input  logic         request_done,
    input  logic         ack,
    input  logic         rd_rsp_valid,
    input  logic [127:0] rd_rsp_data,
    // SRAM master (reads of the lines it stores; writes of the lines it brings from another PE's SRAM)
    output logic         s_valid,
    output logic         s_we,
    output logic [16:0]  s_addr,
    output logic [127:0] s_wdata,
    output logic [15:0]  s_be,
    input  logic         s_grant,
    input  logic         s_rsp,
    input  logic [127:0] sram_rdata
);
  logic [31:0] dram_addr, dram_row_stride, dram_plane_stride;
  logic [16:0] sram_addr, sram_row_stride, sram_plane_stride;
  logic [16:0] row_bytes, rows, planes;
  node_t       far_end;  // where the transfer's requests go: a DRAM port (REG_DMA_START, s2_pkg)

  typedef enum logic [2:0] {S_IDLE, S_LOAD_REQ, S_LOAD_PLANES, S_STORE_HDR, S_STORE_LINES, S_DRAIN, S_PEER} state_e;
  state_e state;
  logic        store;
  logic [16:0] row_i, plane_i;
  logic [31:0] plane_dram, row_dram;
  logic [16:0] plane_sram, row_sram;
  logic [31:0] outstanding;  // requests not yet finished (load) or acknowledged (store)

  // a load request is the plane, a store request the row
  dma_request_t request;
  assign request.row_bytes = row_bytes;
  assign request.sram_row_stride = sram_row_stride;
  assign request.rows = store ? 17'd1 : rows;
  assign request.dram_row_stride = dram_row_stride;
  assign request.dram_addr = row_dram;
  dma_planes_t request_planes;  // a load's planes (PKT_DRAM_RDX)
  assign request_planes.sram_plane_stride = sram_plane_stride;
  assign request_planes.dram_plane_stride = dram_plane_stride;
  assign request_planes.planes = planes;

  logic last_row_of_plane, last_plane;
  assign last_row_of_plane = row_i + 17'd1 == rows;
  assign last_plane = plane_i + 17'd1 == planes;

  // store: lines of the current row still to read / to send, the line in flight, a line waiting to be sent
  logic [13:0]  lines_to_read, lines_to_send;
  logic [16:0]  line_addr;
  logic         inflight, hold_valid;
  logic [127:0] hold;
  logic         data_now;
  assign data_now = inflight && s_rsp;

  // the DRAM engine's packets and SRAM reads; the peer engine's; the one running drives the ports
  logic         dram_pkt_valid, dram_s_valid;
  noc_pkt_t     dram_pkt;
  logic         peer_start, peer_busy, peer_pkt_valid, peer_s_valid, peer_s_we;
  noc_pkt_t     peer_pkt;
  logic [16:0]  peer_s_addr;
  logic [127:0] peer_s_wdata;
  logic [15:0]  peer_s_be;
  logic         peer;  // the transfer running is the peer engine's
  logic         peer_waiting;
  assign peer = state == S_PEER;
  assign pkt_valid = peer ? peer_pkt_valid : dram_pkt_valid;
  assign pkt = peer ? peer_pkt : dram_pkt;
  assign s_valid = peer ? peer_s_valid : dram_s_valid;
  assign s_we = peer && peer_s_we;
  assign s_addr = peer ? peer_s_addr : line_addr;
  assign s_wdata = peer_s_wdata;
  assign s_be = peer_s_be;

  always_comb begin
    dram_pkt = '0;
    dram_pkt.dst = far_end;
    dram_pkt.src = me;
    dram_pkt.addr = row_sram;
    dram_pkt_valid = 1'b0;
    case (state)
      S_LOAD_REQ: begin
        dram_pkt_valid = 1'b1;
        dram_pkt.kind = PKT_DRAM_RD;
        dram_pkt.data[$bits(request)-1:0] = request;
      end
      S_LOAD_PLANES: begin
        dram_pkt_valid = 1'b1;
        dram_pkt.kind = PKT_DRAM_RDX;
        dram_pkt.data[$bits(request_planes)-1:0] = request_planes;
      end
      S_STORE_HDR: begin
        dram_pkt_valid = outstanding < 32'(STORE_REQUESTS_IN_FLIGHT);
        dram_pkt.kind = PKT_DRAM_WR;
        dram_pkt.data[$bits(request)-1:0] = request;
      end
      S_STORE_LINES: begin
        dram_pkt_valid = hold_valid || data_now;
        dram_pkt.kind = PKT_DRAM_WDATA;
        dram_pkt.data = hold_valid ? hold : sram_rdata;
      end
      default: ;
    endcase
  end
  logic sent;
  assign sent = pkt_valid && pkt_ready;

  // the next line is read when nothing waits to be sent and the line in flight (if any) goes out now
  assign dram_s_valid = state == S_STORE_LINES && lines_to_read != 0 && !hold_valid && (!inflight || (s_rsp && pkt_ready));
  logic granted;
  assign granted = dram_s_valid && s_grant;

  // this clock ends a store request (the row's last line was sent)
  logic request_sent;
  assign request_sent = state == S_STORE_LINES && sent && lines_to_send == 14'd1;

  assign busy = state != S_IDLE;
  assign waiting = !request_done && !ack && !rd_rsp_valid && !s_rsp &&
                   ((state == S_DRAIN && outstanding != 0) || (state == S_STORE_HDR && !dram_pkt_valid) ||
                    (peer && peer_waiting));

  logic far_is_pe;  // REG_DMA_START names another PE's SRAM
  dma_start_t go;
  assign go = reg_data[$bits(go)-1:0];
  assign far_is_pe = go.explicit_node && go.node.port < 3'(NUM_PE);
  assign peer_start = ce && reg_wr && reg_idx == REG_DMA_START && state == S_IDLE && far_is_pe &&
                      rows != 0 && planes != 0 && row_bytes != 0;
  dma_peer #(.READS_IN_FLIGHT(READS_IN_FLIGHT), .STORE_REQUESTS_IN_FLIGHT(STORE_REQUESTS_IN_FLIGHT)) u_peer (
      .clk, .rst_n, .ce, .me, .start(peer_start), .store(go.store), .far(go.node),
      .far_addr(dram_addr[16:0]), .far_row_stride(dram_row_stride[16:0]), .far_plane_stride(dram_plane_stride[16:0]),
      .own_addr(sram_addr), .own_row_stride(sram_row_stride), .own_plane_stride(sram_plane_stride),
      .row_bytes, .rows, .planes, .busy(peer_busy), .waiting(peer_waiting),
      .pkt_valid(peer_pkt_valid), .pkt(peer_pkt), .pkt_ready,
      .rsp_valid(rd_rsp_valid), .rsp_data(rd_rsp_data), .ack(ack && peer),
      .s_valid(peer_s_valid), .s_we(peer_s_we), .s_addr(peer_s_addr), .s_wdata(peer_s_wdata), .s_be(peer_s_be),
      .s_grant, .s_rsp(s_rsp && peer), .sram_rdata);

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      {dram_addr, dram_row_stride, dram_plane_stride} <= '0;
      {sram_addr, sram_row_stride, sram_plane_stride} <= '0;
      {row_bytes, rows, planes} <= '0;
      state <= S_IDLE;
      store <= 1'b0;
      far_end <= '0;
      {row_i, plane_i, plane_sram, row_sram} <= '0;
      {plane_dram, row_dram} <= '0;
      outstanding <= '0;
      {lines_to_read, lines_to_send} <= '0;
      line_addr <= '0;
      inflight <= 1'b0;
      hold_valid <= 1'b0;
      hold <= '0;
    end else if (ce) begin
      if (reg_wr) begin
        case (reg_idx)
          REG_DMA_DRAM_ADDR:         dram_addr <= reg_data;
          REG_DMA_DRAM_ROW_STRIDE:   dram_row_stride <= reg_data;
          REG_DMA_DRAM_PLANE_STRIDE: dram_plane_stride <= reg_data;
          REG_DMA_SRAM_ADDR:         sram_addr <= reg_data[16:0];
          REG_DMA_SRAM_ROW_STRIDE:   sram_row_stride <= reg_data[16:0];
          REG_DMA_SRAM_PLANE_STRIDE: sram_plane_stride <= reg_data[16:0];
          REG_DMA_ROW_BYTES:         row_bytes <= reg_data[16:0];
          REG_DMA_ROWS:              rows <= reg_data[16:0];
          REG_DMA_PLANES:            planes <= reg_data[16:0];
          REG_DMA_START: if (state == S_IDLE) begin
            store <= go.store;
            far_end <= go.explicit_node ? go.node : {me.x, me.y, 3'(DRAM_PORT)};
            row_i <= '0;
            plane_i <= '0;
            plane_dram <= dram_addr;
            row_dram <= dram_addr;
            plane_sram <= sram_addr;
            row_sram <= sram_addr;
            outstanding <= '0;
            if (rows == 0 || planes == 0 || row_bytes == 0) state <= S_DRAIN;
            else if (far_is_pe) state <= S_PEER;
            else state <= go.store ? S_STORE_HDR : S_LOAD_REQ;
          end
          default: ;
        endcase
      end

      // a load's request is its two packets
      if (state == S_LOAD_REQ && sent) state <= S_LOAD_PLANES;
      if (state == S_LOAD_PLANES && sent) state <= S_DRAIN;
      // a store's next request: the next row, or the first of the next plane
      if (request_sent) begin
        if (last_row_of_plane && last_plane) begin
          state <= S_DRAIN;
        end else begin
          state <= S_STORE_HDR;
          if (last_row_of_plane) begin
            row_i <= '0;
            plane_i <= plane_i + 17'd1;
            plane_dram <= plane_dram + dram_plane_stride;
            row_dram <= plane_dram + dram_plane_stride;
            plane_sram <= plane_sram + sram_plane_stride;
            row_sram <= plane_sram + sram_plane_stride;
          end else begin
            row_i <= row_i + 17'd1;
            row_dram <= row_dram + dram_row_stride;
            row_sram <= row_sram + sram_row_stride;
          end
        end
      end

      // a store row's lines, after its header
      if (state == S_STORE_HDR && sent) begin
        logic [12:0] lines_m1;
        lines_m1 = 13'((row_sram + row_bytes - 17'd1) >> 4) - row_sram[16:4];
        state <= S_STORE_LINES;
        lines_to_read <= 14'(lines_m1) + 14'd1;
        lines_to_send <= 14'(lines_m1) + 14'd1;
        line_addr <= {row_sram[16:4], 4'b0};
      end else if (state == S_STORE_LINES) begin
        if (granted) begin
          lines_to_read <= lines_to_read - 14'd1;
          line_addr <= line_addr + 17'd16;
        end
        if (sent) lines_to_send <= lines_to_send - 14'd1;
      end
      if (state == S_STORE_LINES) begin
        inflight <= granted || (inflight && !s_rsp);
        if (hold_valid && sent) hold_valid <= 1'b0;
        else if (data_now && !sent) begin
          hold_valid <= 1'b1;
          hold <= sram_rdata;
        end
      end

      // requests still to finish
      begin
        logic [31:0] more, less;
        more = ((state == S_LOAD_PLANES || state == S_STORE_HDR) && sent) ? 32'd1 : 32'd0;
        less = (request_done || (ack && !peer)) ? 32'd1 : 32'd0;
        outstanding <= outstanding + more - less;
      end
      if (state == S_DRAIN && outstanding == 0) state <= S_IDLE;
      if (peer && !peer_busy) state <= S_IDLE;
    end
  end
endmodule
