#pragma once
// MPI calls that may block on another rank and that the library otherwise leaves alone: each
// wrapper posts held sends, the non-blocking engine's and deferred bursts'
// (intercept::flush_point), and calls PMPI. c_wrappers.cpp
// defines the C entry points; fortran_wrappers.cpp the Fortran ones for Open MPI, forwarding the
// Fortran arguments (all by reference, `nf` of them with ierr) to MPI's own pmpi_<name>_.
//
//   X(C name, Fortran name, C parameters, C arguments, nf)
#include <mpi.h>

#include <string_view>

#define COMMSCHED_FLUSH_POINTS(X)                                                                \
  X(Send, send, (const void* b, int c, MPI_Datatype t, int d, int g, MPI_Comm m), (b, c, t, d, g, m), 7)  \
  X(Ssend, ssend, (const void* b, int c, MPI_Datatype t, int d, int g, MPI_Comm m), (b, c, t, d, g, m), 7) \
  X(Rsend, rsend, (const void* b, int c, MPI_Datatype t, int d, int g, MPI_Comm m), (b, c, t, d, g, m), 7) \
  X(Bsend, bsend, (const void* b, int c, MPI_Datatype t, int d, int g, MPI_Comm m), (b, c, t, d, g, m), 7) \
  X(Recv, recv, (void* b, int c, MPI_Datatype t, int s, int g, MPI_Comm m, MPI_Status* st),            \
    (b, c, t, s, g, m, st), 8)                                                                   \
  X(Sendrecv, sendrecv,                                                                                    \
    (const void* sb, int sc, MPI_Datatype st, int d, int sg, void* rb, int rc, MPI_Datatype rt,  \
     int s, int rg, MPI_Comm m, MPI_Status* status),                                             \
    (sb, sc, st, d, sg, rb, rc, rt, s, rg, m, status), 13)                                       \
  X(Sendrecv_replace, sendrecv_replace,                                                                            \
    (void* b, int c, MPI_Datatype t, int d, int sg, int s, int rg, MPI_Comm m, MPI_Status* st),  \
    (b, c, t, d, sg, s, rg, m, st), 10)                                                          \
  X(Probe, probe, (int s, int g, MPI_Comm m, MPI_Status* st), (s, g, m, st), 5)                         \
  X(Iprobe, iprobe, (int s, int g, MPI_Comm m, int* f, MPI_Status* st), (s, g, m, f, st), 6)             \
  X(Mprobe, mprobe, (int s, int g, MPI_Comm m, MPI_Message* msg, MPI_Status* st), (s, g, m, msg, st), 6) \
  X(Improbe, improbe, (int s, int g, MPI_Comm m, int* f, MPI_Message* msg, MPI_Status* st),               \
    (s, g, m, f, msg, st), 7)                                                                    \
  X(Win_fence, win_fence, (int a, MPI_Win w), (a, w), 3)                                       \
  X(Intercomm_create, intercomm_create,                                                          \
    (MPI_Comm l, int ll, MPI_Comm p, int rl, int t, MPI_Comm* n), (l, ll, p, rl, t, n), 7)       \
  X(Win_create, win_create,                                                                      \
    (void* b, MPI_Aint s, int d, MPI_Info i, MPI_Comm m, MPI_Win* w), (b, s, d, i, m, w), 7)     \
  X(Win_allocate, win_allocate,                                                                  \
    (MPI_Aint s, int d, MPI_Info i, MPI_Comm m, void* b, MPI_Win* w), (s, d, i, m, b, w), 7)     \
  X(Win_free, win_free, (MPI_Win* w), (w), 2)                                                  \
  X(Win_allocate_shared, win_allocate_shared,                                                    \
    (MPI_Aint s, int d, MPI_Info i, MPI_Comm m, void* b, MPI_Win* w), (s, d, i, m, b, w), 7)     \
  X(Win_create_dynamic, win_create_dynamic, (MPI_Info i, MPI_Comm m, MPI_Win* w), (i, m, w), 4)  \
  X(Win_start, win_start, (MPI_Group g, int a, MPI_Win w), (g, a, w), 4)                         \
  X(Win_complete, win_complete, (MPI_Win w), (w), 2)                                             \
  X(Win_post, win_post, (MPI_Group g, int a, MPI_Win w), (g, a, w), 4)                           \
  X(Win_wait, win_wait, (MPI_Win w), (w), 2)                                                     \
  X(Win_lock, win_lock, (int l, int r, int a, MPI_Win w), (l, r, a, w), 5)                       \
  X(Win_unlock, win_unlock, (int r, MPI_Win w), (r, w), 3)                                       \
  X(Win_lock_all, win_lock_all, (int a, MPI_Win w), (a, w), 3)                                   \
  X(Win_unlock_all, win_unlock_all, (MPI_Win w), (w), 2)                                         \
  X(Win_flush, win_flush, (int r, MPI_Win w), (r, w), 3)                                         \
  X(Win_flush_all, win_flush_all, (MPI_Win w), (w), 2)                                           \
  X(Win_flush_local, win_flush_local, (int r, MPI_Win w), (r, w), 3)                             \
  X(Win_flush_local_all, win_flush_local_all, (MPI_Win w), (w), 2)                             \
  X(Buffer_detach, buffer_detach, (void* b, int* n), (b, n), 3)                                 \
  X(Comm_join, comm_join, (int f, MPI_Comm* n), (f, n), 3)

