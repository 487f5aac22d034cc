! Ring halo through the mpif.h bindings (the Fortran entry points libcommsched must wrap): each
! iteration posts MPI_IRECV from both neighbours, then MPI_ISEND to both (1500 integers to the
! right, past the shared-memory eager limit; 13 to the left), and completes all four with
! MPI_WAITALL on even iterations or an MPI_WAITANY loop on odd ones. Every value, MPI_SOURCE,
! MPI_TAG and MPI_GET_COUNT is checked (module p2p_check); stops with code 1 on any mismatch.
! With --split the ring runs within each half of an MPI_COMM_SPLIT by rank parity (an even
! number of ranks), where level collective runs the bursts too, and an MPI_BARRIER on
! MPI_COMM_WORLD ends each iteration: without it the halves drift apart, and every rank of
! MPI_COMM_WORLD must vote on the same burst.
! With --file a collective MPI_FILE_WRITE_AT_ALL comes between the send to the right and the
! send to the left, and odd ranks first wait for their message from the left: an even rank
! holding its send to the right across the file call would deadlock the job (the library
! releases held sends at every collective file call, MPI_FILE_WRITE_AT_ALL's Fortran entry points
! included).
!   p2p_fortran_mpifh [--iterations N] [--inject-fault] [--split | --file]
program p2p_fortran_mpifh
  use p2p_check
  use, intrinsic :: iso_fortran_env, only: int64
  implicit none
  include 'mpif.h'
  integer, parameter :: nbig = 1500, nsmall = 13, tag_right = 10, tag_left = 11
  integer :: ierr, rank, nprocs, left, right, it, iters, j, idx, cnt, total_err
  integer :: comm, crank, csize, cleft, cright, a, fh, nwait
  integer(kind=MPI_OFFSET_KIND) :: offset
  logical :: use_file
  character(len=32) :: arg, level
  integer :: reqs(4), statuses(MPI_STATUS_SIZE, 4), status(MPI_STATUS_SIZE)
  integer :: waited(MPI_STATUS_SIZE)
  integer, asynchronous :: to_right(nbig), to_left(nsmall), from_left(nbig), from_right(nsmall)
  integer(int64) :: mine(3), total(3)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  iters = check_init('p2p_fortran_mpifh', rank, nprocs, 40)
  comm = MPI_COMM_WORLD
  use_file = .false.
  do a = 1, command_argument_count()
    call get_command_argument(a, arg)
    if (arg == '--split') call MPI_COMM_SPLIT(MPI_COMM_WORLD, mod(rank, 2), rank, comm, ierr)
    if (arg == '--file') use_file = .true.
  end do
  if (use_file) then
    ! One file per level and rank count: the tests of one program may run at once.
    call get_environment_variable('COMMSCHED_BURSTS', level)
    write (arg, '(a,i0)') 'p2p_fortran_mpifh_' // trim(level) // '_', nprocs
    call MPI_FILE_OPEN(MPI_COMM_WORLD, trim(arg) // '.bin', &
                       MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, &
                       MPI_INFO_NULL, fh, ierr)
    call check_field('MPI_FILE_OPEN', ierr, MPI_SUCCESS, 0)
  end if
  call MPI_COMM_RANK(comm, crank, ierr)
  call MPI_COMM_SIZE(comm, csize, ierr)
  cleft = mod(crank - 1 + csize, csize)
  cright = mod(crank + 1, csize)
  ! The neighbours' ranks in MPI_COMM_WORLD (the payloads name them): in a half, 2 * c + parity.
  left = cleft
  right = cright
  if (comm /= MPI_COMM_WORLD) then
    left = 2 * cleft + mod(rank, 2)
    right = 2 * cright + mod(rank, 2)
  end if

  do it = 0, iters - 1
    call fill(to_right, nbig, rank, right, it, tag_right)
    call fill(to_left, nsmall, rank, left, it, tag_left)
    from_left = -1
    from_right = -1
    call MPI_IRECV(from_left, nbig, MPI_INTEGER, cleft, tag_right, comm, reqs(1), ierr)
    call MPI_IRECV(from_right, nsmall, MPI_INTEGER, cright, tag_left, comm, reqs(2), ierr)
    call MPI_ISEND(to_right, nbig, MPI_INTEGER, cright, tag_right, comm, reqs(3), ierr)
    nwait = 4
    if (use_file) then
      if (mod(rank, 2) == 1) then
        call MPI_WAIT(reqs(1), waited, ierr)
        nwait = 3
      end if
      offset = int(it * nprocs + rank, MPI_OFFSET_KIND) * 4 * nsmall
      call MPI_FILE_WRITE_AT_ALL(fh, offset, to_left, nsmall, MPI_INTEGER, statuses(:, 4), ierr)
      call check_field('MPI_FILE_WRITE_AT_ALL', ierr, MPI_SUCCESS, it)
    end if
    call MPI_ISEND(to_left, nsmall, MPI_INTEGER, cleft, tag_left, comm, reqs(4), ierr)
    if (mod(it, 2) == 0) then
      call MPI_WAITALL(4, reqs, statuses, ierr)
    else
      do j = 1, nwait
        call MPI_WAITANY(4, reqs, idx, status, ierr)
        call check_field('MPI_WAITANY index defined', merge(1, 0, idx /= MPI_UNDEFINED), 1, it)
        if (idx == MPI_UNDEFINED) exit
        statuses(:, idx) = status
      end do
    end if
    if (nwait == 3) statuses(:, 1) = waited
    do j = 1, 4
      call check_field('request freed', merge(1, 0, reqs(j) == MPI_REQUEST_NULL), 1, it)
    end do
    call MPI_GET_COUNT(statuses(:, 1), MPI_INTEGER, cnt, ierr)
    call check_field('MPI_SOURCE from left', statuses(MPI_SOURCE, 1), cleft, it)
    call check_field('MPI_TAG from left', statuses(MPI_TAG, 1), tag_right, it)
    call check_field('MPI_GET_COUNT from left', cnt, nbig, it)
    call MPI_GET_COUNT(statuses(:, 2), MPI_INTEGER, cnt, ierr)
    call check_field('MPI_SOURCE from right', statuses(MPI_SOURCE, 2), cright, it)
    call check_field('MPI_TAG from right', statuses(MPI_TAG, 2), tag_left, it)
    call check_field('MPI_GET_COUNT from right', cnt, nsmall, it)
    call check_data(from_left, nbig, left, it, tag_right)
    call check_data(from_right, nsmall, right, it, tag_left)
    call check_expect(2)
    if (comm /= MPI_COMM_WORLD) call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  end do

  call check_field('messages checked', int(messages), int(expected), iters)
  if (comm /= MPI_COMM_WORLD) call MPI_COMM_FREE(comm, ierr)
  if (use_file) call MPI_FILE_CLOSE(fh, ierr)
  mine = [int(nerr, int64), checksum, messages]  ! one reduction, one type
  call MPI_ALLREDUCE(mine, total, 3, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  total_err = int(total(1))
  call check_report(total_err, total(2), total(3))
  call MPI_FINALIZE(ierr)
  if (total_err /= 0) stop 1
end program p2p_fortran_mpifh
