! Shared by the Fortran programs of the point-to-point corpus, independent of the MPI binding
! (statuses are handed over as plain integers): the contents of every message, the checks, the
! command line (--iterations N, --inject-fault) and the result line. The C++ programs' rules
! (p2p_util.hpp) apply: rank 0 prints "<name>: ok checksum=<hex> messages=<n>" only if every
! value and status field was right, "<name>: FAIL ..." otherwise.
module p2p_check
  use, intrinsic :: iso_fortran_env, only: error_unit, int64
  implicit none
  private
  public :: check_init, payload, fill, check_data, check_field, check_expect, check_report

  character(len=40) :: prog = ''
  integer :: my_rank = 0, last_rank = 0, iterations = 0
  logical :: fault_armed = .false.
  integer, public :: nerr = 0
  integer(int64), public :: checksum = 0, messages = 0, expected = 0

contains

  ! Reads the command line; returns the iteration count (default_iterations unless given).
  integer function check_init(name, rank, nprocs, default_iterations) result(iters)
    character(len=*), intent(in) :: name
    integer, intent(in) :: rank, nprocs, default_iterations
    character(len=32) :: arg
    integer :: a
    prog = name
    my_rank = rank
    last_rank = nprocs - 1
    iters = default_iterations
    do a = 1, command_argument_count()
      call get_command_argument(a, arg)
      if (arg == '--inject-fault') fault_armed = .true.
      if (arg == '--iterations' .and. a < command_argument_count()) then
        call get_command_argument(a + 1, arg)
        read (arg, *) iters
      end if
    end do
    iterations = iters
  end function check_init

  ! Element k (1-based) of the message src sends dst in iteration iter with tag.
  integer function payload(src, dst, iter, tag, k)
    integer, intent(in) :: src, dst, iter, tag, k
    integer(int64) :: h
    h = ((int(src, int64) * 1009 + dst) * 65537 + iter) * 131 + tag
    payload = int(mod(h * 7919 + int(k, int64) * 104729, 2147483647_int64))
  end function payload

  subroutine fill(buf, n, src, dst, iter, tag)
    integer, intent(in) :: n, src, dst, iter, tag
    integer, intent(out) :: buf(n)
    integer :: k
    do k = 1, n
      buf(k) = payload(src, dst, iter, tag, k)
    end do
  end subroutine fill

  ! The n elements received from src in iteration iter with tag: one checked message.
  subroutine check_data(buf, n, src, iter, tag)
    integer, intent(in) :: n, src, iter, tag
    integer, intent(in) :: buf(n)
    integer :: k, got, want
    messages = messages + 1
    do k = 1, n
      got = buf(k)
      if (fault_armed .and. my_rank == last_rank .and. iter >= iterations - 1) then
        got = ieor(got, 1)  ! --inject-fault: as if one element arrived wrong
        fault_armed = .false.
      end if
      want = payload(src, my_rank, iter, tag, k)
      checksum = checksum + int(got, int64) * k
      if (got /= want) then
        nerr = nerr + 1
        if (nerr <= 10) write (error_unit, '(a,a,i0,a,i0,a,i0,a,i0,a,i0,a,i0,a,i0)') trim(prog), &
            ': FAIL rank ', my_rank, ' iteration ', iter, ': from ', src, ' tag ', tag, &
            ' element ', k, ': got ', got, ', want ', want
      end if
    end do
  end subroutine check_data

  ! One status field (or any other value) compared with what MPI must give.
  subroutine check_field(what, got, want, iter)
    character(len=*), intent(in) :: what
    integer, intent(in) :: got, want, iter
    checksum = checksum + int(got, int64) * 31
    if (got /= want) then
      nerr = nerr + 1
      if (nerr <= 10) write (error_unit, '(a,a,i0,a,i0,a,a,a,i0,a,i0)') trim(prog), &
          ': FAIL rank ', my_rank, ' iteration ', iter, ': ', what, ': got ', got, ', want ', want
    end if
  end subroutine check_field

  ! This rank must check n more messages before check_report.
  subroutine check_expect(n)
    integer, intent(in) :: n
    expected = expected + n
  end subroutine check_expect

  ! After the reductions: rank 0 prints the result line.
  subroutine check_report(total_err, total_sum, total_messages)
    integer, intent(in) :: total_err
    integer(int64), intent(in) :: total_sum, total_messages
    if (my_rank /= 0) return
    if (total_err == 0) then
      write (*, '(a,a,z16.16,a,i0)') trim(prog), ': ok checksum=', total_sum, ' messages=', &
          total_messages
    else
      write (*, '(a,a,i0,a)') trim(prog), ': FAIL ', total_err, ' mismatches'
    end if
  end subroutine check_report

end module p2p_check