// Flush points that take one string: its Fortran forms pass the string's length after ierr,
// which the Fortran forwarders carry on.
#define COMMSCHED_FLUSH_POINTS_STRING(X)                                                        \
  X(Comm_accept, comm_accept, (const char* p, MPI_Info i, int r, MPI_Comm m, MPI_Comm* n),      \
    (p, i, r, m, n), 6)                                                                         \
  X(Comm_connect, comm_connect, (const char* p, MPI_Info i, int r, MPI_Comm m, MPI_Comm* n),    \
    (p, i, r, m, n), 6)                                                                         \
  X(File_open, file_open, (MPI_Comm m, const char* n, int a, MPI_Info i, MPI_File* f),          \
    (m, n, a, i, f), 6)                                                                         \
  X(File_set_view, file_set_view,                                                               \
    (MPI_File f, MPI_Offset d, MPI_Datatype e, MPI_Datatype t, const char* r, MPI_Info i),      \
    (f, d, e, t, r, i), 7)

// Flush points in C only: MPI_Comm_spawn's Fortran form passes an array of strings (the call
// is rare: spawning processes).
#define COMMSCHED_FLUSH_POINTS_C(X)                                                             \
  X(Comm_spawn, comm_spawn,                                                                     \
    (const char* c, char* v[], int n, MPI_Info i, int r, MPI_Comm m, MPI_Comm* ic, int e[]),    \
    (c, v, n, i, r, m, ic, e), 9)

