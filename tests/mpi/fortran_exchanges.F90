! Calls MPI_ALLTOALLV through the mpif.h bindings, or mpi_f08's when built with -DCOMMSCHED_F08
! (so through the Fortran entry point that libcommsched must intercept), 8 times with one
! irregular integer pattern, then MPI_ALLTOALL, MPI_ALLTOALLW, MPI_NEIGHBOR_ALLTOALLV and
! MPI_NEIGHBOR_ALLTOALLW 8 times each, MPI_INEIGHBOR_ALLTOALLV and MPI_INEIGHBOR_ALLTOALL (the
! latter on a duplicate of the graph) with MPI_INEIGHBOR_ALLTOALLW, then MPI_IALLTOALLV,
! MPI_IALLTOALL and MPI_IALLTOALLW completed by MPI_WAIT or MPI_WAITALL, and checks every value
! received against its arithmetic definition.
! Prints "fortran ok"; stops with code 1 otherwise.
program fortran_exchanges
#ifdef COMMSCHED_F08
  use mpi_f08
  implicit none
#else
  implicit none
  include 'mpif.h'
#endif
  integer, parameter :: iterations = 8
  integer :: ierr, rank, nprocs, it, j, k, nerr, total_err, ns, nr
  integer, allocatable :: scounts(:), sdispls(:), rcounts(:), rdispls(:), sbuf(:), rbuf(:)
  integer, allocatable :: abuf(:), bbuf(:), wsbuf(:), wrbuf(:)
  integer, parameter :: block = 3
  integer, allocatable :: wsdispls(:), wrdispls(:)
#ifdef COMMSCHED_F08
  type(MPI_Datatype), allocatable :: wtypes(:)
  type(MPI_Datatype) :: ntypes(1)
  type(MPI_Comm) :: ring, ring2
  type(MPI_Request) :: reqs(3)
#else
  integer, allocatable :: wtypes(:)
  integer :: ntypes(1)
  integer :: ring, ring2
  integer :: reqs(3)
