! Ring halo through the mpi_f08 bindings (the F08 entry points libcommsched must wrap): each
! iteration posts MPI_Irecv from both neighbours, then MPI_Isend to both (1500 integers to the
! right, past the shared-memory eager limit; 13 to the left), and completes all four with
! MPI_Waitall on even iterations or an MPI_Waitany loop on odd ones. Every value, MPI_SOURCE,
! MPI_TAG and MPI_Get_count is checked (module p2p_check); stops with code 1 on any mismatch.
! MPICH 4.0's mpi_f08 MPI_Waitany returns 0-based indices (pmodels/mpich#6270, fixed in 4.1):
! under it every iteration uses MPI_Waitall, since natively the program could not pass.
!   p2p_fortran_f08 [--iterations N] [--inject-fault]
program p2p_fortran_f08
  use mpi_f08
  use p2p_check
  use, intrinsic :: iso_fortran_env, only: error_unit, int64
  implicit none
  integer, parameter :: nbig = 1500, nsmall = 13, tag_right = 10, tag_left = 11
  integer :: rank, nprocs, left, right, it, iters, j, idx, cnt, total_err, vlen, p
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version
  logical :: waitany_ok
  type(MPI_Request) :: reqs(4)
  type(MPI_Status) :: statuses(4), status
  integer, asynchronous :: to_right(nbig), to_left(nsmall), from_left(nbig), from_right(nsmall)
  integer(int64) :: mine(3), total(3)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  iters = check_init('p2p_fortran_f08', rank, nprocs, 40)
  left = mod(rank - 1 + nprocs, nprocs)
  right = mod(rank + 1, nprocs)
  call MPI_Get_library_version(version, vlen)
  p = index(version(1:vlen), 'MPICH Version:')
  waitany_ok = .true.
  if (p > 0) waitany_ok = index(version(p + 14:min(vlen, p + 20)), '4.0.') == 0
  if (.not. waitany_ok .and. rank == 0) write (error_unit, '(a)') &
      'p2p_fortran_f08: MPICH 4.0 mpi_f08 MPI_Waitany is 0-based: MPI_Waitall only'

  do it = 0, iters - 1
    call fill(to_right, nbig, rank, right, it, tag_right)
    call fill(to_left, nsmall, rank, left, it, tag_left)
    from_left = -1
    from_right = -1
    call MPI_Irecv(from_left, nbig, MPI_INTEGER, left, tag_right, MPI_COMM_WORLD, reqs(1))
    call MPI_Irecv(from_right, nsmall, MPI_INTEGER, right, tag_left, MPI_COMM_WORLD, reqs(2))
    call MPI_Isend(to_right, nbig, MPI_INTEGER, right, tag_right, MPI_COMM_WORLD, reqs(3))
    call MPI_Isend(to_left, nsmall, MPI_INTEGER, left, tag_left, MPI_COMM_WORLD, reqs(4))
    if (mod(it, 2) == 0 .or. .not. waitany_ok) then
      call MPI_Waitall(4, reqs, statuses)
    else
      do j = 1, 4
        call MPI_Waitany(4, reqs, idx, status)
        call check_field('MPI_Waitany index defined', merge(1, 0, idx /= MPI_UNDEFINED), 1, it)
        if (idx == MPI_UNDEFINED) exit
        statuses(idx) = status
      end do
    end if
    do j = 1, 4
      call check_field('request freed', merge(1, 0, reqs(j) == MPI_REQUEST_NULL), 1, it)
    end do
    call MPI_Get_count(statuses(1), MPI_INTEGER, cnt)
    call check_field('MPI_SOURCE from left', statuses(1)%MPI_SOURCE, left, it)
    call check_field('MPI_TAG from left', statuses(1)%MPI_TAG, tag_right, it)
    call check_field('MPI_Get_count from left', cnt, nbig, it)
    call MPI_Get_count(statuses(2), MPI_INTEGER, cnt)
    call check_field('MPI_SOURCE from right', statuses(2)%MPI_SOURCE, right, it)
    call check_field('MPI_TAG from right', statuses(2)%MPI_TAG, tag_left, it)
    call check_field('MPI_Get_count from right', cnt, nsmall, it)
    call check_data(from_left, nbig, left, it, tag_right)
    call check_data(from_right, nsmall, right, it, tag_left)
    call check_expect(2)
  end do

  call check_field('messages checked', int(messages), int(expected), iters)
  mine = [int(nerr, int64), checksum, messages]  ! one reduction, one type
  call MPI_Allreduce(mine, total, 3, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD)
  total_err = int(total(1))
  call check_report(total_err, total(2), total(3))
  call MPI_Finalize()
  if (total_err /= 0) stop 1
end program p2p_fortran_f08