// MPI-IO's collective calls: every rank of the file's communicator takes part, so a rank may
// wait there for a peer that waits for one of its held sends (collective buffering moves data
// between ranks too). Independent reads and writes and the non-blocking forms wait on no peer.
// MPI_File_open and MPI_File_set_view take a string: COMMSCHED_FLUSH_POINTS_STRING.
#define COMMSCHED_FLUSH_POINTS_IO(X)                                                            \
  X(File_close, file_close, (MPI_File* f), (f), 2)                                              \
  X(File_set_size, file_set_size, (MPI_File f, MPI_Offset s), (f, s), 3)                        \
  X(File_preallocate, file_preallocate, (MPI_File f, MPI_Offset s), (f, s), 3)                  \
  X(File_set_info, file_set_info, (MPI_File f, MPI_Info i), (f, i), 3)                          \
  X(File_set_atomicity, file_set_atomicity, (MPI_File f, int a), (f, a), 3)                     \
  X(File_sync, file_sync, (MPI_File f), (f), 2)                                                 \
  X(File_seek_shared, file_seek_shared, (MPI_File f, MPI_Offset o, int w), (f, o, w), 4)        \
  X(File_read_at_all, file_read_at_all,                                                         \
    (MPI_File f, MPI_Offset o, void* b, int c, MPI_Datatype t, MPI_Status* st),                 \
    (f, o, b, c, t, st), 7)                                                                     \
  X(File_write_at_all, file_write_at_all,                                                       \
    (MPI_File f, MPI_Offset o, const void* b, int c, MPI_Datatype t, MPI_Status* st),           \
    (f, o, b, c, t, st), 7)                                                                     \
  X(File_read_all, file_read_all, (MPI_File f, void* b, int c, MPI_Datatype t, MPI_Status* st), \
    (f, b, c, t, st), 6)                                                                        \
  X(File_write_all, file_write_all,                                                             \
    (MPI_File f, const void* b, int c, MPI_Datatype t, MPI_Status* st), (f, b, c, t, st), 6)    \
  X(File_read_ordered, file_read_ordered,                                                       \
    (MPI_File f, void* b, int c, MPI_Datatype t, MPI_Status* st), (f, b, c, t, st), 6)          \
  X(File_write_ordered, file_write_ordered,                                                     \
    (MPI_File f, const void* b, int c, MPI_Datatype t, MPI_Status* st), (f, b, c, t, st), 6)    \
  X(File_read_at_all_begin, file_read_at_all_begin,                                             \
    (MPI_File f, MPI_Offset o, void* b, int c, MPI_Datatype t), (f, o, b, c, t), 6)             \
  X(File_write_at_all_begin, file_write_at_all_begin,                                           \
    (MPI_File f, MPI_Offset o, const void* b, int c, MPI_Datatype t), (f, o, b, c, t), 6)       \
  X(File_read_all_begin, file_read_all_begin, (MPI_File f, void* b, int c, MPI_Datatype t),     \
    (f, b, c, t), 5)                                                                            \
  X(File_write_all_begin, file_write_all_begin,                                                 \
    (MPI_File f, const void* b, int c, MPI_Datatype t), (f, b, c, t), 5)                        \
  X(File_read_ordered_begin, file_read_ordered_begin,                                           \
    (MPI_File f, void* b, int c, MPI_Datatype t), (f, b, c, t), 5)                              \
  X(File_write_ordered_begin, file_write_ordered_begin,                                         \
    (MPI_File f, const void* b, int c, MPI_Datatype t), (f, b, c, t), 5)                        \
  X(File_read_at_all_end, file_read_at_all_end, (MPI_File f, void* b, MPI_Status* st),          \
    (f, b, st), 4)                                                                              \
  X(File_write_at_all_end, file_write_at_all_end, (MPI_File f, const void* b, MPI_Status* st),  \
    (f, b, st), 4)                                                                              \
  X(File_read_all_end, file_read_all_end, (MPI_File f, void* b, MPI_Status* st), (f, b, st), 4) \
  X(File_write_all_end, file_write_all_end, (MPI_File f, const void* b, MPI_Status* st),        \
    (f, b, st), 4)                                                                              \
  X(File_read_ordered_end, file_read_ordered_end, (MPI_File f, void* b, MPI_Status* st),        \
    (f, b, st), 4)                                                                              \
  X(File_write_ordered_end, file_write_ordered_end,                                             \
    (MPI_File f, const void* b, MPI_Status* st), (f, b, st), 4)

