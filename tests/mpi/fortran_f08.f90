! Calls MPI_Alltoallv through the mpi_f08 bindings (so through the F08 entry point that
! libcommsched must intercept) 8 times with one irregular integer pattern, then MPI_Alltoall 8
! times, and checks every value received against its arithmetic definition. Prints
! "fortran ok"; stops with code 1 otherwise.
program fortran_f08
  use mpi_f08
  implicit none

  integer, parameter :: iterations = 8
  integer :: ierr, rank, nprocs, it, j, k, nerr, total_err, ns, nr
  integer, allocatable :: scounts(:), sdispls(:), rcounts(:), rdispls(:), sbuf(:), rbuf(:)
  integer, allocatable :: abuf(:), bbuf(:)
  integer, parameter :: block = 3

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
          if (nerr < 5) print '(a,i0,a,i0,a,i0,a,i0)', 'fortran_f08: rank ', rank, &
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
          if (nerr < 5) print '(a,i0,a,i0,a,i0,a,i0)', 'fortran_f08: alltoall rank ', rank, &
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

end program fortran_f08
