// Shared types of the QPE stand-in: NoC packet, packet kinds, register map.
// Included by every file that uses it (guarded), so any file order compiles. Declared in the compilation
// unit rather than in a package: Debian's Yosys (0.23, tools/synth.sh) reads no `import`.
`ifndef S2_PKG_SVH
`define S2_PKG_SVH

  // Router ports: 0..3 are the PEs of the QPE, 4 is the host interface, 5 the DRAM (QPE-DRAM, thesis 3.3),
  // 6..9 the mesh links to the neighbouring QPEs' routers (north, east, south, west; thesis 2.3.4). A
  // packet names its destination node (QPE coordinates and a local port 0..5); routers route X first.
  localparam int NUM_PE = 4;
  localparam int NUM_PORTS = 10;
  localparam int HOST_PORT = 4;
  localparam int DRAM_PORT = 5;
  localparam int NORTH_PORT = 6;  // y - 1
  localparam int EAST_PORT = 7;   // x + 1
  localparam int SOUTH_PORT = 8;  // y + 1
  localparam int WEST_PORT = 9;   // x - 1
  localparam int NUM_DIRS = 4;
  // Two message classes keep requests from blocking responses (no protocol deadlock): every port has a
  // request channel and a response channel through the router; channel = port * 2 + class.
  localparam int NUM_CLASSES = 2;
  localparam int CLS_REQ = 0;
  localparam int CLS_RSP = 1;
  localparam int NUM_CH = NUM_PORTS * NUM_CLASSES;
  localparam int NUM_MESH_CH = NUM_DIRS * NUM_CLASSES;  // mesh channels: (port - NORTH_PORT) * 2 + class

  // A node of the chip's NoC: QPE (x = column from the west, y = row from the north) and its local port.
  localparam int COORD_BITS = 4;  // meshes up to 16 x 16
  typedef struct packed {
    logic [COORD_BITS-1:0] x;
    logic [COORD_BITS-1:0] y;
    logic [2:0]            port;
  } node_t;

  typedef enum logic [3:0] {
    PKT_REG_WR     = 4'd0,  // host -> PE register write (addr = register index)
    PKT_MEM_WR     = 4'd1,  // any -> PE SRAM 128-bit write (addr = byte address)
    PKT_MEM_RD     = 4'd2,  // any -> PE SRAM 128-bit read request (addr = byte address)
    PKT_RD_RSP     = 4'd3,  // PE -> requester: read data (addr echoes the request)
    // DMA <-> DRAM (rtl_stubs/README.md, "DRAM port"); data[114:0] of a request = dma_request_t
    PKT_DRAM_RD    = 4'd4,  // PE DMA -> DRAM: read a request into SRAM (addr = SRAM byte address)
    PKT_DRAM_WR    = 4'd5,  // PE DMA -> DRAM: write a request from SRAM; its lines follow as DRAM_WDATA
    PKT_DRAM_WDATA = 4'd6,  // PE DMA -> DRAM: one SRAM line of the row being written, in order
    PKT_DMA_DATA   = 4'd7,  // DRAM -> PE: one SRAM line of a read (addr = line's byte address, be)
    PKT_DMA_ACK    = 4'd8,  // DRAM -> PE DMA: a written request is in the DRAM (response class)
    PKT_DMA_LAST   = 4'd9,  // DRAM -> PE: the last line of a read request (as PKT_DMA_DATA)
    PKT_DRAM_RDX   = 4'd10, // PE DMA -> DRAM: the planes of the read request just sent (dma_planes_t)
    PKT_MEM_WRA    = 4'd11  // PE DMA -> PE SRAM: as PKT_MEM_WR (be), then a PKT_DMA_ACK to the writer
  } pkt_kind_e;

  // A DMA request in data[114:0] of PKT_DRAM_RD / PKT_DRAM_WR: `rows` rows of `row_bytes` bytes, from DRAM
  // address `dram_addr` every `dram_row_stride` bytes, to (or from) SRAM from the packet's addr every
  // `sram_row_stride` bytes. A load asks for its whole transfer at once: PKT_DRAM_RD describes the first
  // plane and PKT_DRAM_RDX (data[65:0] = dma_planes_t) how many planes follow it how far apart; the DRAM
  // serves the planes back to back. A store asks for a row at a time.
  typedef struct packed {
    logic [16:0] row_bytes;
    logic [16:0] sram_row_stride;
    logic [16:0] rows;
    logic [31:0] dram_row_stride;
    logic [31:0] dram_addr;
  } dma_request_t;

  typedef struct packed {
    logic [16:0] sram_plane_stride;
    logic [31:0] dram_plane_stride;
    logic [16:0] planes;
  } dma_planes_t;

  // One NoC packet: 128 bits of payload plus a header (the SRAM's and operand A's width, thesis 2.3.1-2.3.2).
  // An MLA operand-A read also carries a return tag, {requester PE, word index in the tile}: a remote
  // PE's NoC slave answers such a read to the PE the tag names (rtl_stubs/README.md, neighbor_conv).
  localparam int RTAG_INDEX_BITS = 5;
  typedef struct packed {
    node_t        dst;
    node_t        src;
    pkt_kind_e    kind;
    logic         a_read;                      // an MLA operand-A read (or its response)
    logic [RTAG_INDEX_BITS+1:0] rtag;          // return tag of an operand-A read
    logic [15:0]  be;                          // byte enables of an SRAM write (MEM_WR: all, DMA_DATA: the row's)
    logic [16:0]  addr;
    logic [127:0] data;
  } noc_pkt_t;
  // noc_pkt_t's width, for ports that carry one packet per message class side by side (Yosys 0.23 takes
  // neither packed arrays of structs nor $bits of a type; a wrong figure fails the lint at qpe.sv's PEs)
  localparam int NOC_PKT_BITS = 2 * (2 * COORD_BITS + 3) + 4 + 1 + (RTAG_INDEX_BITS + 2) + 16 + 17 + 128;

  function automatic logic pkt_class(input pkt_kind_e k);
    pkt_class = (k == PKT_RD_RSP || k == PKT_DMA_ACK);
  endfunction

  // PE registers (PKT_REG_WR addr, or the ARM port): 0..12 the task controller (MLA), 16..25 the DMA.
  // Writing REG_START starts the MLA task, REG_DMA_START the DMA transfer.
  localparam logic [4:0] REG_OP      = 5'd0;   // 0 = conv, 1 = mm
  localparam logic [4:0] REG_WI      = 5'd1;   // conv: input width   | mm: W_A (= H_B)
  localparam logic [4:0] REG_HI      = 5'd2;   // conv: input height  | mm: H_A
  localparam logic [4:0] REG_D       = 5'd3;   // conv: input depth   | mm: W_B
  localparam logic [4:0] REG_WF      = 5'd4;   // conv: filter width
  localparam logic [4:0] REG_HF      = 5'd5;   // conv: filter height
  localparam logic [4:0] REG_C       = 5'd6;   // conv: number of filters
  localparam logic [4:0] REG_A_BASE  = 5'd7;   // operand A (weights | matrix A) byte address
  localparam logic [4:0] REG_B_BASE  = 5'd8;   // operand B (ifmap | matrix B) byte address
  localparam logic [4:0] REG_O_BASE  = 5'd9;   // results byte address
  localparam logic [4:0] REG_A_SRC   = 5'd10;  // [2]=via NoC, [1:0]=PE that holds operand A
  localparam logic [4:0] REG_START   = 5'd11;  // any write starts the task
  // conv: operand-B rows from one input plane to the next in SRAM (0 = Hi, planes packed). One-shot: it
  // applies to the next task started and then reads 0 again, so a writer that never uses it never sees it.
  localparam logic [4:0] REG_B_PLANE_ROWS = 5'd12;
  localparam logic [4:0] REG_DMA_DRAM_ADDR         = 5'd16;  // DRAM byte address of the first row
  localparam logic [4:0] REG_DMA_DRAM_ROW_STRIDE   = 5'd17;  // bytes between rows in DRAM
  localparam logic [4:0] REG_DMA_DRAM_PLANE_STRIDE = 5'd18;  // bytes between planes in DRAM
  localparam logic [4:0] REG_DMA_SRAM_ADDR         = 5'd19;  // SRAM byte address of the first row
  localparam logic [4:0] REG_DMA_SRAM_ROW_STRIDE   = 5'd20;
  localparam logic [4:0] REG_DMA_SRAM_PLANE_STRIDE = 5'd21;
  localparam logic [4:0] REG_DMA_ROW_BYTES         = 5'd22;
  localparam logic [4:0] REG_DMA_ROWS              = 5'd23;  // rows per plane
  localparam logic [4:0] REG_DMA_PLANES            = 5'd24;
  // REG_DMA_START: [0] 0 = load (DRAM -> SRAM), 1 = store; [1] 0 = the far end is this QPE's DRAM port,
  // 1 = the far end is node [12:2]: a DRAM port on the chip, or another PE's SRAM (the DMA then reads or
  // writes it line by line, dma_peer.sv). The ARM knows the route's far end (which router a DRAM is at).
  localparam logic [4:0] REG_DMA_START             = 5'd25;
  typedef struct packed {
    node_t node;
    logic  explicit_node;
    logic  store;
  } dma_start_t;

  // Statistics readable through the debug port (stat_sel, 5 bits). 0..7: the last MLA task's, 32 bits.
  localparam logic [4:0] STAT_START_CYCLE   = 5'd0;  // QPE cycle at which the task started
  localparam logic [4:0] STAT_END_CYCLE     = 5'd1;  // QPE cycle at which the last result write completed
  localparam logic [4:0] STAT_COMPUTE_CYCLES = 5'd2; // cycles in the CONV/MM stage
  localparam logic [4:0] STAT_OUTPUT_CYCLES = 5'd3;  // cycles in the OUTPUT stage
  localparam logic [4:0] STAT_A_WAIT_CYCLES = 5'd4;  // compute cycles stalled on operand A
  localparam logic [4:0] STAT_B_WAIT_CYCLES = 5'd5;  // compute cycles stalled on operand B
  localparam logic [4:0] STAT_TILES         = 5'd6;  // tiles completed
  localparam logic [4:0] STAT_STEPS         = 5'd7;  // MAC-array steps completed
  // 8..23: activity counters (model/activity.h), 64 bits, counted since reset (never cleared by a task):
  // counter k's low half at STAT_ACT_BASE + 2k, its high half at STAT_ACT_BASE + 2k + 1.
  localparam logic [4:0] STAT_ACT_BASE      = 5'd8;
  localparam int ACT_MAC_OPS          = 0;  // MAC units fired on lanes inside the tile
  localparam int ACT_MAC_PADDING_OPS  = 1;  // ... on lanes beyond the task's rows or columns
  localparam int ACT_SRAM_RD_MLA_A    = 2;  // SRAM bytes read by the MLA's operand-A port (local MM)
  localparam int ACT_SRAM_RD_MLA_B    = 3;  // ... by its operand-B port
  localparam int ACT_SRAM_WR_MLA_OUT  = 4;  // SRAM bytes written by its output port
  localparam int ACT_SRAM_RD_DMA      = 5;  // SRAM bytes read by the NoC slave and the DMA
  localparam int ACT_SRAM_WR_DMA      = 6;  // ... written by them (the bytes enabled)
  localparam int ACT_BUSY_CYCLES      = 7;  // PE clocks with the MLA or the DMA busy
  // public: the C++ side finds it in the Verilated model and knows the counters are there (no RTL reads it)
  /* verilator lint_off UNUSEDPARAM */
  localparam int ACT_COUNTERS /*verilator public*/ = 8;
  /* verilator lint_on UNUSEDPARAM */

`endif  // S2_PKG_SVH