// Blocking collectives, the communicator their last argument (the one before ierr in Fortran):
// flush points too, and after MPI's call intercept::collective_done, where every member of the
// communicator has been (COMMSCHED_NONBLOCKING=auto agrees there).
#define COMMSCHED_BLOCKING_COLLECTIVES(X)                                                       \
  X(Barrier, barrier, (MPI_Comm m), (m), 2)                                                               \
  X(Bcast, bcast, (void* b, int c, MPI_Datatype t, int r, MPI_Comm m), (b, c, t, r, m), 6)              \
  X(Reduce, reduce, (const void* s, void* r, int c, MPI_Datatype t, MPI_Op o, int root, MPI_Comm m),     \
    (s, r, c, t, o, root, m), 8)                                                                 \
  X(Allreduce, allreduce, (const void* s, void* r, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m),            \
    (s, r, c, t, o, m), 7)                                                                       \
  X(Gather, gather,                                                                                      \
    (const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, int r,          \
     MPI_Comm m),                                                                                \
    (sb, sc, st, rb, rc, rt, r, m), 9)                                                           \
  X(Gatherv, gatherv,                                                                                     \
    (const void* sb, int sc, MPI_Datatype st, void* rb, const int* rc, const int* rd,            \
     MPI_Datatype rt, int r, MPI_Comm m),                                                        \
    (sb, sc, st, rb, rc, rd, rt, r, m), 10)                                                      \
  X(Scatter, scatter,                                                                                     \
    (const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, int r,          \
     MPI_Comm m),                                                                                \
    (sb, sc, st, rb, rc, rt, r, m), 9)                                                           \
  X(Scatterv, scatterv,                                                                                    \
    (const void* sb, const int* sc, const int* sd, MPI_Datatype st, void* rb, int rc,            \
     MPI_Datatype rt, int r, MPI_Comm m),                                                        \
    (sb, sc, sd, st, rb, rc, rt, r, m), 10)                                                      \
  X(Allgather, allgather,                                                                                   \
    (const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm m),    \
    (sb, sc, st, rb, rc, rt, m), 8)                                                              \
  X(Allgatherv, allgatherv,                                                                                  \
    (const void* sb, int sc, MPI_Datatype st, void* rb, const int* rc, const int* rd,            \
     MPI_Datatype rt, MPI_Comm m),                                                               \
    (sb, sc, st, rb, rc, rd, rt, m), 9)                                                          \
  X(Reduce_scatter, reduce_scatter,                                                                              \
    (const void* s, void* r, const int* c, MPI_Datatype t, MPI_Op o, MPI_Comm m),                \
    (s, r, c, t, o, m), 7)                                                                       \
  X(Reduce_scatter_block, reduce_scatter_block, (const void* s, void* r, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m), \
    (s, r, c, t, o, m), 7)                                                                       \
  X(Scan, scan, (const void* s, void* r, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m),                 \
    (s, r, c, t, o, m), 7)                                                                       \
  X(Exscan, exscan, (const void* s, void* r, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m),               \
    (s, r, c, t, o, m), 7)                                                                       \
  X(Neighbor_allgather, neighbor_allgather,                                                      \
    (const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm m),    \
    (sb, sc, st, rb, rc, rt, m), 8)                                                              \
  X(Neighbor_allgatherv, neighbor_allgatherv,                                                    \
    (const void* sb, int sc, MPI_Datatype st, void* rb, const int* rc, const int* rd,            \
     MPI_Datatype rt, MPI_Comm m),                                                               \
    (sb, sc, st, rb, rc, rd, rt, m), 9)

