// libsystemc expects the program to define sc_main. s2cosim's programs have their own main() and drive
// the simulation through Qpe::run_task, so this one is never called.
#include "model/systemc.h"

int sc_main(int, char*[]) { return 0; }
