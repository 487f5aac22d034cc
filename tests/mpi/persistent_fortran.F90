! Binds Open MPI's persistent all-to-alls (its pcollreq extension: MPIX_ALLTOALLV_INIT,
! MPIX_ALLTOALL_INIT, MPIX_ALLTOALLW_INIT, and the neighbourhood forms on a ring made with
! MPI_DIST_GRAPH_CREATE_ADJACENT) through the mpif.h bindings, or mpi_f08's when built with
! -DCOMMSCHED_F08, starts each 4 times with new data (MPI_START and MPI_WAIT, MPI_STARTALL and
! MPI_WAITALL), checks every value received against its arithmetic definition and frees them.
! Prints "fortran persistent ok"; stops with code 1 otherwise.
program persistent_fortran
#ifdef COMMSCHED_F08
  use mpi_f08
  use mpi_f08_ext
  implicit none
  type(MPI_Request) :: reqs(6)
  type(MPI_Comm) :: ring
  type(MPI_Datatype), allocatable :: wtypes(:)
  type(MPI_Datatype) :: ntypes(2)
#else
  implicit none
  include 'mpif.h'
  include 'mpif-ext.h'
  integer :: reqs(6)
  integer :: ring
  integer, allocatable :: wtypes(:)
  integer :: ntypes(2)