// MPI-4 calls of the kinds above (MPICH 4; Open MPI 4.1 and SMPI have none): the large-count
// (_c) forms and MPI_Isendrecv. C only: MPICH's Fortran bindings call the C entry points. The
// non-blocking posts among them are flush points too: a send the library holds must not be
// overtaken by a later one to the same peer that it does not see.
// The blocking all-to-alls' large-count forms are not here: the library substitutes them
// (src/intercept/large_count.hpp).
#if MPI_VERSION >= 4
#define COMMSCHED_FLUSH_POINTS_MPI4(X)                                                          \
  X(Send_c, , (const void* b, MPI_Count c, MPI_Datatype t, int d, int g, MPI_Comm m),           \
    (b, c, t, d, g, m), 0)                                                                      \
  X(Ssend_c, , (const void* b, MPI_Count c, MPI_Datatype t, int d, int g, MPI_Comm m),          \
    (b, c, t, d, g, m), 0)                                                                      \
  X(Rsend_c, , (const void* b, MPI_Count c, MPI_Datatype t, int d, int g, MPI_Comm m),          \
    (b, c, t, d, g, m), 0)                                                                      \
  X(Bsend_c, , (const void* b, MPI_Count c, MPI_Datatype t, int d, int g, MPI_Comm m),          \
    (b, c, t, d, g, m), 0)                                                                      \
  X(Recv_c, , (void* b, MPI_Count c, MPI_Datatype t, int s, int g, MPI_Comm m, MPI_Status* st), \
    (b, c, t, s, g, m, st), 0)                                                                  \
  X(Sendrecv_c, ,                                                                               \
    (const void* sb, MPI_Count sc, MPI_Datatype st, int d, int sg, void* rb, MPI_Count rc,      \
     MPI_Datatype rt, int s, int rg, MPI_Comm m, MPI_Status* status),                           \
    (sb, sc, st, d, sg, rb, rc, rt, s, rg, m, status), 0)                                       \
  X(Sendrecv_replace_c, ,                                                                       \
    (void* b, MPI_Count c, MPI_Datatype t, int d, int sg, int s, int rg, MPI_Comm m,            \
     MPI_Status* st),                                                                           \
    (b, c, t, d, sg, s, rg, m, st), 0)                                                          \
  X(Isend_c, , (const void* b, MPI_Count c, MPI_Datatype t, int d, int g, MPI_Comm m,           \
                MPI_Request* q), (b, c, t, d, g, m, q), 0)                                      \
  X(Issend_c, , (const void* b, MPI_Count c, MPI_Datatype t, int d, int g, MPI_Comm m,          \
                 MPI_Request* q), (b, c, t, d, g, m, q), 0)                                     \
  X(Irsend_c, , (const void* b, MPI_Count c, MPI_Datatype t, int d, int g, MPI_Comm m,          \
                 MPI_Request* q), (b, c, t, d, g, m, q), 0)                                     \
  X(Ibsend_c, , (const void* b, MPI_Count c, MPI_Datatype t, int d, int g, MPI_Comm m,          \
                 MPI_Request* q), (b, c, t, d, g, m, q), 0)                                     \
  X(Irecv_c, , (void* b, MPI_Count c, MPI_Datatype t, int s, int g, MPI_Comm m,                 \
                MPI_Request* q), (b, c, t, s, g, m, q), 0)                                      \
  X(Isendrecv, ,                                                                                \
    (const void* sb, int sc, MPI_Datatype st, int d, int sg, void* rb, int rc, MPI_Datatype rt, \
     int s, int rg, MPI_Comm m, MPI_Request* q),                                                \
    (sb, sc, st, d, sg, rb, rc, rt, s, rg, m, q), 0)                                            \
  X(Isendrecv_replace, ,                                                                        \
    (void* b, int c, MPI_Datatype t, int d, int sg, int s, int rg, MPI_Comm m, MPI_Request* q), \
    (b, c, t, d, sg, s, rg, m, q), 0)                                                           \
  X(Isendrecv_c, ,                                                                              \
    (const void* sb, MPI_Count sc, MPI_Datatype st, int d, int sg, void* rb, MPI_Count rc,      \
     MPI_Datatype rt, int s, int rg, MPI_Comm m, MPI_Request* q),                               \
    (sb, sc, st, d, sg, rb, rc, rt, s, rg, m, q), 0)                                            \
  X(Isendrecv_replace_c, ,                                                                      \
    (void* b, MPI_Count c, MPI_Datatype t, int d, int sg, int s, int rg, MPI_Comm m,            \
     MPI_Request* q),                                                                           \
    (b, c, t, d, sg, s, rg, m, q), 0)                                                           \
  X(Mrecv_c, , (void* b, MPI_Count c, MPI_Datatype t, MPI_Message* g, MPI_Status* st),          \
    (b, c, t, g, st), 0)                                                                        \
  X(Buffer_detach_c, , (void* b, MPI_Count* n), (b, n), 0)                                    \
  X(File_read_at_all_c, ,                                                                       \
    (MPI_File f, MPI_Offset o, void* b, MPI_Count c, MPI_Datatype t, MPI_Status* st),           \
    (f, o, b, c, t, st), 0)                                                                     \
  X(File_write_at_all_c, ,                                                                      \
    (MPI_File f, MPI_Offset o, const void* b, MPI_Count c, MPI_Datatype t, MPI_Status* st),     \
    (f, o, b, c, t, st), 0)                                                                     \
  X(File_read_all_c, , (MPI_File f, void* b, MPI_Count c, MPI_Datatype t, MPI_Status* st),      \
    (f, b, c, t, st), 0)                                                                        \
  X(File_write_all_c, ,                                                                         \
    (MPI_File f, const void* b, MPI_Count c, MPI_Datatype t, MPI_Status* st), (f, b, c, t, st), \
    0)                                                                                          \
  X(File_read_ordered_c, , (MPI_File f, void* b, MPI_Count c, MPI_Datatype t, MPI_Status* st),  \
    (f, b, c, t, st), 0)                                                                        \
  X(File_write_ordered_c, ,                                                                     \
    (MPI_File f, const void* b, MPI_Count c, MPI_Datatype t, MPI_Status* st), (f, b, c, t, st), \
    0)                                                                                          \
  X(File_read_at_all_begin_c, ,                                                                 \
    (MPI_File f, MPI_Offset o, void* b, MPI_Count c, MPI_Datatype t), (f, o, b, c, t), 0)       \
  X(File_write_at_all_begin_c, ,                                                                \
    (MPI_File f, MPI_Offset o, const void* b, MPI_Count c, MPI_Datatype t), (f, o, b, c, t), 0) \
  X(File_read_all_begin_c, , (MPI_File f, void* b, MPI_Count c, MPI_Datatype t), (f, b, c, t),  \
    0)                                                                                          \
  X(File_write_all_begin_c, , (MPI_File f, const void* b, MPI_Count c, MPI_Datatype t),         \
    (f, b, c, t), 0)                                                                            \
  X(File_read_ordered_begin_c, , (MPI_File f, void* b, MPI_Count c, MPI_Datatype t),            \
    (f, b, c, t), 0)                                                                            \
  X(File_write_ordered_begin_c, , (MPI_File f, const void* b, MPI_Count c, MPI_Datatype t),     \
    (f, b, c, t), 0)
