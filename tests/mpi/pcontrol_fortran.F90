! MPI_Pcontrol from Fortran (mpif.h, or mpi_f08 when built with -DCOMMSCHED_F08): one irregular
! MPI_ALLTOALLV pattern 6 times, MPI_PCONTROL(0), 6 more, MPI_PCONTROL(1), 6 more; every value
! received is checked against its definition. Prints "fortran pcontrol ok"; stops with code 1
! otherwise. pcontrol_check.py reads the report: 6 paused calls per rank, none optimised.
program pcontrol_fortran
#ifdef COMMSCHED_F08
  use mpi_f08
  implicit none
#else
  implicit none
  include 'mpif.h'
#endif
  integer, parameter :: per_phase = 6
  integer :: ierr, rank, nprocs, it, j, k, nerr, total_err, ns, nr
  integer, allocatable :: scounts(:), sdispls(:), rcounts(:), rdispls(:), sbuf(:), rbuf(:)

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
  do it = 1, 3 * per_phase
    if (it == per_phase + 1) call MPI_PCONTROL(0)
    if (it == 2 * per_phase + 1) call MPI_PCONTROL(1)
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
        if (rbuf(rdispls(j + 1) + k) /= payload(it, j, rank, k)) nerr = nerr + 1
      end do
    end do
  end do

  call MPI_ALLREDUCE(nerr, total_err, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (total_err == 0) then
      print '(a)', 'fortran pcontrol ok'
    else
      print '(a,i0,a)', 'fortran pcontrol FAILED: ', total_err, ' wrong values'
    end if
  end if
  call MPI_FINALIZE(ierr)
  if (total_err /= 0) stop 1

contains

  integer function pattern(i, j)
    integer, intent(in) :: i, j
    pattern = mod(3 * i + j + 1, 5)
  end function pattern

  integer function payload(iter, src, dst, k)
    integer, intent(in) :: iter, src, dst, k
    payload = ((iter * 64 + mod(src, 64)) * 64 + mod(dst, 64)) * 8 + k
  end function payload

end program pcontrol_fortran