#endif
  integer, parameter :: rounds = 4, block = 2
  integer :: ierr, rank, nprocs, it, j, k, nerr, total_err, ns, nr, left, right
  integer, allocatable :: sc(:), sd(:), rc(:), rd(:)
  ! The buffers are read and written by MPI between MPI_START and MPI_WAIT, away from any call
  ! the compiler sees them passed to: ASYNCHRONOUS keeps it from caching them across those calls.
  integer, allocatable, asynchronous :: sbuf(:), rbuf(:), abuf(:), bbuf(:), wsbuf(:), wrbuf(:)
  integer, asynchronous :: nsbuf(6), nrbuf(6), asend(2 * block), arecv(2 * block)
  integer, asynchronous :: nwsbuf(6), nwrbuf(6)
  integer :: nb(2), ncount(2), ndispl(2), ablock(2), adispl(2)
  integer, allocatable :: wsd(:), wrd(:)
  integer(kind=MPI_ADDRESS_KIND) :: nwsd(2), nwrd(2)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  if (nprocs < 3) then  ! the ring's left and right neighbours must differ
    if (rank == 0) print '(A)', 'fortran persistent: needs 3 ranks or more'
    call MPI_FINALIZE(ierr)
    stop 1
  end if
  allocate(sc(nprocs), sd(nprocs), rc(nprocs), rd(nprocs))
  ! Rank i sends mod(i + j, 3) integers to rank j (zero counts included).
  ns = 0
  nr = 0
  do j = 1, nprocs
    sc(j) = mod(rank + j - 1, 3)
    rc(j) = mod(j - 1 + rank, 3)
    sd(j) = ns
    rd(j) = nr
    ns = ns + sc(j)
    nr = nr + rc(j)
  end do
  allocate(sbuf(max(ns, 1)), rbuf(max(nr, 1)), abuf(block * nprocs), bbuf(block * nprocs))
  allocate(wsbuf(max(ns, 1)), wrbuf(max(nr, 1)), wsd(nprocs), wrd(nprocs), wtypes(nprocs))
  wsd = sd * 4  ! the w forms' displacements are in bytes
  wrd = rd * 4
  wtypes = MPI_INTEGER
  ntypes = MPI_INTEGER
  left = mod(rank + nprocs - 1, nprocs)
  right = mod(rank + 1, nprocs)
  nb = (/ left, right /)
  call MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 2, nb, MPI_UNWEIGHTED, 2, nb, &
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., ring, ierr)
  ncount = (/ 1, 2 /)  ! 1 integer to the left neighbour, 2 to the right
  ndispl = (/ 0, 1 /)
  ablock = (/ 2, 1 /)  ! received: 2 from the left (its right block), 1 from the right
  adispl = (/ 0, 2 /)

  call MPIX_ALLTOALLV_INIT(sbuf, sc, sd, MPI_INTEGER, rbuf, rc, rd, MPI_INTEGER, &
                           MPI_COMM_WORLD, MPI_INFO_NULL, reqs(1), ierr)
  call MPIX_ALLTOALL_INIT(abuf, block, MPI_INTEGER, bbuf, block, MPI_INTEGER, MPI_COMM_WORLD, &
                          MPI_INFO_NULL, reqs(2), ierr)
  call MPIX_NEIGHBOR_ALLTOALLV_INIT(nsbuf, ncount, ndispl, MPI_INTEGER, nrbuf, ablock, adispl, &
                                    MPI_INTEGER, ring, MPI_INFO_NULL, reqs(3), ierr)
  call MPIX_NEIGHBOR_ALLTOALL_INIT(asend, block, MPI_INTEGER, arecv, block, MPI_INTEGER, ring, &
                                   MPI_INFO_NULL, reqs(4), ierr)
  call MPIX_ALLTOALLW_INIT(wsbuf, sc, wsd, wtypes, wrbuf, rc, wrd, wtypes, MPI_COMM_WORLD, &
                           MPI_INFO_NULL, reqs(5), ierr)
  nwsd = ndispl * 4
  nwrd = adispl * 4
  call MPIX_NEIGHBOR_ALLTOALLW_INIT(nwsbuf, ncount, nwsd, ntypes, nwrbuf, ablock, nwrd, ntypes, &
                                    ring, MPI_INFO_NULL, reqs(6), ierr)
  nerr = 0
  do it = 1, rounds
    do j = 1, nprocs
      do k = 1, sc(j)
        sbuf(sd(j) + k) = rank * 100000 + (j - 1) * 100 + k + it * 10000000
        wsbuf(sd(j) + k) = rank * 100000 + (j - 1) * 100 + k + it * 20000000
      end do
      do k = 1, block
        abuf((j - 1) * block + k) = rank * 1000 + (j - 1) * 10 + k + it * 1000000
      end do
    end do
    rbuf = -1
    bbuf = -1
    wrbuf = -1
    nsbuf(1) = rank * 10 + 1 + it * 1000
    nsbuf(2) = rank * 10 + 2 + it * 1000
    nsbuf(3) = rank * 10 + 3 + it * 1000
    do k = 1, 2 * block
      asend(k) = rank * 100 + k + it * 1000
    end do
    nwsbuf(1:3) = nsbuf(1:3) + 500
    nrbuf = -1
    nwrbuf = -1
    arecv = -1
    if (mod(it, 2) == 1) then
      do k = 1, 6
        call MPI_START(reqs(k), ierr)
        call MPI_WAIT(reqs(k), MPI_STATUS_IGNORE, ierr)
      end do
    else
      call MPI_STARTALL(6, reqs, ierr)
      call MPI_WAITALL(6, reqs, MPI_STATUSES_IGNORE, ierr)
    end if
    do j = 1, nprocs
      do k = 1, rc(j)
        if (rbuf(rd(j) + k) /= (j - 1) * 100000 + rank * 100 + k + it * 10000000) nerr = nerr + 1
        if (wrbuf(rd(j) + k) /= (j - 1) * 100000 + rank * 100 + k + it * 20000000) nerr = nerr + 1
      end do
      do k = 1, block
        if (bbuf((j - 1) * block + k) /= (j - 1) * 1000 + rank * 10 + k + it * 1000000) &
          nerr = nerr + 1
      end do
    end do
    ! From the left neighbour its block for its right (2 integers); from the right its block
    ! for its left (1 integer).
    if (nrbuf(1) /= left * 10 + 2 + it * 1000 .or. nrbuf(2) /= left * 10 + 3 + it * 1000 .or. &
        nrbuf(3) /= right * 10 + 1 + it * 1000) nerr = nerr + 1
    if (any(nwrbuf(1:3) /= nrbuf(1:3) + 500)) nerr = nerr + 1
    do k = 1, block
      if (arecv(k) /= left * 100 + block + k + it * 1000) nerr = nerr + 1
      if (arecv(block + k) /= right * 100 + k + it * 1000) nerr = nerr + 1
    end do
  end do
  do k = 1, 6
    call MPI_REQUEST_FREE(reqs(k), ierr)
  end do
  call MPI_ALLREDUCE(nerr, total_err, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_COMM_FREE(ring, ierr)
  deallocate(sc, sd, rc, rd, sbuf, rbuf, abuf, bbuf, wsbuf, wrbuf, wsd, wrd, wtypes)
  if (rank == 0) then
    if (total_err == 0) then
      print '(A)', 'fortran persistent ok'
    else
      print '(A,I0,A)', 'fortran persistent: ', total_err, ' wrong values'
    end if
  end if
  call MPI_FINALIZE(ierr)
  if (total_err /= 0) stop 1
end program persistent_fortran