#define COMMSCHED_BLOCKING_COLLECTIVES_MPI4(X)                                                  \
  X(Bcast_c, , (void* b, MPI_Count c, MPI_Datatype t, int r, MPI_Comm m), (b, c, t, r, m), 0)   \
  X(Reduce_c, ,                                                                                 \
    (const void* s, void* r, MPI_Count c, MPI_Datatype t, MPI_Op o, int root, MPI_Comm m),      \
    (s, r, c, t, o, root, m), 0)                                                                \
  X(Allreduce_c, , (const void* s, void* r, MPI_Count c, MPI_Datatype t, MPI_Op o, MPI_Comm m), \
    (s, r, c, t, o, m), 0)                                                                      \
  X(Gather_c, ,                                                                                 \
    (const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt,    \
     int r, MPI_Comm m),                                                                        \
    (sb, sc, st, rb, rc, rt, r, m), 0)                                                          \
  X(Gatherv_c, ,                                                                                \
    (const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, const MPI_Count rc[],             \
     const MPI_Aint rd[], MPI_Datatype rt, int r, MPI_Comm m),                                  \
    (sb, sc, st, rb, rc, rd, rt, r, m), 0)                                                      \
  X(Scatter_c, ,                                                                                \
    (const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt,    \
     int r, MPI_Comm m),                                                                        \
    (sb, sc, st, rb, rc, rt, r, m), 0)                                                          \
  X(Scatterv_c, ,                                                                               \
    (const void* sb, const MPI_Count sc[], const MPI_Aint sd[], MPI_Datatype st, void* rb,      \
     MPI_Count rc, MPI_Datatype rt, int r, MPI_Comm m),                                         \
    (sb, sc, sd, st, rb, rc, rt, r, m), 0)                                                      \
  X(Allgather_c, ,                                                                              \
    (const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt,    \
     MPI_Comm m),                                                                               \
    (sb, sc, st, rb, rc, rt, m), 0)                                                             \
  X(Allgatherv_c, ,                                                                             \
    (const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, const MPI_Count rc[],             \
     const MPI_Aint rd[], MPI_Datatype rt, MPI_Comm m),                                         \
    (sb, sc, st, rb, rc, rd, rt, m), 0)                                                         \
  X(Reduce_scatter_c, ,                                                                         \
    (const void* s, void* r, const MPI_Count c[], MPI_Datatype t, MPI_Op o, MPI_Comm m),        \
    (s, r, c, t, o, m), 0)                                                                      \
  X(Reduce_scatter_block_c, ,                                                                   \
    (const void* s, void* r, MPI_Count c, MPI_Datatype t, MPI_Op o, MPI_Comm m),                \
    (s, r, c, t, o, m), 0)                                                                      \
  X(Scan_c, , (const void* s, void* r, MPI_Count c, MPI_Datatype t, MPI_Op o, MPI_Comm m),      \
    (s, r, c, t, o, m), 0)                                                                      \
  X(Exscan_c, , (const void* s, void* r, MPI_Count c, MPI_Datatype t, MPI_Op o, MPI_Comm m),    \
    (s, r, c, t, o, m), 0)                                                                      \
  X(Neighbor_allgather_c, ,                                                                     \
    (const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt,    \
     MPI_Comm m),                                                                               \
    (sb, sc, st, rb, rc, rt, m), 0)                                                             \
  X(Neighbor_allgatherv_c, ,                                                                    \
    (const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, const MPI_Count rc[],             \
     const MPI_Aint rd[], MPI_Datatype rt, MPI_Comm m),                                         \
    (sb, sc, st, rb, rc, rd, rt, m), 0)
