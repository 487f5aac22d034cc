! Calls mpi_f08's large-count MPI_ALLTOALLV and MPI_ALLTOALL (counts of kind MPI_COUNT_KIND,
! displacements of kind MPI_ADDRESS_KIND: MPICH 4's binding calls the C MPI_Alltoallv_c and
! MPI_Alltoall_c, which libcommsched must intercept) 8 times each with one irregular integer
! pattern, and checks every value received against its arithmetic definition. Prints
! "fortran large count ok"; stops with code 1 otherwise.
program large_count_f08
  use mpi_f08
  implicit none
  integer, parameter :: iterations = 8, block = 3
  integer :: rank, nprocs, it, j, k, nerr, total_err
  integer(kind=MPI_COUNT_KIND), allocatable :: scounts(:), rcounts(:)
  integer(kind=MPI_ADDRESS_KIND), allocatable :: sdispls(:), rdispls(:)
  integer, allocatable :: sbuf(:), rbuf(:)
  integer(kind=MPI_COUNT_KIND) :: ns, nr, one_block

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
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
  allocate(sbuf(max(ns, block * nprocs)), rbuf(max(nr, block * nprocs)))

  nerr = 0
  do it = 1, iterations
    do j = 0, nprocs - 1
      do k = 1, int(scounts(j + 1))
        sbuf(sdispls(j + 1) + k) = payload(it, rank, j, k)
      end do
    end do
    rbuf = -1
    call MPI_Alltoallv(sbuf, scounts, sdispls, MPI_INTEGER, rbuf, rcounts, rdispls, &
                       MPI_INTEGER, MPI_COMM_WORLD)
    do j = 0, nprocs - 1
      do k = 1, int(rcounts(j + 1))
        if (rbuf(rdispls(j + 1) + k) /= payload(it, j, rank, k)) nerr = nerr + 1
      end do
    end do
  end do

  one_block = block
  do it = 1, iterations
    do j = 0, nprocs - 1
      do k = 1, block
        sbuf(j * block + k) = payload(it + iterations, rank, j, k)
      end do
    end do
    rbuf = -1
    call MPI_Alltoall(sbuf, one_block, MPI_INTEGER, rbuf, one_block, MPI_INTEGER, MPI_COMM_WORLD)
    do j = 0, nprocs - 1
      do k = 1, block
        if (rbuf(j * block + k) /= payload(it + iterations, j, rank, k)) nerr = nerr + 1
      end do
    end do
  end do

  call MPI_Allreduce(nerr, total_err, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (total_err == 0) then
      print '(a)', 'fortran large count ok'
    else
      print '(a,i0)', 'fortran large count errors: ', total_err
    end if
  end if
  call MPI_Finalize()
  if (total_err /= 0) stop 1

contains

  ! Elements rank i sends rank j: 1 to 4, never zero, so every pair carries data.
  integer function pattern(i, j)
    integer, intent(in) :: i, j
    pattern = mod(i * 3 + j * 5, 4) + 1
  end function pattern

  integer function payload(it, from, to, k)
    integer, intent(in) :: it, from, to, k
    payload = it * 1000000 + from * 10000 + to * 100 + k
  end function payload

end program large_count_f08