#endif
  integer :: left, right, nsend, nrecv
  integer :: nsrc(1), ndst(1), ncount(1), nrcount(1), ndispl(1)
  integer :: nbuf(8), nrbuf(8), one_out(1), one_in(1), nwbuf(8), nwrbuf(8)
  integer(kind=MPI_ADDRESS_KIND) :: nwdispl(1)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  allocate(scounts(nprocs), sdispls(nprocs), rcounts(nprocs), rdispls(nprocs))

  ns = 0
  nr = 0
  do j = 0, nprocs - 1
    scounts(j + 1) = pattern(rank, j)
    sdispls(j + 1) = ns
    ns = ns + scounts(j + 1)
    rcounts(j + 1) = pattern(j, rank)
    rdispls(j + 1) = nr
    nr = nr + rcounts(j + 1)
  end do
  allocate(sbuf(max(ns, 1)), rbuf(max(nr, 1)))

  nerr = 0
  do it = 1, iterations
    do j = 0, nprocs - 1
      do k = 1, scounts(j + 1)
        sbuf(sdispls(j + 1) + k) = payload(it, rank, j, k)
      end do
    end do
    rbuf = -1
    call MPI_ALLTOALLV(sbuf, scounts, sdispls, MPI_INTEGER, rbuf, rcounts, rdispls, &
                       MPI_INTEGER, MPI_COMM_WORLD, ierr)
    if (ierr /= MPI_SUCCESS) nerr = nerr + 1
    do j = 0, nprocs - 1
      do k = 1, rcounts(j + 1)
        if (rbuf(rdispls(j + 1) + k) /= payload(it, j, rank, k)) then
          if (nerr < 5) print '(a,i0,a,i0,a,i0,a,i0)', 'fortran: rank ', rank, &
              ' iteration ', it, ' from ', j, ' element ', k
          nerr = nerr + 1
        end if
      end do
    end do
  end do

  ! MPI_ALLTOALL through the same binding: blocks of `block` integers to and from every rank.
  allocate(abuf(block * nprocs), bbuf(block * nprocs))
  do it = 1, iterations
    do j = 0, nprocs - 1
      do k = 1, block
        abuf(j * block + k) = payload(it, rank, j, k)
      end do
    end do
    bbuf = -1
    call MPI_ALLTOALL(abuf, block, MPI_INTEGER, bbuf, block, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    if (ierr /= MPI_SUCCESS) nerr = nerr + 1
    do j = 0, nprocs - 1
      do k = 1, block
        if (bbuf(j * block + k) /= payload(it, j, rank, k)) then
          if (nerr < 5) print '(a,i0,a,i0,a,i0,a,i0)', 'fortran: alltoall rank ', rank, &
              ' iteration ', it, ' from ', j, ' element ', k
          nerr = nerr + 1
        end if
      end do
    end do
  end do

  ! MPI_ALLTOALLW through the same binding: the MPI_ALLTOALLV pattern, byte displacements.
  allocate(wsdispls(nprocs), wrdispls(nprocs), wtypes(nprocs))
  wsdispls = sdispls * 4
  wrdispls = rdispls * 4
  wtypes = MPI_INTEGER
  do it = 1, iterations
    do j = 0, nprocs - 1
      do k = 1, scounts(j + 1)
        sbuf(sdispls(j + 1) + k) = payload(it + 20, rank, j, k)
      end do
    end do
    rbuf = -1
    call MPI_ALLTOALLW(sbuf, scounts, wsdispls, wtypes, rbuf, rcounts, wrdispls, wtypes, &
                       MPI_COMM_WORLD, ierr)
    if (ierr /= MPI_SUCCESS) nerr = nerr + 1
    do j = 0, nprocs - 1
      do k = 1, rcounts(j + 1)
        if (rbuf(rdispls(j + 1) + k) /= payload(it + 20, j, rank, k)) then
          if (nerr < 5) print '(a,i0,a,i0,a,i0,a,i0)', 'fortran: alltoallw rank ', rank, &
              ' iteration ', it, ' from ', j, ' element ', k
          nerr = nerr + 1
        end if
      end do
    end do
  end do

  ! MPI_NEIGHBOR_ALLTOALLV on a directed ring (a distributed graph): rank + 1 elements to the
  ! right, from the left.
  left = mod(rank + nprocs - 1, nprocs)
  right = mod(rank + 1, nprocs)
  nsrc(1) = left
  ndst(1) = right
  call MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 1, nsrc, MPI_UNWEIGHTED, 1, ndst, &
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., ring, ierr)
  nsend = mod(rank, 7) + 1
  nrecv = mod(left, 7) + 1
  ncount(1) = nsend
  nrcount(1) = nrecv
  ndispl(1) = 0
  do it = 1, iterations
    do k = 1, nsend
      nbuf(k) = payload(it + 40, rank, right, k)
    end do
    nrbuf = -1
    call MPI_NEIGHBOR_ALLTOALLV(nbuf, ncount, ndispl, MPI_INTEGER, nrbuf, nrcount, ndispl, &
                                MPI_INTEGER, ring, ierr)
    if (ierr /= MPI_SUCCESS) nerr = nerr + 1
    do k = 1, nrecv
      if (nrbuf(k) /= payload(it + 40, left, rank, k)) then
        if (nerr < 5) print '(a,i0,a,i0,a,i0)', 'fortran: neighbor rank ', rank, &
            ' iteration ', it, ' element ', k
        nerr = nerr + 1
      end if
    end do
  end do

  ! MPI_NEIGHBOR_ALLTOALLW on the same ring: one datatype, displacements in bytes of kind
  ! MPI_ADDRESS_KIND.
  ntypes(1) = MPI_INTEGER
  nwdispl(1) = 0
  do it = 1, iterations
    do k = 1, nsend
      nbuf(k) = payload(it + 50, rank, right, k)
    end do
    nrbuf = -1
    call MPI_NEIGHBOR_ALLTOALLW(nbuf, ncount, nwdispl, ntypes, nrbuf, nrcount, nwdispl, ntypes, &
                                ring, ierr)
    if (ierr /= MPI_SUCCESS) nerr = nerr + 1
    do k = 1, nrecv
      if (nrbuf(k) /= payload(it + 50, left, rank, k)) then
        if (nerr < 5) print '(a,i0,a,i0,a,i0)', 'fortran: neighbor w rank ', rank, &
            ' iteration ', it, ' element ', k
        nerr = nerr + 1
      end if
    end do
  end do

  ! MPI_INEIGHBOR_ALLTOALLV on the ring, MPI_INEIGHBOR_ALLTOALL on its duplicate and
  ! MPI_INEIGHBOR_ALLTOALLW on the ring, in flight together.
  call MPI_COMM_DUP(ring, ring2, ierr)
  do it = 1, iterations
    do k = 1, nsend
      nbuf(k) = payload(it + 100, rank, right, k)
    end do
    do k = 1, nsend
      nwbuf(k) = payload(it + 120, rank, right, k)
    end do
    nrbuf = -1
    nwrbuf = -1
    call MPI_INEIGHBOR_ALLTOALLV(nbuf, ncount, ndispl, MPI_INTEGER, nrbuf, nrcount, ndispl, &
                                 MPI_INTEGER, ring, reqs(1), ierr)
    if (ierr /= MPI_SUCCESS) nerr = nerr + 1
    one_out(1) = 1000 * it + rank
    one_in(1) = -1
    call MPI_INEIGHBOR_ALLTOALL(one_out, 1, MPI_INTEGER, one_in, 1, MPI_INTEGER, ring2, &
                                reqs(2), ierr)
    if (ierr /= MPI_SUCCESS) nerr = nerr + 1
    call MPI_INEIGHBOR_ALLTOALLW(nwbuf, ncount, nwdispl, ntypes, nwrbuf, nrcount, nwdispl, &
                                 ntypes, ring, reqs(3), ierr)
    if (ierr /= MPI_SUCCESS) nerr = nerr + 1
    call MPI_WAITALL(3, reqs, MPI_STATUSES_IGNORE, ierr)
    do k = 1, nrecv
      if (nrbuf(k) /= payload(it + 100, left, rank, k) .or. &
          nwrbuf(k) /= payload(it + 120, left, rank, k)) then
        if (nerr < 5) print '(a,i0,a,i0,a,i0)', 'fortran: ineighbor rank ', rank, &
            ' iteration ', it, ' element ', k
        nerr = nerr + 1
      end if
    end do
    if (one_in(1) /= 1000 * it + left) nerr = nerr + 1
  end do
  call MPI_COMM_FREE(ring2, ierr)
  call MPI_COMM_FREE(ring, ierr)

  ! MPI_IALLTOALLV, MPI_IALLTOALL and MPI_IALLTOALLW in flight together, waited one by one or
  ! together.
  allocate(wsbuf(max(ns, 1)), wrbuf(max(nr, 1)))
  do it = 1, iterations
    do j = 0, nprocs - 1
      do k = 1, scounts(j + 1)
        sbuf(sdispls(j + 1) + k) = payload(it + 60, rank, j, k)
        wsbuf(sdispls(j + 1) + k) = payload(it + 90, rank, j, k)
      end do
      do k = 1, block
        abuf(j * block + k) = payload(it + 80, rank, j, k)
      end do
    end do
    rbuf = -1
    bbuf = -1
    wrbuf = -1
    call MPI_IALLTOALLV(sbuf, scounts, sdispls, MPI_INTEGER, rbuf, rcounts, rdispls, &
                        MPI_INTEGER, MPI_COMM_WORLD, reqs(1), ierr)
    if (ierr /= MPI_SUCCESS) nerr = nerr + 1
    call MPI_IALLTOALL(abuf, block, MPI_INTEGER, bbuf, block, MPI_INTEGER, MPI_COMM_WORLD, &
                       reqs(2), ierr)
    if (ierr /= MPI_SUCCESS) nerr = nerr + 1
    call MPI_IALLTOALLW(wsbuf, scounts, wsdispls, wtypes, wrbuf, rcounts, wrdispls, wtypes, &
                        MPI_COMM_WORLD, reqs(3), ierr)
    if (ierr /= MPI_SUCCESS) nerr = nerr + 1
    if (mod(it, 2) == 0) then
      call MPI_WAITALL(3, reqs, MPI_STATUSES_IGNORE, ierr)
    else
      call MPI_WAIT(reqs(2), MPI_STATUS_IGNORE, ierr)
      call MPI_WAIT(reqs(3), MPI_STATUS_IGNORE, ierr)
      call MPI_WAIT(reqs(1), MPI_STATUS_IGNORE, ierr)
    end if
    if (ierr /= MPI_SUCCESS) nerr = nerr + 1
    do j = 0, nprocs - 1
      do k = 1, rcounts(j + 1)
        if (rbuf(rdispls(j + 1) + k) /= payload(it + 60, j, rank, k) .or. &
            wrbuf(rdispls(j + 1) + k) /= payload(it + 90, j, rank, k)) then
          if (nerr < 5) print '(a,i0,a,i0,a,i0,a,i0)', 'fortran: ialltoallv rank ', rank, &
              ' iteration ', it, ' from ', j, ' element ', k
          nerr = nerr + 1
        end if
      end do
      do k = 1, block
        if (bbuf(j * block + k) /= payload(it + 80, j, rank, k)) then
          if (nerr < 5) print '(a,i0,a,i0,a,i0,a,i0)', 'fortran: ialltoall rank ', rank, &
              ' iteration ', it, ' from ', j, ' element ', k
          nerr = nerr + 1
        end if
      end do
    end do
  end do

  call MPI_ALLREDUCE(nerr, total_err, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (total_err == 0) then
      print '(a)', 'fortran ok'
    else
      print '(a,i0,a)', 'fortran FAILED: ', total_err, ' wrong values'
    end if
  end if
  call MPI_FINALIZE(ierr)
  if (total_err /= 0) stop 1

contains

  ! Elements rank i sends to rank j: irregular, some zero (never more than 4).
  integer function pattern(i, j)
    integer, intent(in) :: i, j
    pattern = mod(3 * i + j + 1, 5)
  end function pattern

  integer function payload(iter, src, dst, k)
    integer, intent(in) :: iter, src, dst, k
    payload = ((iter * 64 + mod(src, 64)) * 64 + mod(dst, 64)) * 8 + k
  end function payload

end program fortran_exchanges
