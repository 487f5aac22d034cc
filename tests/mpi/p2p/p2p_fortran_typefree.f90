! Derived datatypes freed right after the post, through the mpif.h bindings: each iteration
! posts MPI_IRECV (contiguous integers) from every other rank, then MPI_ISEND to every other
! rank in reverse ring order (to rank-1, rank-2, ...: the library may hold them), each with an
! MPI_TYPE_VECTOR of stride 2 made for that send and freed at once with MPI_TYPE_FREE (MPI lets
! pending operations complete normally), and MPI_WAITALL. Every value, MPI_SOURCE and
! MPI_GET_COUNT is checked (module p2p_check); stops with code 1 on any mismatch.
!   p2p_fortran_typefree [--iterations N] [--inject-fault]
program p2p_fortran_typefree
  use p2p_check
  use, intrinsic :: iso_fortran_env, only: int64
  implicit none
  include 'mpif.h'
  integer, parameter :: tag = 30, nmax = 300
  integer :: ierr, rank, nprocs, it, iters, d, k, peer, cnt, nreq, t, total_err
  integer, allocatable :: reqs(:), statuses(:, :)
  integer, allocatable, asynchronous :: sbuf(:, :), rbuf(:, :)
  integer :: one(nmax)
  integer(int64) :: mine(3), total(3)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  iters = check_init('p2p_fortran_typefree', rank, nprocs, 40)
  allocate (reqs(2 * nprocs), statuses(MPI_STATUS_SIZE, 2 * nprocs))
  allocate (sbuf(2 * nmax, nprocs), rbuf(nmax, nprocs))

  do it = 0, iters - 1
    nreq = 0
    do d = 1, nprocs - 1
      peer = mod(rank - d + nprocs, nprocs)
      rbuf(:, d) = -1
      nreq = nreq + 1
      call MPI_IRECV(rbuf(1, d), count_for(peer, rank), MPI_INTEGER, peer, tag, MPI_COMM_WORLD, &
                     reqs(nreq), ierr)
    end do
    do d = nprocs - 1, 1, -1
      peer = mod(rank + d, nprocs)
      cnt = count_for(rank, peer)
      call fill(one, cnt, rank, peer, it, tag)
      sbuf(:, d) = -7
      do k = 1, cnt
        sbuf(2 * k - 1, d) = one(k)
      end do
      call MPI_TYPE_VECTOR(cnt, 1, 2, MPI_INTEGER, t, ierr)
      call MPI_TYPE_COMMIT(t, ierr)
      nreq = nreq + 1
      call MPI_ISEND(sbuf(1, d), 1, t, peer, tag, MPI_COMM_WORLD, reqs(nreq), ierr)
      call MPI_TYPE_FREE(t, ierr)
    end do
    call MPI_WAITALL(nreq, reqs, statuses, ierr)
    do d = 1, nprocs - 1
      peer = mod(rank - d + nprocs, nprocs)
      cnt = count_for(peer, rank)
      call MPI_GET_COUNT(statuses(:, d), MPI_INTEGER, k, ierr)
      call check_field('MPI_SOURCE', statuses(MPI_SOURCE, d), peer, it)
      call check_field('MPI_GET_COUNT', k, cnt, it)
      call check_data(rbuf(1:cnt, d), cnt, peer, it, tag)
    end do
    call check_expect(nprocs - 1)
  end do

  call check_field('messages checked', int(messages), int(expected), iters)
  mine = [int(nerr, int64), checksum, messages]
  call MPI_ALLREDUCE(mine, total, 3, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  total_err = int(total(1))
  call check_report(total_err, total(2), total(3))
  call MPI_FINALIZE(ierr)
  if (total_err /= 0) stop 1

contains

  integer function count_for(src, dst)
    integer, intent(in) :: src, dst
    count_for = 5 + 37 * mod(src + 2 * dst, 5)
  end function count_for

end program p2p_fortran_typefree
