! The corpus's Fortran cases (issue 25): MPI_ALLTOALLV through the `use mpi` bindings, on
! MPI_COMM_WORLD and on intercommunicators whose two groups differ in size.
!
!   adversary_f CASE      (f_world | f_inter_small_local | f_inter_small_remote)
!
! Rank 0 of MPI_COMM_WORLD prints "digest CASE rR VALUE" per rank, VALUE a checksum of every
! receive buffer (canaries included) and return code; run_corpus.sh compares it with native.
program adversary_f
  use mpi
  implicit none
  integer, parameter :: iterations = 8
  integer :: ierr, rank, nprocs, colour, leader, r, it
  integer :: local_comm, comm, local_rank, peers
  integer(kind=8) :: digest
  integer(kind=8), allocatable :: all_digests(:)
  character(len=64) :: name
  logical :: inter

  call get_command_argument(1, name)
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)

  select case (trim(name))
  case ('f_world', 'f_inter_small_local', 'f_inter_small_remote')
  case default
    if (rank == 0) print '(a,a)', 'adversary_f: unknown case ', trim(name)
    call MPI_FINALIZE(ierr)
    stop 2
  end select
  inter = trim(name) /= 'f_world'
  colour = colour_of(rank)

  if (inter) then
    call MPI_COMM_SPLIT(MPI_COMM_WORLD, colour, rank, local_comm, ierr)
    ! The remote leader: the first world rank of the other colour.
    leader = 0
    do r = nprocs - 1, 0, -1
      if (colour_of(r) /= colour) leader = r
    end do
    call MPI_INTERCOMM_CREATE(local_comm, 0, MPI_COMM_WORLD, leader, 17, comm, ierr)
    call MPI_COMM_REMOTE_SIZE(comm, peers, ierr)
  else
    comm = MPI_COMM_WORLD
    call MPI_COMM_SIZE(comm, peers, ierr)
  end if
  call MPI_COMM_RANK(comm, local_rank, ierr)

  digest = 17
  do it = 1, iterations
    call exchange(it)
  end do

  allocate(all_digests(nprocs))
  call MPI_GATHER(digest, 1, MPI_INTEGER8, all_digests, 1, MPI_INTEGER8, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do r = 1, nprocs
      print '(a,a,a,i0,a,i0)', 'digest ', trim(name), ' r', r - 1, ' ', all_digests(r)
    end do
    print '(a)', 'adversary: done'
  end if
  if (inter) then
    call MPI_COMM_FREE(comm, ierr)
    call MPI_COMM_FREE(local_comm, ierr)
  end if
  call MPI_FINALIZE(ierr)

contains

  ! f_inter_small_local: rank 0 alone, so its remote group is the larger one;
  ! f_inter_small_remote: the last rank alone.
  integer function colour_of(world_rank)
    integer, intent(in) :: world_rank
    colour_of = 0
    if (trim(name) == 'f_inter_small_local' .and. world_rank /= 0) colour_of = 1
    if (trim(name) == 'f_inter_small_remote' .and. world_rank == nprocs - 1) colour_of = 1
  end function colour_of

  ! Elements a rank of colour c, local rank i, sends to remote (or own) rank j: 0 to 4.
  integer function cnt(c, i, j)
    integer, intent(in) :: c, i, j
    cnt = mod(3 * i + 5 * j + 7 * c + 1, 6) - 1
    if (cnt < 0) cnt = 0
  end function cnt

  subroutine exchange(call_no)
    integer, intent(in) :: call_no
    integer :: j, k, ns, nr, code, other
    integer, allocatable :: sc(:), sd(:), rc(:), rd(:), sbuf(:), rbuf(:)
    allocate(sc(peers), sd(peers), rc(peers), rd(peers))
    other = merge(1 - colour, colour, inter)
    ns = 1
    nr = 1
    do j = 0, peers - 1
      sc(j + 1) = cnt(colour, local_rank, j)
      sd(j + 1) = ns
      ns = ns + sc(j + 1) + 1
      rc(j + 1) = cnt(other, j, local_rank)
      rd(j + 1) = nr
      nr = nr + rc(j + 1) + 1
    end do
    allocate(sbuf(ns), rbuf(nr))
    do k = 1, ns
      sbuf(k) = 1000000 * colour + 10000 * local_rank + 100 * call_no + k
    end do
    rbuf = -7
    call MPI_ALLTOALLV(sbuf, sc, sd, MPI_INTEGER, rbuf, rc, rd, MPI_INTEGER, comm, code)
    digest = mod(digest * 31 + code, 1000000007_8)
    do k = 1, nr
      digest = mod(digest * 131 + rbuf(k) + 1000, 1000000007_8)
    end do
    deallocate(sc, sd, rc, rd, sbuf, rbuf)
  end subroutine exchange

end program adversary_f