#else
#define COMMSCHED_FLUSH_POINTS_MPI4(X)
#define COMMSCHED_BLOCKING_COLLECTIVES_MPI4(X)
#endif

// Calls that make an intracommunicator, collective on it: a flush point first, then
// intercept::comm_made where every member is present (the non-blocking engine's channel, level
// collective's numbering of the communicators bursts may run on).
// The parent is the first argument; the new communicator the last: `n` in C, the one before
// ierr in Fortran.
//
//   X(C name, Fortran name, C parameters, C arguments, nf)
#define COMMSCHED_COMM_CREATORS(X)                                                              \
  X(Comm_dup, comm_dup, (MPI_Comm m, MPI_Comm* n), (m, n), 3)                                   \
  X(Comm_dup_with_info, comm_dup_with_info, (MPI_Comm m, MPI_Info i, MPI_Comm* n), (m, i, n), 4) \
  X(Comm_split, comm_split, (MPI_Comm m, int c, int k, MPI_Comm* n), (m, c, k, n), 5)           \
  X(Comm_split_type, comm_split_type, (MPI_Comm m, int t, int k, MPI_Info i, MPI_Comm* n),      \
    (m, t, k, i, n), 6)                                                                         \
  X(Comm_create, comm_create, (MPI_Comm m, MPI_Group g, MPI_Comm* n), (m, g, n), 4)             \
  X(Comm_create_group, comm_create_group, (MPI_Comm m, MPI_Group g, int t, MPI_Comm* n),        \
    (m, g, t, n), 5)                                                                            \
  X(Intercomm_merge, intercomm_merge, (MPI_Comm m, int h, MPI_Comm* n), (m, h, n), 4)           \
  X(Cart_create, cart_create,                                                                   \
    (MPI_Comm m, int d, const int* dims, const int* p, int r, MPI_Comm* n),                     \
    (m, d, dims, p, r, n), 7)                                                                   \
  X(Cart_sub, cart_sub, (MPI_Comm m, const int* r, MPI_Comm* n), (m, r, n), 4)                  \
  X(Graph_create, graph_create,                                                                 \
    (MPI_Comm m, int nn, const int* i, const int* e, int r, MPI_Comm* n), (m, nn, i, e, r, n), 7) \
  X(Dist_graph_create, dist_graph_create,                                                       \
    (MPI_Comm m, int nn, const int* s, const int* d, const int* t, const int* w, MPI_Info i,    \
     int r, MPI_Comm* n),                                                                       \
    (m, nn, s, d, t, w, i, r, n), 10)                                                           \
  X(Dist_graph_create_adjacent, dist_graph_create_adjacent,                                     \
    (MPI_Comm m, int in, const int* s, const int* sw, int out, const int* d, const int* dw,     \
     MPI_Info i, int r, MPI_Comm* n),                                                           \
    (m, in, s, sw, out, d, dw, i, r, n), 11)

namespace commsched::wrappers {
// Whether every rank of a constructor's parent takes part in the call (by its C name): all of
// them but MPI_Comm_create_group, which only the new group's members call.
constexpr bool whole_parent(std::string_view name) {
  return name != "Comm_create_group";
}
}  // namespace commsched::wrappers
